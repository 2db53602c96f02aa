import Foundation
package import ThumbframeManifest

/// `thumbframe diff A B`: what changed from one manifest to another, by item path.
package struct ManifestDiff: Codable, Equatable, Sendable {
    /// One item present in both with different entries.
    package struct Change: Codable, Equatable, Sendable {
        /// The item's path.
        package var path: String
        /// What differs: `position`, `file`, `kind`, `image`, `video`, `animation`, `motion`, `raw`,
        /// `rawFile`, `exif`, `thumbnails`, `layouts`, `stack`, `place`.
        package var fields: [String]
    }

    /// Paths only in B.
    package var added: [String]
    /// Paths only in A.
    package var removed: [String]
    /// Paths in both whose entries differ.
    package var changed: [Change]
    /// Failure paths only in B.
    package var failuresAdded: [String]
    /// Failure paths only in A.
    package var failuresRemoved: [String]
    /// Whether `settings` differ.
    package var settingsChanged: Bool

    /// True when nothing differs.
    package var isEmpty: Bool {
        added.isEmpty && removed.isEmpty && changed.isEmpty && failuresAdded.isEmpty && failuresRemoved.isEmpty
            && !settingsChanged
    }

    /// Compares two manifests in memory, listing paths in B's order (A's for removals).
    package init(from a: Manifest, to b: Manifest) {
        // Items in memory cannot fail to be read.
        try! self.init(
            a: a.items.forEach, aFailures: a.failures, aSettings: a.settings,
            b: b.items.forEach, bFailures: b.failures, bSettings: b.settings)
    }

    /// Compares two paged manifests a page at a time: A's items are kept as fingerprints, not
    /// whole, so two large libraries compare in bounded memory.
    package init(from a: ManifestReader, to b: ManifestReader) throws(ThumbframeError) {
        do {
            try self.init(
                a: a.forEachItem, aFailures: a.document.failures, aSettings: a.document.settings,
                b: b.forEachItem, bFailures: b.document.failures, bSettings: b.document.settings)
        } catch {
            throw .invalidManifest(path: "manifest", reason: error.localizedDescription)
        }
    }

    /// What `changed` compares of an item, as hashes.
    private struct Fingerprint {
        var position: [Int]
        var fields: [Int]

        init(_ item: Manifest.Item) {
            func hash(_ value: some Hashable) -> Int {
                var hasher = Hasher()
                hasher.combine(value)
                return hasher.finalize()
            }
            position = [item.index, item.section, item.item]
            fields = [
                hash(item.file), hash(item.kind), hash(item.image), hash(item.video), hash(item.animation), hash(item.motion),
                hash(item.raw), hash(item.rawFile), hash(item.exif), hash(item.thumbnails), hash(item.layouts),
                hash(item.stack), hash(item.place),
            ]
        }

        static let names = [
            "file", "kind", "image", "video", "animation", "motion", "raw", "rawFile", "exif", "thumbnails", "layouts",
            "stack", "place",
        ]
    }

    private init(
        a: ((Manifest.Item) throws -> Void) throws -> Void, aFailures: [Manifest.Failure], aSettings: Manifest.Settings,
        b: ((Manifest.Item) throws -> Void) throws -> Void, bFailures: [Manifest.Failure], bSettings: Manifest.Settings
    ) throws {
        // Keyed by the paths' bytes: NFC and NFD spellings of one name are different files.
        var before: [[UInt8]: Fingerprint] = [:]
        var order: [([UInt8], String)] = []
        try a { item in
            if before[item.pathBytes] == nil { order.append((item.pathBytes, item.path)) }
            before[item.pathBytes] = before[item.pathBytes] ?? Fingerprint(item)
        }
        var seen = Set<[UInt8]>()
        var added: [String] = []
        var changed: [Change] = []
        try b { item in
            let key = item.pathBytes
            seen.insert(key)
            guard let old = before[key] else {
                added.append(item.path)
                return
            }
            let new = Fingerprint(item)
            var fields: [String] = old.position == new.position ? [] : ["position"]
            for (name, (x, y)) in zip(Fingerprint.names, zip(old.fields, new.fields)) where x != y { fields.append(name) }
            if !fields.isEmpty { changed.append(Change(path: item.path, fields: fields)) }
        }
        self.added = added
        self.changed = changed
        removed = order.filter { !seen.contains($0.0) }.map(\.1)
        let failedBefore = Set(aFailures.map(\.pathBytes))
        let failedAfter = Set(bFailures.map(\.pathBytes))
        failuresAdded = bFailures.filter { !failedBefore.contains($0.pathBytes) }.map(\.path)
        failuresRemoved = aFailures.filter { !failedAfter.contains($0.pathBytes) }.map(\.path)
        settingsChanged = aSettings != bSettings
    }

    /// One line per difference: `+ added`, `- removed`, `~ changed: fields`, `! failure`.
    package func rendered() -> String {
        var lines: [String] = []
        if settingsChanged { lines.append("settings changed") }
        lines += added.map { "+ \($0)" }
        lines += removed.map { "- \($0)" }
        lines += changed.map { "~ \($0.path): \($0.fields.joined(separator: ", "))" }
        lines += failuresAdded.map { "! \($0) (now failing)" }
        lines += failuresRemoved.map { "! \($0) (no longer failing)" }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }
}
