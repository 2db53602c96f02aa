import Foundation
import ThumbframeManifest

/// OUT_DIR as thumbframe touches it: `manifest.json`, the lock, `thumbs/XX/` and two state
/// files, all reached through directory descriptors that never follow a link. What thumbframe
/// owns here is written down before it is created (the journal), so a later run can remove
/// what no manifest names even after a crash, and nothing else is ever removed.
///
/// `@unchecked Sendable`: the descriptors of `root` and `thumbs` never change after `init`;
/// the fan-out cache and the journal descriptor are only touched while `lock` is held.
final class OutputDirectory: @unchecked Sendable {
    /// OUT_DIR itself (the user may name it through a link; below it, no link is followed).
    let root: Directory
    /// `OUT_DIR/thumbs`, created when writing; nil for a reader when there is none.
    let thumbs: Directory?

    private let lock = NSLock()
    private var fanouts: [String: Directory] = [:]
    private var journal: Int32 = -1

    static let manifestName = "manifest.json"
    static let lockName = ".thumbframe.lock"
    /// Every thumbnail path thumbframe owns here, one a line, as of the last settled run.
    static let ledgerName = ".thumbframe-thumbs"
    /// Thumbnail paths about to be written, appended before each is created: a run killed at
    /// any moment leaves its new files named here.
    static let journalName = ".thumbframe-journal"

