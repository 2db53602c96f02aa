import Foundation
import ThumbframeManifest

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
        /// Files met that are neither images nor failures, by kind (`FileSignature.skippedKind`).
        var skipped: [String: Int] = [:]

        /// The walk's failures (links, unlistable directories), canonically: a SHA-256.
        var failuresKey: String {
            let lines = failures.map { "\($0.path)\t\($0.rawPath ?? "")\t\($0.reason)" }.sorted()
            return Digest.sha256(lines.joined(separator: "\n"))
        }
    }

    /// Directories nested deeper than this below SOURCE_DIR are not entered (a walk failure
    /// names the first one): the walk holds one open directory per level.
    static let maximumDepth = 256

    /// A directory being listed: its open descriptor, its entries, the next one to look at, and
    /// where it is (as named, and as opened when reached through a followed link).
    private struct Frame {
        var directory: Directory
        var entries: [[UInt8]]
        var next = 0
        var components: [[UInt8]]
        var openComponents: [[UInt8]]
        /// The `.thumbframeignore` files in force here, shallowest first.
        var ignores: [IgnoreFile]
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
        let ignores = ignoreFiles(in: root.directory, entries: entries, components: [], inherited: [])
        guard !followSymlinks, entries.count > 1 else {
            var visited: Set<FileIdentity> = [rootStat.identity]
            // Links are followed only once the whole tree without them is walked, in path order:
            // a directory also reached through a link keeps its real name, whatever readdir's order.
            var links: [[UInt8]] = []
            let top = Frame(
                directory: root.directory, entries: sortedIfFollowing(entries), components: [], openComponents: [], ignores: ignores)
            walk(from: top, visited: &visited, links: &links, into: &result)
            var next = 0
            while next < links.count {
                var found: [[UInt8]] = []
                follow(links[next], visited: &visited, links: &found, into: &result)
                links += found.sorted { $0.lexicographicallyPrecedes($1) }
                next += 1
            }
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
        WorkerPool.forEach(count: workers, threads: ProcessInfo.processInfo.activeProcessorCount) { worker in
            var visited: Set<FileIdentity> = [rootStat.identity]
            var links: [[UInt8]] = []
            let share = Array(entries[(entries.count * worker / workers)..<(entries.count * (worker + 1) / workers)])
            let frame = Frame(directory: root.directory, entries: share, components: [], openComponents: [], ignores: ignores)
            walk(from: frame, visited: &visited, links: &links, into: &slots[worker])
        }
        // Each part is emptied as it is taken: a library's file list is never held twice.
        result.files.reserveCapacity(parts.reduce(0) { $0 + $1.files.count })
        for worker in parts.indices {
            result.files += parts[worker].files
            result.failures += parts[worker].failures
            result.skipped.merge(parts[worker].skipped, uniquingKeysWith: +)
            parts[worker] = Result()
        }
        return result
    }

    private func sortedIfFollowing(_ entries: [[UInt8]]) -> [[UInt8]] {
        followSymlinks ? entries.sorted { $0.lexicographicallyPrecedes($1) } : entries
    }

    /// A walk failure for the entry `name` under `components`.
    private static func failure(_ components: [[UInt8]], _ name: [UInt8], _ reason: String) -> Manifest.Failure {
        let file = SourceFile(directory: components, name: name, stat: .missing)
        return Manifest.Failure(path: file.relativePath, rawPath: file.manifestRawPath, stage: "read", reason: reason)
    }

    /// Walks the tree below `start` with a stack of frames, not recursion: a chain of 16 000
    /// directories costs a failure line, not the process. Links met are collected in `links`
    /// (their paths) when `followSymlinks`, to be followed after the real tree.
    private func walk(
        from start: Frame, visited: inout Set<FileIdentity>, links: inout [[UInt8]], into result: inout Result
    ) {
        var stack = [start]
        while let top = stack.indices.last {
            guard stack[top].next < stack[top].entries.count else {
                stack.removeLast()
                continue
            }
            let name = stack[top].entries[stack[top].next]
            stack[top].next += 1
            let frame = stack[top]
            guard name.first != UInt8(ascii: "."), !rules.excludes(name: name, under: frame.components) else { continue }
            guard let stat = frame.directory.stat(name) else { continue }  // vanished since listing
            if stat.isSymbolicLink {
                if followSymlinks, !frame.ignores.excludes(frame.components + [name], isDirectory: false) {
                    links.append(Array((frame.components + [name]).joined(separator: [UInt8(ascii: "/")])))
                }
                continue
            }
            if let child = enter(
                name, stat: stat, in: frame.directory, components: frame.components, openName: name,
                openComponents: frame.openComponents, ignores: frame.ignores, depth: stack.count, visited: &visited, into: &result)
            {
                stack.append(child)
            }
        }
    }

    /// What becomes of the entry `openName` of `directory` (named `name` under `components`):
    /// a directory to walk (returned as its frame), a candidate file (added to `result`), or
    /// nothing.
    private func enter(
        _ name: [UInt8], stat: FileStat, in directory: Directory, components: [[UInt8]], openName: [UInt8],
        openComponents: [[UInt8]], ignores: [IgnoreFile], depth: Int, visited: inout Set<FileIdentity>, into result: inout Result
    ) -> Frame? {
        let path = components + [name]
        if stat.isDirectory {
            guard !WalkDefaults.systemFolders.contains(name), !ignores.excludes(path, isDirectory: true),
                !excluded.contains(stat.identity), visited.insert(stat.identity).inserted
            else { return nil }
            guard depth <= Self.maximumDepth else {
                result.failures.append(
                    Self.failure(components, name, "directory nested more than \(Self.maximumDepth) levels deep; not entered"))
                return nil
            }
            let child: Directory
            let entries: [[UInt8]]
            do {
                child = try directory.subdirectory(openName)
                entries = try child.entries()
            } catch {
                result.failures.append(Self.failure(components, name, "cannot list directory: \(error.localizedDescription)"))
                return nil
            }
            // Another build's OUT_DIR (its marker files), or a folder that says it holds no media.
            let marked = entries.contains { entry in
                entry.first == UInt8(ascii: ".") && (WalkDefaults.outputMarkers.contains(entry) || entry == WalkDefaults.noMediaName)
            }
            guard !marked else { return nil }
            return Frame(
                directory: child, entries: sortedIfFollowing(entries), components: path, openComponents: openComponents + [openName],
                ignores: ignoreFiles(in: child, entries: entries, components: path, inherited: ignores))
        }
        guard stat.isRegularFile, !ignores.excludes(path, isDirectory: false) else { return nil }
        let display = String(decoding: name, as: UTF8.self)
        if FileSignature.isCandidate(display, head: { directory.head(openName, count: FileSignature.headBytes) }) {
            result.files.append(
                SourceFile(
                    directory: components, name: name,
                    openPath: Array((openComponents + [openName]).joined(separator: [UInt8(ascii: "/")])), stat: stat))
        } else {
            // Not an image: counted by kind, so the summary and the manifest say what was left out.
            result.skipped[FileSignature.skippedKind(display), default: 0] += 1
        }
        return nil
    }

    /// The ignore files in force in a directory: the inherited ones, and its own
    /// `.thumbframeignore` if it has one (a plain file, never a link).
    private func ignoreFiles(in directory: Directory, entries: [[UInt8]], components: [[UInt8]], inherited: [IgnoreFile]) -> [IgnoreFile] {
        guard entries.contains(WalkDefaults.ignoreFileName),
            let text = try? directory.readFile(WalkDefaults.ignoreFileName, limit: WalkDefaults.maximumIgnoreFileBytes)
        else { return inherited }
        return inherited + [IgnoreFile(base: components, text: text)]
    }

    /// Follows the link at `path` (after the real tree was walked): a file becomes a candidate
    /// under the link's name, a directory not walked yet is walked under it; a link that leads
    /// out of SOURCE_DIR, nowhere or in a loop is a failure when it names an image or a directory.
    private func follow(_ path: [UInt8], visited: inout Set<FileIdentity>, links: inout [[UInt8]], into result: inout Result) {
        var components = path.split(separator: UInt8(ascii: "/")).map(Array.init)
        let name = components.removeLast()
        let display = String(decoding: name, as: UTF8.self)
        switch resolve(components + [name]) {
        case .failure(let problem):
            if FileSignature.hasItemExtension(display) || problem.isDirectory {
                result.failures.append(Self.failure(components, name, problem.description))
            }
        case .success(let target):
            // Reached from the root again, one component at a time without links.
            guard let parent = try? root.directory.descend(target.dropLast()), let stat = parent.stat(target.last!) else {
                if FileSignature.hasItemExtension(display) {
                    result.failures.append(Self.failure(components, name, "symbolic link changed while it was followed"))
                }
                return
            }
            // The ignore files of the link's own place are those of its parent directories.
            var ignores: [IgnoreFile] = []
            for depth in 0...components.count {
                let prefix = Array(components.prefix(depth))
                guard let directory = try? root.directory.descend(prefix), let entries = try? directory.entries() else { continue }
                ignores = ignoreFiles(in: directory, entries: entries, components: prefix, inherited: ignores)
            }
            if let frame = enter(
                name, stat: stat, in: parent, components: components, openName: target.last!, openComponents: Array(target.dropLast()),
                ignores: ignores, depth: components.count + 1, visited: &visited, into: &result)
            {
                walk(from: frame, visited: &visited, links: &links, into: &result)
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
            let fd = open(target, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)
            let isDirectory = fd >= 0
            if fd >= 0 { close(fd) }
            return .failure(LinkProblem("symbolic link points outside the source directory", isDirectory: isDirectory))
        }
        return .success(resolved.dropFirst(prefix.count).split(separator: UInt8(ascii: "/")).map(Array.init))
    }

    private struct LinkProblem: Error, CustomStringConvertible {
        var description: String
        /// The link leads to a directory (outside SOURCE_DIR): a failure whatever its name.
        var isDirectory = false
        init(_ description: String, isDirectory: Bool = false) {
            self.description = description
            self.isDirectory = isDirectory
        }
    }
}
