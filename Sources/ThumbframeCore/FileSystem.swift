import CThumbframeShim
import Foundation

/// Device and inode: what identifies a directory whatever path reaches it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// The facts of `lstat` thumbframe uses.
struct FileStat: Sendable, Equatable {
    var identity: FileIdentity
    var mode: UInt32
    var size: Int
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    var isDirectory: Bool { mode & 0o170000 == 0o040000 }
    var isRegularFile: Bool { mode & 0o170000 == 0o100000 }
    var isSymbolicLink: Bool { mode & 0o170000 == 0o120000 }

    /// `lstat(path)`, or nil with errno set.
    static func lstat(_ path: String) -> FileStat? {
        var info = stat()
        #if canImport(Glibc)
            guard Glibc.lstat(path, &info) == 0 else { return nil }
            let modified = info.st_mtim
        #else
            guard Darwin.lstat(path, &info) == 0 else { return nil }
            let modified = info.st_mtimespec
        #endif
        return FileStat(
            identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            mode: UInt32(info.st_mode), size: Int(info.st_size),
            modifiedSeconds: Int(modified.tv_sec), modifiedNanoseconds: Int(modified.tv_nsec))
    }

    /// The modification time as RFC 3339 in UTC with nanoseconds: `2019-06-01T10:00:00.123456789Z`.
    var modifiedRFC3339: String {
        var seconds = time_t(modifiedSeconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let nanos = String(modifiedNanoseconds)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + String(repeating: "0", count: 9 - nanos.count) + nanos + "Z"
    }

    /// `strerror(errno)`, or `fallback` when errno is 0.
    static func lastErrorDescription(default fallback: String) -> String {
        let code = errno
        return code == 0 ? fallback : String(cString: strerror(code))
    }
}

/// Small POSIX helpers: whole-file reads, atomic writes, directory listing.
enum FileSystem {
    /// Names in a directory as raw bytes (names need not be UTF-8), without `.` and `..`.
    static func directoryEntries(_ path: String) -> [[UInt8]]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        errno = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name != [46] && name != [46, 46] { names.append(name) }
        }
        return names
    }

    /// The first `count` bytes of a file (fewer if it is shorter or unreadable).
    static func head(_ path: String, count: Int) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, count) }
        return got > 0 ? Array(buffer.prefix(got)) : []
    }

    /// Reads a whole regular file without following a symlink in its last component.
    static func readFile(_ path: String) throws(FileSystemError) -> [UInt8] {
        // O_NONBLOCK: a FIFO put where a file was must not block the open; a regular file ignores it.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .posix(errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .posix(errno) }
        guard info.st_mode & 0o170000 == 0o100000 else { throw .notRegular }
        // Read straight into one buffer of the size fstat gave; a file that grows meanwhile is
        // read to its new end in further chunks, one that shrinks ends early.
        let size = Int(info.st_size)
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let got = read(fd, buffer.baseAddress! + count, size - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                count += got
            }
        }
        guard failure == 0 else { throw .posix(failure) }
        guard bytes.count == size else { return bytes }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .posix(errno)
            }
            if got == 0 { return bytes }
            bytes.append(contentsOf: chunk.prefix(got))
        }
    }

    /// Creates a directory and its parents (mode 0755); fine when it exists.
    static func makeDirectories(_ path: String) throws(FileSystemError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST { throw .posix(errno) }
        }
        guard FileStat.lstat(path)?.isDirectory == true else { throw .notDirectory }
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
    /// reader (or a crash) never sees a partial file under the final name. With `durable`, the
    /// data and the directory entry are fsynced.
    static func writeAtomically(_ bytes: [UInt8], to path: String, durable: Bool) throws(FileSystemError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = "\(directory)/.tf-tmp-\(getpid())-\(temporaryCounter.next())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .posix(errno) }
        let failure: Int32? = bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let result = write(fd, raw.baseAddress! + written, raw.count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += result
            }
            return durable && fsync(fd) != 0 ? errno : nil
        }
        close(fd)
        if let failure {
            unlink(temporary)
            throw .posix(failure)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .posix(code)
        }
        if durable { try syncDirectory(directory) }
    }

    /// Makes every write on the file system holding `path` durable.
    static func syncFileSystem(of path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(errno) }
        defer { close(fd) }
        guard tf_syncfs(fd) == 0 else { throw .posix(errno) }
    }

    private static func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .posix(errno) }
    }

    private static let temporaryCounter = AtomicCounter()
}

/// A failed system call, as one line.
enum FileSystemError: LocalizedError, Equatable {
    case posix(Int32)
    case notRegular
    case notDirectory

    var errorDescription: String? {
        switch self {
        case .posix(let code): String(cString: strerror(code))
        case .notRegular: "not a regular file"
        case .notDirectory: "not a directory"
        }
    }
}

/// A process-wide counter for unique temporary names.
final class AtomicCounter: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
