import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// Decides, from `lstat` and the state index alone, which files are already described: same
/// path, size and modification time, same thumbnail recipes and thumbframe/libvips versions,
/// and every thumbnail file still there with its recorded size. Those are reused without
/// opening them (nor decoding their stored entries); the rest is work.
struct ReusePlan {
    /// A file to open: processed in full, or with `previous` (`--verify`, a touched file) only
    /// re-hashed.
    struct Work {
        var file: SourceFile
        /// `previous`'s content identifier (a Live Photo half's), which `Manifest.Item` does not carry.
        var previousIdentifier: String?
        /// The index had a row for this path (so `--check` says "changed", not "added").
        var known = false
        /// That row was an item (so failing now drops it from the manifest).
        var wasItem = false
        /// `previous`, `placeholder` and `recorded` live on the heap: a cold build holds a Work
        /// per file, and a `Manifest.Item` inline is 750 bytes.
        private var stored: Boxed<(Manifest.Item?, KnownPlaceholder?, [String: Int])>?

        init(
            file: SourceFile, previous: Manifest.Item? = nil, known: Bool = false, wasItem: Bool = false,
            placeholder: KnownPlaceholder? = nil, recorded: [String: Int] = [:]
        ) {
            self.file = file
            self.known = known
            self.wasItem = wasItem
            if previous != nil || placeholder != nil || !recorded.isEmpty { stored = Boxed((previous, placeholder, recorded)) }
        }

        /// The byte sizes the index recorded of the row's thumbnails, by path: an existing file is
        /// reused only when it still has its recorded size.
        var recorded: [String: Int] { stored?.value.2 ?? [:] }

        /// The stored item, re-hashed rather than processed: with `--verify`, and for a file touched
        /// (same size, another modification time).
        var previous: Manifest.Item? { stored?.value.0 }
        /// For a file touched but of the same size: the recorded placeholder, good while the
        /// bytes hash the same (a placeholder is a function of the pixels).
        var placeholder: KnownPlaceholder? { stored?.value.1 }

        /// A failure recorded for this path with the hash of the bytes that failed, for a file
        /// touched but of the same size (a checkout): the same bytes fail as they failed, without
        /// a decode, and `--check --verify` does not call them changed.
        var recordedFailure: (failure: Manifest.Failure, sha256: String)? {
            get { failed?.value }
            set { failed = newValue.map { Boxed($0) } }
        }
        private var failed: Boxed<(failure: Manifest.Failure, sha256: String)>?
    }

    /// A value kept on the heap.
    final class Boxed<Value: Sendable>: Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// What a stored item knows that would take a decode (or, for a reused item, a probe) to
    /// learn again, good while the bytes hash the same.
    struct KnownPlaceholder: Sendable, Codable {
        var sha256: String
        var placeholder: Manifest.Placeholder
        var likeness: Likeness?
        var burst: BurstMark?

        init(sha256: String, placeholder: Manifest.Placeholder, likeness: Likeness? = nil, burst: BurstMark? = nil) {
            (self.sha256, self.placeholder, self.likeness, self.burst) = (sha256, placeholder, likeness, burst)
        }

        init?(_ stored: StateIndex.StoredItem) {
            guard let placeholder = stored.placeholder else { return nil }
            (sha256, self.placeholder, likeness, burst) = (stored.file.sha256, placeholder, stored.likeness, stored.burst)
        }
    }

    /// Files whose stored item stands (counted, not kept: a rerun of a large library is mostly these).
    var reusedItems = 0
    /// Unchanged files that failed to probe or decode, whose stored failure stands.
    var reusedFailures = 0
    var work: [Work] = []
    /// Unchanged files whose thumbnails have gone missing or changed size.
    var missingThumbnails: [String] = []

    /// Indexed files the walk did not find, and whether each was an item.
    var missing: [(path: [UInt8], wasItem: Bool)] = []

    /// An empty plan.
    init() {}

    /// Files decided together: their rows (with thumbnail paths) are held only this long, so a
    /// plan of a million files never holds a million rows.
    static let chunkSize = 4096

    /// Reads the index once, merged with the walk in path order (`files` must be sorted by
    /// `rawPath`). With `reusable` false (settings that shape items changed, or `--force`),
    /// nothing is reused but what is missing is known. `verify`: unchanged items are re-hashed
    /// (their entries go along); `check`: nothing will be written, and failures are not retried.
    init(
        index: StateIndex?, reusable: Bool, verify: Bool, check: Bool, output: OutputDirectory?, files: [SourceFile],
        chunkSize: Int = ReusePlan.chunkSize
    ) throws(SQLiteError) {
        assert(zip(files, files.dropFirst()).allSatisfy { $0.rawPath.lexicographicallyPrecedes($1.rawPath) })
        guard let index else {
            work = files.map { Work(file: $0) }
            return
        }
        // The rows in one ordered scan merged with the sorted walk (no lookup per file); every
        // few thousand known files, their thumbnails' stats on all cores (a rerun of 100 000
        // files stats 200 000 thumbnails) and their decisions.
        var known: [(position: Int, row: StateIndex.Row)] = []
        var next = 0
        try index.forEachRow { (path, row) throws(SQLiteError) in
            while next < files.count, files[next].rawPath.lexicographicallyPrecedes(path) {
                work.append(Work(file: files[next]))
                next += 1
            }
            if next < files.count, files[next].rawPath == path {
                known.append((next, row))
                next += 1
                if known.count == chunkSize {
                    try decide(known, files: files, index: index, reusable: reusable, verify: verify, check: check, output: output)
                    known.removeAll(keepingCapacity: true)
                }
            } else {
                missing.append((path, !row.failed))
            }
        }
        try decide(known, files: files, index: index, reusable: reusable, verify: verify, check: check, output: output)
        work += files[next...].map { Work(file: $0) }
    }

