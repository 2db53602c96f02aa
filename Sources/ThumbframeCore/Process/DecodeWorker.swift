import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A decode worker: the thumbframe executable started by a build with
/// `WorkerProtocol.argument`. It caps its memory, starts the decoders, drops into its sandbox
/// and then makes one file at a time into an item, writing its outputs into OUT_DIR and sending
/// the build the facts. It holds nothing of the build's (state index, journal, manifest): when a
/// file kills it, the build loses that file and starts another worker.
package enum DecodeWorker {
    /// Set by the thumbframe executable's entry point, which serves workers: a build then starts
    /// them from `/proc/self/exe` whatever the file is called. (`nonisolated(unsafe)`: set once,
    /// before any thread is started.)
    package nonisolated(unsafe) static var servesWorkers = false

    /// Whether this process was started as a worker.
    package static func isRequested(_ arguments: [String]) -> Bool {
        arguments.count == 3 && arguments[1] == WorkerProtocol.argument
    }

    /// Serves jobs until the build closes the socket, then exits.
    package static func main() -> Never {
        // SIGINT and SIGHUP from a terminal reach the whole process group: the build decides
        // what stops.
        signal(SIGINT, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // A fault ends the worker at once, by its signal, which the build reports: no handler (the
        // Swift runtime's backtracer would start another program, which the sandbox forbids).
        for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS] { signal(fault, SIG_DFL) }
        var prepared = WorkerSandbox.prepare(parent: Int32(CommandLine.arguments[2]) ?? -1)
        let channel = WorkerProtocol.channelFD
        var inbox = WorkerProtocol.Inbox()
        func next() -> WorkerProtocol.ToWorker? {
            WorkerProtocol.receive(channel, &inbox).flatMap { try? WorkerProtocol.ToWorker(wire: $0) }
        }
        guard case .setup(let setup)? = next() else { exit(0) }
        // Started as root (a NAS's cron): nothing of root's is left to it, and it runs as the
        // unprivileged user the build gave its scratch folder to.
        if geteuid() == 0, setup.sandbox, let why = WorkerSandbox.dropCapabilities(becoming: setup.user.map { ($0[0], $0[1]) }) {
            prepared = prepared ?? "capabilities: \(why)"
        }
        var memory = WorkerSandbox.limitMemory(bytes: setup.memoryLimit)
        // Files it writes (its scratch folder's), and the threads of its user: all the build's
        // workers together, past what that user ran as the build began.
        let threads = setup.sandbox ? setup.threadLimit : nil
        if let why = WorkerSandbox.limitOutput(bytes: WorkerProtocol.maximumOutputBytes, threads: threads) {
            memory = memory ?? "output and threads: \(why)"
        }
        // Before the sandbox: libvips loads its modules as it starts.
        do {
            try Decoders.start(threadsPerImage: setup.threadsPerImage)
        } catch {
            exit(70)
        }
        let output = OutputDirectory(
            worker: .adopt(fd: WorkerProtocol.thumbsFD, path: setup.outputPath + "/thumbs"),
            scratch: .adopt(fd: WorkerProtocol.scratchFD, path: setup.outputPath + "/thumbs/(scratch)"))
        var sandbox = WorkerSandbox.Status(seccomp: "not asked", landlock: "not asked")
        if setup.sandbox {
            // Reading /usr: the decoders' own data files, opened lazily (iconv's modules for EXIF
            // text, libheif's plugins), and thumbs/ (what earlier runs made). Not the source
            // tree: each job's file comes open. Writing: its scratch folder alone.
            let usr = Foundation.open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            sandbox = WorkerSandbox.apply(
                read: (usr >= 0 ? [usr] : []) + [WorkerProtocol.thumbsFD], write: [WorkerProtocol.scratchFD])
            if usr >= 0 { close(usr) }
            if let prepared { sandbox.seccomp = sandbox.seccomp ?? prepared }
        }
        guard WorkerProtocol.send(channel, WorkerProtocol.FromWorker.ready(sandbox: sandbox, memory: memory).wire) else { exit(0) }
        var context = ProcessingContext(
            recipes: setup.recipes, settings: setup.settings, source: nil, output: output, limits: setup.limits,
            overwrite: setup.overwrite)
        context.renditions = setup.renditions
        // The build gives a rendition a deadline of its own, from when it starts.
        context.renditionStarts = { _ = WorkerProtocol.send(channel, WorkerProtocol.FromWorker.rendering.wire) }
        // Jobs so far: each writes into the scratch subfolder of its number (`ScratchOutputs`).
        var jobs = 0
        while let message = next() {
            let answer: WorkerProtocol.FromWorker
            switch message {
            case .job(let job):
                // The build attached the file, opened read-only, to the job.
                guard let fd = inbox.takeDescriptor() else { exit(0) }
                jobs += 1
                do {
                    try output.beginScratchJob(jobs)
                } catch {
                    exit(73)
                }
                answer = .done(make(job, file: OpenFile(fd: fd), context: context))
            case .probe(let path): answer = probe(path)
            case .setup: exit(0)
            }
            guard WorkerProtocol.send(channel, answer.wire) else { break }
        }
        exit(0)
    }

    /// One file made into an item, as the build would in process.
    private static func make(_ job: WorkerProtocol.Job, file: OpenFile, context: ProcessingContext) -> WorkerProtocol.Done {
        var context = context
        context.recorded = job.recorded
        let timed = ItemProcessor.timed(
            job.source, context: context, previous: job.previous, previousIdentifier: job.previousIdentifier, known: job.known,
            opened: file, sha256: job.sha256)
        let outcome: WorkerProtocol.Done.Outcome
        switch timed.outcome {
        case .item(let item):
            do {
                outcome = .item(json: Array(try JSONEncoder().encode(item.stored)))
            } catch {
                outcome = .failed(ItemProcessor.failure(job.source, .encode, "cannot encode its facts: \(error)"))
            }
        case .encoded(let item, _):
            outcome = .item(json: item.json)
        case .failed(let failure):
            // One file at a time in a worker: libvips' message is this file's own.
            outcome = .failed(failure)
        }
        return .init(outcome: outcome, outputUnwritable: timed.outputUnwritable, note: timed.note, motion: timed.motion)
    }

    /// Reads a file, as a decoder gone wrong might: what the sandbox lets through. (What the
    /// system-call filter kills a worker for, HostileDecoderTests tries from inside a decoder.)
    private static func probe(_ path: String) -> WorkerProtocol.FromWorker {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .probed(read: String(cString: strerror(errno))) }
        close(fd)
        return .probed(read: nil)
    }
}
