import Foundation

/// Indexes an earlier thumbframe wrote, upgraded in place by the first build that opens them
/// (a rebuild from the sources would cost a decode of the whole library). Read-only opens
/// (`--check`, `merge` of shards) do not upgrade: they find the index unusable, and the next
/// build (or the shards run again) upgrades or rewrites it.
extension StateIndex {
    /// Format 4 kept each item's thumbnails as `path bytes` lines in `files.thumbs`, and what was
    /// published under six `meta` keys as text.
    static let format4 = "thumbframe-state-4"

    /// Moves format 4's thumbnails into their table and its published state into one document,
    /// in one transaction; a failure leaves the index as it was and is reported as unusable
    /// (then rebuilt from the sources).
    static func migrateFrom4(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format4, to: format5) { () throws(SQLiteError) in
            let rows = try database.prepare("SELECT path, thumbs FROM files")
            let insert = try database.prepare("INSERT OR REPLACE INTO thumbnails (path, thumbnail, bytes) VALUES (?, ?, ?)")
            while try rows.step() {
                for line in (rows.string(1) ?? "").split(separator: "\n") {
                    guard let space = line.lastIndex(of: " "), let bytes = Int(line[line.index(after: space)...]) else { continue }
                    insert.bind(1, rows.bytes(0))
                    insert.bind(2, String(line[..<space]))
                    insert.bind(3, bytes)
                    try insert.run()
                }
            }
            rows.reset()
            try database.execute("ALTER TABLE files DROP COLUMN thumbs")
            let legacy = ["settings", "walkFailures", "pages", "manifest", "items", "sections"]
            var values: [String: String] = [:]
            let select = try database.prepare("SELECT key, value FROM meta")
            while try select.step() { values[select.string(0) ?? ""] = select.string(1) }
            select.reset()
            var published = Published()
            published.settings = values["settings"]
            published.walkFailures = values["walkFailures"]
            for line in (values["pages"] ?? "").split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2 { published.pages[String(parts[0])] = String(parts[1]) }
            }
            let manifest = values["manifest"]?.split(separator: " ")
            published.manifestFingerprint = manifest?.first.map(String.init)
            published.manifestSHA256 = manifest?.last.map(String.init)
            published.items = values["items"].flatMap(Int.init) ?? 0
            published.sections = values["sections"].flatMap(Int.init) ?? 0
            let delete = try database.prepare("DELETE FROM meta WHERE key = ?")
            for key in legacy {
                delete.bind(1, key)
                try delete.run()
            }
            let set = try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
            if values["manifest"] != nil {
                set.bind(1, Meta.published.rawValue)
                set.bind(2, try published.json())
                try set.run()
            }
        }
    }

    /// Format 5 knew only photos: its rows of GIF and WebP files with more than one frame lack
    /// the animation that makes them `animated` items, and its rows of Apple's photos the content
    /// identifier that pairs a Live Photo with its MOV (MOVs were not rows then: they are new
    /// files now).
    static let format5 = "thumbframe-state-5"

    /// The modification time an upgrade gives rows to probe again (no file has it): unlike a
    /// file touched on disk, whose stored item stands when its bytes hash as recorded, such a
    /// row is probed again for what the new format adds.
    static let reprobeMark = -1

    /// Adds `files.pair` and marks those rows touched (a modification time no file has): the
    /// next build reads, hashes and probes just them again, and decodes nothing whose
    /// thumbnails are there (the placeholder of the same bytes is known).
    static func migrateFrom5(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format5, to: format6) { () throws(SQLiteError) in
            try addColumn(database, "pair")
            try reprobe(
                database,
                where: """
                    (json_extract(CAST(entry AS TEXT), '$.image.format') IN ('gif', 'webp')
                        AND json_extract(CAST(entry AS TEXT), '$.image.pages') > 1)
                    OR json_extract(CAST(entry AS TEXT), '$.exif.make') = 'Apple'
                    """)
        }
    }

    /// Format 6's rows of HEIC, AVIF and HEIF photos were made through libvips 8.14's HEIF
    /// loader with a profile read from freed memory (their colours changed from run to run), its
    /// Motion Photos' MP4s were copied byte for byte, with the place they were taken, and its
    /// deep-zoom levels were box averages.
    static let format6 = "thumbframe-state-6"

    /// Marks those rows touched: the next build probes them again and writes their thumbnails
    /// (`ImageHeader.pixelsRevision`), motion MP4s (remuxed without metadata) and pyramids
    /// (Lanczos3 levels) under their new content addresses; the pruner removes the old.
    static func migrateFrom6(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format6, to: format7) { () throws(SQLiteError) in
            try reprobe(
                database,
                where: """
                    json_extract(CAST(entry AS TEXT), '$.image.format') IN ('heic', 'avif', 'heif')
                    OR json_extract(CAST(entry AS TEXT), '$.media.motion.source') = 'embedded'
                    OR json_extract(CAST(entry AS TEXT), '$.thumbnails.tiles') IS NOT NULL
                    """)
        }
    }

    /// Format 7's videos and motion parts lack `indexFirst` and `delivery` (how every browser
    /// gets to play them).
    static let format7 = "thumbframe-state-7"

    /// Marks the rows of videos and of photos with an embedded motion touched: the next build
    /// probes them again (a Live Photo's MOV is a video row of its own) and decodes nothing
    /// whose thumbnails are there.
    static func migrateFrom7(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format7, to: format8) { () throws(SQLiteError) in
            try reprobe(database, where: videoRows)
        }
    }

    /// Format 8's HDR photos have SDR display and zoom renditions: no gain map.
    static let format8 = "thumbframe-state-8"

    /// Marks the rows of HDR photos touched: the next build probes them again and writes their
    /// lightbox renditions as gain-map JPEGs under their new content addresses (`--hdr
    /// gain-map`); their grid thumbnails are found where they are, and the pruner removes the
    /// old renditions.
    static func migrateFrom8(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format8, to: format9) { () throws(SQLiteError) in
            try reprobe(database, where: "json_extract(CAST(entry AS TEXT), '$.image.hdr') IS NOT NULL")
        }
    }

    /// Format 9 kept no stack evidence: what a burst's camera says, what a photo looks like.
    static let format9 = "thumbframe-state-9"

    /// Adds `files.evidence` and marks every photo's row to probe again: the next build reads
    /// each photo's burst marks and, with `--stacks all` (the default), decodes it once to
    /// measure its likeness (its thumbnails are kept, found by their content address).
    static func migrateFrom9(_ database: SQLiteDatabase) throws(SQLiteError) {
        try upgrade(database, from: format9, to: format) { () throws(SQLiteError) in
            try addColumn(database, "evidence")
            try reprobe(
                database,
                where: "json_extract(CAST(entry AS TEXT), '$.media') IS NULL "
                    + "OR json_extract(CAST(entry AS TEXT), '$.media.kind') = 'photo'")
        }
    }

    /// Adds a TEXT column to `files`, last (where a new index's schema has it), unless it is there.
    private static func addColumn(_ database: SQLiteDatabase, _ name: String) throws(SQLiteError) {
        let columns = try database.prepare("SELECT name FROM pragma_table_info('files') WHERE name = ?")
        columns.bind(1, name)
        let present = try columns.step()
        columns.reset()
        if !present { try database.execute("ALTER TABLE files ADD COLUMN \(name) TEXT") }
    }

    /// The rows of videos (a Live Photo's MOV is one) and of photos with a moving part, as SQL over `entry`.
    static let videoRows = """
        json_extract(CAST(entry AS TEXT), '$.media.video') IS NOT NULL
        OR json_extract(CAST(entry AS TEXT), '$.media.motion.video') IS NOT NULL
        """

    /// Marks the rows whose entries match `condition` (SQL over `entry`) touched: the next build
    /// probes them again (`reprobeMark`); failures are left as they are.
    static func reprobe(_ database: SQLiteDatabase, where condition: String) throws(SQLiteError) {
        try database.execute(
            "UPDATE files SET mtime = \(reprobeMark) WHERE failed = 0 AND path IN (SELECT path FROM entries WHERE \(condition));")
    }

    /// Runs `change` and records the new format in one transaction; a failure rolls both back
    /// and leaves the index as it was, reported as unusable (then rebuilt from the sources).
    private static func upgrade(
        _ database: SQLiteDatabase, from old: String, to new: String, _ change: () throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        do {
            try database.execute("BEGIN")
            try change()
            let set = try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")
            set.bind(1, Meta.format.rawValue)
            set.bind(2, new)
            try set.run()
            try database.execute("COMMIT")
        } catch {
            try? database.execute("ROLLBACK")
            throw SQLiteError(code: 26, message: "a state index of \(old) could not be upgraded (\(error))")
        }
    }
}
