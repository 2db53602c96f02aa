import ThumbframeManifest

/// Puts processed items in their final order and sections and numbers them.
struct ManifestAssembler {
    /// Heading of the root directory's section: the source directory's own name.
    var sourceTitle: String

    /// One section per directory holding at least one item, in natural order of directory paths
    /// (root first); items in natural order of names inside each.
    func assemble(_ items: [ProcessedItem], failures: [Manifest.Failure], settings: Manifest.Settings) -> Manifest {
        let sorted = items.sorted { SourceFile.inDisplayOrder($0.source, $1.source) }
        var sections: [Manifest.Section] = []
        var entries: [Manifest.Item] = []
        entries.reserveCapacity(sorted.count)
        var currentDirectory: [String]?
        for processed in sorted {
            let directory = processed.source.directory
            if directory != currentDirectory || sections.isEmpty {
                // Items of one directory are contiguous: the order compares directories first.
                sections.append(Manifest.Section(
                    name: directory.isEmpty ? "." : directory.joined(separator: "/"),
                    title: directory.last ?? sourceTitle, start: entries.count, count: 0))
                currentDirectory = directory
            }
            sections[sections.count - 1].count += 1
            entries.append(Manifest.Item(
                index: entries.count, section: sections.count - 1, item: sections[sections.count - 1].count - 1,
                path: processed.source.relativePath, file: processed.file, image: processed.image,
                exif: processed.exif, thumbnails: processed.thumbnails))
        }
        return Manifest(
            generator: .init(version: ThumbframeVersion.current, libvips: Vips.version),
            settings: settings, sections: sections, items: entries, failures: failures)
    }
}
