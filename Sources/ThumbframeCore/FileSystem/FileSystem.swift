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
    /// Hard links to the inode.
    var links: Int = 1
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int

    var isDirectory: Bool { mode & 0o170000 == 0o040000 }
    var isRegularFile: Bool { mode & 0o170000 == 0o100000 }
    var isSymbolicLink: Bool { mode & 0o170000 == 0o120000 }

    /// `lstat(path)`, or nil with errno set.
    static func lstat(_ path: String) -> FileStat? {
        var info = Foundation.stat()
        #if canImport(Glibc)
            guard Glibc.lstat(path, &info) == 0 else { return nil }
        #else
            guard Darwin.lstat(path, &info) == 0 else { return nil }
        #endif
        return FileStat(info)
    }

    /// The modification time as one integer (nanoseconds since 1970, or for a time past 2262
    /// seconds with a marker), what the state index compares without formatting a date.
    var modifiedKey: Int {
        let scaled = modifiedSeconds.multipliedReportingOverflow(by: 1_000_000_000)
        let sum = scaled.partialValue.addingReportingOverflow(modifiedNanoseconds)
        return scaled.overflow || sum.overflow ? Int.min &+ modifiedSeconds : sum.partialValue
    }

    /// The earliest and latest times RFC 3339's four-digit years can say (0000-01-01T00:00:00Z
    /// and 9999-12-31T23:59:59Z, in seconds since 1970).
    static let representableSeconds = -62_167_219_200...253_402_300_799

    /// The modification time as RFC 3339 in UTC with nanoseconds: `2019-06-01T10:00:00.123456789Z`.
    /// A time outside years 0000–9999 (a file dated 2^40 s) is clamped to the nearest end, so
    /// the manifest always holds a real date.
    var modifiedRFC3339: String {
        let range = Self.representableSeconds
        if modifiedSeconds < range.lowerBound { return "0000-01-01T00:00:00.000000000Z" }
        if modifiedSeconds > range.upperBound { return "9999-12-31T23:59:59.999999999Z" }
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

    /// `strerror(errno)`, or `fallback` when errno is 0. Call it right after the failing call.
    static func lastErrorDescription(default fallback: String) -> String {
        let code = errno
        return code == 0 ? fallback : String(cString: strerror(code))
    }
}

extension FileStat {
    /// The facts of a `stat` result.
    init(_ info: stat) {
        #if canImport(Glibc)
            let modified = info.st_mtim
        #else
            let modified = info.st_mtimespec
        #endif
        self.init(
            identity: FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)),
            mode: UInt32(info.st_mode), size: Int(info.st_size), links: Int(info.st_nlink),
            modifiedSeconds: Int(modified.tv_sec), modifiedNanoseconds: Int(modified.tv_nsec))
    }
}

/// Small POSIX helpers for paths the user names (manifests given to the readers, OUT_DIR itself).
/// Everything below OUT_DIR and SOURCE_DIR goes through `Directory`.
enum FileSystem {
    /// Reads a whole regular file without following a symlink in its last component.
    static func readFile(_ path: String, limit: Int = Int.max) throws(FileSystemError) -> [UInt8] {
        // O_NONBLOCK: a FIFO put where a file was must not block the open; a regular file ignores it.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .posix(errno) }
        let file = OpenFile(fd: fd)
        guard let stat = file.stat() else { throw .posix(errno) }
        guard stat.isRegularFile else { throw .notRegular }
        return try file.read(limit: limit)
    }

    /// The path with every link and `.`/`..` resolved (realpath(3)), or nil with errno set.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Creates a directory and its parents (mode 0755); fine when it exists. The path may be or
    /// pass through symbolic links: the user named it.
    static func makeDirectories(_ path: String) throws(FileSystemError) {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o755) != 0, errno != EEXIST { throw .posix(errno) }
        }
        _ = try Directory.open(path)  // a directory, or a link to one
    }
}

/// A failed system call, as one line.
enum FileSystemError: LocalizedError, Equatable {
    case posix(Int32)
    case notRegular
    case notDirectory
    /// A symbolic link where thumbframe never follows one.
    case symbolicLink
    /// Bigger than the limit it is read with (`--max-file-bytes`).
    case tooLarge(size: Int, limit: Int)
    /// The file's size changed between `fstat` and the end of the read.
    case changedWhileReading
    /// A deep-zoom pyramid's tiles folder holds something else than that pyramid whole.
    case pyramidInTheWay
    /// dzsave said it wrote a pyramid, yet a level or tile is missing or a file is not a tile.
    case incompletePyramid

    /// The file system cannot take writes at all (full, over quota, read-only, failing): a
    /// write into OUT_DIR that fails so stops the build rather than failing file after file.
    var isOutputUnwritable: Bool {
        guard case .posix(let code) = self else { return false }
        return [ENOSPC, EDQUOT, EROFS, EIO, EFBIG].contains(code)
    }

    var errorDescription: String? {
        switch self {
        case .posix(let code): String(cString: strerror(code))
        case .notRegular: "not a regular file"
        case .notDirectory: "not a directory"
        case .symbolicLink: "is a symbolic link, which thumbframe does not follow here"
        case .tooLarge(let size, let limit): "file is \(size) bytes, over --max-file-bytes \(limit)"
        case .changedWhileReading: "file changed size while it was read; it will be read again next run"
        case .incompletePyramid: "dzsave left a pyramid with a level or tile missing or a file that is not a tile"
        case .pyramidInTheWay:
            "its tiles folder holds an incomplete pyramid or files thumbframe did not write; the pruner removes "
                + "its tiles at the end of this run, and once nothing else is in it the next run makes it"
        }
    }
}

extension FileStat {
    /// `stat` facts that change whenever a file is rewritten: size, modification time, inode.
    var fingerprint: String {
        "\(size),\(modifiedSeconds).\(modifiedNanoseconds),\(identity.inode)"
    }
}
