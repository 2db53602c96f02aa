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
/// directory skipped. Symbolic links are skipped unless `followSymlinks`; followed, they never
/// lead out of the source directory, and a broken link or a loop is a failure.
struct SourceWalker {
    /// The source directory, resolved (no symlinks in it).
    var root: String
    /// Directories never entered (the output directory), by device and inode.
    var excluded: [FileIdentity]
    var followSymlinks = false

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
        // Directories entered so far, so a followed link cannot loop back into one.
        var visited: Set<FileIdentity> = [rootStat.identity]
        var pending: [(components: [String], path: String)] = [([], root)]
        while let (components, directoryPath) = pending.popLast() {
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
                func fail(_ reason: String) {
                    if FileSignature.hasImageExtension(lossyName) {
                        result.failures.append(.init(path: relative, stage: "read", reason: reason))
                    }
                }
                guard let name = String(validating: rawName, as: UTF8.self) else {
                    fail("file name is not valid UTF-8")
                    continue
                }
                var path = directoryPath + "/" + name
                guard var stat = FileStat.lstat(path) else { continue }  // vanished since listing
                if stat.isSymbolicLink {
                    guard followSymlinks else { continue }
                    switch resolve(path) {
                    case .failure(let problem):
                        fail(problem.description)
                        continue
                    case .success(let (target, targetStat)):
                        path = target
                        stat = targetStat
                    }
                }
                if stat.isDirectory {
                    if !excluded.contains(stat.identity), visited.insert(stat.identity).inserted {
                        pending.append((components + [name], path))
                    }
                } else if stat.isRegularFile, isCandidate(name: name, path: path) {
                    result.files.append(SourceFile(
                        relativePath: relative, directory: components, name: name, absolutePath: path, stat: stat))
                }
            }
        }
        return result
    }

    /// Where a symbolic link leads, if it leads somewhere inside the source directory.
    private func resolve(_ link: String) -> Swift.Result<(String, FileStat), LinkProblem> {
        guard let target = realpath(link, nil) else {
            let code = errno
            if code == ELOOP { return .failure(LinkProblem("symbolic link loop")) }
            if code == ENOENT { return .failure(LinkProblem("broken symbolic link")) }
            return .failure(LinkProblem("cannot follow symbolic link: \(String(cString: strerror(code)))"))
        }
        defer { free(target) }
        let resolved = String(cString: target)
        guard resolved.hasPrefix(root + "/") else {
            return .failure(LinkProblem("symbolic link points outside the source directory"))
        }
        guard let stat = FileStat.lstat(resolved) else { return .failure(LinkProblem("broken symbolic link")) }
        return .success((resolved, stat))
    }

    private struct LinkProblem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private func isCandidate(name: String, path: String) -> Bool {
        FileSignature.hasImageExtension(name) || FileSignature.looksLikeImage(FileSystem.head(path, count: 16))
    }
}