    /// Decides for files the index has a row for.
    private mutating func decide(
        _ known: [(position: Int, row: StateIndex.Row)], files: [SourceFile], index: StateIndex, reusable: Bool, verify: Bool,
        check: Bool, output: OutputDirectory?
    ) throws(SQLiteError) {
        guard reusable else {
            work += known.map { Work(file: files[$0.position], known: true, wasItem: !$0.row.failed) }
            return
        }
        let complete = Self.thumbnailsComplete(known.map(\.row), files: known.map { files[$0.position] }, output: output)
        for (offset, (position, row)) in known.enumerated() {
            let file = files[position]
            let unchanged = row.size == file.stat.size && row.modified == file.stat.modifiedKey
            let reprobe = row.modified == StateIndex.reprobeMark
            func redo(previous: Manifest.Item? = nil, wasItem: Bool, placeholder: KnownPlaceholder? = nil) {
                let recorded = Dictionary(row.thumbnails.map { ($0.path, $0.bytes) }, uniquingKeysWith: { $1 })
                work.append(
                    Work(file: file, previous: previous, known: true, wasItem: wasItem, placeholder: placeholder, recorded: recorded))
            }
            if unchanged && !row.failed {
                if !complete[offset] {
                    missingThumbnails.append(file.relativePath)
                    redo(wasItem: true)
                } else if verify {
                    let stored = try index.entry(file.rawPath)?.item()
                    redo(previous: stored.map { Self.item($0, file) }, wasItem: true, placeholder: stored.flatMap(KnownPlaceholder.init))
                    work[work.count - 1].previousIdentifier = stored?.contentIdentifier
                } else {
                    reusedItems += 1
                }
            } else if unchanged, check || row.stage?.isRetried == false {
                // A broken file stays broken until it changes; other failures are tried again
                // (`FailureStage.isRetried`), though `--check` does not call them stale.
                reusedFailures += 1
            } else if !row.failed, row.size == file.stat.size, !check || (verify && !reprobe),
                let stored = try index.entry(file.rawPath)?.item()
            {
                // Touched (a checkout, a copy, a restore, a sync that rewrote it): likely the same
                // bytes. Hashed as under --verify: the same bytes with their thumbnails intact are
                // the stored item as it was, `file.modified` included, so no published file
                // changes; else, with the recorded placeholder, nothing to decode but what is
                // missing. Marked by an upgrade instead: probed again for what the new format adds.
                let placeholder = KnownPlaceholder(stored)
                if reprobe {
                    redo(wasItem: true, placeholder: placeholder)
                } else {
                    redo(previous: Self.item(stored, file), wasItem: true, placeholder: placeholder)
                    work[work.count - 1].previousIdentifier = stored.contentIdentifier
                }
            } else if row.failed, !unchanged, !reprobe, row.stage?.isRetried == false, row.size == file.stat.size, !check || verify,
                let stored = try index.entry(file.rawPath), let failure = stored.failure(), let sha256 = stored.failureSHA256()
            {
                // Touched, a broken file's recorded bytes: hashed, and the same bytes stay broken
                // as they were (the failure as stored, `modified` included), undecoded.
                redo(wasItem: false)
                work[work.count - 1].recordedFailure = (failure, sha256)
            } else {
                redo(wasItem: !row.failed)
            }
        }
    }

    /// For each unchanged item, whether every thumbnail is still there with the size it was
    /// written with (a truncated or replaced one is rebuilt; `--verify` also compares its hash).
    /// The stats run on all cores.
    private static func thumbnailsComplete(_ rows: [StateIndex.Row], files: [SourceFile], output: OutputDirectory?) -> [Bool] {
        let results = UnsafeMutableBufferPointer<Bool>.allocate(capacity: rows.count)
        defer { results.deallocate() }
        results.initialize(repeating: false)
        let chunks = max(1, min(64, rows.count / 256))
        // Each chunk writes only its own slots of `results`, and reads shared immutable arrays.
        nonisolated(unsafe) let slots = results
        WorkerPool.forEach(count: chunks, threads: ProcessInfo.processInfo.activeProcessorCount) { chunk in
            // Fan-out directories looked up once per chunk, not once per thumbnail under a lock.
            var directories: [String: Directory] = [:]
            let range = (rows.count * chunk / chunks)..<(rows.count * (chunk + 1) / chunks)
            for position in range {
                let row = rows[position]
                guard let output, !row.failed, row.size == files[position].stat.size,
                    row.modified == files[position].stat.modifiedKey
                else { continue }
                slots[position] = row.thumbnails.allSatisfy { thumbnail in
                    guard let name = OutputName(thumbnail.path) else { return false }
                    let key = name.area + name.fanout
                    guard let directory = directories[key] ?? output.directory(of: name) else { return false }
                    directories[key] = directory
                    guard let stat = directory.stat(name.fileBytes), stat.isRegularFile else { return false }
                    return thumbnail.bytes == stat.size
                }
            }
        }
        return Array(results)
    }

    /// A stored item as a manifest item (position and layouts are filled in by the assembler).
    static func item(_ stored: StateIndex.StoredItem, _ file: SourceFile) -> Manifest.Item {
        var item = Manifest.Item(
            index: 0, section: 0, item: 0, path: file.relativePath, rawPath: file.manifestRawPath, file: stored.file,
            media: stored.media ?? .photo, image: stored.image, exif: stored.exif, thumbnails: stored.thumbnails,
            placeholder: stored.placeholder,
            layouts: [:])
        item.place = stored.place
        return item
    }
}
