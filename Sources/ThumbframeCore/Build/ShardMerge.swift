import Foundation
import ThumbframeManifest

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
        _ = try BuildSite.refuseForeignManifest(out, manifestPath: manifestPath)
        // Nothing is created (no lock file) before every shard's index is known to be there: a
        // mistyped OUT_DIR or N is told at once and left as it was.
        let absent = (0..<count).filter { out.root.stat(Array(Shard(index: $0, count: count).stateName.utf8)) == nil }
        if !absent.isEmpty { throw .shardsMissing(Self.missingSentence(absent, count: count, path: path)) }
        // Alone in OUT_DIR: no build, no other merge, and no shard still running.
        let lock = try BuildLock.acquire(in: out.root)
        var shardLocks: [BuildLock] = []
        defer { withExtendedLifetime((lock, shardLocks)) {} }
        let first = try agreedRecord(out, path: path, locks: &shardLocks)

        // The merged rows go into OUT_DIR's own index, then the usual publish writes the pages,
        // the top document, the ledger, and prunes.
        let (opened, problem) = try StateIndex.open(out, readOnly: false)
        if let problem { events(.warning(problem)) }
        guard let index = opened else { throw .cannotWrite(path: path + "/" + StateIndex.name, reason: "cannot open") }
        let (published, merged) = try index.stopping { () throws(SQLiteError) in
            let published = try index.published()
            try index.removeAllRows()
            for number in 0..<count {
                try index.importRows(from: path + "/" + Shard(index: number, count: count).stateName)
            }
            try index.setShape(first.shape)
            // The shards' rows carry their renditions: recorded as what made them, not a change.
            if let renditions = first.renditions { try index.setMeta(.renditions, renditions) }
            try index.markDirty()
            return (published, try index.rowCounts().items)
        }
        try Builder.refuseShrink(published.items, dropped: max(0, published.items - merged), allowed: allowShrink)
        let publisher = Publisher(
            index: index, output: out, settings: first.settings, sourceTitle: first.source,
            jobs: min(ProcessInfo.processInfo.activeProcessorCount, 8), events: events)
        let written = try publisher.publish(
            walk: SourceWalker.Result(failures: first.walkFailures, skipped: first.walkSkipped ?? [:]), published: published,
            unchanged: false, changed: nil)
        let prune = try Pruner(output: out).prune(after: written, by: publisher, published: published, always: true)
        return BuildReport(
            manifestPath: manifestPath, items: written.items, sections: written.sections, failures: written.failures,
            thumbnailsWritten: 0, manifestWritten: written.manifestWritten, pruned: prune.removed, foreign: prune.foreign,
            sectionsAssembled: written.sectionsAssembled, skipped: first.walkSkipped ?? [:],
            recipeBytes: written.recipeBytes(first.settings))
    }

    /// Every shard's record, checked: each shard's index there and locked (none still running),
    /// its rows such as a build would have written, and all of them agreeing. Returns the first.
    private func agreedRecord(_ out: OutputDirectory, path: String, locks: inout [BuildLock]) throws(ThumbframeError) -> ShardRecord {
        var records: [ShardRecord] = []
        var missing: [Int] = []
        for number in 0..<count {
            let shard = Shard(index: number, count: count)
            do {
                locks.append(try BuildLock.acquire(in: out.root, name: shard.lockName))
            } catch {
                throw .locked(path: path, holder: "shard \(number)/\(count), still running")
            }
            let opened = try StateIndex.open(out, readOnly: true, name: shard.stateName)
            guard let index = opened.index, let record = try? index.shardRecord(), record.shard == number, record.count == count
            else {
                missing.append(number)
                continue
            }
            // Its rows are checked as a build checks its own before it reuses them: every
            // thumbnail they name is thumbframe's and on disk (a plain build, a hand, or a
            // tampered row cannot make the merge publish what is not there).
            if let damaged = try index.stopping({ () throws(SQLiteError) in try index.firstDamagedRow(output: out) }) {
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
        return first
    }

    /// One line naming the missing shards: the first ten, then how many more.
    static func missingSentence(_ missing: [Int], count: Int, path: String) -> String {
        let named = missing.prefix(10).map { "\($0)/\(count)" }.joined(separator: ", ")
        let more = missing.count > 10 ? " and \(missing.count - 10) more" : ""
        return "missing \(missing.count) of \(count) shards in \(path): \(named)\(more) (run them, then merge)"
    }
}
