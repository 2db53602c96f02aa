import Foundation
package import ThumbframeImaging
import ThumbframeManifest

/// Runs `thumbframe build`, stage by stage: guards (`BuildSite`), walk (`SourceWalker`), plan
/// (`ReusePlan`: what the state index already knows), process (`ItemProcessor` on the worker
/// pool, each file recorded in the index as it is done), assemble and publish (`Publisher`:
/// pages, then the top document atomically), prune (`Pruner`: what nothing names any
/// more). `--check` stops after the plan; a shard after processing.
package struct Builder: Sendable {
    /// The options of this run.
    package var options: BuildOptions
    /// Receives failures, warnings and progress as they happen; the CLI renders them on stderr.
    package var events: @Sendable (BuildEvent) -> Void
    /// Set by a signal handler to stop between files; nil when nothing can stop the run.
    package var cancellation: CancellationFlag?

    /// Creates a builder.
    package init(
        options: BuildOptions, cancellation: CancellationFlag? = nil,
        events: @escaping @Sendable (BuildEvent) -> Void = { _ in }
    ) {
        self.options = options
        self.cancellation = cancellation
        self.events = events
    }

    /// Builds (or with `check`, only compares) the manifest and thumbnails. Throws only for
    /// problems of the whole run; files that fail are in the report's `failures`.
    package func run() async throws(ThumbframeError) -> BuildReport {
        try options.validate()
        try Self.startDecoders(jobs: options.jobs)
        let site = try BuildSite.open(options, events: events)
        // Its locks are held to the end of the run, whatever the optimizer sees of its last use.
        defer { withExtendedLifetime(site) {} }
        let itemsMatch = site.published.shape == Self.shape(options)
        var walk = try walkSource(site)
        let walkFailuresKnown = site.published.walkFailures == walk.failuresKey
        let walkDigest = options.shard.map { _ in Shard.walkDigest(walk) }
        let walkFailureCount = walk.failures.count
        if let shard = options.shard { walk.files.removeAll { !shard.contains($0.rawPath) } }
        // In path order, the index's: the plan merges the two (sorted in place, not copied).
        walk.files.sort { $0.rawPath.lexicographicallyPrecedes($1.rawPath) }
        // Renditions made otherwise (or not at all) before: the videos' rows are made again.
        if !options.check, let index = site.index {
            _ = try index.stopping { () throws(SQLiteError) in try index.setRenditions(options.renditions.canonical) }
        }
        var plan = try makePlan(walk.files, site: site, reusable: itemsMatch)
        // Before anything changes: a source that lost most of its files (an unmounted NAS) stops
        // here. (Shards are guarded at merge, over the whole library.)
        let droppedByWalk = plan.missing.count { $0.wasItem }
        if options.shard == nil { try refuseShrink(site.published.items, dropped: droppedByWalk) }
        if options.check { return try check(walk: walk, plan: plan, site: site, itemsMatch: itemsMatch) }
        // The plan holds what is still needed of the files: a library's worth of paths is not
        // kept twice while they are processed.
        walk.files = []
        HeapTrim.now()
        guard let output = site.output, let index = site.index else {
            throw .cannotWrite(path: options.output, reason: "cannot open the output directory")
        }
        let removed = itemsMatch ? plan.missing.map(\.path) : []
        try prepare(index, itemsMatch: itemsMatch, changing: !plan.work.isEmpty || !removed.isEmpty)
        let tally = try await process(plan, index: index, site: site, output: output)
        if let shard = options.shard, let walkDigest {
            return try finishShard(
                shard, index: index, output: output, walk: walk, walkDigest: walkDigest, removed: removed, tally: tally,
                reused: plan.reusedItems)
        }
        try refuseShrink(site.published.items, dropped: droppedByWalk + tally.droppedByFailure)
        try index.stopping { () throws(SQLiteError) in try index.removeRows(removed) }
        let changed = changedSections(plan, site: site, itemsMatch: itemsMatch)
        // The plan is done with: a library's worth of paths need not stay while the manifest
        // is written.
        let unchanged = plan.work.isEmpty && plan.missing.isEmpty && site.published.clean
        let reused = plan.reusedItems
        plan = ReusePlan()
        HeapTrim.now()
        let publisher = Publisher(
            index: index, output: output, settings: options.settings, sourceTitle: options.sourceTitle,
            verify: options.verify, jobs: options.jobs,
            newFailures: NewFailures(paths: tally.newFailures, walk: !walkFailuresKnown), events: events)
        let written = try publisher.publish(walk: walk, published: site.published, unchanged: unchanged, changed: changed)
        let prune = try Pruner(output: output).prune(after: written, by: publisher, published: site.published)
        if options.viewer {
            let document = try ManifestFile.open(site.manifestPath).document
            try ViewerWriter(output: output).write(manifest: document)
        }
        return BuildReport(
            manifestPath: site.manifestPath, items: written.items, sections: written.sections, failures: written.failures,
            thumbnailsWritten: tally.thumbnailsWritten, manifestWritten: written.manifestWritten, reused: reused,
            pruned: prune.removed, foreign: prune.foreign, sectionsAssembled: written.sectionsAssembled,
            newFailures: tally.newFailures.count + (walkFailuresKnown ? 0 : walkFailureCount), rediagnosed: 0,
            skipped: walk.skipped, recipeBytes: written.recipeBytes(options.settings))
    }
}
