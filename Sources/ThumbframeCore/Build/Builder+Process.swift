import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// The process stage: every file of the plan made in a decode worker (`DecodeWorkers`), with at
/// most `--jobs` in flight, each outcome recorded in the state index as it arrives (and not kept:
/// a library's worth of items would be held otherwise). Nothing is decoded in this process.
extension Builder {
    /// What processing counted on the way.
    struct Tally {
        var thumbnailsWritten = 0
        /// Items that now fail (a disk that went unreadable): dropped from the manifest.
        var droppedByFailure = 0
        /// Files that fail now but had not failed before (for `--fail-on new`), by their path as
        /// the manifest gives it.
        var newFailures: Set<String> = []
    }

    func process(
        _ plan: ReusePlan, index: StateIndex, site: BuildSite, output: OutputDirectory
    ) async throws(ThumbframeError) -> Tally {
        var context = ProcessingContext(
            recipes: options.thumbnails, settings: options.settings, source: site.source, output: output, limits: options.limits,
            overwrite: options.force, cancellation: cancellation)
        context.renditions = options.renditions
        let cancellation = cancellation
        var tally = Tally()
        var newlyFailed = Set<Int>()
        guard plan.work.isEmpty || DecodeWorkers.executable() != nil else {
            throw .decodeWorkers("no thumbframe executable to start them from")
        }
        // Set when OUT_DIR or its index cannot take a write: no file starts after it, and the
        // run stops with 73, keeping every row it committed before (a full disk is no reason to
        // lose a night's work, nor to publish every later file as a failure).
        let halt = Halt()
        processAll(plan.work, context: context, halt: halt) { position, timed in
            // Once stopped, an outcome may be the stop itself ("stopped by a signal"): not a fact to keep.
            guard cancellation?.signal == nil, !halt.isSet else { return }
            if let reason = timed.outputUnwritable {
                halt.set(.cannotWrite(path: output.path, reason: reason))
                return
            }
            let unit = plan.work[position]
            if let note = timed.note { events(.warning("\(unit.file.relativePath): \(note)")) }
            var entry = timed.outcome.entry
            switch timed.outcome {
            case .item, .encoded:
                tally.thumbnailsWritten += timed.outcome.thumbnailsWritten
            case .failed(let failure):
                if !(unit.known && !unit.wasItem) { newlyFailed.insert(position) }
                if unit.wasItem { tally.droppedByFailure += 1 }
                // Failing as it failed, at the same size (a checkout moved its time): the stored
                // failure stands, its `modified` included, so the manifest keeps its bytes.
                if unit.known, !unit.wasItem, let stored = try? index.entry(unit.file.rawPath)?.failure(),
                    Self.sameFailure(stored, failure)
                {
                    entry = .failure(stored)
                }
            }
            do {
                try index.record(unit.file, entry, failedSHA256: timed.sourceSHA256)
            } catch {
                halt.set(.cannotWrite(path: index.path, reason: "\(error)"))
            }
        }
        do {
            try index.commit()
        } catch {
            halt.set(.cannotWrite(path: index.path, reason: error.description))
        }
        if let signal = cancellation?.signal { throw .interrupted(signal: signal) }
        if let error = halt.error { throw error }
        tally.newFailures = Set(newlyFailed.map { plan.work[$0].file.manifestRawPath ?? plan.work[$0].file.relativePath })
        return tally
    }

    /// The same failure but for the file's time.
    static func sameFailure(_ stored: Manifest.Failure, _ now: Manifest.Failure) -> Bool {
        var now = now
        now.modified = stored.modified
        return now == stored
    }

    /// Processes files with at most `jobs` in flight, in decode workers. Each outcome goes to
    /// `onResult` with its position in `work` as it arrives, on the thread that made it, one at a
    /// time, and is not kept. A cancellation stops taking files; the decodes in flight are killed.
    private func processAll(
        _ work: [ReusePlan.Work], context: ProcessingContext, halt: Halt, onResult: (Int, ItemProcessor.Timed) -> Void
    ) {
        let cancellation = cancellation
        var done = 0
        events(.progress(done: 0, total: work.count))
        guard !work.isEmpty, let workers = decodeWorkers(context) else { return }
        defer { workers.stop() }
        WorkerPool.run(
            count: work.count, jobs: options.jobs, stop: { cancellation?.signal != nil || halt.isSet },
            work: { index, upcoming in
                workers.process(index, work[index], upcoming: upcoming.map { ($0, work[$0]) }, cancellation: cancellation)
            },
            handle: { index, timed in
                onResult(index, timed)
                done += 1
                events(.progress(done: done, total: work.count))
            })
    }

    /// The pool of decode workers for this run; nil where no thumbframe executable can be found
    /// (`process` refuses to start then).
    private func decodeWorkers(_ context: ProcessingContext) -> DecodeWorkers? {
        guard let executable = DecodeWorkers.executable() else { return nil }
        let ladderSide = options.settings.ladder?.renditions.map { max($0.width, $0.height) }.max() ?? 0
        let largest = max(context.recipes.map { $0.width * $0.height }.max() ?? 0, ladderSide * ladderSide)
        var memory = context.limits.workerMemoryBytes(largestOutputPixels: largest)
        // THUMBFRAME_WORKER_MEMORY: a tighter cap than the limits make (a small machine; the tests).
        if let text = ProcessInfo.processInfo.environment["THUMBFRAME_WORKER_MEMORY"], let bytes = Int(text), bytes > 0 {
            memory = min(memory, bytes)
        }
        var setup = WorkerProtocol.Setup(
            recipes: context.recipes, settings: context.settings, limits: context.limits, overwrite: context.overwrite,
            threadsPerImage: Self.threadsPerImage(jobs: options.jobs), sourcePath: context.source?.path ?? "",
            outputPath: context.output.path, memoryLimit: memory, renditions: context.renditions)
        setup.jobs = options.jobs
        setup.threadLimit = WorkerProtocol.Setup.threadLimit(user: setup.user, jobs: options.jobs)
        guard let source = context.source else { return nil }
        return DecodeWorkers(executable: executable, setup: setup, source: source, output: context.output, events: events)
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

extension FileOutcome {
    /// What the state index records of it.
    var entry: StateIndex.Entry {
        switch self {
        case .item(let item): .item(item.stored, captured: item.captureTime)
        case .encoded(let item, _): .encoded(item)
        case .failed(let failure): .failure(failure)
        }
    }

    /// Thumbnails encoded by this run for it.
    var thumbnailsWritten: Int {
        switch self {
        case .item(let item): item.thumbnailsWritten
        case .encoded(_, let written): written
        case .failed: 0
        }
    }
}
