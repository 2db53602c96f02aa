import Foundation
package import ThumbframeManifest

/// What `thumbframe inspect` reports about a manifest.
package struct ManifestSummary: Codable, Equatable, Sendable {
    /// One section's line.
    package struct SectionLine: Codable, Equatable, Sendable {
        /// Section key.
        package var name: String
        /// Section heading.
        package var title: String
        /// First flat index.
        package var start: Int
        /// Number of items.
        package var count: Int
    }

    /// The tool that wrote the manifest, e.g. `thumbframe 0.1.0 (libvips 8.14.1)`.
    package var generator: String
    /// Number of items.
    package var items: Int
    /// Sections in order.
    package var sections: [SectionLine]
    /// Items per kind (`photo`, `video`, `animated`; `motion`: photos with a moving part;
    /// `rawPair`: photos shown in place of the RAW shot with them).
    package var kinds: [String: Int]
    /// Items per image format.
    package var formats: [String: Int]
    /// Items per EXIF orientation (keys `"1"`…`"8"`).
    package var orientations: [String: Int]
    /// Items whose height is at least three times their width (scrolled, not fitted).
    package var longImages: Int
    /// Thumbnails per recipe name.
    package var thumbnails: [String: Int]
    /// Bytes of the thumbnail files per recipe name: on disk when the summary was made with the
    /// manifest's directory, else as the manifest records them.
    package var thumbnailBytes: [String: Int]
    /// Thumbnail files the manifest names that are not on disk.
    package var missingThumbnails: Int
    /// Every failure of the build.
    package var failures: [Manifest.Failure]
    /// Failures by what stopped their decode (`FailureCause`: crash, memory, time); others not counted.
    package var failureCauses: [String: Int] = [:]
    /// Files the build met that are neither items nor failures, by kind (empty when none).
    package var skipped: [String: Int] = [:]
    /// The zoom ladder's rendition names (`settings.ladder`; empty without one): their bytes are
    /// what the ladder adds to the library.
    package var ladder: [String] = []
    /// Thumbnail names in the order a build makes them (`RecipeBytes.order`).
    package var recipes: [String] = []
    /// Deep-zoom tile files of every pyramid (`thumbnails.tiles`), as the manifest records them.
    package var tileFiles = 0
    /// HDR photos per `image.hdr` kind (`pq`, `hlg`, `gainMap`); empty when none.
    package var hdr: [String: Int] = [:]
    /// Thumbnails that carry a gain map (an HDR photo's display and zoom renditions).
    package var gainMaps = 0
    /// Stacks per reason (`burst`, `time+similar`, `duplicate`); empty when none.
    package var stacks: [String: Int] = [:]
    /// Photos in stacks, covers included.
    package var stacked = 0
    /// Photos per place (`Place.label`); empty without `--locations`.
    package var places: [String: Int] = [:]
    /// `settings.locations` (`none` when absent).
    package var locations = "none"

    /// Summarizes a manifest in memory; with `thumbnailRoot` (the manifest's directory) also
    /// the thumbnail files on disk.
    package init(_ manifest: Manifest, thumbnailRoot: String? = nil) {
        var counts = ManifestDocument.Summary()
        for item in manifest.items { counts.add(item) }
        self.init(
            generator: manifest.generator, sections: manifest.sections, failures: manifest.failures,
            items: manifest.items.count, counts: counts)
        ladder = manifest.settings.ladder?.renditions.map(\.name) ?? []
        recipes = RecipeBytes.order(manifest.settings)
        locations = manifest.settings.locations?.description ?? "none"
        if let thumbnailRoot {
            thumbnailBytes = [:]
            let folder = try? ContainedDirectory(thumbnailRoot)
            for item in manifest.items { countFiles(item, in: folder) }
        }
    }

    /// Summarizes a paged manifest from its top document alone; with `thumbnailRoot` (the
    /// manifest's directory) also every thumbnail file on disk, reading the pages one at a time.
    package init(_ reader: ManifestReader, thumbnailRoot: String? = nil) throws(ThumbframeError) {
        let document = reader.document
        self.init(
            generator: document.generator, sections: document.sections, failures: document.failures,
            items: document.itemCount, counts: document.summary)
        skipped = document.skipped ?? [:]
        ladder = document.settings.ladder?.renditions.map(\.name) ?? []
        recipes = RecipeBytes.order(document.settings)
        locations = document.settings.locations?.description ?? "none"
        guard let thumbnailRoot else { return }
        thumbnailBytes = [:]
        var summary = self
        do {
            let folder = try? ContainedDirectory(thumbnailRoot)
            try reader.forEachItem { summary.countFiles($0, in: folder) }
        } catch {
            throw .invalidManifest(path: "manifest", reason: error.localizedDescription)
        }
        self = summary
    }

    private init(
        generator: Manifest.Generator, sections: [Manifest.Section], failures: [Manifest.Failure], items: Int,
        counts: ManifestDocument.Summary
    ) {
        self.generator = "\(generator.name) \(generator.version) (libvips \(generator.libvips))"
        self.items = items
        self.sections = sections.map { SectionLine(name: $0.name, title: $0.title, start: $0.start, count: $0.count) }
        kinds = counts.kinds
        formats = counts.formats
        orientations = counts.orientations
        longImages = counts.longImages
        thumbnails = counts.thumbnails
        thumbnailBytes = counts.thumbnailBytes
        tileFiles = counts.tileFiles ?? 0
        hdr = counts.hdr ?? [:]
        gainMaps = counts.gainMaps ?? 0
        stacks = counts.stacks ?? [:]
        stacked = counts.stacked ?? 0
        places = counts.places ?? [:]
        missingThumbnails = 0
        self.failures = failures
        failureCauses = FailureCause.counts(failures)
    }

    /// Adds an item's thumbnail files on disk to `thumbnailBytes`, or to `missingThumbnails`.
    /// Files are reached as every reader reaches them (`ContainedDirectory`): a link under
    /// `thumbs/` counts as missing, never as the size of what it points to. A pyramid's tiles
    /// count as recorded (`validate` checks them against the disk).
    private mutating func countFiles(_ item: Manifest.Item, in folder: ContainedDirectory?) {
        for (name, thumbnail) in item.thumbnails where Manifest.isContainedRelativePath(thumbnail.path) {
            if let size = try? folder?.size(of: thumbnail.path) {
                let total = size.addingReportingOverflow(max(0, thumbnail.tiles?.bytes ?? 0)).partialValue
                thumbnailBytes[name] = thumbnailBytes[name, default: 0].addingReportingOverflow(total).partialValue
            } else {
                missingThumbnails += 1
            }
        }
    }

    /// The summary for people: aligned lines, largest counts first.
    package func rendered() -> String {
        func counts(_ table: [String: Int]) -> String {
            guard !table.isEmpty else { return "none" }
            return table.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        }
        var lines = [
            "generator     \(generator)",
            "items         \(items) in \(sections.count) section\(sections.count == 1 ? "" : "s")",
            "kinds         \(counts(kinds))",
            "formats       \(counts(formats))",
            "orientations  \(counts(orientations))",
            "long images   \(longImages)",
            "thumbnails    \(counts(thumbnails))",
            "thumb bytes   \(RecipeBytes.text(RecipeBytes.rows(counts: thumbnails, bytes: thumbnailBytes, order: recipes)))\(missingThumbnails > 0 ? ", \(missingThumbnails) missing" : "")",
        ]
        // What the ladder and the tiles add: bytes, and their share of all thumbnail bytes.
        let total = thumbnailBytes.values.reduce(0) { $0.addingReportingOverflow($1).partialValue }
        func added(_ names: [String]) -> String {
            let bytes = names.reduce(0) { $0.addingReportingOverflow(thumbnailBytes[$1] ?? 0).partialValue }
            let share = total > 0 ? Int((100 * Double(bytes) / Double(total)).rounded()) : 0
            return "\(Self.size(bytes)) (\(share) % of thumb bytes)"
        }
        if !ladder.isEmpty {
            let count = ladder.reduce(0) { $0 + (thumbnails[$1] ?? 0) }
            lines.append("zoom ladder   \(count) renditions, \(added(ladder))")
        }
        if let pyramids = thumbnails[Manifest.tilesName], pyramids > 0 {
            lines.append(
                "deep zoom     \(pyramids) pyramid\(pyramids == 1 ? "" : "s"), \(tileFiles) tiles, \(added([Manifest.tilesName]))")
        }
        if !hdr.isEmpty {
            lines.append("hdr           \(counts(hdr)); \(gainMaps) rendition\(gainMaps == 1 ? "" : "s") with gain maps")
        }
        if !stacks.isEmpty {
            let count = stacks.values.reduce(0, +)
            let cells = items - stacked + count
            lines.append(
                "stacks        \(count) (\(counts(stacks))) of \(stacked) photos: \(cells) cells for \(items) items")
        }
        if !places.isEmpty {
            let placed = places.values.reduce(0, +)
            let top = places.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(5)
                .map { "\($0.key) \($0.value)" }.joined(separator: "; ")
            lines.append("places        \(places.count) (\(locations)) for \(placed) photos: \(top)\(places.count > 5 ? "; …" : "")")
        }
        lines.append("failures      \(failures.count)\(FailureCause.text(failureCauses))")
        for failure in failures {
            lines.append("  \(failure.path)  [\(failure.stage)] \(failure.reason)")
        }
        if !skipped.isEmpty { lines.append("skipped       \(counts(skipped))") }
        lines.append("sections")
        let width = sections.map(\.name.count).max() ?? 0
        for (index, section) in sections.enumerated() {
            let padded = section.name.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append("  \(index)  \(padded)  \(section.count) item\(section.count == 1 ? "" : "s") from #\(section.start)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Bytes for people: `812 KiB`, `3.4 MiB`.
    package static func size(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }
}

/// A recipe's share of the library: its thumbnails and their bytes, what `build` and `inspect`
/// print so the cost of each recipe (and of the zoom ladder and tiles) is never a surprise.
package struct RecipeBytes: Codable, Equatable, Sendable {
    /// The recipe's name (a ladder rendition's, or `tiles`).
    package var name: String
    /// Its thumbnails (pyramids for `tiles`).
    package var count: Int
    /// Their bytes as recorded (on disk for `inspect --files`).
    package var bytes: Int

    /// The names in the order a build makes them: the recipes, the ladder's renditions, the tiles.
    package static func order(_ settings: Manifest.Settings) -> [String] {
        settings.thumbnails.map(\.name) + (settings.ladder?.renditions.map(\.name) ?? [])
            + (settings.tiles == nil ? [] : [Manifest.tilesName])
    }

    /// One row per name that has thumbnails or bytes, those of `order` first in its order, then
    /// any others (a manifest's own names) by name.
    package static func rows(counts: [String: Int], bytes: [String: Int], order: [String]) -> [RecipeBytes] {
        let names = Set(counts.keys).union(bytes.keys)
        let known = order.filter(names.contains)
        let others = names.subtracting(known).sorted()
        return (known + others).map { RecipeBytes(name: $0, count: counts[$0] ?? 0, bytes: bytes[$0] ?? 0) }
    }

    /// `9.3 MiB: grid 456 KiB (7.6 KiB each), preview 7.2 MiB (123 KiB each)`, or `none`.
    package static func text(_ rows: [RecipeBytes]) -> String {
        guard !rows.isEmpty else { return "none" }
        let total = rows.reduce(0) { $0.addingReportingOverflow($1.bytes).partialValue }
        let parts = rows.map { row in
            let each = row.count > 0 ? " (\(ManifestSummary.size(row.bytes / row.count)) each)" : ""
            return "\(row.name) \(ManifestSummary.size(row.bytes))\(each)"
        }
        return "\(ManifestSummary.size(total)): \(parts.joined(separator: ", "))"
    }
}
