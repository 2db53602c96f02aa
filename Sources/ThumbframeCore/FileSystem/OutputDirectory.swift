import Foundation
import ThumbframeManifest

/// OUT_DIR as thumbframe touches it: `manifest.json`, the lock, `thumbs/XX/`, `pages/XX/` and its
/// state files, all reached through directory descriptors that never follow a link. What thumbframe
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
    /// `OUT_DIR/pages`, created when writing; nil for a reader when there is none.
    let pages: Directory?
    /// A decode worker's: the only folder it writes, its own, inside `thumbs/` (`init(worker:scratch:)`).
    let scratch: Directory?

    private let lock = NSLock()
    private var fanouts: [String: Directory] = [:]
    private var journal: Int32 = -1
    /// A worker's: the scratch subfolder of the job it makes (`beginScratchJob`).
    private var jobScratch: Directory?

    static let manifestName = "manifest.json"
    static let lockName = ".thumbframe.lock"
    /// Every thumbnail and page path thumbframe owns here, one a line, as of the last settled run.
    static let ledgerName = ".thumbframe-thumbs"
    /// Thumbnail and page paths about to be written, appended before each is created: a run
    /// killed at any moment leaves its new files named here.
    static let journalName = ".thumbframe-journal"

    /// Opens OUT_DIR; with `create`, makes `thumbs/` and `pages/` too. Either being a link is refused.
    init(_ path: String, create: Bool) throws(ThumbframeError) {
        let root: Directory
        do {
            root = try Directory.open(path)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        self.root = root
        func area(_ name: String) throws(ThumbframeError) -> Directory? {
            do {
                if create { return try root.makeSubdirectory(name) }
                return root.stat(Array(name.utf8)) == nil ? nil : try root.subdirectory(Array(name.utf8))
            } catch {
                throw .cannotWrite(path: path + "/" + name, reason: error.localizedDescription)
            }
        }
        thumbs = try area("thumbs")
        pages = try area("pages")
        scratch = nil
        // thumbframe's own bookkeeping files are plain files; anything else at their names (a
        // FIFO would hold every build forever, a link would lead a write elsewhere) stops here.
        for name in [Self.journalName, Self.ledgerName] {
            guard let stat = root.stat(Array(name.utf8)) else { continue }
            guard stat.isRegularFile, stat.links == 1 else {
                throw .cannotWrite(
                    path: path + "/" + name, reason: "not a plain file of thumbframe's (a link, FIFO or other kind); remove it")
            }
        }
    }

    /// OUT_DIR as a decode worker sees it: `thumbs/`, which it may only read (what a build made
    /// before), and its scratch folder, where everything it writes goes, in `thumbs/`'s layout
    /// (`XX/<hash>.<ext>`). It journals nothing: the build names, checks and copies into
    /// `thumbs/` what it wants of the scratch folder (`ScratchOutputs`) and empties it.
    init(worker thumbs: Directory, scratch: Directory) {
        root = scratch
        self.thumbs = thumbs
        self.scratch = scratch
        pages = nil
    }

    private func area(_ name: OutputName) -> Directory? {
        name.area == "thumbs" ? thumbs : pages
    }

    deinit {
        if journal >= 0 { close(journal) }
    }

    var path: String { root.path }

    // MARK: Thumbnails and pages

    /// The size and kind of a thumbnail or page file (`thumbs/XX/NAME.ext`, `pages/XX/NAME.json`),
    /// never through a link.
    func stat(file path: String) -> FileStat? {
        guard let name = OutputName(path), let directory = try? fanout(name, create: false) else { return nil }
        return directory.stat(name.fileBytes)
    }

    /// The open fan-out directory a thumbnail or page lives in (for callers that stat many).
    func directory(of name: OutputName) -> Directory? {
        try? fanout(name, create: false)
    }

    /// A thumbnail's or page's bytes, or nil when it is missing, a link or unreadable.
    func read(file path: String) -> [UInt8]? {
        guard let name = OutputName(path), let directory = try? fanout(name, create: false) else { return nil }
        return try? directory.readFile(name.fileBytes, limit: 1 << 30)
    }

    /// A thumbnail, rendition or page opened for reading, or nil when it is missing or not a regular file.
    func open(file path: String) -> OpenFile? {
        guard let name = OutputName(path), let directory = try? fanout(name, create: false) else { return nil }
        return try? directory.openFile(name.fileBytes)
    }

    /// Writes a thumbnail or page atomically, after recording its name in the journal (unless
    /// `journal(_:)` already did: an item's thumbnails are recorded in one write).
    func write(file path: String, _ bytes: [UInt8], journaled: Bool = false) throws(FileSystemError) {
        guard let name = OutputName(path) else { throw .notRegular }
        if !journaled { try appendToJournal([path]) }
        try fanout(name, create: true).writeAtomically(bytes, to: name.file, durable: false)
    }

    /// Writes a video rendition or motion MP4 through a descriptor (`Directory.writeAtomically(to:make:)`),
    /// after recording its name in the journal; nil (and nothing at `path`) when `make` gives nil.
    func write<T>(file path: String, make: (Int32) -> T?) throws(FileSystemError) -> T? {
        guard let name = OutputName(path) else { throw .notRegular }
        try appendToJournal([path])
        return try fanout(name, create: true).writeAtomically(to: name.file, make: make)
    }

    /// What a decode worker's scratch folder (`thumbs/.tf-tmp-…`) may hold, all removed with it:
    /// whatever the worker made, files and folders to a depth of 8 (deeper is left).
    static func scratchShape(_ name: [UInt8], depth: Int, isDirectory: Bool) -> Bool { depth < 8 }

    /// A worker's, before each job: its files go into the scratch folder's subfolder named by
    /// the job's number (the build may still be taking the last job's from theirs).
    func beginScratchJob(_ number: Int) throws(FileSystemError) {
        guard let scratch else { return }
        let folder = try scratch.makeSubdirectory(String(number))
        lock.lock()
        defer { lock.unlock() }
        jobScratch = folder
        fanouts = fanouts.filter { !$0.key.hasPrefix("scratch/") }
    }

    /// The fan-out directory of a thumbnail, created when missing.
    func fanoutDirectory(of name: OutputName) throws(FileSystemError) -> Directory {
        try fanout(name, create: true)
    }

    private func fanout(_ name: OutputName, create: Bool) throws(FileSystemError) -> Directory {
        lock.lock()
        defer { lock.unlock() }
        // A worker reads thumbs/ and writes its scratch folder.
        let writing = create && scratch != nil
        let key = (writing ? "scratch/" : name.area + "/") + name.fanout
        if let open = fanouts[key] { return open }
        guard let area = writing ? jobScratch : area(name) else { throw .posix(ENOENT) }
        let directory = create ? try area.makeSubdirectory(name.fanout) : try area.subdirectory(Array(name.fanout.utf8))
        fanouts[key] = directory
        return directory
    }

    // MARK: Ownership

    /// Records as thumbframe's the thumbnails a manifest of thumbframe 0.1 names (it kept no
    /// ledger): once, when a directory of 0.1 gets its first state index, so they can be pruned.
    func adoptVersion1Thumbnails() throws(FileSystemError) {
        struct Version1: Decodable {
            struct Item: Decodable {
                struct Thumbnail: Decodable {
                    var path: String
                }
                var thumbnails: [String: Thumbnail]
            }
            var version: Int
            var items: [Item]?
        }
        // A damaged manifest may be any size: more than a reader accepts is not 0.1's.
        guard let bytes = try? root.readFile(Array(Self.manifestName.utf8), limit: ManifestReader.maximumDocumentBytes),
            let manifest = try? JSONDecoder().decode(Version1.self, from: Data(bytes)), manifest.version == 1
        else { return }
        for item in manifest.items ?? [] {
            for thumbnail in item.thumbnails.values where OutputName(thumbnail.path) != nil {
                try appendToJournal([thumbnail.path])
            }
        }
    }

    /// Records names in the journal before their files are written (`write(file:_:journaled:)`).
    func journal(_ paths: [String]) throws(FileSystemError) {
        guard !paths.isEmpty else { return }
        try appendToJournal(paths)
    }

    private func appendToJournal(_ paths: [String]) throws(FileSystemError) {
        // A worker's files are the build's to journal, if it takes them.
        guard scratch == nil else { return }
        lock.lock()
        defer { lock.unlock() }
        if journal < 0 {
            // Non-blocking: a FIFO put there since the start must not hold the build.
            let fd = Self.journalName.withCString {
                openat(root.fd, $0, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
            }
            guard fd >= 0 else { throw errno == ELOOP ? .symbolicLink : .posix(errno) }
            var info = Foundation.stat()
            guard fstat(fd, &info) == 0, FileStat(info).isRegularFile else {
                close(fd)
                throw .notRegular
            }
            journal = fd
        }
        // One write of whole lines with O_APPEND: lines never interleave.
        let line = Array(paths.map { $0 + "\n" }.joined().utf8)
        let written = line.withUnsafeBytes { Foundation.write(journal, $0.baseAddress, $0.count) }
        guard written == line.count else { throw .posix(written < 0 ? errno : ENOSPC) }
    }

    /// Paths in the ledger and the journal that have thumbframe's thumbnail or page shape, read
    /// line by line.
    func ownedNames() -> OwnedNames {
        var owned: [CompactName] = []
        for name in [Self.ledgerName, Self.journalName] {
            guard let file = try? root.openFile(Array(name.utf8)) else { continue }
            try? file.forEachLine { line in
                if let name = line.withUnsafeBufferPointer(CompactName.init(bytes:)) { owned.append(name) }
            }
        }
        return OwnedNames(owned)
    }

    /// Writes the ledger (what thumbframe owns now) unless it says that already, and empties
    /// the journal. Both the comparison and the write go piece by piece.
    func settle(owned: OwnedNames) throws(FileSystemError) {
        if !ledgerSays(owned) {
            try root.writeAtomically(to: Self.ledgerName, durable: true) { (write) throws(FileSystemError) in
                try owned.forEachLedgerPiece(write)
            }
        }
        lock.lock()
        defer { lock.unlock() }
        if journal >= 0 {
            close(journal)
            journal = -1
        }
        _ = Self.journalName.withCString { unlinkat(root.fd, $0, 0) }
    }

    /// True when the ledger on disk holds exactly `owned`'s lines.
    private func ledgerSays(_ owned: OwnedNames) -> Bool {
        guard let file = try? root.openFile(Array(Self.ledgerName.utf8)), file.stat()?.size == owned.ledgerBytes else {
            return false
        }
        var buffer: [UInt8] = []
        do {
            try owned.forEachLedgerPiece { (piece) throws(FileSystemError) in
                buffer = [UInt8](repeating: 0, count: piece.count)
                let got = buffer.withUnsafeMutableBytes { Foundation.read(file.fd, $0.baseAddress, piece.count) }
                guard got == piece.count, buffer == piece else { throw .changedWhileReading }
            }
        } catch {
            return false
        }
        return true
    }

    /// Whether OUT_DIR's thumbnails can take a write of `bytes` now (a worker's claim that they
    /// cannot is tested before the run stops on it).
    func isWritable(bytes: Int) -> Bool {
        (thumbs ?? root).takesWrite(bytes: bytes)
    }

    /// Removes the thumbnail or page at `path` if it is a regular file; true when it was removed.
    func remove(file path: String) -> Bool {
        guard let name = OutputName(path), let directory = try? fanout(name, create: false) else { return false }
        return directory.removeFile(name.fileBytes)
    }

    /// Removes the fan-out directory of `path` if it is now empty.
    func removeFanoutIfEmpty(of path: String) {
        guard let name = OutputName(path), let area = area(name) else { return }
        area.removeEmptySubdirectory(Array(name.fanout.utf8))
        lock.lock()
        defer { lock.unlock() }
        if area.stat(Array(name.fanout.utf8)) == nil { fanouts[name.area + "/" + name.fanout] = nil }
    }

    // MARK: Whole-directory views

    /// Calls `body` with the names directly in `thumbs/` or `pages/` (`area`; `directory`
    /// empty), then with those of each of its fan-out directories in order, for the pruner's
    /// report and its clean-up of temporary files: one directory's names in memory at a time.
    /// Links and other kinds are listed, never entered.
    func forEachListing(_ area: String, _ body: (_ directory: [UInt8], _ entries: [[UInt8]]) -> Void) {
        guard let top = area == "thumbs" ? thumbs : pages, let names = try? top.entries() else { return }
        body([], names)
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) })
        where name.count == 2 && name.allSatisfy(TemporaryName.isLowerHex) && top.stat(name)?.isDirectory == true {
            guard let directory = try? top.subdirectory(name), let entries = try? directory.entries() else { continue }
            body(name, entries)
        }
    }

    /// Removes a leftover temporary file (a name `TemporaryName` gives) in OUT_DIR (`area`
    /// nil), in `thumbs/` or `pages/`, or in one of their fan-out directories (`directory`),
    /// where it may also be the temporary folder of a pyramid (`writePyramid`).
    func removeTemporary(_ name: [UInt8], area: String?, directory: [UInt8] = []) -> Bool {
        guard TemporaryName.matches(name) else { return false }
        guard let area else { return root.removeFile(name) }
        guard let top = area == "thumbs" ? thumbs : pages else { return false }
        if directory.isEmpty {
            // In thumbs/, a folder of that name is a decode worker's scratch folder, left by a
            // build killed before it removed it.
            if area == "thumbs", top.stat(name)?.isDirectory == true { return top.removeTree(name, Self.scratchShape) }
            return top.removeFile(name)
        }
        guard let fanout = try? top.subdirectory(directory) else { return false }
        if area == "thumbs", fanout.stat(name)?.isDirectory == true { return fanout.removeTree(name, Self.temporaryShape) }
        return fanout.removeFile(name)
    }
}
