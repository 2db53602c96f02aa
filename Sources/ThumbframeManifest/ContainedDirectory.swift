public import Foundation

/// A directory whose files are read without ever leaving it: every path is relative, taken one
/// component at a time with `openat` and `O_NOFOLLOW` (so no link below the directory is
/// followed, and `..`, `.`, empty and absolute paths are refused before anything is opened),
/// the last component must be a regular file (a FIFO is never waited on), and a read is
/// refused past a stated size before a byte is read. Every reader of manifests — the Swift
/// library, `inspect`, `show`, `lookup`, `diff`, `validate` — opens pages and thumbnails
/// through it. The directory itself may be reached through links: the user named it.
///
/// A class rather than a struct: the directory's descriptor is closed in `deinit`.
/// `@unchecked Sendable`: `fd` never changes after `init`, and `openat`/`fstatat` on it are
/// safe from several threads.
public final class ContainedDirectory: @unchecked Sendable {
    private let fd: Int32
    /// The path it was opened by, for messages.
    public let path: String

    /// Opens the directory at `path` (links in `path` itself are followed).
    public init(_ path: String) throws(ContainedFileError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(errno) }
        self.fd = fd
        self.path = path
    }

    deinit {
        close(fd)
    }

    /// The directory holding the file a user named, and the file's name in it: links in the
    /// named path (`current.json -> builds/7/manifest.json`) are resolved first, since the
    /// user chose them; what lies below that directory is then reached without links.
    public static func locate(_ userPath: String) throws(ContainedFileError) -> (ContainedDirectory, String) {
        let resolved: String
        if let real = realpath(userPath, nil) {
            resolved = String(cString: real)
            free(real)
        } else {
            throw .posix(errno)
        }
        let url = URL(fileURLWithPath: resolved)
        let folder = url.deletingLastPathComponent().path
        return (try ContainedDirectory(folder.isEmpty ? "/" : folder), url.lastPathComponent)
    }

    /// The components of a relative path, or nil when it is empty, absolute, or has an empty,
    /// `.` or `..` component or a NUL byte.
    public static func components(_ relativePath: String) -> [String]? {
        guard !relativePath.isEmpty, !relativePath.hasPrefix("/"), !relativePath.utf8.contains(0) else { return nil }
        let parts = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return nil }
        return parts
    }

    /// The bytes of the regular file at `relativePath`, refusing one over `limit` bytes (from
    /// its size, before reading) and one that changes size while it is read.
    public func read(_ relativePath: String, limit: Int) throws(ContainedFileError) -> Data {
        let (file, size) = try openFile(relativePath)
        defer { close(file) }
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        var data = Data(count: size)
        var failure: Int32 = 0
        let got = data.withUnsafeMutableBytes { buffer -> Int in
            var count = 0
            while count < size {
                let result = Foundation.read(file, buffer.baseAddress! + count, size - count)
                if result < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if result == 0 { break }
                count += result
            }
            return count
        }
        guard failure == 0 else { throw .posix(failure) }
        var probe: UInt8 = 0
        guard got == size, Foundation.read(file, &probe, 1) <= 0 else { throw .changedWhileReading }
        return data
    }

    /// `body` given the regular file at `relativePath` open for reading and its size, reached as
    /// `read` reaches it (for a file too large to read whole: a video hashed a block at a time).
    public func withFile<T>(_ relativePath: String, _ body: (_ fd: Int32, _ size: Int) -> T) throws(ContainedFileError) -> T {
        let (file, size) = try openFile(relativePath)
        defer { close(file) }
        return body(file, size)
    }

    /// The size of the regular file at `relativePath`, reached as `read` reaches it.
    public func size(of relativePath: String) throws(ContainedFileError) -> Int {
        let (file, size) = try openFile(relativePath)
        close(file)
        return size
    }

    /// Opens the last component for reading after descending through the others, each without
    /// following a link; non-blocking, so a FIFO put there cannot hold the reader. Returns the
    /// descriptor (the caller closes it) and the size of what must be a regular file.
    private func openFile(_ relativePath: String) throws(ContainedFileError) -> (Int32, Int) {
        guard let parts = Self.components(relativePath) else { throw .notContained(relativePath) }
        var current = fd
        defer { if current != fd { close(current) } }
        for part in parts.dropLast() {
            let next = openat(current, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { throw Self.failure(errno) }
            if current != fd { close(current) }
            current = next
        }
        let file = openat(current, parts[parts.count - 1], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw Self.failure(errno) }
        var info = stat()
        guard fstat(file, &info) == 0 else {
            let code = errno
            close(file)
            throw .posix(code)
        }
        guard UInt32(info.st_mode) & 0o170000 == 0o100000 else {
            close(file)
            throw .notRegularFile
        }
        return (file, Int(info.st_size))
    }

    /// ELOOP (last component a link) and ENOTDIR (a directory component a link, or a file)
    /// say that a link stood where none is followed.
    private static func failure(_ code: Int32) -> ContainedFileError {
        code == ELOOP || code == ENOTDIR ? .linkOrNotDirectory : .posix(code)
    }
}

/// Why a file below a `ContainedDirectory` was not read.
public enum ContainedFileError: LocalizedError, Equatable, Sendable {
    /// The path is absolute, empty, or has an empty, `.` or `..` component.
    case notContained(String)
    /// A component is a symbolic link (never followed), or a file where a directory should be.
    case linkOrNotDirectory
    /// A directory, FIFO, socket or device.
    case notRegularFile
    /// Larger than the reader accepts.
    case tooLarge(size: Int, limit: Int)
    /// The file's size changed while it was read.
    case changedWhileReading
    /// A system call failed with this errno.
    case posix(Int32)

    /// The one-line reason.
    public var errorDescription: String? {
        switch self {
        case .notContained(let path): "'\(path)' is not a relative path inside the manifest's folder"
        case .linkOrNotDirectory: "a symbolic link (never followed below the manifest's folder) or not a directory"
        case .notRegularFile: "not a regular file"
        case .tooLarge(let size, let limit): "\(size) bytes, over the \(limit) bytes a reader accepts"
        case .changedWhileReading: "changed size while it was read"
        case .posix(let code): String(cString: strerror(code))
        }
    }
}