    /// Opens OUT_DIR; with `create`, makes `thumbs/` too. A `thumbs` that is a link is refused.
    init(_ path: String, create: Bool) throws(ThumbframeError) {
        do {
            root = try Directory.open(path)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        do {
            if create {
                thumbs = try root.makeSubdirectory("thumbs")
            } else {
                thumbs = root.stat(Array("thumbs".utf8)) == nil ? nil : try root.subdirectory(Array("thumbs".utf8))
            }
        } catch {
            throw .cannotWrite(path: path + "/thumbs", reason: error.localizedDescription)
        }
    }

    deinit {
        if journal >= 0 { close(journal) }
    }

    var path: String { root.path }

    // MARK: Thumbnails

    /// The size and kind of a thumbnail file (`thumbs/XX/NAME.ext`), never through a link.
    func stat(thumbnail path: String) -> FileStat? {
        guard let name = ThumbnailName(path), let directory = try? fanout(name.fanout, create: false) else { return nil }
        return directory.stat(name.fileBytes)
    }

    /// A thumbnail's bytes, or nil when it is missing, a link or unreadable.
    func read(thumbnail path: String) -> [UInt8]? {
        guard let name = ThumbnailName(path), let directory = try? fanout(name.fanout, create: false) else { return nil }
        return try? directory.readFile(name.fileBytes, limit: 1 << 30)
    }

    /// Writes a thumbnail atomically, after recording its name in the journal.
    func write(thumbnail path: String, _ bytes: [UInt8]) throws(FileSystemError) {
        guard let name = ThumbnailName(path) else { throw .notRegular }
        try appendToJournal(path)
        try fanout(name.fanout, create: true).writeAtomically(bytes, to: name.file, durable: false)
    }

    private func fanout(_ name: String, create: Bool) throws(FileSystemError) -> Directory {
        lock.lock()
        defer { lock.unlock() }
        if let open = fanouts[name] { return open }
        guard let thumbs else { throw .posix(ENOENT) }
        let directory = create ? try thumbs.makeSubdirectory(name) : try thumbs.subdirectory(Array(name.utf8))
        fanouts[name] = directory
        return directory
    }

    // MARK: Ownership

    private func appendToJournal(_ path: String) throws(FileSystemError) {
        lock.lock()
        defer { lock.unlock() }
        if journal < 0 {
            journal = Self.journalName.withCString {
                openat(root.fd, $0, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
            }
            guard journal >= 0 else { throw errno == ELOOP ? .symbolicLink : .posix(errno) }
        }
        // One write per line with O_APPEND: lines never interleave.
        let line = Array((path + "\n").utf8)
        let written = line.withUnsafeBytes { Foundation.write(journal, $0.baseAddress, $0.count) }
        guard written == line.count else { throw .posix(written < 0 ? errno : ENOSPC) }
    }

    /// Paths in the ledger and the journal that have thumbframe's thumbnail shape, and whether
    /// the journal holds anything (a run wrote files and did not settle the ledger after).
    func ownedThumbnails() -> (paths: Set<[UInt8]>, unsettled: Bool) {
        var owned = Set<[UInt8]>()
        var unsettled = false
        for name in [Self.ledgerName, Self.journalName] {
            guard root.stat(Array(name.utf8))?.isRegularFile == true,
                let bytes = try? root.readFile(Array(name.utf8), limit: 1 << 31)
            else { continue }
            if name == Self.journalName && !bytes.isEmpty { unsettled = true }
            for line in bytes.split(separator: 10) where ThumbnailName(String(decoding: line, as: UTF8.self)) != nil {
                owned.insert(Array(line))
            }
        }
        return (owned, unsettled)
    }

    /// Writes the ledger (what thumbframe owns now) and empties the journal.
    func settle(owned: [String]) throws(FileSystemError) {
        let ledger = owned.sorted().map { $0 + "\n" }.joined()
        let current = try? root.readFile(Array(Self.ledgerName.utf8), limit: 1 << 31)
        if current.map({ !$0.elementsEqual(ledger.utf8) }) ?? true {
            try root.writeAtomically(Array(ledger.utf8), to: Self.ledgerName, durable: true)
        }
        lock.lock()
        defer { lock.unlock() }
        if journal >= 0 {
            close(journal)
            journal = -1
        }
        _ = Self.journalName.withCString { unlinkat(root.fd, $0, 0) }
    }

    /// Removes the thumbnail at `path` if it is a regular file; true when it was removed.
    func remove(thumbnail path: String) -> Bool {
        guard let name = ThumbnailName(path), let directory = try? fanout(name.fanout, create: false) else { return false }
        return directory.removeFile(name.fileBytes)
    }

    /// Removes the fan-out directory of `path` if it is now empty.
    func removeFanoutIfEmpty(of path: String) {
        guard let name = ThumbnailName(path), let thumbs else { return }
        thumbs.removeEmptySubdirectory(Array(name.fanout.utf8))
        lock.lock()
        defer { lock.unlock() }
        if thumbs.stat(Array(name.fanout.utf8)) == nil { fanouts[name.fanout] = nil }
    }

    // MARK: Whole-directory views

    /// Names directly in `thumbs/` and in each fan-out directory, for the pruner's report and
    /// its clean-up of temporary files. Links and other kinds are listed, never entered.
    func listThumbs() -> [(directory: [UInt8], entries: [[UInt8]])] {
        guard let thumbs, let top = try? thumbs.entries() else { return [] }
        var result: [(directory: [UInt8], entries: [[UInt8]])] = [([], top)]
        for name in top.sorted(by: { $0.lexicographicallyPrecedes($1) })
        where name.count == 2 && name.allSatisfy(TemporaryName.isLowerHex) && thumbs.stat(name)?.isDirectory == true {
            guard let directory = try? thumbs.subdirectory(name), let entries = try? directory.entries() else { continue }
            result.append((name, entries))
        }
        return result
    }

    /// Removes a leftover temporary file (a name `TemporaryName` gives) in OUT_DIR, `thumbs/`
    /// or a fan-out directory (`directory` is the fan-out's name, or nil for OUT_DIR itself).
    func removeTemporary(_ name: [UInt8], in directory: [UInt8]?) -> Bool {
        guard TemporaryName.matches(name) else { return false }
        guard let directory else { return root.removeFile(name) }
        guard let thumbs else { return false }
        if directory.isEmpty { return thumbs.removeFile(name) }
        guard let fanout = try? thumbs.subdirectory(directory) else { return false }
        return fanout.removeFile(name)
    }
}

/// A thumbnail path of the shape thumbframe writes: `thumbs/XX/<32 hex>.<jpg|webp|avif>`, the
/// fan-out being the name's first two digits. Nothing of another shape is ever removed.
struct ThumbnailName: Equatable {
    var fanout: String
    var file: String
    var fileBytes: [UInt8] { Array(file.utf8) }

    static let extensions: Set<String> = Set(ThumbnailRecipe.Format.allCases.map(\.fileExtension))

    init?(_ path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "thumbs" else { return nil }
        let fanout = String(parts[1])
        let file = String(parts[2])
        let pieces = file.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 2, pieces[0].utf8.count == 32, pieces[0].utf8.allSatisfy(TemporaryName.isLowerHex),
            Self.extensions.contains(String(pieces[1])), fanout == String(pieces[0].prefix(2))
        else { return nil }
        self.fanout = fanout
        self.file = file
    }
}
