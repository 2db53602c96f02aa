import Foundation
import ThumbframeManifest

/// One candidate image found in the source tree.
struct SourceFile: Sendable, Equatable {
    /// The parent directory's names as found on disk (empty for the root); names need not be UTF-8.
    var directory: [[UInt8]]
    /// The file name as found on disk.
    var name: [UInt8]
    /// `directory` and `name` joined by `/`: the file's identity, lossless and unique.
    var rawPath: [UInt8]
    /// `rawPath` for people and manifests: UTF-8, with U+FFFD for bytes that are not.
    var relativePath: String
    /// Where to open it, relative to the source directory: `rawPath`, or a followed link's
    /// target. Opened one component at a time, never through a link.
    var openPath: [UInt8]
    /// Size and modification time.
    var stat: FileStat

    init(directory: [[UInt8]], name: [UInt8], openPath: [UInt8]? = nil, stat: FileStat) {
        self.directory = directory
        self.name = name
        rawPath = Array((directory + [name]).joined(separator: [UInt8(ascii: "/")]))
        relativePath = String(decoding: rawPath, as: UTF8.self)
        self.openPath = openPath ?? rawPath
        self.stat = stat
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
        guard let resolved = Builder.realPath(path) else {
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
        var components = file.openPath.split(separator: UInt8(ascii: "/")).map(Array.init)
        let name = components.removeLast()
        return try directory.descend(components).readFile(name, limit: limit)
    }
}

/// Finds the candidate images of a source tree: regular files, hidden names and the output
/// directory skipped. Symbolic links are skipped unless `followSymlinks`; followed, they never
/// lead out of the source directory, and a broken link or a loop is a failure. Every entry is
/// reached through an open directory descriptor, so names need not be UTF-8 and paths may be
/// longer than `PATH_MAX`; only the directories on the current branch are open at once.
struct SourceWalker {
    var root: SourceRoot
    /// Directories never entered (the output directory), by device and inode.
    var excluded: [FileIdentity]
    var followSymlinks = false
    /// `--exclude`: names and paths never taken, directories never entered.
    var rules = ExcludeRules()

    /// What a walk found: candidates in no particular order, and files that could not be taken.
    struct Result {
        var files: [SourceFile] = []
        var failures: [Manifest.Failure] = []
    }

    func walk() throws(ThumbframeError) -> Result {
        var result = Result()
        guard let rootStat = root.directory.stat(Array(".".utf8)) else {
            throw .sourceUnreadable(path: root.path, reason: FileStat.lastErrorDescription(default: "unreadable"))
        }
        let entries: [[UInt8]]
        do {
            entries = try root.directory.entries()
        } catch {
            throw .sourceUnreadable(path: root.path, reason: error.localizedDescription)
        }
        guard !followSymlinks, entries.count > 1 else {
            var visited: Set<FileIdentity> = [rootStat.identity]
            walk(root.directory, entries: entries, components: [], openComponents: [], visited: &visited, into: &result)
            return result
        }
        // Without followed links the tree has no loops: the root's entries are walked on all
        // cores, each worker with its own results (a rerun is mostly fstatat calls).
        let workers = min(entries.count, max(1, ProcessInfo.processInfo.activeProcessorCount) * 4)
        let parts = UnsafeMutableBufferPointer<Result>.allocate(capacity: workers)
        parts.initialize(repeating: Result())
        defer { parts.deinitialize().deallocate() }
        // Each iteration writes only its own slot.
        nonisolated(unsafe) let slots = parts
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var visited: Set<FileIdentity> = [rootStat.identity]
            let share = Array(entries[(entries.count * worker / workers)..<(entries.count * (worker + 1) / workers)])
            walk(root.directory, entries: share, components: [], openComponents: [], visited: &visited, into: &slots[worker])
        }
        for part in parts {
            result.files += part.files
            result.failures += part.failures
        }
        return result
    }

    private func walk(
        _ directory: Directory, entries: [[UInt8]], components: [[UInt8]], openComponents: [[UInt8]],
        visited: inout Set<FileIdentity>, into result: inout Result
    ) {
        for name in entries where name.first != UInt8(ascii: ".") && !rules.excludes(name: name, under: components) {
            let display = String(decoding: name, as: UTF8.self)
            func fail(_ reason: String) {
                let file = SourceFile(directory: components, name: name, stat: .missing)
                result.failures.append(.init(path: file.relativePath, rawPath: file.manifestRawPath, stage: "read", reason: reason))
            }
            guard var stat = directory.stat(name) else { continue }  // vanished since listing
            var opened: Directory = directory
            var openName = name
            var openPrefix = openComponents
            if stat.isSymbolicLink {
                guard followSymlinks else { continue }
                switch resolve(components + [name]) {
                case .failure(let problem):
                    if FileSignature.hasImageExtension(display) { fail(problem.description) }
                    continue
                case .success(let target):
                    // Reached from the root again, one component at a time without links.
                    guard let parent = try? root.directory.descend(target.dropLast()), let targetStat = parent.stat(target.last!)
                    else {
                        if FileSignature.hasImageExtension(display) { fail("symbolic link changed while it was followed") }
                        continue
                    }
                    (opened, openName, openPrefix, stat) = (parent, target.last!, Array(target.dropLast()), targetStat)
                }
            }
            if stat.isDirectory {
                guard !excluded.contains(stat.identity), visited.insert(stat.identity).inserted else { continue }
                let child: Directory
                let childEntries: [[UInt8]]
                do {
                    child = try opened.subdirectory(openName)
                    childEntries = try child.entries()
                } catch {
                    fail("cannot list directory: \(error.localizedDescription)")
                    continue
                }
                walk(
                    child, entries: childEntries, components: components + [name], openComponents: openPrefix + [openName],
                    visited: &visited, into: &result)
            } else if stat.isRegularFile,
                FileSignature.hasImageExtension(display) || FileSignature.looksLikeImage(opened.head(openName, count: 16))
            {
                result.files.append(
                    SourceFile(
                        directory: components, name: name,
                        openPath: Array((openPrefix + [openName]).joined(separator: [UInt8(ascii: "/")])), stat: stat))
            }
        }
    }

    /// Where a symbolic link leads, as components below the root, if it stays inside it.
    private func resolve(_ components: [[UInt8]]) -> Swift.Result<[[UInt8]], LinkProblem> {
        let path = Array(root.path.utf8) + components.flatMap { [UInt8(ascii: "/")] + $0 }
        guard path.count < Int(PATH_MAX) else { return .failure(LinkProblem("path too long to follow a symbolic link")) }
        guard let target = path.withCString({ realpath($0, nil) }) else {
            let code = errno
            if code == ELOOP { return .failure(LinkProblem("symbolic link loop")) }
            if code == ENOENT { return .failure(LinkProblem("broken symbolic link")) }
            return .failure(LinkProblem("cannot follow symbolic link: \(String(cString: strerror(code)))"))
        }
        defer { free(target) }
        let resolved = Array(UnsafeRawBufferPointer(start: target, count: strlen(target)))
        let prefix = Array((root.path + "/").utf8)
        guard resolved.starts(with: prefix) else {
            return .failure(LinkProblem("symbolic link points outside the source directory"))
        }
        return .success(resolved.dropFirst(prefix.count).split(separator: UInt8(ascii: "/")).map(Array.init))
    }

    private struct LinkProblem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

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
