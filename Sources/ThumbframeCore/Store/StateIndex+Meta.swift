import Foundation
import ThumbframeManifest

/// The `meta` table, typed: which code and recipes made the rows, and what was last published.
/// Each key is a case of `StateIndex.Meta`; each value is written and read here alone.
extension StateIndex {
    /// The keys of the `meta` table.
    enum Meta: String, CaseIterable {
        /// `StateIndex.format`: the shape of the tables.
        case format
        /// What made the rows: thumbframe and libvips (`ItemShape.generator`) and the recipes.
        case generator, recipes
        /// The published manifest's settings (canonical JSON) and the walk's failures (a SHA-256).
        case settings, walkFailures
        /// `manifest.json` as written: `fingerprint sha256`; each page: `path fingerprint` lines.
        case manifest, pages
        /// The published manifest's item and section counts.
        case items, sections
        /// `1` from the first row changed until a manifest is written from the rows, then `0`.
        case dirty
        /// A shard's `ShardRecord` (JSON), in a shard's own index.
        case shard
    }

    /// What made every row: a different one rebuilds every item.
    struct ItemShape: Equatable {
        /// This thumbframe and libvips (`0.3.0 libvips 8.14.1`).
        var generator: String
        /// Every recipe, canonically.
        var recipes: String
    }

    /// What the index says was last published, and with which settings.
    struct Published {
        var shape: ItemShape?
        var settings: String?
        var walkFailures: String?
        /// Every page of the published top document, with its `FileStat.fingerprint` when written.
        var pages: [String: String] = [:]
        /// `manifest.json` as written: its `FileStat.fingerprint` and SHA-256.
        var manifestFingerprint: String?
        var manifestSHA256: String?
        var items = 0
        var sections = 0
        /// No row changed since the manifest was written (a build killed after recording rows
        /// leaves the index dirty: the next run writes the manifest even if no file changed).
        var clean = false
    }

    /// What was published, as recorded.
    func published() throws(SQLiteError) -> Published {
        var published = Published()
        if let generator = try meta(.generator), let recipes = try meta(.recipes) {
            published.shape = ItemShape(generator: generator, recipes: recipes)
        }
        published.settings = try meta(.settings)
        published.walkFailures = try meta(.walkFailures)
        for line in (try meta(.pages) ?? "").split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { published.pages[String(parts[0])] = String(parts[1]) }
        }
        let manifest = try meta(.manifest)?.split(separator: " ")
        published.manifestFingerprint = manifest?.first.map(String.init)
        published.manifestSHA256 = manifest?.last.map(String.init)
        published.items = try meta(.items).flatMap(Int.init) ?? 0
        published.sections = try meta(.sections).flatMap(Int.init) ?? 0
        published.clean = try meta(.dirty) == "0"
        return published
    }

    /// Records a manifest just written from the rows: the index is clean again.
    func recordPublished(_ published: Published) throws(SQLiteError) {
        if let fingerprint = published.manifestFingerprint, let sha256 = published.manifestSHA256 {
            try setMeta(.manifest, "\(fingerprint) \(sha256)")
        }
        let pages = published.pages.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        try setMeta(.pages, pages.joined(separator: "\n"))
        try setMeta(.settings, published.settings ?? "")
        try setMeta(.walkFailures, published.walkFailures ?? "")
        try setMeta(.items, String(published.items))
        try setMeta(.sections, String(published.sections))
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

    /// Everything but the shard's own number: what all shards of a merge share.
    var agreement: ShardRecord {
        var shared = self
        shared.shard = 0
        return shared
    }

    var shape: StateIndex.ItemShape { StateIndex.ItemShape(generator: generator, recipes: recipes) }
}
