import Foundation

extension StateIndex {
    /// What the index holds, table by table (made where missing).
    static let schema = """
        -- format, generator, recipes, published, dirty, shard: StateIndex.Meta
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS files (
            path BLOB PRIMARY KEY,      -- below SOURCE_DIR, as bytes
            size INTEGER NOT NULL,      -- FileStat.size when recorded
            mtime INTEGER NOT NULL,     -- FileStat.modifiedKey when recorded
            failed INTEGER NOT NULL,    -- 1: a failure (entries holds a Manifest.Failure), 0: an item
            stage TEXT,                 -- a failure's FailureStage
            captured TEXT NOT NULL,     -- an item's capture time, YYYY-MM-DDTHH:MM:SS (orders the manifest)
            pair TEXT,                  -- a Live Photo half: "photo <content identifier>" or "video <…>" (StoredItem.pair)
            evidence TEXT               -- a photo's StackEvidence.text: what --stacks groups it by
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS thumbnails (
            path BLOB NOT NULL,         -- files.path of the item that names it
            thumbnail TEXT NOT NULL,    -- its path in OUT_DIR (thumbs/xx/….ext)
            bytes INTEGER NOT NULL,     -- its size when written (-1: unknown)
            PRIMARY KEY (path, thumbnail)
        ) WITHOUT ROWID;
        -- StateIndex.StoredItem or Manifest.Failure, as JSON
        CREATE TABLE IF NOT EXISTS entries (path BLOB PRIMARY KEY, entry BLOB NOT NULL);
        -- StateIndex.StoredSection: its item count, page references and summary, as JSON
        CREATE TABLE IF NOT EXISTS sections (
            key BLOB PRIMARY KEY, count INTEGER NOT NULL, pages BLOB NOT NULL, summary BLOB NOT NULL
        ) WITHOUT ROWID;
        """

    static func prepareSchema(_ database: SQLiteDatabase, readOnly: Bool) throws(SQLiteError) {
        // A 16 MiB page cache holds the files table of 100 000 files; no memory map (its pages
        // would count against the memory bound and bought no speed here).
        try database.execute("PRAGMA mmap_size = 0; PRAGMA cache_size = -16384;")
        if !readOnly { try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;" + schema) }
        let statement = try database.prepare("SELECT value FROM meta WHERE key = ?")
        statement.bind(1, Meta.format.rawValue)
        let found = try statement.step() ? statement.string(0) : nil
        switch found {
        case Self.format: break
        case Self.format4 where !readOnly:
            try migrateFrom4(database)
            try migrateFrom5(database)
            try migrateFrom6(database)
            try migrateFrom7(database)
            try migrateFrom8(database)
            try migrateFrom9(database)
        case Self.format5 where !readOnly:
            try migrateFrom5(database)
            try migrateFrom6(database)
            try migrateFrom7(database)
            try migrateFrom8(database)
            try migrateFrom9(database)
        case Self.format6 where !readOnly:
            try migrateFrom6(database)
            try migrateFrom7(database)
            try migrateFrom8(database)
            try migrateFrom9(database)
        case Self.format7 where !readOnly:
            try migrateFrom7(database)
            try migrateFrom8(database)
            try migrateFrom9(database)
        case Self.format8 where !readOnly:
            try migrateFrom8(database)
            try migrateFrom9(database)
        case Self.format9 where !readOnly:
            try migrateFrom9(database)
        case nil where !readOnly:
            let insert = try database.prepare("INSERT INTO meta (key, value) VALUES (?, ?)")
            insert.bind(1, Meta.format.rawValue)
            insert.bind(2, Self.format)
            try insert.run()
        case let other:
            throw SQLiteError(code: 26, message: "not a thumbframe state index (format \(other ?? "none"))")
        }
    }
}
