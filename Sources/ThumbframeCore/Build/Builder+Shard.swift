import Foundation
import ThumbframeManifest

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
}

extension Builder {
    /// The end of a shard's run: its rows are in its own index; it records what it saw and
    /// writes no manifest, prunes nothing (other shards' thumbnails are not in its rows).
    func finishShard(
        _ shard: Shard, index: StateIndex, output: OutputDirectory, walk: SourceWalker.Result, walkDigest: String,
        removed: [[UInt8]], thumbnailsWritten: Int, reused: Int
    ) throws(ThumbframeError) -> BuildReport {
        let record = ShardRecord(
            shard: shard.index, count: shard.count, generator: Self.generator, recipes: Self.recipes(options.thumbnails),
            settings: options.settings, source: (options.source as NSString).lastPathComponent, walkDigest: walkDigest,
            walkFailures: walk.failures)
        let statePath = output.path + "/" + shard.stateName
        let counts: (items: Int, failures: Int)
        do {
            try index.removeRows(removed)
            let json = try JSONEncoder().encode(record)
            try index.setMeta("shard", String(decoding: json, as: UTF8.self))
            try index.commit()
            counts = try index.rowCounts()
        } catch let error as SQLiteError {
            throw .cannotWrite(path: statePath, reason: error.description)
        } catch {
            throw .cannotWrite(path: statePath, reason: "\(error)")
        }
        let failures = try reportFailures(SourceWalker.Result(files: [], failures: []), index: index)
        return BuildReport(
            manifestPath: output.path + "/" + OutputDirectory.manifestName, items: counts.items, sections: 0,
            failures: failures, thumbnailsWritten: thumbnailsWritten, manifestWritten: false, reused: reused)
    }
}

