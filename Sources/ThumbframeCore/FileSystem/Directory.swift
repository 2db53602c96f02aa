import Foundation

/// An open directory: every name below it is reached with `openat`/`fstatat` relative to this
/// descriptor and never through a symbolic link (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`), so no
/// path component can be swapped for a link while thumbframe works, and paths of any length
/// (past `PATH_MAX`) are reachable one component at a time. A class rather than a struct: the
/// descriptor is closed in `deinit`.
///
/// `@unchecked Sendable`: `fd` never changes after `init`, and every system call used on it
/// (`openat`, `fstatat`, `unlinkat`, `renameat`, `mkdirat`) is safe to make from several threads.
final class Directory: @unchecked Sendable {
    let fd: Int32
    /// The path it was opened by, for messages only.
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit {
        close(fd)
    }

    /// A directory descriptor this process was handed (a decode worker's source and OUT_DIR), now owned.
    static func adopt(fd: Int32, path: String) -> Directory {
        Directory(fd: fd, path: path)
    }

    /// Opens `path`, following symbolic links in it (the user named it), or throws with the
    /// errno of the failing call.
    static func open(_ path: String) throws(FileSystemError) -> Directory {
        let fd = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw code == ENOTDIR ? .notDirectory : .posix(code)
        }
        return Directory(fd: fd, path: path)
    }

    /// The subdirectory `name`, never through a symbolic link (`.symbolicLink` when it is one).
    func subdirectory(_ name: [UInt8]) throws(FileSystemError) -> Directory {
        let fd = name.withCString { openat(self.fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard fd >= 0 else { throw Self.linkAware(errno, at: self, name) }
        return Directory(fd: fd, path: path + "/" + String(decoding: name, as: UTF8.self))
    }

    /// The subdirectory `name`, created (mode 0755) when it does not exist.
    func makeSubdirectory(_ name: String) throws(FileSystemError) -> Directory {
        let bytes = Array(name.utf8)
        if bytes.withCString({ mkdirat(fd, $0, 0o755) }) != 0, errno != EEXIST { throw .posix(errno) }
        return try subdirectory(bytes)
    }

    /// The directory at a `/`-separated relative path, one component at a time.
    func descend(_ components: some Sequence<[UInt8]>) throws(FileSystemError) -> Directory {
        var current = self
        for component in components { current = try current.subdirectory(component) }
        return current
    }

    /// `fstatat` without following a link, or nil (errno set) when there is nothing there.
    func stat(_ name: [UInt8]) -> FileStat? {
        var info = Foundation.stat()
        guard name.withCString({ fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else { return nil }
        return FileStat(info)
    }

    /// The names in this directory as raw bytes (names need not be UTF-8), without `.` and `..`.
    func entries() throws(FileSystemError) -> [[UInt8]] {
        // fdopendir takes the descriptor it is given: hand it a duplicate so ours stays open.
        let copy = dup(fd)
        guard copy >= 0 else { throw .posix(errno) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw .posix(code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        errno = 0
        // A name is read up to its NUL where it lies: an entry holds only as much of `d_name` as
        // its name needs (`d_reclen`), so copying the field's 256 bytes reads past the last
        // entry of glibc's buffer, into a page that may not be mapped (a walk of folders of a
        // thousand photos crashed so).
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let entry = readdir(stream) {
            let start = UnsafeRawPointer(entry).advanced(by: offset).assumingMemoryBound(to: UInt8.self)
            let name = Array(UnsafeBufferPointer(start: start, count: strlen(UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self))))
            if name != [46] && name != [46, 46] { names.append(name) }
        }
        if errno != 0 { throw .posix(errno) }
        return names
    }

    /// Opens the regular file `name` for reading, never through a link and never blocking on a
    /// FIFO put where a file was.
    func openFile(_ name: [UInt8]) throws(FileSystemError) -> OpenFile {
        let fd = name.withCString { openat(self.fd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw Self.linkAware(errno, at: self, name) }
        let file = OpenFile(fd: fd)
        guard let stat = file.stat() else { throw .posix(errno) }
        guard stat.isRegularFile else { throw .notRegular }
        return file
    }

    /// Reads the regular file `name` whole, refusing more than `limit` bytes (see `OpenFile.read`).
    func readFile(_ name: [UInt8], limit: Int = Int.max) throws(FileSystemError) -> [UInt8] {
        try openFile(name).read(limit: limit)
    }

    /// The first `count` bytes of the file `name` (fewer if it is shorter or unreadable).
    func head(_ name: [UInt8], count: Int) -> [UInt8] {
        guard let file = try? openFile(name) else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { Foundation.read(file.fd, $0.baseAddress, count) }
        return got > 0 ? Array(buffer.prefix(got)) : []
    }

    /// Writes `bytes` to `name` through a temporary file in this directory and a rename, so a
    /// reader (or a crash) never sees a partial file under the final name. The rename replaces
    /// a link at `name` itself, never what it points to. With `durable`, the data and the
    /// directory entry are fsynced.
    func writeAtomically(_ bytes: [UInt8], to name: String, durable: Bool) throws(FileSystemError) {
        try writeAtomically(to: name, durable: durable) { (write) throws(FileSystemError) in try write(bytes) }
    }

    /// `writeAtomically` for content made piece by piece: `produce` calls the function it is
    /// given with each piece in order (a ledger of millions of lines is never one buffer).
    func writeAtomically(
        to name: String, durable: Bool,
        produce: (_ write: ([UInt8]) throws(FileSystemError) -> Void) throws(FileSystemError) -> Void
    ) throws(FileSystemError) {
        let (temporary, tfd) = try createTemporary()
        func write(_ bytes: [UInt8]) throws(FileSystemError) {
            let failure: Int32? = bytes.withUnsafeBytes { raw in
                var written = 0
                while written < raw.count {
                    let result = Foundation.write(tfd, raw.baseAddress! + written, raw.count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    written += result
                }
                return nil
            }
            if let failure { throw .posix(failure) }
        }
        do throws(FileSystemError) {
            try produce(write)
            if durable, fsync(tfd) != 0 { throw .posix(errno) }
        } catch {
            close(tfd)
            _ = temporary.withCString { unlinkat(fd, $0, 0) }
            throw error
        }
        close(tfd)
        let renamed = temporary.withCString { from in name.withCString { to in renameat(fd, from, fd, to) } }
        guard renamed == 0 else {
            let code = errno
            _ = temporary.withCString { unlinkat(fd, $0, 0) }
            throw .posix(code)
        }
        if durable, fsync(fd) != 0 { throw .posix(errno) }
    }

    /// A file made by `make` through its descriptor (open for reading and writing: a muxer reads
    /// back what it wrote), in a temporary file renamed to `name` when `make` gives a value; when
    /// it gives nil, the temporary file is removed and nothing is renamed.
    func writeAtomically<T>(to name: String, make: (Int32) -> T?) throws(FileSystemError) -> T? {
        let (temporary, tfd) = try createTemporary(readable: true)
        let made = make(tfd)
        close(tfd)
        guard let made else {
            _ = temporary.withCString { unlinkat(fd, $0, 0) }
            return nil
        }
        let renamed = temporary.withCString { from in name.withCString { to in renameat(fd, from, fd, to) } }
        guard renamed == 0 else {
            let code = errno
            _ = temporary.withCString { unlinkat(fd, $0, 0) }
            throw .posix(code)
        }
        return made
    }

    /// A new temporary file, created exclusively under a name no earlier run can have left
    /// (random, not the process id: in a container every run is PID 1).
    private func createTemporary(readable: Bool = false) throws(FileSystemError) -> (String, Int32) {
        for _ in 0..<8 {
            let name = TemporaryName.make()
            let access = readable ? O_RDWR : O_WRONLY
            let tfd = name.withCString { openat(fd, $0, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            if tfd >= 0 { return (name, tfd) }
            if errno != EEXIST { throw .posix(errno) }
        }
        throw .posix(EEXIST)
    }

    /// Whether a file of `bytes` can be written here now: a temporary file is written (and
    /// fsynced) and removed. False on a full disk, a quota, a read-only mount or an I/O error.
    func takesWrite(bytes: Int) -> Bool {
        guard let (temporary, tfd) = try? createTemporary() else { return false }
        defer {
            close(tfd)
            _ = temporary.withCString { unlinkat(fd, $0, 0) }
        }
        let block = [UInt8](repeating: 0, count: min(bytes, 1 << 20))
        var written = 0
        while written < bytes {
            let wrote = block.withUnsafeBytes { Foundation.write(tfd, $0.baseAddress, min($0.count, bytes - written)) }
            guard wrote > 0 else { return false }
            written += wrote
        }
        return fsync(tfd) == 0
    }

    /// Removes the regular file `name`; true when it was removed. A link, a directory or
    /// anything else is left alone.
    @discardableResult
    func removeFile(_ name: [UInt8]) -> Bool {
        guard stat(name)?.isRegularFile == true else { return false }
        return name.withCString { unlinkat(fd, $0, 0) } == 0
    }

    /// Removes the subdirectory `name` when it is empty.
    func removeEmptySubdirectory(_ name: [UInt8]) {
        _ = name.withCString { unlinkat(fd, $0, AT_REMOVEDIR) }
    }

    /// Makes every write on this directory's file system durable: one `syncfs` on Linux (every
    /// thumbnail before the manifest that names them is renamed into place), `fsync` of the
    /// directory where there is none.
    func syncFileSystem() throws(FileSystemError) {
        guard (Self.syncfs.map { $0(fd) } ?? fsync(fd)) == 0 else { throw .posix(errno) }
    }

    /// glibc's `syncfs`, which Swift's Glibc module does not declare (a `_GNU_SOURCE` function):
    /// looked up once by name.
    private static let syncfs: (@convention(c) (Int32) -> Int32)? = {
        #if os(Linux)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "syncfs") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        #else
            return nil
        #endif
    }()

    /// ELOOP (and, for `O_DIRECTORY`, ENOTDIR on a link) become `.symbolicLink`.
    private static func linkAware(_ code: Int32, at directory: Directory, _ name: [UInt8]) -> FileSystemError {
        if code == ELOOP || code == ENOTDIR || code == EMLINK, directory.stat(name)?.isSymbolicLink == true {
            return .symbolicLink
        }
        return code == ENOTDIR ? .notDirectory : .posix(code)
    }
}

/// An open regular file. A class: the descriptor is closed in `deinit`.
final class OpenFile {
    let fd: Int32

    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        close(fd)
    }

    func stat() -> FileStat? {
        var info = Foundation.stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return FileStat(info)
    }

    /// Reads the whole file into one buffer of the size `fstat` gives, after checking that size
    /// against `limit` (a 100 GB sparse file is refused before a byte is read). A file that
    /// grows or shrinks while it is read is an error, never a longer read: the next run sees it
    /// settled.
    func read(limit: Int) throws(FileSystemError) -> [UInt8] {
        guard let stat = stat() else { throw .posix(errno) }
        let size = stat.size
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let got = Foundation.read(fd, buffer.baseAddress! + count, size - count)
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
        guard bytes.count == size else { throw .changedWhileReading }
        var probe: UInt8 = 0
        if Foundation.read(fd, &probe, 1) > 0 { throw .changedWhileReading }
        return bytes
    }

    /// Calls `body` with the whole file mapped read-only (of the size `fstat` gives, checked
    /// against `limit` first): its bytes are the page cache's, not a copy on the heap, and leave
    /// no hole in it when unmapped (a decode worker's heap otherwise grows with every file of
    /// another size). An empty file is an empty buffer. A file cut short while it is mapped
    /// raises SIGBUS where its lost pages are read: in a decode worker, its end, which the build
    /// reports as the file changed while it was read.
    func withMapped<Result>(limit: Int, _ body: (UnsafeRawBufferPointer) -> Result) throws(FileSystemError) -> Result {
        guard let stat = stat() else { throw .posix(errno) }
        let size = stat.size
        guard size <= limit else { throw .tooLarge(size: size, limit: limit) }
        guard size > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else { throw .posix(errno) }
        defer { munmap(base, size) }
        return body(UnsafeRawBufferPointer(start: base, count: size))
    }

    /// Reads the file from its current offset in pieces of at most `size` bytes, in order,
    /// until its end (memory: one piece, whatever the file's size).
    func forEachPiece(size: Int = 1 << 20, _ body: ([UInt8]) throws(FileSystemError) -> Void) throws(FileSystemError) {
        var buffer = [UInt8](repeating: 0, count: size)
        while true {
            let got = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, size) }
            if got < 0 {
                if errno == EINTR { continue }
                throw .posix(errno)
            }
            if got == 0 { return }
            try body(got == size ? buffer : Array(buffer.prefix(got)))
        }
    }

    /// Calls `body` with each line (without its newline; a last line without one too). A line
    /// longer than `maximumLine` bytes is skipped whole, so a file without newlines (a sparse
    /// gigabyte put where a ledger was) costs a piece of memory, not its size.
    func forEachLine(
        maximumLine: Int = 4096, pieceSize: Int = 1 << 20, _ body: (ArraySlice<UInt8>) -> Void
    ) throws(FileSystemError) {
        var carry: [UInt8] = []
        var skipping = false
        try forEachPiece(size: pieceSize) { (piece) throws(FileSystemError) in
            var start = 0
            while let newline = piece[start...].firstIndex(of: 10) {
                if skipping {
                    skipping = false
                } else if carry.isEmpty {
                    if newline - start <= maximumLine { body(piece[start..<newline]) }
                } else {
                    carry += piece[start..<newline]
                    if carry.count <= maximumLine { body(carry[...]) }
                    carry.removeAll(keepingCapacity: true)
                }
                start = newline + 1
            }
            guard !skipping else { return }
            carry += piece[start...]
            if carry.count > maximumLine {
                carry.removeAll(keepingCapacity: true)
                skipping = true
            }
        }
        if !carry.isEmpty, !skipping { body(carry[...]) }
    }

    /// The first `count` bytes (fewer if the file is shorter), read with `pread`: the file's
    /// offset does not move.
    func head(_ count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        return got > 0 ? Array(buffer.prefix(got)) : []
    }
}

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a NUL-terminated C string.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (self + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}
