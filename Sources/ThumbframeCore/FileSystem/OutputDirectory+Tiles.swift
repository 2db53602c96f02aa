import Foundation
import ThumbframeManifest

/// Deep-zoom tiles in OUT_DIR: `thumbs/XX/<hash>.dzi` and the folder `thumbs/XX/<hash>_files/`
/// beside it (DeepZoom's convention: a viewer finds the tiles from the `.dzi`'s URL). The `.dzi`
/// is the pyramid's name in the journal, the ledger and the manifest; it is written last, so a
/// `.dzi` on disk always has its whole pyramid. dzsave writes into a new temporary folder of
/// thumbframe's (`.tf-tmp-…` in the fan-out directory), whose `image_files` is renamed into
/// place whole.
extension OutputDirectory {
    /// What a pyramid holds, counted on disk.
    struct PyramidCount: Equatable {
        var levels: Int
        var files: Int
        var bytes: Int
    }

    /// The tile folder's name for a `.dzi` of thumbframe's shape (`<hash>_files`), or nil.
    static func tileFolder(of name: OutputName) -> String? {
        guard name.file.hasSuffix(".dzi") else { return nil }
        return String(name.file.dropLast(4)) + "_files"
    }

    /// The pyramid of the `.dzi` at `path` when both are there: the `.dzi`'s bytes and the count
    /// of its tiles; nil when either is missing or not of dzsave's shape.
    func existingPyramid(dzi path: String) -> (dzi: [UInt8], count: PyramidCount)? {
        guard let name = OutputName(path), let folder = Self.tileFolder(of: name), let directory = directory(of: name),
            let dzi = try? directory.readFile(name.fileBytes, limit: 1 << 20),
            let tiles = try? directory.subdirectory(Array(folder.utf8)), let count = Self.count(tiles)
        else { return nil }
        return (dzi, count)
    }

    /// Writes a pyramid for `path` (`thumbs/XX/<hash>.dzi`, already in the journal): `make` is
    /// given the path prefix dzsave writes `<prefix>.dzi` and `<prefix>_files` to, inside a new
    /// temporary folder; then the tiles are renamed into place (a complete pyramid already there
    /// under the same content address is kept) and the `.dzi` is written. `rewrite`, when given,
    /// replaces each tile's bytes before (WebP tiles lose the EXIF block libvips writes into
    /// each). Returns the `.dzi`'s bytes and the count, or `make`'s failure; the temporary
    /// folder is removed either way.
    func writePyramid<Failure: Error>(
        dzi path: String, rewrite: (([UInt8]) -> [UInt8])? = nil, _ make: (String) -> Result<Void, Failure>
    ) throws(FileSystemError) -> Result<(dzi: [UInt8], count: PyramidCount), Failure> {
        guard let name = OutputName(path), let folder = Self.tileFolder(of: name) else { throw .notRegular }
        let fanout = try fanoutDirectory(of: name)
        let temporary = try fanout.makeTemporarySubdirectory()
        defer { fanout.removeTree(Array(temporary.utf8), Self.temporaryShape) }
        let work = try fanout.subdirectory(Array(temporary.utf8))
        guard let prefix = Self.descriptorPath(work.fd).map({ $0 + "/image" }) else { throw .posix(ENOTSUP) }
        switch make(prefix) {
        case .failure(let failure):
            // dzsave says a full disk in words; the file system says it for sure: then the run
            // stops (`isOutputUnwritable`) rather than failing photo after photo.
            if let code = work.cannotTakeWrites(failure) { throw .posix(code) }
            return .failure(failure)
        case .success: break
        }
        // dzsave's dump of the image's header fields (none left: they were dropped) is not a tile.
        let tiles = try work.subdirectory(Array("image_files".utf8))
        tiles.removeFile(Array("vips-properties.xml".utf8))
        if let rewrite {
            for level in try tiles.entries() where Self.pyramidShape(level, depth: 0, isDirectory: true) {
                let folder = try tiles.subdirectory(level)
                for tile in try folder.entries() where Self.pyramidShape(tile, depth: 1, isDirectory: false) {
                    let bytes = try folder.readFile(tile, limit: 64 << 20)
                    let rewritten = rewrite(bytes)
                    if rewritten != bytes {
                        try folder.writeAtomically(rewritten, to: String(decoding: tile, as: UTF8.self), durable: false)
                    }
                }
            }
        }
        // A tile dzsave could not close (a full disk it did not report) leaves a hole or a stray file.
        guard let count = Self.count(tiles) else { throw work.cannotTakeWrites(nil).map { .posix($0) } ?? .incompletePyramid }
        let dzi = try work.readFile(Array("image.dzi".utf8), limit: 1 << 20)
        // An empty folder in the way is replaced; a complete pyramid under this content address
        // (renamed there whole by another run or item) is the same tiles and stays; anything
        // else (a user's file left in a pruned pyramid's folder) is neither removed nor published.
        let renamed = "image_files".withCString { from in folder.withCString { to in renameat(work.fd, from, fanout.fd, to) } }
        if renamed != 0 {
            let code = errno
            guard code == EEXIST || code == ENOTEMPTY else { throw .posix(code) }
            guard let existing = try? fanout.subdirectory(Array(folder.utf8)), Self.count(existing) == count else {
                throw .pyramidInTheWay
            }
        }
        try fanout.writeAtomically(dzi, to: name.file, durable: false)
        return .success((dzi, count))
    }

