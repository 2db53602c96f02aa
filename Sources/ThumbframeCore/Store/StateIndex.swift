import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// The build's state, per OUT_DIR: an SQLite database (`.thumbframe-state.sqlite`, WAL) whose
/// schema (`StateIndex.schema`) says what it holds: one row per source file (`files`: its
/// path's bytes, size, modification time, item or failure; small, what a rerun reads), one row
/// per thumbnail an item names (`thumbnails`: path and size), the item or failure as compact
/// JSON (`entries`: read only to write a manifest), each section as last written (`sections`),
/// and what was last published (`meta`, typed in `StateIndex+Meta`). A rerun walks, stats and
/// compares with these rows; it parses no manifest. Rows are committed a quarter of a second
/// (or 256 files) at a time as files are done, so a build killed at 90 % leaves 90 % of its
/// work recorded, less at most that quarter of a second. A damaged or foreign database is reported and rebuilt from
/// the sources, never trusted.
final class StateIndex {
    static let name = ".thumbframe-state.sqlite"
    /// SQLite's companions of the database file (never followed when they are links).
    static let companions = ["-wal", "-shm", "-journal"]
    static let format = "thumbframe-state-10"

    /// Read and written by the `StateIndex` extensions of this folder alone.
    let database: SQLiteDatabase
    /// The index's file, as errors name it.
    let path: String
    private var inTransaction = false
    /// Rows recorded since the last commit, and when the first of them was.
    private var pending = 0
    private var pendingSince = ContinuousClock.now
    /// `record` commits once this many rows or this much time are pending: a commit per file
    /// was a dozen writes and locks per file (a WAL frame per touched page), the system time
    /// of a library of small files.
    static let commitRows = 256
    static let commitInterval = Duration.milliseconds(250)
    private var upsert: SQLiteStatement?
    private var upsertEntry: SQLiteStatement?
    private var deleteThumbnails: SQLiteStatement?
    private var insertThumbnail: SQLiteStatement?
    /// Read once per item whenever a manifest is written: prepared once.
    private let selectEntry: SQLiteStatement

