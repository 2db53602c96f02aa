import Foundation

/// What the walk leaves out without being told: folders other tools keep beside photos, and
/// what the library itself says to leave out.
///
/// - NAS system folders hold their own thumbnails and deleted files: Synology's `@eaDir`,
///   `#recycle` and `#snapshot`, QNAP's `@Recycle` and `@Recently-Snapshot` (its `.@__thumb`
///   is a dot-name, skipped like every dot-name), Windows' `$RECYCLE.BIN` and
///   `System Volume Information`, and `lost+found`.
/// - A directory holding a `.nomedia` file (Android's convention) is not entered.
/// - A `.thumbframeignore` file in any directory lists gitignore-style patterns for what lies
///   below that directory (see `IgnoreFile`).
enum WalkDefaults {
    /// Directory names never entered.
    static let systemFolders: Set<[UInt8]> = Set(
        ["@eaDir", "#recycle", "#snapshot", "@Recycle", "@Recently-Snapshot", "$RECYCLE.BIN", "System Volume Information", "lost+found"]
            .map { Array($0.utf8) })
    static let ignoreFileName = Array(".thumbframeignore".utf8)
    static let noMediaName = Array(".nomedia".utf8)
    /// The largest ignore file read (a few hundred patterns are a few KB).
    static let maximumIgnoreFileBytes = 256 << 10
    /// Files whose presence marks a directory as a thumbframe OUT_DIR: never walked, so a second
    /// build's thumbnails are not indexed as photos by another.
    static let outputMarkers: Set<[UInt8]> = Set(
        [".thumbframe.lock", ".thumbframe-state.sqlite", ".thumbframe-thumbs"].map { Array($0.utf8) })
}

/// The patterns of one `.thumbframeignore`, gitignore's syntax: one pattern a line; blank lines
/// and lines starting with `#` are skipped (`\#` for a leading `#`); trailing spaces are
/// dropped; `!` re-includes what an earlier pattern excluded; a trailing `/` matches
/// directories only; a pattern with a `/` elsewhere is anchored to the file's directory, one
/// without matches a name at any depth below it; `*`, `?` and `[…]` match within one
/// component and `**` any number of components. The last matching pattern decides, and a
/// deeper file's patterns override a shallower one's. An excluded directory is not entered, so
/// nothing below it can be re-included (as in git).
struct IgnoreFile: Sendable {
    struct Pattern: Sendable {
        var segments: [[UInt8]]
        var negated: Bool
        var directoryOnly: Bool
        var anchored: Bool
    }

    /// The directory (components below SOURCE_DIR) whose file this is.
    var base: [[UInt8]]
    var patterns: [Pattern] = []

    init(base: [[UInt8]], text: [UInt8]) {
        self.base = base
        for rawLine in text.split(separator: 10, omittingEmptySubsequences: true) {
            var line = Array(rawLine)
            if line.last == 13 { line.removeLast() }
            while line.last == 32, line.count >= 2, line[line.count - 2] != 92 { line.removeLast() }
            if line == [32] { line = [] }
            guard !line.isEmpty, line.first != UInt8(ascii: "#") else { continue }
            var negated = false
            if line.first == UInt8(ascii: "!") {
                negated = true
                line.removeFirst()
            } else if line.starts(with: [92, UInt8(ascii: "#")]) || line.starts(with: [92, UInt8(ascii: "!")]) {
                line.removeFirst()
            }
            var directoryOnly = false
            while line.last == UInt8(ascii: "/") {
                directoryOnly = true
                line.removeLast()
            }
            let anchored = line.contains(UInt8(ascii: "/"))
            let segments = line.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
            guard !segments.isEmpty else { continue }
            patterns.append(Pattern(segments: segments, negated: negated, directoryOnly: directoryOnly, anchored: anchored))
        }
    }

    /// nil when no pattern matches `components` (a path below SOURCE_DIR, inside `base`); else
    /// whether the last matching pattern excludes it.
    func decision(_ components: [[UInt8]], isDirectory: Bool) -> Bool? {
        guard components.count > base.count, Array(components.prefix(base.count)) == base else { return nil }
        let relative = Array(components.dropFirst(base.count))
        for pattern in patterns.reversed() where !pattern.directoryOnly || isDirectory {
            let matched =
                pattern.anchored
                ? Self.match(pattern.segments[...], relative[...])
                : Self.match(pattern.segments[...], relative.suffix(1)[...])
                    || (pattern.segments.count > 1 && Self.match(pattern.segments[...], relative[...]))
            if matched { return !pattern.negated }
        }
        return nil
    }

    /// Segment-wise glob match: `**` spans any number of components, anything else one (fnmatch).
    static func match(_ pattern: ArraySlice<[UInt8]>, _ path: ArraySlice<[UInt8]>) -> Bool {
        guard let first = pattern.first else { return path.isEmpty }
        if first == Array("**".utf8) {
            let rest = pattern.dropFirst()
            if rest.isEmpty { return true }
            var tail = path
            while true {
                if match(rest, tail) { return true }
                guard !tail.isEmpty else { return false }
                tail = tail.dropFirst()
            }
        }
        guard let name = path.first, fnmatch(first, name) else { return false }
        return match(pattern.dropFirst(), path.dropFirst())
    }

    private static func fnmatch(_ pattern: [UInt8], _ name: [UInt8]) -> Bool {
        (pattern + [0]).withUnsafeBufferPointer { p in
            (name + [0]).withUnsafeBufferPointer { n in
                p.withMemoryRebound(to: CChar.self) { pc in
                    n.withMemoryRebound(to: CChar.self) { nc in Foundation.fnmatch(pc.baseAddress, nc.baseAddress, 0) == 0 }
                }
            }
        }
    }
}

extension [IgnoreFile] {
    /// Whether the ignore files in force (shallowest first) exclude the entry at `components`.
    func excludes(_ components: [[UInt8]], isDirectory: Bool) -> Bool {
        for file in reversed() {
            if let decision = file.decision(components, isDirectory: isDirectory) { return decision }
        }
        return false
    }
}
