import Foundation
import ThumbframeManifest

/// The `meta` table, typed: which code and recipes made the rows, and what was last published.
/// Each key is a case of `StateIndex.Meta`; each value is written and read here alone, as plain
/// text or as the JSON of a Codable type.
extension StateIndex {
    /// The keys of the `meta` table.
    enum Meta: String, CaseIterable {
        /// `StateIndex.format`: the shape of the tables.
        case format
        /// What made the rows (`ItemShape`): thumbframe and libvips, and the recipes, as text.
        case generator, recipes
        /// What was last published (`Published`, as JSON).
        case published
        /// `1` from the first row changed until a manifest is written from the rows, then `0`.
        case dirty
        /// A shard's `ShardRecord` (JSON), in a shard's own index.
        case shard
        /// What shaped the video renditions of the rows (`RenditionSettings.canonical`).
        case renditions
    }

    /// What made every row: a different one rebuilds every item.
    struct ItemShape: Codable, Equatable {
        /// This thumbframe and libvips (`0.3.0 libvips 8.14.1`).
        var generator: String
        /// Every recipe, canonically.
        var recipes: String
    }

    /// What the index says was last published, and with which settings.
    struct Published: Codable {
        /// What made the rows (from `generator` and `recipes`).
        var shape: ItemShape?
        /// The published manifest's settings (canonical JSON) and the walk's failures (a SHA-256).
        var settings: String?
        var walkFailures: String?
        /// What the walk skipped, by kind (nil: nothing, or an index from before it counted).
        var skipped: [String: Int]?
        /// Every page of the published top document, with its `FileStat.fingerprint` when written.
        var pages: [String: String] = [:]
        /// `manifest.json` as written: its `FileStat.fingerprint` and SHA-256.
        var manifestFingerprint: String?
        var manifestSHA256: String?
        var items = 0
        var sections = 0
        /// No row changed since the manifest was written (a build killed after recording rows
        /// leaves the index dirty: the next run writes the manifest even if no file changed).
        /// From `dirty`.
        var clean = false

        private enum CodingKeys: String, CodingKey {
            case settings, walkFailures, skipped, pages, manifestFingerprint, manifestSHA256, items, sections
        }

        func json() throws(SQLiteError) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            do {
                return String(decoding: try encoder.encode(self), as: UTF8.self)
            } catch {
                throw SQLiteError(code: 1, message: "cannot encode what was published: \(error)")
            }
        }
    }

    /// What was published, as recorded (nothing yet: an empty record). A record that does not
    /// decode counts as nothing published: the next build writes the manifest again and records
    /// it anew (the rows, which it does not describe, stand).
    func published() throws(SQLiteError) -> Published {
        var published = Published()
        if let json = try meta(.published), let record = try? JSONDecoder().decode(Published.self, from: Data(json.utf8)) {
            published = record
        }
        if let generator = try meta(.generator), let recipes = try meta(.recipes) {
            published.shape = ItemShape(generator: generator, recipes: recipes)
        }
        published.clean = try meta(.dirty) == "0"
        return published
    }

    /// Records a manifest just written from the rows: the index is clean again.
    func recordPublished(_ published: Published) throws(SQLiteError) {
        try setMeta(.published, try published.json())
        try setMeta(.dirty, "0")
    }

    /// Records what made the rows from now on.
    func setShape(_ shape: ItemShape) throws(SQLiteError) {
        try setMeta(.generator, shape.generator)
        try setMeta(.recipes, shape.recipes)
    }

    /// Rows change from here on: until a manifest is written from them, the index is dirty.
    func markDirty() throws(SQLiteError) {
        try setMeta(.dirty, "1")
    }

    /// Records what shapes video renditions from now on; when it is not what made the rows (or
    /// the rows were made before renditions), marks the rows of videos and of photos with a
    /// moving part touched, so the next plan makes them again (their posters and thumbnails are
    /// found; only renditions are made). Returns whether it changed.
    @discardableResult
    func setRenditions(_ canonical: String) throws(SQLiteError) -> Bool {
        guard try meta(.renditions) != canonical else { return false }
        try Self.reprobe(database, where: Self.videoRows)
        try setMeta(.renditions, canonical)
        return true
    }

    /// How many items a change of renditions would make again (`setRenditions`): 0 when they
    /// were made as `canonical` says.
    func renditionsStale(_ canonical: String) throws(SQLiteError) -> Int {
        guard try meta(.renditions) != canonical else { return 0 }
        let count = try database.prepare(
            "SELECT COUNT(*) FROM files WHERE failed = 0 AND path IN (SELECT path FROM entries WHERE \(Self.videoRows))")
        return try count.step() ? count.int(0) : 0
    }

    /// A shard's record of what it saw, in its own index.
    func shardRecord() throws(SQLiteError) -> ShardRecord? {
        try meta(.shard).flatMap { try? JSONDecoder().decode(ShardRecord.self, from: Data($0.utf8)) }
    }

    func setShardRecord(_ record: ShardRecord) throws(SQLiteError) {
        let json: Data
        do {
            json = try JSONEncoder().encode(record)
        } catch {
            throw SQLiteError(code: 1, message: "cannot encode the shard's record: \(error)")
        }
        try setMeta(.shard, String(decoding: json, as: UTF8.self))
    }

}

/// What a shard records beside its rows, so `merge` can check the shards agree and publish
/// without walking the source again.
struct ShardRecord: Codable, Equatable {
    var shard: Int
    var count: Int
    var generator: String
    var recipes: String
    /// The settings that shape the manifest, as written into it.
    var settings: Manifest.Settings
    /// The source directory's name: the root section's title (shards may name the same
    /// directory by different paths).
    var source: String
    /// Files of the whole walk and its failures (`Shard.walkDigest`): equal in every shard of
    /// one merge, or some shard saw another state of the library.
    var walkDigest: String
    var walkFailures: [Manifest.Failure]
    /// What the whole walk skipped, by kind (nil: nothing).
    var walkSkipped: [String: Int]?
    /// What shaped the shard's video renditions (`RenditionSettings.canonical`; nil before them).
    var renditions: String?

    /// Everything but the shard's own number: what all shards of a merge share.
    var agreement: ShardRecord {
        var shared = self
        shared.shard = 0
        return shared
    }

    var shape: StateIndex.ItemShape { StateIndex.ItemShape(generator: generator, recipes: recipes) }
}