    /// Prepares the statements every run uses: a database of another shape fails here, and is
    /// then rebuilt like a damaged one.
    private init(database: SQLiteDatabase, path: String, readOnly: Bool) throws(SQLiteError) {
        self.database = database
        self.path = path
        try Self.prepareSchema(database, readOnly: readOnly)
        _ = try database.prepare("SELECT path, size, mtime, failed, stage, captured, pair, evidence FROM files")
        _ = try database.prepare("SELECT path, thumbnail, bytes FROM thumbnails")
        selectEntry = try database.prepare("SELECT failed, entry FROM files JOIN entries USING (path) WHERE path = ?")
        if !readOnly {
            upsert = try database.prepare(
                "INSERT OR REPLACE INTO files (path, size, mtime, failed, stage, captured, pair, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            upsertEntry = try database.prepare("INSERT OR REPLACE INTO entries (path, entry) VALUES (?, ?)")
            deleteThumbnails = try database.prepare("DELETE FROM thumbnails WHERE path = ?")
            insertThumbnail = try database.prepare("INSERT OR REPLACE INTO thumbnails (path, thumbnail, bytes) VALUES (?, ?, ?)")
        }
    }

    /// Opens OUT_DIR's index; with `readOnly`, nil when there is none. A damaged or foreign file
    /// is removed and a new index made (read-only: nil), with the reason in `problem`.
    static func open(
        _ output: OutputDirectory, readOnly: Bool, name: String = StateIndex.name
    ) throws(ThumbframeError) -> (index: StateIndex?, problem: String?) {
        let path = output.path + "/" + name
        for suffix in [""] + companions {
            guard let stat = output.root.stat(Array((name + suffix).utf8)) else { continue }
            guard stat.isRegularFile, stat.links == 1 else {
                throw .cannotWrite(path: path + suffix, reason: "not a plain file of thumbframe's (a link or hard link); remove it")
            }
        }
        let exists = output.root.stat(Array(name.utf8)) != nil
        if readOnly && !exists { return (nil, nil) }
        do {
            return (
                try StateIndex(
                    database: try SQLiteDatabase(path: path, readOnly: readOnly, create: !readOnly), path: path, readOnly: readOnly),
                nil
            )
        } catch  where !error.isCorruption {
            // A full disk, an I/O error, a permission, a lock: the index may be perfectly good
            // (deleting it would cost the next run a decode of the whole library). Stop, keep it.
            throw .cannotWrite(path: path, reason: "cannot open the state index (\(error)); it is kept as it is")
        } catch {
            let problem = "state index \(name) cannot be used (\(error)); rebuilding it from the sources"
            if readOnly { return (nil, problem) }
            for suffix in [""] + companions { _ = (name + suffix).withCString { unlinkat(output.root.fd, $0, 0) } }
            do {
                let database = try SQLiteDatabase(path: path, readOnly: false, create: true)
                return (try StateIndex(database: database, path: path, readOnly: false), problem)
            } catch {
                throw .cannotWrite(path: path, reason: error.description)
            }
        }
    }

    /// Runs reads and writes of this index for a build or a merge: an SQLite failure (a full
    /// disk, an I/O error) stops the run with 73, naming this index, which is kept as it is.
    func stopping<T>(_ body: () throws(SQLiteError) -> T) throws(ThumbframeError) -> T {
        do {
            return try body()
        } catch {
            throw .cannotWrite(path: path, reason: error.description)
        }
    }

    // MARK: Meta

    /// A value of the `meta` table (`StateIndex+Meta` types them).
    func meta(_ key: Meta) throws(SQLiteError) -> String? {
        let statement = try database.prepare("SELECT value FROM meta WHERE key = ?")
        statement.bind(1, key.rawValue)
        return try statement.step() ? statement.string(0) : nil
    }

    func setMeta(_ key: Meta, _ value: String) throws(SQLiteError) {
        let statement = try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
        statement.bind(1, key.rawValue)
        statement.bind(2, value)
        try statement.run()
    }

    // MARK: Rows

    /// What a rerun needs to decide without opening the file.
    struct Row {
        var size: Int
        /// Modification time as the walk saw it (`FileStat.modifiedKey`).
        var modified: Int
        var failed: Bool
        /// Where it failed (nil for an item).
        var stage: FailureStage?
        /// Each thumbnail's path and byte size.
        var thumbnails: [(path: String, bytes: Int)]
    }

    /// Calls `body` with every row in path byte order (SQLite orders BLOBs as memcmp, then
    /// length: `[UInt8].lexicographicallyPrecedes`), each with its thumbnails: two scans in the
    /// same order, merged (no lookup per file).
    func forEachRow(_ body: ([UInt8], Row) throws(SQLiteError) -> Void) throws(SQLiteError) {
        let select = try database.prepare("SELECT path, size, mtime, failed, stage FROM files ORDER BY path")
        var thumbnails = try ThumbnailCursor(database)
        while try select.step() {
            let path = select.bytes(0)
            let row = Row(
                size: select.int(1), modified: select.int(2), failed: select.int(3) != 0,
                stage: select.string(4).flatMap(FailureStage.init(rawValue:)), thumbnails: try thumbnails.take(path))
            try body(path, row)
        }
    }

    /// The `thumbnails` table in path order, read beside a scan of `files` in path order.
    struct ThumbnailCursor {
        private let select: SQLiteStatement
        private var pending: [UInt8]?

        init(_ database: SQLiteDatabase) throws(SQLiteError) {
            select = try database.prepare("SELECT path, thumbnail, bytes FROM thumbnails ORDER BY path, thumbnail")
            pending = try select.step() ? select.bytes(0) : nil
        }

        /// The thumbnails of `path`, which must come after every path taken before.
        /// (Thumbnails of a path without a row, which nothing writes, are passed over.)
        mutating func take(_ path: [UInt8]) throws(SQLiteError) -> [(path: String, bytes: Int)] {
            var found: [(path: String, bytes: Int)] = []
            while let current = pending, current.lexicographicallyPrecedes(path) {
                pending = try select.step() ? select.bytes(0) : nil
            }
            while let current = pending, current == path {
                found.append((select.string(1) ?? "", select.int(2)))
                pending = try select.step() ? select.bytes(0) : nil
            }
            return found
        }
    }

    /// The stored item or failure of `path`.
    func entry(_ path: [UInt8]) throws(SQLiteError) -> Stored? {
        defer { selectEntry.reset() }
        selectEntry.bind(1, path)
        guard try selectEntry.step() else { return nil }
        return Stored(failed: selectEntry.int(0) != 0, json: selectEntry.bytes(1))
    }

    /// An item or failure as stored: decoded only when a manifest is assembled.
    struct Stored {
        var failed: Bool
        var json: [UInt8]

        func item() -> StoredItem? { try? JSONDecoder().decode(StoredItem.self, from: Data(json)) }
        func failure() -> Manifest.Failure? { try? JSONDecoder().decode(Manifest.Failure.self, from: Data(json)) }
        /// The SHA-256 of the bytes a failure was recorded for (nil: not known, or an index of
        /// before it was kept). Beside the failure in its JSON, never in a manifest.
        func failureSHA256() -> String? {
            struct Hashed: Decodable { var sourceSHA256: String? }
            return (try? JSONDecoder().decode(Hashed.self, from: Data(json)))?.sourceSHA256
        }
    }

    /// What a file's item holds before it has a place in a manifest.
    struct StoredItem: Codable {
        var file: Manifest.FileInfo
        var image: Manifest.ImageInfo
        var exif: Manifest.ExifInfo?
        var thumbnails: [String: Manifest.Thumbnail]
        var placeholder: Manifest.Placeholder?
        /// The kind and its facts; nil in rows of photos (and of every row written before kinds).
        var media: Manifest.Media?
        /// Apple's content identifier, shared by a Live Photo's photo and MOV (also in `files.pair`).
        var contentIdentifier: String?
        /// The burst the camera says the photo is a frame of.
        var burst: BurstMark?
        /// What the photo looks like (`--stacks`): in `files.evidence` with the rest of its
        /// `StackEvidence`.
        var likeness: Likeness?
        /// Where it was taken, as coarsely as `--locations` says (never the GPS position itself).
        var place: Manifest.Place?

        /// The files in OUT_DIR the item names, with their sizes (-1: unknown): its thumbnails,
        /// a Motion Photo's extracted MP4, video renditions and scrub previews.
        var files: [EncodedItem.OwnedFile] {
            var files = thumbnails.values.map { EncodedItem.OwnedFile(path: $0.path, bytes: $0.bytes ?? -1) }
            files += (media?.videoFiles ?? []).map { .init(path: $0.path, bytes: $0.bytes) }
            return files
        }

        /// `files.pair`: `photo <identifier>` or `video <identifier>` for a half of a possible
        /// Live Photo, nil otherwise.
        var pair: String? {
            guard let contentIdentifier else { return nil }
            switch media?.kind ?? .photo {
            case .photo: return "photo " + contentIdentifier
            case .video: return "video " + contentIdentifier
            case .animated: return nil
            }
        }
    }

    /// An item encoded as the index stores it, where it was made (a decode worker), with the
    /// columns the index keeps beside it.
    struct EncodedItem: Sendable, Equatable {
        /// A file in OUT_DIR the item names, with its size (-1: unknown).
        struct OwnedFile: Sendable, Equatable {
            var path: String
            var bytes: Int
        }
        /// The `StoredItem`'s JSON.
        var json: [UInt8]
        /// The capture time that orders it (`YYYY-MM-DDTHH:MM:SS`).
        var captured: String
        var pair: String?
        var files: [OwnedFile]
        /// A photo's `StackEvidence.text` (`files.evidence`).
        var evidence: String?

        init(json: [UInt8], captured: String, pair: String?, files: [OwnedFile], evidence: String? = nil) {
            self.json = json
            self.captured = captured
            self.pair = pair
            self.files = files
            self.evidence = evidence
        }

        init(_ item: StoredItem, captured: String) throws {
            self.init(
                json: Array(try JSONEncoder().encode(item)), captured: captured, pair: item.pair, files: item.files,
                evidence: StackEvidence(item)?.text)
        }
    }

    /// What becomes of a file in the index.
    enum Entry {
        /// An item, with the capture time that orders it (`YYYY-MM-DDTHH:MM:SS`).
        case item(StoredItem, captured: String)
        /// An item a decode worker encoded.
        case encoded(EncodedItem)
        case failure(Manifest.Failure)
    }

    /// Records a file's item or failure (with `failedSHA256`, the failed bytes' hash: a touched
    /// file of those bytes fails as it failed, undecoded), and commits.
    func record(_ source: SourceFile, _ entry: Entry, failedSHA256: String? = nil) throws(SQLiteError) {
        guard let upsert else { throw SQLiteError(code: 1, message: "cannot prepare an insert") }
        let json: [UInt8]
        var item: EncodedItem?
        var failure: Manifest.Failure?
        do {
            switch entry {
            case .item(let stored, let time):
                item = try EncodedItem(stored, captured: time)
                json = item?.json ?? []
            case .encoded(let encoded):
                item = encoded
                json = encoded.json
            case .failure(let failed):
                failure = failed
                var encoded = Array(try JSONEncoder().encode(failed))
                // The failure's own object with one more key (a hex digest: nothing to escape).
                if let hash = failedSHA256, hash.allSatisfy(\.isHexDigit), encoded.last == UInt8(ascii: "}") {
                    encoded.removeLast()
                    encoded += Array(",\"sourceSHA256\":\"\(hash)\"}".utf8)
                }
                json = encoded
            }
        } catch {
            throw SQLiteError(code: 1, message: "cannot encode: \(error)")
        }
        try beginIfNeeded()
        upsert.bind(1, source.rawPath)
        upsert.bind(2, source.stat.size)
        upsert.bind(3, source.stat.modifiedKey)
        upsert.bind(4, item == nil ? 1 : 0)
        upsert.bind(5, failure?.stage)
        upsert.bind(6, item?.captured ?? "")
        upsert.bind(7, item?.pair)
        upsert.bind(8, item?.evidence)
        try upsert.run()
        guard let deleteThumbnails, let insertThumbnail else { throw SQLiteError(code: 1, message: "cannot prepare an insert") }
        deleteThumbnails.bind(1, source.rawPath)
        try deleteThumbnails.run()
        for file in item?.files ?? [] {
            insertThumbnail.bind(1, source.rawPath)
            insertThumbnail.bind(2, file.path)
            insertThumbnail.bind(3, file.bytes)
            try insertThumbnail.run()
        }
        guard let upsertEntry else { throw SQLiteError(code: 1, message: "cannot prepare an insert") }
        upsertEntry.bind(1, source.rawPath)
        upsertEntry.bind(2, json)
        try upsertEntry.run()
        // A build killed at any moment has recorded every file it finished but the last
        // quarter of a second's; the caller commits the rest when it is done.
        if pending == 0 { pendingSince = .now }
        pending += 1
        if pending >= Self.commitRows || ContinuousClock.now - pendingSince >= Self.commitInterval { try commit() }
    }

    /// Removes the rows of these paths (files the walk no longer found).
    func removeRows(_ paths: [[UInt8]]) throws(SQLiteError) {
        guard !paths.isEmpty else { return }
        try beginIfNeeded()
        let deletes = try ["files", "entries", "thumbnails"].map { table throws(SQLiteError) in
            try database.prepare("DELETE FROM \(table) WHERE path = ?")
        }
        for path in paths {
            for delete in deletes {
                delete.bind(1, path)
                try delete.run()
            }
        }
        try commit()
    }

    /// Forgets every file (settings that shape items changed, or `--force`).
    func removeAllRows() throws(SQLiteError) {
        try commit()
        try database.execute("DELETE FROM files; DELETE FROM thumbnails; DELETE FROM entries; DELETE FROM sections;")
    }

    /// Calls `body` with each stored row (only failures, or only items, when `failed` says),
    /// in path byte order.
    func forEachEntry(failed: Bool? = nil, _ body: ([UInt8], Stored) -> Void) throws(SQLiteError) {
        let filter = failed.map { " WHERE failed = \($0 ? 1 : 0)" } ?? ""
        let select = try database.prepare("SELECT path, failed, entry FROM files JOIN entries USING (path)\(filter) ORDER BY path")
        while try select.step() {
            body(select.bytes(0), Stored(failed: select.int(1) != 0, json: select.bytes(2)))
        }
    }

    /// Calls `body` with the path, capture time (empty unless `captured`) and pair of every
    /// item: what orders the manifest.
    func forEachItemKey(captured: Bool = true, _ body: ([UInt8], String, String?) -> Void) throws(SQLiteError) {
        let select = try database.prepare("SELECT path, \(captured ? "captured" : "''"), pair FROM files WHERE failed = 0")
        while try select.step() { body(select.bytes(0), select.string(1) ?? "", select.string(2)) }
    }

    /// The stack evidence (`files.evidence`) of each path, in order; nil for a path without.
    func evidence(_ paths: some Sequence<[UInt8]>) throws(SQLiteError) -> [String?] {
        let select = try database.prepare("SELECT evidence FROM files WHERE path = ? AND failed = 0")
        var found: [String?] = []
        for path in paths {
            select.bind(1, path)
            found.append(try select.step() ? select.string(0) : nil)
            select.reset()
        }
        return found
    }

    /// Every thumbnail path the items name.
    func thumbnailNames() throws(SQLiteError) -> OwnedNames {
        let select = try database.prepare("SELECT thumbnail FROM thumbnails JOIN files USING (path) WHERE failed = 0")
        var names: [CompactName] = []
        while try select.step() {
            if let name = select.string(0).flatMap(CompactName.init) { names.append(name) }
        }
        return OwnedNames(names)
    }

    func beginIfNeeded() throws(SQLiteError) {
        guard !inTransaction else { return }
        try database.execute("BEGIN")
        inTransaction = true
    }

    /// Makes what was recorded so far durable against a crash of this process.
    func commit() throws(SQLiteError) {
        guard inTransaction else { return }
        inTransaction = false
        pending = 0
        try database.execute("COMMIT")
    }
}
