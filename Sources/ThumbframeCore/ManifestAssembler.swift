import ThumbframeManifest

/// Puts processed items in their final order and sections, numbers them, and lays each out in
/// every viewport.
struct ManifestAssembler {
    /// Heading of the root directory's section (and of the single section of `none`): the
    /// source directory's own name.
    var sourceTitle: String
    var settings: Manifest.Settings

    func assemble(_ items: [ProcessedItem], failures: [Manifest.Failure]) -> Manifest {
        var sections: [Manifest.Section] = []
        var entries: [Manifest.Item] = []
        entries.reserveCapacity(items.count)
        for group in grouped(items) {
            // No empty section: a group exists only because an item fell into it.
            let sectionIndex = sections.count
            sections.append(Manifest.Section(
                name: group.name, rawName: group.rawName, title: group.title, start: entries.count, count: group.items.count))
            for (position, processed) in ordered(group.items).enumerated() {
                let layouts = Dictionary(uniqueKeysWithValues: settings.viewports.map {
                    ($0.name, LayoutEngine.layout(
                        width: processed.image.width, height: processed.image.height, viewport: $0, preset: settings.preset))
                })
                entries.append(Manifest.Item(
                    index: entries.count, section: sectionIndex, item: position, path: processed.source.relativePath,
                    rawPath: processed.source.manifestRawPath, file: processed.file, image: processed.image, exif: processed.exif,
                    thumbnails: processed.thumbnails, layouts: layouts))
            }
        }
        return Manifest(
            generator: .init(version: ThumbframeVersion.current, libvips: Vips.version),
            settings: settings, sections: sections, items: entries, failures: failures)
    }

    private struct Group {
        var name: String
        var rawName: String? = nil
        var title: String
        var items: [ProcessedItem]
    }

    /// Sections in display order: directories in natural order of their paths (root first),
    /// capture days ascending, or everything in one.
    private func grouped(_ items: [ProcessedItem]) -> [Group] {
        switch settings.sections {
        case .none:
            return items.isEmpty ? [] : [Group(name: ".", title: sourceTitle, items: items)]
        case .directory:
            // Grouped by the directories' bytes: two names that differ only in Unicode
            // normalization, or in bytes that are not UTF-8, are two directories.
            let byDirectory = Dictionary(grouping: items, by: \.source.directory)
            return byDirectory.keys.sorted(by: NaturalOrder.lessPath).map { directory in
                let raw = Array(directory.joined(separator: [UInt8(ascii: "/")]))
                return Group(
                    name: directory.isEmpty ? "." : String(decoding: raw, as: UTF8.self), rawName: RawPath.encode(raw),
                    title: directory.last.map { String(decoding: $0, as: UTF8.self) } ?? sourceTitle,
                    items: byDirectory[directory]!)
            }
        case .date:
            let byDay = Dictionary(grouping: items) { String($0.captureTime.prefix(10)) }
            return byDay.keys.sorted().map { Group(name: $0, title: $0, items: byDay[$0]!) }
        }
    }

    private func ordered(_ items: [ProcessedItem]) -> [ProcessedItem] {
        switch settings.order {
        case .name:
            return items.sorted { SourceFile.inDisplayOrder($0.source, $1.source) }
        case .date:
            return items.sorted {
                $0.captureTime != $1.captureTime
                    ? $0.captureTime < $1.captureTime : SourceFile.inDisplayOrder($0.source, $1.source)
            }
        }
    }
}

extension ProcessedItem {
    /// When the photo was taken, `YYYY-MM-DDTHH:MM:SS`: the EXIF local time, else the file's
    /// modification time in UTC (what a camera-less image has).
    var captureTime: String {
        exif?.capturedAt ?? String(file.modified.prefix(19))
    }
}
