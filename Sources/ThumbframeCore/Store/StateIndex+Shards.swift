import Foundation
import ThumbframeManifest

/// What `merge` does with the shards' indexes: finds them, checks their rows, imports them.
extension StateIndex {
    /// Adds every file row, thumbnail and entry of another index (a shard's), in one
    /// transaction; the two hold disjoint paths.
    func importRows(from path: String) throws(SQLiteError) {
        try commit()
        let attach = try database.prepare("ATTACH DATABASE ? AS part")
        attach.bind(1, path)
        try attach.run()
        do {
            try database.execute(
                """
                BEGIN;
                INSERT OR REPLACE INTO files SELECT * FROM part.files;
                INSERT OR REPLACE INTO thumbnails SELECT * FROM part.thumbnails;
                INSERT OR REPLACE INTO entries SELECT * FROM part.entries;
                COMMIT;
                """)
        } catch {
            try? database.execute("ROLLBACK")
            try? database.execute("DETACH DATABASE part")
            throw error
        }
        try database.execute("DETACH DATABASE part")
    }

    /// The first row this index holds that a build would not have written: a path that is not
    /// a clean relative path, an entry that does not decode, a thumbnail path not of
    /// thumbframe's shape under `thumbs/`, thumbnails in the entry other than those in the row,
    /// or a thumbnail that is not on disk with its recorded size. `merge` checks every shard's
    /// rows with it before importing them, as a build checks its own before reusing them.
    func firstDamagedRow(output: OutputDirectory) throws(SQLiteError) -> String? {
        let select = try database.prepare("SELECT path, failed, entry FROM files JOIN entries USING (path) ORDER BY path")
        var thumbnails = try ThumbnailCursor(database)
        while try select.step() {
            let path = select.bytes(0)
            let shown = TerminalText.safe(String(decoding: path, as: UTF8.self))
            guard SourceFile.isCleanRelativePath(path) else { return "a row names '\(shown)', not a path inside the source" }
            let stored = Stored(failed: select.int(1) != 0, json: select.bytes(2))
            let recorded = try thumbnails.take(path)
            if stored.failed {
                if stored.failure() == nil { return "the failure of \(shown) cannot be read" }
                continue
            }
            guard let item = stored.item() else { return "the entry of \(shown) cannot be read" }
            // Thumbnails, a Motion Photo's MP4 and video renditions: every file the item names.
            let named = item.files.map { ($0.path, $0.bytes) }
            guard Set(recorded.map { "\($0.path) \($0.bytes)" }) == Set(named.map { "\($0.0) \($0.1)" }) else {
                return "the thumbnails of \(shown) differ between its row and its entry"
            }
            for (thumbnail, bytes) in named {
                guard OutputName(thumbnail)?.area == "thumbs" else {
                    return "\(shown) names '\(TerminalText.safe(thumbnail))', not a thumbnail path of thumbframe's"
                }
                guard let stat = output.stat(file: thumbnail), stat.isRegularFile, stat.size == bytes else {
                    return "thumbnail \(thumbnail) of \(shown) is missing or changed"
                }
            }
        }
        return nil
    }

    /// The shard state indexes in OUT_DIR (`.thumbframe-shard-K-of-N.sqlite`), by name.
    static func shardNames(in output: OutputDirectory) -> [String] {
        let names = ((try? output.root.entries()) ?? []).map { String(decoding: $0, as: UTF8.self) }
        return names.filter { name in
            guard name.hasPrefix(".thumbframe-shard-"), name.hasSuffix(".sqlite") else { return false }
            let tag = name.dropFirst(".thumbframe-shard-".count).dropLast(".sqlite".count).split(separator: "-")
            return tag.count == 3 && tag[1] == "of" && Int(tag[0]) != nil && Int(tag[2]) != nil
        }.sorted()
    }

    /// Items and failures recorded.
    func rowCounts() throws(SQLiteError) -> (items: Int, failures: Int) {
        let select = try database.prepare("SELECT failed, COUNT(*) FROM files GROUP BY failed")
        var counts = (items: 0, failures: 0)
        while try select.step() {
            if select.int(0) == 0 { counts.items = select.int(1) } else { counts.failures = select.int(1) }
        }
        return counts
    }
}