    /// Removes the pyramid of a `.dzi` path: the `.dzi` if it is a regular file, and the tiles
    /// folder's entries of dzsave's shape (anything else in it stays, and so does the folder).
    /// True when anything was removed.
    func removePyramid(dzi path: String) -> Bool {
        guard let name = OutputName(path), let folder = Self.tileFolder(of: name), let directory = directory(of: name) else {
            return false
        }
        let file = directory.removeFile(name.fileBytes)
        let tiles = directory.removeTree(Array(folder.utf8), Self.pyramidShape)
        return file || tiles
    }

    /// The names dzsave gives in a DeepZoom tiles folder, by depth (0: the folder's own
    /// entries): level folders of digits; tiles `<column>_<row>.<jpg|webp>`.
    static func pyramidShape(_ name: [UInt8], depth: Int, isDirectory: Bool) -> Bool {
        switch depth {
        case 0: return isDirectory && !name.isEmpty && name.count <= 3 && name.allSatisfy(isDigit)
        case 1:
            guard !isDirectory, let dot = name.lastIndex(of: UInt8(ascii: ".")),
                Manifest.Tiles.formats.contains(String(decoding: name[(dot + 1)...], as: UTF8.self))
            else { return false }
            let parts = name[..<dot].split(separator: UInt8(ascii: "_"), omittingEmptySubsequences: false)
            return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.count <= 9 && $0.allSatisfy(isDigit) }
        default: return false
        }
    }

    /// A temporary folder of a killed or failed dzsave: `image.dzi`, `image_files` with its
    /// levels, and whatever regular files dzsave's writer left at those depths (its own
    /// temporaries beside the files it was writing).
    static func temporaryShape(_ name: [UInt8], depth: Int, isDirectory: Bool) -> Bool {
        guard isDirectory else { return depth <= 2 }
        switch depth {
        case 0: return name == Array("image_files".utf8)
        case 1: return pyramidShape(name, depth: 0, isDirectory: true)
        default: return false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// Levels, tile files and bytes under a tiles folder; nil when a level or a tile is not of
    /// dzsave's shape, or a level is missing (levels are numbered from 0 without a gap).
    static func count(_ tiles: Directory) -> PyramidCount? {
        guard let levels = try? tiles.entries() else { return nil }
        var count = PyramidCount(levels: 0, files: 0, bytes: 0)
        var numbers: [Int] = []
        for level in levels {
            guard tiles.stat(level)?.isDirectory == true, pyramidShape(level, depth: 0, isDirectory: true),
                let number = Int(String(decoding: level, as: UTF8.self)), let folder = try? tiles.subdirectory(level),
                let files = try? folder.entries()
            else { return nil }
            numbers.append(number)
            for file in files {
                guard pyramidShape(file, depth: 1, isDirectory: false), let stat = folder.stat(file), stat.isRegularFile else {
                    return nil
                }
                count.files += 1
                count.bytes += stat.size
            }
        }
        guard numbers.sorted() == Array(0..<numbers.count) else { return nil }
        count.levels = numbers.count
        return count
    }

    /// A path through which a library that takes paths (dzsave) reaches the open directory
    /// `fd` itself, whatever its path's components become meanwhile.
    static func descriptorPath(_ fd: Int32) -> String? {
        #if os(Linux)
            // Without /proc (some containers) there is no such path.
            let path = "/proc/self/fd/\(fd)"
            return access(path, F_OK) == 0 ? path : nil
        #else
            var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
            guard fcntl(fd, F_GETPATH, &buffer) == 0 else { return nil }
            return String(cString: buffer)
        #endif
    }
}

extension Directory {
    /// The errno of a file system that cannot take writes now (ENOSPC: under 1 MiB or no inode
    /// left; EROFS: read-only), or of `failure`'s words when they say a full disk or quota.
    func cannotTakeWrites(_ failure: (any Error)?) -> Int32? {
        var info = statvfs()
        if fstatvfs(fd, &info) == 0 {
            if info.f_flag & UInt(ST_RDONLY) != 0 { return EROFS }
            if UInt64(info.f_bavail) * UInt64(info.f_frsize) < 1 << 20 || info.f_favail == 0 { return ENOSPC }
        }
        let words = failure.map { String(describing: $0) } ?? ""
        for code in [ENOSPC, EDQUOT, EFBIG] where words.contains(String(cString: strerror(code))) { return code }
        return nil
    }

    /// A new subdirectory of this one (mode 0700) under a temporary name no earlier run can have
    /// left (`TemporaryName`), created exclusively.
    func makeTemporarySubdirectory() throws(FileSystemError) -> String {
        for _ in 0..<8 {
            let name = TemporaryName.make()
            if name.withCString({ mkdirat(fd, $0, 0o700) }) == 0 { return name }
            if errno != EEXIST { throw .posix(errno) }
        }
        throw .posix(EEXIST)
    }

    /// Removes the folder `name` and what is in it, depth first, never through a link: only
    /// entries `shape` accepts (by name, depth below `name` and kind; links and other kinds never)
    /// are removed; anything else stays, and so does every folder above it. True when anything
    /// was removed.
    @discardableResult
    func removeTree(_ name: [UInt8], _ shape: (_ name: [UInt8], _ depth: Int, _ isDirectory: Bool) -> Bool) -> Bool {
        guard stat(name)?.isDirectory == true, let folder = try? subdirectory(name) else { return false }
        var removed = false
        func clear(_ directory: Directory, depth: Int) {
            for entry in (try? directory.entries()) ?? [] {
                guard let info = directory.stat(entry) else { continue }
                if info.isDirectory {
                    guard shape(entry, depth, true), let inner = try? directory.subdirectory(entry) else { continue }
                    clear(inner, depth: depth + 1)
                    if entry.withCString({ unlinkat(directory.fd, $0, AT_REMOVEDIR) }) == 0 { removed = true }
                } else if info.isRegularFile, shape(entry, depth, false), directory.removeFile(entry) {
                    removed = true
                }
            }
        }
        clear(folder, depth: 0)
        if name.withCString({ unlinkat(fd, $0, AT_REMOVEDIR) }) == 0 { removed = true }
        return removed
    }
}