/// `thumbframe merge`: publishes the manifest of a library built as N shards into OUT_DIR —
/// byte for byte the manifest one build of the whole library writes.
package struct ShardMerge: Sendable {
    package var output: String
    package var count: Int
    package var allowShrink = false
    package var events: @Sendable (BuildEvent) -> Void

    package init(output: String, count: Int, allowShrink: Bool = false, events: @escaping @Sendable (BuildEvent) -> Void = { _ in }) {
        self.output = output
        self.count = count
        self.allowShrink = allowShrink
        self.events = events
    }

    /// The most shards a merge takes (as `--shard K/N` allows).
    package static let maximumShards = 10_000

    package func run() async throws(ThumbframeError) -> BuildReport {
        guard (1...Self.maximumShards).contains(count) else {
            throw .invalidOptions("--shards must be from 1 to \(Self.maximumShards), not \(count)")
        }
        guard let path = FileSystem.realPath(output) else {
            throw .sourceUnreadable(path: output, reason: "no such directory (run the shards first)")
        }
        let out = try OutputDirectory(path, create: false)
        let manifestPath = path + "/" + OutputDirectory.manifestName
        _ = try Builder.refuseForeignManifest(out, manifestPath: manifestPath)
        // Nothing is created (no lock file) before every shard's index is known to be there: a
        // mistyped OUT_DIR or N is told at once and left as it was.
        let absent = (0..<count).filter { out.root.stat(Array(Shard(index: $0, count: count).stateName.utf8)) == nil }
        if !absent.isEmpty { throw .shardsMissing(Self.missingSentence(absent, count: count, path: path)) }
        // Alone in OUT_DIR: no build, no other merge, and no shard still running.
        let lock = try BuildLock.acquire(in: out.root)
        var shardLocks: [BuildLock] = []
        defer { withExtendedLifetime((lock, shardLocks)) {} }
        var records: [ShardRecord] = []
        var missing: [Int] = []
        for number in 0..<count {
            let shard = Shard(index: number, count: count)
            do {
                shardLocks.append(try BuildLock.acquire(in: out.root, name: shard.lockName))
            } catch {
                throw .locked(path: path, holder: "shard \(number)/\(count), still running")
            }
            let opened = try StateIndex.open(out, readOnly: true, name: shard.stateName)
            guard let index = opened.index, let json = try? index.meta("shard"),
                let record = try? JSONDecoder().decode(ShardRecord.self, from: Data(json.utf8)),
                record.shard == number, record.count == count
            else {
                missing.append(number)
                continue
            }
            // Its rows are checked as a build checks its own before it reuses them: every
            // thumbnail they name is thumbframe's and on disk (a plain build, a hand, or a
            // tampered row cannot make the merge publish what is not there).
            let damaged: String?
            do {
                damaged = try index.firstDamagedRow(output: out)
            } catch {
                throw .cannotWrite(path: path + "/" + shard.stateName, reason: error.description)
            }
            if let damaged {
                throw .shardsDisagree("shard \(number)/\(count): \(damaged); run that shard again, then merge (nothing merged)")
            }
            records.append(record)
        }
        if !missing.isEmpty { throw .shardsMissing(Self.missingSentence(missing, count: count, path: path)) }
        let first = records[0]
        for record in records.dropFirst() where record.agreement != first.agreement {
            let why =
                record.generator != first.generator || record.recipes != first.recipes
                ? "another thumbframe version or other thumbnails"
                : record.settings != first.settings || record.source != first.source
                    ? "other settings"
                    : "another state of the source (a file changed between the shards' runs: rerun the stale ones)"
            throw .shardsDisagree("shard \(record.shard)/\(count) was built with \(why) than shard 0/\(count); nothing merged")
        }

        // The merged rows go into OUT_DIR's own index, then the usual publish writes the pages,
        // the top document, the ledger, and prunes.
        var options = BuildOptions(
            source: first.source, output: path, thumbnails: first.settings.thumbnails, viewports: first.settings.viewports,
            preset: first.settings.preset, sections: first.settings.sections, order: first.settings.order)
        options.originalURL = first.settings.originalURL
        options.allowShrink = allowShrink
        let builder = Builder(options: options, events: events)
        let (opened, problem) = try StateIndex.open(out, readOnly: false)
        if let problem { events(.warning(problem)) }
        guard let index = opened else { throw .cannotWrite(path: path + "/" + StateIndex.name, reason: "cannot open") }
        let published = try Builder.Published(index)
        let statePath = path + "/" + StateIndex.name
        let merged: Int
        do {
            try index.removeAllRows()
            for number in 0..<count {
                try index.importRows(from: path + "/" + Shard(index: number, count: count).stateName)
            }
            try index.setMeta("generator", first.generator)
            try index.setMeta("recipes", first.recipes)
            try index.setMeta("dirty", "1")
            merged = try index.rowCounts().items
        } catch {
            throw .cannotWrite(path: statePath, reason: error.description)
        }
        try builder.refuseShrink(published.items, dropped: max(0, published.items - merged))
        let walk = SourceWalker.Result(files: [], failures: first.walkFailures)
        let written = try builder.publish(index: index, output: out, walk: walk, unchanged: false, changed: nil)
        let prune = try ThumbnailPruner(output: out).prune(
            keeping: try builder.keptThumbnails(index, output: out).union(written.pages ?? Set(published.pages.keys)))
        if let note = prune.foreignNote { events(.warning(note)) }
        return BuildReport(
            manifestPath: manifestPath, items: written.items, sections: written.sections, failures: written.failures,
            thumbnailsWritten: 0, manifestWritten: written.manifestWritten, pruned: prune.removed, foreign: prune.foreign,
            sectionsAssembled: written.sectionsAssembled)
    }

    /// One line naming the missing shards: the first ten, then how many more.
    static func missingSentence(_ missing: [Int], count: Int, path: String) -> String {
        let named = missing.prefix(10).map { "\($0)/\(count)" }.joined(separator: ", ")
        let more = missing.count > 10 ? " and \(missing.count - 10) more" : ""
        return "missing \(missing.count) of \(count) shards in \(path): \(named)\(more) (run them, then merge)"
    }
}
