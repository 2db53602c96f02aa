import Foundation
import ThumbframeManifest

/// `thumbframe diff A B`: what changed from one manifest to another, by item path.
public struct ManifestDiff: Codable, Equatable, Sendable {
    /// One item present in both with different entries.
    public struct Change: Codable, Equatable, Sendable {
        /// The item's path.
        public var path: String
        /// What differs: `position`, `file`, `image`, `exif`, `thumbnails`, `layouts`.
        public var fields: [String]
    }

    /// Paths only in B.
    public var added: [String]
    /// Paths only in A.
    public var removed: [String]
    /// Paths in both whose entries differ.
    public var changed: [Change]
    /// Failure paths only in B.
    public var failuresAdded: [String]
    /// Failure paths only in A.
    public var failuresRemoved: [String]
    /// Whether `settings` differ.
    public var settingsChanged: Bool

    /// True when nothing differs.
    public var isEmpty: Bool {
        added.isEmpty && removed.isEmpty && changed.isEmpty && failuresAdded.isEmpty && failuresRemoved.isEmpty
            && !settingsChanged
    }

    /// Compares two manifests, listing paths in B's order (A's for removals).
    public init(from a: Manifest, to b: Manifest) {
        // Keyed by the paths' bytes: NFC and NFD spellings of one name are different files.
        let before = Dictionary(a.items.map { ($0.pathBytes, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(b.items.map(\.pathBytes))
        added = b.items.filter { before[$0.pathBytes] == nil }.map(\.path)
        removed = a.items.filter { !after.contains($0.pathBytes) }.map(\.path)
        changed = b.items.compactMap { item in
            guard let old = before[item.pathBytes] else { return nil }
            var fields: [String] = []
            if (old.index, old.section, old.item) != (item.index, item.section, item.item) { fields.append("position") }
            if old.file != item.file { fields.append("file") }
            if old.image != item.image { fields.append("image") }
            if old.exif != item.exif { fields.append("exif") }
            if old.thumbnails != item.thumbnails { fields.append("thumbnails") }
            if old.layouts != item.layouts { fields.append("layouts") }
            return fields.isEmpty ? nil : Change(path: item.path, fields: fields)
        }
        let failedBefore = Set(a.failures.map(\.pathBytes))
        let failedAfter = Set(b.failures.map(\.pathBytes))
        failuresAdded = b.failures.filter { !failedBefore.contains($0.pathBytes) }.map(\.path)
        failuresRemoved = a.failures.filter { !failedAfter.contains($0.pathBytes) }.map(\.path)
        settingsChanged = a.settings != b.settings
    }

    /// One line per difference: `+ added`, `- removed`, `~ changed: fields`, `! failure`.
    public func rendered() -> String {
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
