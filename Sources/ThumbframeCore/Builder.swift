import CVips
import Foundation
import ThumbframeManifest

/// Runs `thumbframe build`: walk, reuse what the previous manifest already knows, process the
/// rest in a bounded parallel window, assemble the manifest in a deterministic order, put it in
/// place atomically after its thumbnails, and prune thumbnails nothing names any more.
public struct Builder: Sendable {
    /// The options of this run.
    public var options: BuildOptions
    /// Receives failures, warnings and progress as they happen; the CLI renders them on stderr.
    public var events: @Sendable (BuildEvent) -> Void
    /// Set by a signal handler to stop between files; nil when nothing can stop the run.
    public var cancellation: CancellationFlag?

    /// Creates a builder.
    public init(
        options: BuildOptions, cancellation: CancellationFlag? = nil,
        events: @escaping @Sendable (BuildEvent) -> Void = { _ in }
    ) {
        self.options = options
        self.cancellation = cancellation
        self.events = events
    }

    /// Builds (or with `check`, only compares) the manifest and thumbnails. Throws only for
    /// problems of the whole run; files that fail are in the report's `failures`.
    public func run() async throws(ThumbframeError) -> BuildReport {
        try options.validate()
        try Vips.start()
        vips_concurrency_set(Int32(Self.vipsThreads(jobs: options.jobs)))

        let source = try SourceRoot.open(options.source)
        if !options.check {
            do {
                try FileSystem.makeDirectories(options.output)
            } catch {
                throw .cannotWrite(path: options.output, reason: error.localizedDescription)
            }
        }
        let outputPath = Self.realPath(options.output)
        if let outputPath { try Self.refuseOverlap(source: source, output: outputPath) }
        // --check on an OUT_DIR that does not exist yet: nothing to open, everything is stale.
        let existing = try outputPath.map { path throws(ThumbframeError) in try OutputDirectory(path, create: false) }
        let manifestPath = (outputPath ?? options.output) + "/" + OutputDirectory.manifestName
        let lock = try existing.flatMap { output throws(ThumbframeError) in
            options.check ? nil : try BuildLock.acquire(in: output.root)
        }
        defer { withExtendedLifetime(lock) {} }

        let previous = try loadPrevious(existing, manifestPath: manifestPath)
        // Only once OUT_DIR is known to be thumbframe's (or new) is anything made in it.
        let output = try outputPath.map { path throws(ThumbframeError) in
            options.check ? existing : try OutputDirectory(path, create: true)
        } ?? nil
        var excluded: [FileIdentity] = []
        if let outputPath, let outputStat = FileStat.lstat(outputPath) { excluded.append(outputStat.identity) }
        let walk = try SourceWalker(root: source, excluded: excluded, followSymlinks: options.followSymlinks).walk()
        let plan = ReusePlan(previous: previous.manifest, options: options, output: output, files: walk.files)
        let assembler = ManifestAssembler(
            sourceTitle: (source.path as NSString).lastPathComponent, settings: options.settings)

        guard let output, !options.check else {
            return check(
                plan, previous: previous, walk: walk, assembler: assembler, source: source, output: output,
                manifestPath: manifestPath)
        }
        // Before any work: a source that lost most of its files (an unmounted NAS) stops here.
        try refuseShrink(previous.manifest, keeping: Set(walk.files.map(\.rawPath)))

        var recorded: [String: Manifest.Thumbnail] = [:]
        for item in previous.manifest?.items ?? [] {
            for thumbnail in item.thumbnails.values { recorded[thumbnail.path] = thumbnail }
        }
        let context = ProcessingContext(
            recipes: options.thumbnails, source: source, output: output, limits: options.limits,
            overwrite: options.force, recorded: recorded, cancellation: cancellation)
        var results = await processAll(plan.work, context: context)
        if let signal = cancellation?.signal { throw .interrupted(signal: signal) }
        Self.rediagnose(&results, plan.work, context: context)

        var processed = plan.reused
        var newFailures: [Manifest.Failure] = []
        for result in results {
            switch result {
            case .item(let item): processed.append(item)
            case .failed(let failure, _): newFailures.append(failure)
            }
        }
        let failures = Self.failures(walk, plan, newFailures)
        // Reported once the reasons are final, every one (found by the walk, reused, new), in
        // manifest order: stderr says what the manifest says.
        for failure in failures { events(.failure(failure)) }
        let manifest = assembler.assemble(processed, failures: failures)
        try refuseShrink(previous.manifest, keeping: Set(manifest.items.map(\.pathBytes)))
        let written = try Self.writeManifest(manifest, to: output)
        // Only once the new manifest is in place may the old one's thumbnails go.
        let pruning = ThumbnailPruner(output: output)
        var prune = ThumbnailPruner.Outcome()
        if written || previous.problem != nil || pruning.isUnsettled {
            prune = pruning.prune(keeping: manifest, previous: previous.manifest)
            if let note = prune.foreignNote { events(.warning(note)) }
        }
        return BuildReport(
            manifestPath: manifestPath, items: manifest.items.count, sections: manifest.sections.count,
            failures: failures, thumbnailsWritten: processed.reduce(0) { $0 + $1.thumbnailsWritten },
            manifestWritten: written, reused: plan.reused.count, pruned: prune.removed, foreign: prune.foreign)
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

    /// Throws `.wouldShrink` when keeping only `keeping` would drop more than half of a
    /// non-empty previous manifest's items, and at least 10, unless `--allow-shrink`.
    private func refuseShrink(_ previous: Manifest?, keeping: Set<[UInt8]>) throws(ThumbframeError) {
        guard let previous, !options.allowShrink else { return }
        let dropped = previous.items.count { !keeping.contains($0.pathBytes) }
        if dropped >= 10, dropped * 2 > previous.items.count {
            throw .wouldShrink(previous: previous.items.count, dropped: dropped)
        }
    }

    /// The previous manifest, or why it cannot be trusted. A `manifest.json` that is not
    /// thumbframe's (a web app's, say) is never replaced: that stops the run.
    private func loadPrevious(_ output: OutputDirectory?, manifestPath: String)
        throws(ThumbframeError) -> (manifest: Manifest?, problem: String?)
    {
        let name = Array(OutputDirectory.manifestName.utf8)
        guard let output, let stat = output.root.stat(name) else { return (nil, nil) }
        let foreign = "not a thumbframe manifest; thumbframe will not replace it (move it away or choose another --out)"
        guard stat.isRegularFile else { throw .cannotWrite(path: manifestPath, reason: "not a regular file; " + foreign) }
        let bytes: [UInt8]
        do {
            bytes = try output.root.readFile(name)
        } catch {
            throw .cannotWrite(path: manifestPath, reason: error.localizedDescription)
        }
        guard ManifestFile.isThumbframeOutput(bytes) else { throw .cannotWrite(path: manifestPath, reason: foreign) }
        var reason: String
        do {
            let manifest = try Manifest.decode(from: Data(bytes))
            guard let first = manifest.consistencyProblems(limit: 1).first else { return (manifest, nil) }
            reason = first
        } catch {
            reason = error.localizedDescription
        }
        let problem = "previous manifest.json cannot be used (\(reason)); rebuilding"
        events(.warning(problem))
        return (nil, problem)
    }

    /// `--check`: names what a build would change, writing nothing.
    private func check(
        _ plan: ReusePlan, previous: (manifest: Manifest?, problem: String?), walk: SourceWalker.Result,
        assembler: ManifestAssembler, source: SourceRoot, output: OutputDirectory?, manifestPath: String
    ) -> BuildReport {
        var stale: [String] = []
        if let problem = previous.problem {
            stale.append(problem)
        } else if previous.manifest == nil {
            stale.append("no manifest.json yet")
        } else if !plan.settingsMatch {
            stale.append("settings or thumbframe version changed: every item would be rebuilt")
        }
        var reused = plan.reused
        if let output, previous.manifest != nil && plan.settingsMatch {
            // Listed the way the manifest lists items.
            for unit in plan.work.sorted(by: { SourceFile.inDisplayOrder($0.file, $1.file) }) {
                let path = unit.file.relativePath
                // --verify: the same bytes, source and thumbnails, mean reusable; hashing writes nothing.
                if let item = unit.previous, let bytes = try? source.read(unit.file, limit: options.limits.maxFileBytes),
                    bytes.withUnsafeBytes(Digest.sha256) == item.file.sha256
                {
                    if item.thumbnails.values.allSatisfy({ thumbnail in
                        output.read(thumbnail: thumbnail.path).map { $0.withUnsafeBytes(Digest.sha256) } == thumbnail.sha256
                    }) {
                        reused.append(ProcessedItem(reusing: item, source: unit.file))
                    } else {
                        stale.append("thumbnails changed for \(path)")
                    }
                    continue
                }
                stale.append(unit.previous == nil && !plan.knownPaths.contains(unit.file.rawPath) ? "added \(path)" : "changed \(path)")
            }
            let current = Set(walk.files.map(\.rawPath))
            let gone = (previous.manifest?.items.map { ($0.pathBytes, $0.path) } ?? [])
                + (previous.manifest?.failures.map { ($0.pathBytes, $0.path) } ?? [])
            stale += gone.filter { !current.contains($0.0) }.map(\.1).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                .map { "removed \($0)" }
            stale += plan.missingThumbnails.map { "thumbnails missing or changed for \($0)" }
        }
        let failures = Self.failures(walk, plan, [])
        var items = 0
        var sections = 0
        if stale.isEmpty, let output {
            // Everything is reusable: the manifest a build would write is known without work.
            let manifest = assembler.assemble(reused, failures: failures)
            items = manifest.items.count
            sections = manifest.sections.count
            let existing = try? output.root.readFile(Array(OutputDirectory.manifestName.utf8))
            if let data = try? manifest.encoded(), existing.map({ !$0.elementsEqual(data) }) ?? true {
                stale.append("manifest.json differs from what a build would write")
            }
        }
        return BuildReport(
            manifestPath: manifestPath, items: items, sections: sections, failures: failures, thumbnailsWritten: 0,
            manifestWritten: false, reused: reused.count, stale: stale)
    }

    /// Every failure of a run, in byte order of paths: the walk's, the reused ones and the new.
    private static func failures(_ walk: SourceWalker.Result, _ plan: ReusePlan, _ new: [Manifest.Failure])
        -> [Manifest.Failure]
    {
        (walk.failures + plan.reusedFailures + new).sorted {
            $0.path.utf8.lexicographicallyPrecedes($1.path.utf8)
        }
    }

    /// Processes files with at most `jobs` in flight. Each task returns its outcome rather than
    /// throwing (a throw would cancel its siblings); results come back in input order. A
    /// cancellation stops submitting; the files in flight finish.
    private func processAll(_ work: [ReusePlan.Work], context: ProcessingContext) async -> [FileOutcome] {
        var results = [FileOutcome?](repeating: nil, count: work.count)
        let jobs = options.jobs
        let cancellation = cancellation
        var done = 0
        events(.progress(done: 0, total: work.count))
        await withTaskGroup(of: (Int, FileOutcome).self) { group in
            var next = 0
            func submit() {
                let index = next
                let unit = work[index]
                next += 1
                group.addTask {
                    // The work blocks in libvips and in file I/O: it runs on a GCD worker, not on
                    // the cooperative pool (one thread per core), so --jobs files really are in
                    // flight at once.
                    let outcome = await withCheckedContinuation { continuation in
                        DispatchQueue.global().async {
                            continuation.resume(
                                returning: ItemProcessor.process(unit.file, context: context, previous: unit.previous))
                        }
                    }
                    return (index, outcome)
                }
            }
            while next < min(jobs, work.count) { submit() }
            while let (index, result) = await group.next() {
                results[index] = result
                done += 1
                events(.progress(done: done, total: work.count))
                if next < work.count, cancellation?.signal == nil { submit() }
            }
        }
        return results.compactMap { $0 }
    }

    /// libvips keeps one error buffer for the whole process, and its worker threads add to it
    /// on their own schedule, so the text read after a failure among parallel decodes can carry
    /// another file's line. The files that failed in libvips are therefore decoded once more,
    /// one at a time from a clear buffer, and that message is recorded: the manifest stays the
    /// same bytes from run to run. (Broken files are few; this costs one more decode each.)
    static func rediagnose(_ results: inout [FileOutcome], _ work: [ReusePlan.Work], context: ProcessingContext) {
        for index in results.indices {
            guard case .failed(_, fromVips: true) = results[index] else { continue }
            Vips.clearErrors()
            results[index] = ItemProcessor.process(work[index].file, context: context)
        }
    }

    /// Writes the manifest only when its bytes change: thumbnails are flushed to disk first, then
    /// the manifest goes through a temporary file, fsync and rename, so a reader (or a crash at
    /// any moment) sees the old manifest or the new one, and every thumbnail it names exists.
    static func writeManifest(_ manifest: Manifest, to output: OutputDirectory) throws(ThumbframeError) -> Bool {
        let path = output.path + "/" + OutputDirectory.manifestName
        let data: Data
        do {
            data = try manifest.encoded()
        } catch {
            throw .cannotWrite(path: path, reason: "cannot encode manifest: \(error)")
        }
        if let existing = try? output.root.readFile(Array(OutputDirectory.manifestName.utf8)), existing.elementsEqual(data) {
            return false
        }
        do {
            try output.root.syncFileSystem()
            try output.root.writeAtomically(Array(data), to: OutputDirectory.manifestName, durable: true)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        return true
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

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
