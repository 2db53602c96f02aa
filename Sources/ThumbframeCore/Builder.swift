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

        guard let source = Self.realPath(options.source), FileStat.lstat(source)?.isDirectory == true else {
            throw .sourceUnreadable(path: options.source, reason: FileStat.lastErrorDescription(default: "not a directory"))
        }
        if !options.check {
            do {
                try FileSystem.makeDirectories(options.output)
            } catch {
                throw .cannotWrite(path: options.output, reason: error.localizedDescription)
            }
        }
        let output = Self.realPath(options.output) ?? options.output
        let manifestPath = output + "/manifest.json"
        let lock = options.check ? nil : try BuildLock.acquire(outputDirectory: output)
        defer { withExtendedLifetime(lock) {} }

        let previous = loadPrevious(manifestPath)
        var excluded: [FileIdentity] = []
        if let outputStat = FileStat.lstat(output) { excluded.append(outputStat.identity) }
        let walk = try SourceWalker(root: source, excluded: excluded, followSymlinks: options.followSymlinks).walk()
        let plan = ReusePlan(previous: previous.manifest, options: options, outputDirectory: output, files: walk.files)
        let assembler = ManifestAssembler(sourceTitle: (source as NSString).lastPathComponent, settings: options.settings)

        if options.check {
            return check(plan, previous: previous, walk: walk, assembler: assembler, manifestPath: manifestPath)
        }

        let context = ProcessingContext(
            recipes: options.thumbnails, outputDirectory: output, maxPixels: options.maxPixels, overwrite: options.force)
        var results = await processAll(plan.work, context: context)
        if let signal = cancellation?.signal { throw .interrupted(signal: signal) }
        Self.rediagnose(&results, plan.work, context: context)

        var processed = plan.reused
        var newFailures: [Manifest.Failure] = []
        for result in results {
            switch result {
            case .item(let item): processed.append(item)
            case .failed(let failure): newFailures.append(failure)
            }
        }
        let failures = Self.failures(walk, plan, newFailures)
        // Reported once the reasons are final, every one (found by the walk, reused, new), in
        // manifest order: stderr says what the manifest says.
        for failure in failures { events(.failure(failure)) }
        let manifest = assembler.assemble(processed, failures: failures)
        let written = try Self.writeManifest(manifest, to: manifestPath, outputDirectory: output)
        // Only once the new manifest is in place may the old one's thumbnails go.
        let pruned = written || previous.problem != nil ? ThumbnailPruner.prune(output, keeping: manifest) : 0
        return BuildReport(
            manifestPath: manifestPath, items: manifest.items.count, sections: manifest.sections.count,
            failures: failures, thumbnailsWritten: processed.reduce(0) { $0 + $1.thumbnailsWritten },
            manifestWritten: written, reused: plan.reused.count, pruned: pruned)
    }

    /// The previous manifest, or why it cannot be trusted.
    private func loadPrevious(_ path: String) -> (manifest: Manifest?, problem: String?) {
        guard FileStat.lstat(path) != nil else { return (nil, nil) }
        var reason: String
        do {
            let manifest = try ManifestFile.load(path)
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
        assembler: ManifestAssembler, manifestPath: String
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
        if previous.manifest != nil && plan.settingsMatch {
            // Listed the way the manifest lists items.
            for unit in plan.work.sorted(by: { SourceFile.inDisplayOrder($0.file, $1.file) }) {
                let path = unit.file.relativePath
                // --verify: same bytes means reusable; hashing writes nothing.
                if let item = unit.previous, let bytes = try? FileSystem.readFile(unit.file.absolutePath),
                    bytes.withUnsafeBytes(Digest.sha256) == item.file.sha256
                {
                    reused.append(ProcessedItem(reusing: item, source: unit.file))
                    continue
                }
                stale.append(unit.previous == nil && !plan.knownPaths.contains(path) ? "added \(path)" : "changed \(path)")
            }
            let current = Set(walk.files.map(\.relativePath))
            stale += plan.knownPaths.subtracting(current).sorted().map { "removed \($0)" }
            stale += plan.missingThumbnails.map { "thumbnails missing for \($0)" }
        }
        let failures = Self.failures(walk, plan, [])
        var items = 0
        var sections = 0
        if stale.isEmpty {
            // Everything is reusable: the manifest a build would write is known without work.
            let manifest = assembler.assemble(reused, failures: failures)
            items = manifest.items.count
            sections = manifest.sections.count
            let existing = try? FileSystem.readFile(manifestPath)
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
            guard case .failed(let failure) = results[index], ["probe", "decode", "encode"].contains(failure.stage) else {
                continue
            }
            Vips.clearErrors()
            results[index] = ItemProcessor.process(work[index].file, context: context)
        }
    }

    /// Writes the manifest only when its bytes change: thumbnails are flushed to disk first, then
    /// the manifest goes through a temporary file, fsync and rename, so a reader (or a crash at
    /// any moment) sees the old manifest or the new one, and every thumbnail it names exists.
    static func writeManifest(_ manifest: Manifest, to path: String, outputDirectory: String)
        throws(ThumbframeError) -> Bool
    {
        let data: Data
        do {
            data = try manifest.encoded()
        } catch {
            throw .cannotWrite(path: path, reason: "cannot encode manifest: \(error)")
        }
        if let existing = try? FileSystem.readFile(path), existing.elementsEqual(data) { return false }
        do {
            try FileSystem.syncFileSystem(of: outputDirectory)
            try FileSystem.writeAtomically(Array(data), to: path, durable: true)
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
