import Foundation
import ThumbframeImaging
import ThumbframeManifest

extension Builder {
    /// The end of a shard's run: its rows are in its own index; it records what it saw and
    /// writes no manifest, prunes nothing (other shards' thumbnails are not in its rows).
    func finishShard(
        _ shard: Shard, index: StateIndex, output: OutputDirectory, walk: SourceWalker.Result, walkDigest: String,
        removed: [[UInt8]], tally: Tally, reused: Int
    ) throws(ThumbframeError) -> BuildReport {
        let shape = Self.shape(options)
        let record = ShardRecord(
            shard: shard.index, count: shard.count, generator: shape.generator, recipes: shape.recipes,
            settings: options.settings, source: options.sourceTitle, walkDigest: walkDigest, walkFailures: walk.failures,
            walkSkipped: walk.skipped.isEmpty ? nil : walk.skipped, renditions: options.renditions.canonical)
        var counts = (items: 0, failures: 0)
        try index.stopping { () throws(SQLiteError) in
            try index.removeRows(removed)
            try index.setShardRecord(record)
            try index.commit()
            counts = try index.rowCounts()
        }
        let publisher = Publisher(
            index: index, output: output, settings: options.settings, sourceTitle: options.sourceTitle,
            newFailures: NewFailures(paths: tally.newFailures), events: events)
        let failures = try publisher.reportFailures(SourceWalker.Result())
        return BuildReport(
            manifestPath: output.path + "/" + OutputDirectory.manifestName, items: counts.items, sections: 0,
            failures: failures, thumbnailsWritten: tally.thumbnailsWritten, manifestWritten: false, reused: reused,
            newFailures: tally.newFailures.count, skipped: walk.skipped)
    }
}
