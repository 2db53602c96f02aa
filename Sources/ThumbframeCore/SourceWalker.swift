import Foundation
import ThumbframeManifest

/// One candidate image found in the source tree.
struct SourceFile: Sendable, Equatable {
    /// Path relative to the source directory, `/`-separated.
    var relativePath: String
    /// The parent directory's components (empty for the root).
    var directory: [String]
    /// The file name.
    var name: String
    /// Where to open it.
    var absolutePath: String
    /// Size and modification time from `lstat`.
    var stat: FileStat

    /// Display order: directories in natural order of their paths (a directory's own files
    /// before its subdirectories'), then names in natural order inside each directory.
    static func inDisplayOrder(_ a: SourceFile, _ b: SourceFile) -> Bool {
        if a.directory != b.directory { return NaturalOrder.lessPath(a.directory, b.directory) }
        return NaturalOrder.less(a.name, b.name)
    }
}

/// Finds the candidate images of a source tree: regular files, hidden names and the output
/// directory skipped, symlinks not followed.
struct SourceWalker {
    var root: String
    /// Directories never entered (the output directory), by device and inode.
    var excluded: [FileIdentity]

    /// What a walk found: candidates in no particular order, and files that could not be taken.
    struct Result {
        var files: [SourceFile] = []
        var failures: [Manifest.Failure] = []
    }

    func walk() throws(ThumbframeError) -> Result {
        var result = Result()
        guard let rootStat = FileStat.lstat(root), rootStat.isDirectory else {
            throw .sourceUnreadable(path: root, reason: FileStat.lastErrorDescription(default: "not a directory"))
        }
        var pending: [[String]] = [[]]
        while let components = pending.popLast() {
            let directoryPath = components.isEmpty ? root : root + "/" + components.joined(separator: "/")
            guard let entries = FileSystem.directoryEntries(directoryPath) else {
                if components.isEmpty {
                    throw .sourceUnreadable(path: root, reason: FileStat.lastErrorDescription(default: "unreadable"))
                }
                result.failures.append(.init(
                    path: components.joined(separator: "/"), stage: "read",
                    reason: "cannot list directory: \(FileStat.lastErrorDescription(default: "unreadable"))"))
                continue
            }
            for rawName in entries where rawName.first != UInt8(ascii: ".") {
                let lossyName = String(decoding: rawName, as: UTF8.self)
                let relative = (components + [lossyName]).joined(separator: "/")
                let absolute = directoryPath + "/" + lossyName
                guard let name = String(validating: rawName, as: UTF8.self) else {
                    if FileSignature.hasImageExtension(lossyName) {
                        result.failures.append(.init(
                            path: relative, stage: "read", reason: "file name is not valid UTF-8"))
                    }
                    continue
                }
                guard let stat = FileStat.lstat(absolute) else { continue }  // vanished since listing
                if stat.isDirectory {
                    if !excluded.contains(stat.identity) { pending.append(components + [name]) }
                } else if stat.isRegularFile, isCandidate(name: name, path: absolute) {
                    result.files.append(SourceFile(
                        relativePath: relative, directory: components, name: name, absolutePath: absolute, stat: stat))
                }
            }
        }
        return result
    }

    private func isCandidate(name: String, path: String) -> Bool {
        FileSignature.hasImageExtension(name) || FileSignature.looksLikeImage(FileSystem.head(path, count: 16))
    }
}
