import Foundation
package import ThumbframeImaging
import ThumbframeManifest

/// Runs `thumbframe build`: walk, reuse what the state index already knows, process the rest in
/// a bounded parallel window (recording each file in the index as it is done), write the paged
/// manifest section by section in a deterministic order, put its top document in place
/// atomically after its pages and thumbnails, and prune what nothing names any more.
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
        do {
            try Decoders.start(threadsPerImage: Self.vipsThreads(jobs: options.jobs))
        } catch {
            throw .vipsStart(error.reason)
        }

        let source = try SourceRoot.open(options.source)
        if !options.check {
            do {
                try FileSystem.makeDirectories(options.output)
            } catch {
                throw .cannotWrite(path: options.output, reason: error.localizedDescription)
            }
        }
        let outputPath = FileSystem.realPath(options.output)
        if let outputPath { try Self.refuseOverlap(source: source, output: outputPath) }
        // --check on an OUT_DIR that does not exist yet: nothing to open, everything is stale.
        let existing = try outputPath.map { path throws(ThumbframeError) in try OutputDirectory(path, create: false) }
        let manifestPath = (outputPath ?? options.output) + "/" + OutputDirectory.manifestName
        let shard = options.shard
        // A shard holds OUT_DIR's lock shared with the other shards, and its own alone.
        let lock = try existing.flatMap { output throws(ThumbframeError) in
            options.check ? nil : try BuildLock.acquire(in: output.root, shared: shard != nil)
        }
        let shardLock = try existing.flatMap { output throws(ThumbframeError) in
            try shard.map { shard throws(ThumbframeError) in try BuildLock.acquire(in: output.root, name: shard.lockName) }
        }
        defer { withExtendedLifetime((lock, shardLock)) {} }

        let hasManifest = try Self.refuseForeignManifest(existing, manifestPath: manifestPath)
        // Only once OUT_DIR is known to be thumbframe's (or new) is anything made in it.
        let output =
            try outputPath.map { path throws(ThumbframeError) in
                options.check ? existing : try OutputDirectory(path, create: true)
            } ?? nil
        var state: (index: StateIndex?, problem: String?) = (nil, nil)
        if let output { state = try StateIndex.open(output, readOnly: options.check, name: shard?.stateName ?? StateIndex.name) }
        if let problem = state.problem { events(.warning(problem)) }
        let published = try Published(state.index)
        if let output, !options.check, shard == nil, hasManifest, published.generator == nil {
            do {
                try output.adoptVersion1Thumbnails()
            } catch {
                throw .cannotWrite(path: output.path + "/" + OutputDirectory.journalName, reason: error.localizedDescription)
            }
        }
        let itemsMatch = published.generator == Self.generator && published.recipes == Self.recipes(options.thumbnails)

        var excluded: [FileIdentity] = []
        if let outputPath, let outputStat = FileStat.lstat(outputPath) { excluded.append(outputStat.identity) }
        var walk = try SourceWalker(
            root: source, excluded: excluded, followSymlinks: options.followSymlinks, rules: options.exclude
        ).walk()
        let walkFailuresKnown = published.walkFailures == Self.walkFailuresKey(walk)
        let walkFailureCount = walk.failures.count
        let walkDigest = shard.map { _ in Shard.walkDigest(walk) }
        if let shard { walk.files.removeAll { !shard.contains($0.rawPath) } }
        var plan: ReusePlan
        do {
            plan = try ReusePlan(
                index: state.index, reusable: itemsMatch, options: options, output: output ?? existing, files: walk.files)
        } catch {
            throw .cannotWrite(path: (outputPath ?? options.output) + "/" + StateIndex.name, reason: error.description)
        }
        // Before anything changes: a source that lost most of its files (an unmounted NAS) stops here.
        // (Shards are guarded at merge, over the whole library.)
        let droppedByWalk = plan.missing.count { $0.wasItem }
        if shard == nil { try refuseShrink(published.items, dropped: droppedByWalk) }

        if options.check {
            return try check(
                walk: walk, plan: plan, index: itemsMatch ? state.index : nil, problem: state.problem,
                hasManifest: hasManifest, published: published, source: source, output: output, manifestPath: manifestPath)
        }
        guard let output, let index = state.index else {
            throw .cannotWrite(path: options.output, reason: "cannot open the output directory")
        }
        state = (nil, nil)
        do {
            if !itemsMatch || options.force {
                // What a file's entry holds depends on the recipes and on the code that probed
                // and encoded it: none of the rows stands.
                try index.removeAllRows()
            }
            if !itemsMatch {
                try index.setMeta("generator", Self.generator)
                try index.setMeta("recipes", Self.recipes(options.thumbnails))
            }
        } catch {
            throw .cannotWrite(path: output.path + "/" + StateIndex.name, reason: error.description)
        }

        // Rows change from here on: until a manifest is written from them, the index is dirty
        // (a run stopped in between, by a signal, a kill or the shrink guard, leaves the next
        // run something to write even when no file changed again).
        let removed = itemsMatch && !options.force ? plan.missing.map(\.path) : []
        if !plan.work.isEmpty || !removed.isEmpty { try Self.markDirty(index) }
        let context = ProcessingContext(
            recipes: options.thumbnails, source: source, output: output, limits: options.limits,
            overwrite: options.force, recorded: plan.recordedThumbnails, cancellation: cancellation)
        let cancellation = cancellation
        // Outcomes are recorded as they come and not kept (a library's worth of items would be
        // held otherwise); what the run reports is counted on the way.
        var thumbnailsWritten = 0
        var droppedByFailure = 0
        // When libvips worked on files that failed in it, or left a message while succeeding.
        let activity = ErrorWindows.shared.begin()
        // Failures in libvips whose message was taken by someone else (found empty).
        var messageless: [Int] = []
        // Positions whose file fails now but had not failed before (for `--fail-on new`).
        var newlyFailed = Set<Int>()
        let statePath = output.path + "/" + (shard?.stateName ?? StateIndex.name)
        // Set when OUT_DIR or its index cannot take a write: no file starts after it, and the
        // run stops with 73, keeping every row it committed before (a full disk is no reason to
        // lose a night's work, nor to publish every later file as a failure).
        let halt = Halt()
        await processAll(plan.work, context: context, halt: halt) { position, timed in
            // Once stopped, an outcome may be the stop itself ("stopped by a signal"): not a fact to keep.
            guard cancellation?.signal == nil, !halt.isSet else { return }
            if let reason = timed.outputUnwritable {
                halt.set(.cannotWrite(path: output.path, reason: reason))
                return
            }
            let outcome = timed.outcome
            if let window = timed.window, timed.leftMessage {
                ErrorWindows.shared.record(build: activity, position: nil, window: window)
            }
            switch outcome {
            case .item(let item): thumbnailsWritten += item.thumbnailsWritten
            case .failed(_, let fromVips):
                if fromVips, let window = timed.window {
                    ErrorWindows.shared.record(build: activity, position: position, window: window)
                }
                if fromVips, case .failed(let failure, _) = outcome, failure.reason.hasSuffix(Decoders.noMessage) {
                    messageless.append(position)
                }
                let unit = plan.work[position]
                if !(unit.known && !unit.wasItem) { newlyFailed.insert(position) }
                // Items that now fail (a disk that went unreadable) count as dropped too.
                if plan.work[position].wasItem { droppedByFailure += 1 }
            }
            do {
                try Self.record(outcome, plan.work[position].file, in: index)
            } catch {
                halt.set(.cannotWrite(path: statePath, reason: "\(error)"))
            }
        }
        do {
            try index.commit()
        } catch {
            halt.set(.cannotWrite(path: statePath, reason: error.description))
        }
        let rediagnosed = Set(ErrorWindows.shared.finish(build: activity)).union(messageless).sorted()
        if let signal = cancellation?.signal { throw .interrupted(signal: signal) }
        if let error = halt.error { throw error }
        for position in rediagnosed {
            let outcome = Self.rediagnose(plan.work[position], context: context)
            if case .item(let item) = outcome {
                thumbnailsWritten += item.thumbnailsWritten
                if plan.work[position].wasItem { droppedByFailure -= 1 }
                newlyFailed.remove(position)
            }
            do {
                try Self.record(outcome, plan.work[position].file, in: index)
                try index.commit()
            } catch {
                throw .cannotWrite(path: statePath, reason: error.description)
            }
        }
        if let shard, let walkDigest {
            return try finishShard(
                shard, index: index, output: output, walk: walk, walkDigest: walkDigest,
                removed: removed, thumbnailsWritten: thumbnailsWritten, reused: plan.reusedItems)
        }
        try refuseShrink(published.items, dropped: droppedByWalk + droppedByFailure)
        do {
            try index.removeRows(removed)
            try index.commit()
        } catch {
            throw .cannotWrite(path: output.path + "/" + StateIndex.name, reason: error.description)
        }

        // Directory sections: only the directories whose files changed are assembled again,
        // when the settings that shape every page are those published.
        var changed: Set<[UInt8]>? = nil
        if options.sections == .directory, itemsMatch, !options.force, !options.verify, published.clean,
            published.settings == settingsKey()
        {
            changed = Set(plan.work.map { ManifestAssembler.directoryKey($0.file.directory) })
                .union(plan.missing.map { ManifestAssembler.directoryKey(SourceFile(path: $0.path).directory) })
        }
        // The file lists are done with: a library's worth of paths need not stay while the
        // manifest is written.
        let unchanged = plan.work.isEmpty && plan.missing.isEmpty && published.clean
        let reusedItems = plan.reusedItems
        walk.files = []
        plan = ReusePlan()
        let written = try publish(index: index, output: output, walk: walk, unchanged: unchanged, changed: changed)
        // Only once the new manifest is in place may the old one's thumbnails go.
        let pruning = ThumbnailPruner(output: output)
        var prune = ThumbnailPruner.Outcome()
        if written.manifestWritten || pruning.isUnsettled {
            prune = try pruning.prune(keeping: try keptThumbnails(index, output: output).union(written.pages ?? Set(published.pages.keys)))
            if let note = prune.foreignNote { events(.warning(note)) }
        }
        if options.viewer {
            let document = try ManifestFile.open(manifestPath).document
            if let warning = try ViewerWriter(output: output).write(manifest: document) { events(.warning(warning)) }
        }
        return BuildReport(
            manifestPath: manifestPath, items: written.items, sections: written.sections, failures: written.failures,
            thumbnailsWritten: thumbnailsWritten, manifestWritten: written.manifestWritten, reused: reusedItems,
            pruned: prune.removed, foreign: prune.foreign, sectionsAssembled: written.sectionsAssembled,
            newFailures: newlyFailed.count + (walkFailuresKnown ? 0 : walkFailureCount), rediagnosed: rediagnosed.count)
    }

    /// OUT_DIR equal to SOURCE_DIR would index its own thumbnails and prune beside the
    /// originals; SOURCE_DIR inside `OUT_DIR/thumbs` would have its files taken for thumbnails.
    /// (OUT_DIR inside SOURCE_DIR is fine: the walk never enters it.)
    static func refuseOverlap(source: SourceRoot, output: String) throws(ThumbframeError) {
        let sourceIdentity = source.directory.stat(Array(".".utf8))?.identity
        if source.path == output || sourceIdentity == FileStat.lstat(output)?.identity {
            throw .overlappingDirectories(
                "OUT_DIR \(output) is SOURCE_DIR itself: thumbnails would be indexed as photos; choose another --out")
        }
        let thumbs = output + "/thumbs"
        var ancestor = source.path
        let thumbsIdentity = FileStat.lstat(thumbs)?.identity
        while ancestor.count > 1 {
            if ancestor == thumbs || (thumbsIdentity != nil && FileStat.lstat(ancestor)?.identity == thumbsIdentity) {
                throw .overlappingDirectories(
                    "SOURCE_DIR \(source.path) is inside OUT_DIR/thumbs, which thumbframe prunes; choose another --out")
            }
            ancestor = (ancestor as NSString).deletingLastPathComponent
        }
    }

    /// Processes files with at most `jobs` in flight, on the worker pool. Each outcome goes to
    /// `onResult` with its position in `work` as it arrives, and is not kept. A cancellation
    /// stops taking files; the decodes in flight are killed.
    private func processAll(
        _ work: [ReusePlan.Work], context: ProcessingContext, halt: Halt, onResult: (Int, ItemProcessor.Timed) -> Void
    ) async {
        let cancellation = cancellation
        var done = 0
        events(.progress(done: 0, total: work.count))
        let results = WorkerPool.run(
            count: work.count, jobs: options.jobs, stop: { cancellation?.signal != nil || halt.isSet },
            work: { index in
                ItemProcessor.timed(work[index].file, context: context, previous: work[index].previous, known: work[index].placeholder)
            })
        for await (index, timed) in results {
            onResult(index, timed)
            done += 1
            events(.progress(done: done, total: work.count))
        }
    }

    /// A failure whose message may have mixed with other libvips work's (`ErrorWindows`),
    /// decoded once more from a clear buffer while this build runs nothing else.
    static func rediagnose(_ unit: ReusePlan.Work, context: ProcessingContext) -> FileOutcome {
        Decoders.clearMessages()
        return ItemProcessor.process(unit.file, context: context)
    }

    /// libvips' worker threads per image. Files in flight × threads should not exceed the
    /// cores: scripts/bench --sweep measured one thread per image with one file per core fastest
    /// (thumbnails are mostly serial JPEG decoding). THUMBFRAME_VIPS_THREADS overrides it, for
    /// that measurement only.
    static func vipsThreads(jobs: Int) -> Int {
        if let text = ProcessInfo.processInfo.environment["THUMBFRAME_VIPS_THREADS"], let threads = Int(text), threads > 0 {
            return threads
        }
        return max(1, ProcessInfo.processInfo.activeProcessorCount / jobs)
    }

    /// The first error that stops a run between files (OUT_DIR or its index cannot take a
    /// write). `@unchecked Sendable`: `first` is only touched while `lock` is held.
    final class Halt: @unchecked Sendable {
        private let lock = NSLock()
        private var first: ThumbframeError?

        func set(_ error: ThumbframeError) {
            lock.lock()
            defer { lock.unlock() }
            if first == nil { first = error }
        }

        var error: ThumbframeError? {
            lock.lock()
            defer { lock.unlock() }
            return first
        }

        var isSet: Bool { error != nil }
    }

}
