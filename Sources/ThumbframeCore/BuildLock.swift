import Foundation

/// One build per output directory: an exclusive `flock` on `OUT_DIR/.thumbframe.lock`. The
/// kernel drops the lock when the process dies however it dies, so a killed build never leaves
/// a lock that blocks the next one. A class rather than a struct: closing the descriptor in
/// `deinit` releases the lock.
final class BuildLock {
    private let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    /// Takes the lock at once or throws `.locked` naming the holder.
    static func acquire(outputDirectory: String) throws(ThumbframeError) -> BuildLock {
        let path = outputDirectory + "/.thumbframe.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw .cannotWrite(path: path, reason: FileStat.lastErrorDescription(default: "cannot open"))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = String(decoding: FileSystem.head(path, count: 64), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            close(fd)
            throw .locked(path: outputDirectory, holder: holder.isEmpty ? "unknown process" : holder)
        }
        let note = Array("pid \(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = note.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return BuildLock(fd: fd)
    }
}

/// Set from a signal handler to stop a build between files.
public final class CancellationFlag: @unchecked Sendable {
    // @unchecked: both fields are only touched while `lock` is held.
    private let lock = NSLock()
    private var signalNumber: Int32?

    /// Creates a flag that is not set.
    public init() {}

    /// Asks the build to stop after the files in progress.
    public func cancel(signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if signalNumber == nil { signalNumber = signal }
    }

    /// The signal that cancelled the build, if any.
    public var signal: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return signalNumber
    }
}
