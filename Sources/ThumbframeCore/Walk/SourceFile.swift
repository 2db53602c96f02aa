import Foundation
import ThumbframeManifest

/// One candidate image found in the source tree.
struct SourceFile: Sendable, Equatable {
    /// The parent directory's names as found on disk (empty for the root); names need not be UTF-8.
    var directory: [[UInt8]]
    /// The file name as found on disk: the end of `rawPath` (made when asked for).
    var name: [UInt8] { Array(rawPath[((rawPath.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1)...]) }
    /// `directory` and `name` joined by `/`: the file's identity, lossless and unique.
    var rawPath: [UInt8]
    /// `rawPath` for people and manifests: UTF-8, with U+FFFD for bytes that are not (made when
    /// asked for: a library's worth of files is held at once).
    var relativePath: String { String(decoding: rawPath, as: UTF8.self) }
    /// Where to open it, relative to the source directory: `rawPath`, or a followed link's
    /// target. Opened one component at a time, never through a link.
    var openPath: [UInt8]
    /// Size and modification time.
    var stat: FileStat

    init(directory: [[UInt8]], name: [UInt8], openPath: [UInt8]? = nil, stat: FileStat) {
        self.directory = directory
        rawPath = Array((directory + [name]).joined(separator: [UInt8(ascii: "/")]))
        self.openPath = openPath ?? rawPath
        self.stat = stat
    }

    /// A file known only by its path's bytes (from the state index).
    init(path: [UInt8]) {
        var components = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        let name = components.removeLast()
        self.init(directory: components, name: name, stat: .missing)
    }

    /// True for the bytes of a path the walk can give: relative, no empty, `.` or `..`
    /// component, no NUL.
    static func isCleanRelativePath(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty, !bytes.contains(0) else { return false }
        return bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { component in
            !component.isEmpty && !component.elementsEqual([46]) && !component.elementsEqual([46, 46])
        }
    }

    /// The manifest's `rawPath`: set only when the path is not valid UTF-8.
    var manifestRawPath: String? { RawPath.encode(rawPath) }

    /// Display order: directories in natural order of their paths (a directory's own files
    /// before its subdirectories'), then names in natural order inside each directory.
    static func inDisplayOrder(_ a: SourceFile, _ b: SourceFile) -> Bool {
        if a.directory != b.directory { return NaturalOrder.lessPath(a.directory, b.directory) }
        return NaturalOrder.less(a.name, b.name)
    }
}

/// The source directory, open: every file is reached from it one component at a time with
/// `openat` and `O_NOFOLLOW`, so a directory swapped for a link mid-run cannot lead outside.
struct SourceRoot: Sendable {
    /// The resolved path, for messages and for resolving followed links.
    var path: String
    var directory: Directory

    /// Opens SOURCE_DIR (the user may name it through a link), or says why not.
    static func open(_ path: String) throws(ThumbframeError) -> SourceRoot {
        guard let resolved = FileSystem.realPath(path) else {
            throw .sourceUnreadable(path: path, reason: FileStat.lastErrorDescription(default: "cannot resolve"))
        }
        do {
            return SourceRoot(path: resolved, directory: try Directory.open(resolved))
        } catch {
            throw .sourceUnreadable(path: path, reason: error.localizedDescription)
        }
    }

    /// Reads a walked file whole, refusing more than `limit` bytes.
    func read(_ file: SourceFile, limit: Int) throws(FileSystemError) -> [UInt8] {
        try open(file).read(limit: limit)
    }

    /// Opens a walked file for reading (one component at a time, never through a link).
    func open(_ file: SourceFile) throws(FileSystemError) -> OpenFile {
        var components = file.openPath.split(separator: UInt8(ascii: "/")).map(Array.init)
        let name = components.removeLast()
        return try directory.descend(components).openFile(name)
    }
}
