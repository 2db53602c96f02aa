import Foundation

/// `--exclude GLOB` (repeatable): a pattern without `/` is matched against every file and
/// directory name (`@eaDir`, `*.tmp`, `Thumbs.db`); one with a `/` against the path below
/// SOURCE_DIR (`2019/private`, `*/cache`; a leading `/` is dropped). Matching is fnmatch(3) with
/// FNM_PATHNAME, so `*` never crosses a `/`. An excluded directory is not entered; an excluded
/// file is neither an item nor a failure. Names are matched as bytes, so they need not be UTF-8.
package struct ExcludeRules: Sendable, Equatable {
    package private(set) var patterns: [String] = []

    package init() {}

    package init(_ patterns: [String]) throws(ThumbframeError) {
        for pattern in patterns {
            var trimmed = Substring(pattern)
            while trimmed.first == "/" { trimmed = trimmed.dropFirst() }
            while trimmed.last == "/" { trimmed = trimmed.dropLast() }
            guard !trimmed.isEmpty, !pattern.contains("\0") else {
                throw .invalidOptions("--exclude \"\(pattern)\": an empty pattern would exclude everything")
            }
            self.patterns.append(String(trimmed))
        }
    }

    var isEmpty: Bool { patterns.isEmpty }

    func excludes(name: [UInt8], under components: [[UInt8]]) -> Bool {
        guard !patterns.isEmpty else { return false }
        let path = Array((components + [name]).joined(separator: [UInt8(ascii: "/")]))
        return patterns.contains { pattern in
            let subject = pattern.contains("/") ? path : name
            return (subject + [0]).withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { fnmatch(pattern, $0.baseAddress, FNM_PATHNAME) == 0 }
            }
        }
    }
}

extension FileStat {
    /// Placeholder facts for a failure found by the walk (no file to describe).
    static let missing = FileStat(
        identity: FileIdentity(device: 0, inode: 0), mode: 0, size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0)
}
