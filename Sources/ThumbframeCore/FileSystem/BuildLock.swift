import Foundation

/// One build per output directory: an exclusive `flock` on OUT_DIR itself (a name can be moved
/// aside, the directory cannot) and on `OUT_DIR/.thumbframe.lock`, which says who holds it. The
/// kernel drops the lock when the process dies however it dies, so a killed build never leaves
/// a lock that blocks the next one. A class rather than a struct: its `OpenFile`s close the
/// descriptors when the lock goes, which releases it.
final class BuildLock {
    private let file: OpenFile
    /// OUT_DIR opened anew (an open file description of its own, which the lock belongs to).
    private let directory: OpenFile?
    /// The lock file's directory and name, when this lock created the file (nil: it was there).
    private let created: (output: Directory, name: String)?

    private init(file: OpenFile, directory: OpenFile?, created: (output: Directory, name: String)?) {
        self.file = file
        self.directory = directory
        self.created = created
    }

    /// Removes the lock file when this lock made it (still holding the lock): a build that stops
    /// before writing anything (a `manifest.json` not thumbframe's) leaves nothing behind.
    func withdraw() {
        guard let created, let stat = file.stat(), stat.links == 1,
            created.output.stat(Array(created.name.utf8))?.identity == stat.identity
        else { return }
        _ = created.output.removeFile(Array(created.name.utf8))
    }

    /// Unlocks before the descriptor closes: the lock belongs to the open file, which a child
    /// process being spawned at that moment (by this process's own threads) holds a copy of
    /// until it execs; unlocking releases it for every copy.
    deinit {
        _ = flock(file.fd, LOCK_UN)
        if let directory { _ = flock(directory.fd, LOCK_UN) }
    }

    /// Takes the lock at once or throws `.locked` naming the holder. The lock file is opened
    /// relative to OUT_DIR without following a link, and written only when it is a plain file
    /// of one link: a link or hard link planted there never gets its target truncated.
    /// `shared`: held by shard builds at once (each also holds its own shard lock), never with
    /// a build or merge, which hold it alone.
    static func acquire(
        in output: Directory, name: String = OutputDirectory.lockName, shared: Bool = false
    ) throws(ThumbframeError) -> BuildLock {
        let path = output.path + "/" + name
        func holder() -> String {
            let note = String(decoding: output.head(Array(name.utf8), count: 64), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return note.isEmpty ? "unknown process" : note
        }
        // The build's own lock is on the directory too (a shard's lock file is its shard's alone).
        var directory: OpenFile?
        if name == OutputDirectory.lockName {
            let fd = openat(output.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotWrite(path: output.path, reason: String(cString: strerror(errno))) }
            directory = OpenFile(fd: fd)
            guard flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else { throw .locked(path: output.path, holder: holder()) }
        }
        let flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        var fd = name.withCString { openat(output.fd, $0, flags | O_CREAT | O_EXCL, 0o644) }
        let made = fd >= 0
        if fd < 0, errno == EEXIST { fd = name.withCString { openat(output.fd, $0, flags) } }
        guard fd >= 0 else {
            let code = errno
            let reason = code == ELOOP ? FileSystemError.symbolicLink.localizedDescription : String(cString: strerror(code))
            throw .cannotWrite(path: path, reason: reason)
        }
        let file = OpenFile(fd: fd)
        guard let stat = file.stat(), stat.isRegularFile, stat.links == 1 else {
            throw .cannotWrite(path: path, reason: "not a plain file of thumbframe's (a link or hard link); remove it")
        }
        guard flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else { throw .locked(path: output.path, holder: holder()) }
        if !shared {
            let note = Array("pid \(getpid())\n".utf8)
            _ = ftruncate(fd, 0)
            _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        return BuildLock(file: file, directory: directory, created: made ? (output, name) : nil)
    }
}
