import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A decode worker: the thumbframe executable started by a build with
/// `WorkerProtocol.argument`. It caps its memory, starts the decoders, drops into its sandbox
/// and then makes one file at a time into an item, writing its outputs into OUT_DIR and sending
/// the build the facts. It holds nothing of the build's (state index, journal, manifest): when a
/// file kills it, the build loses that file and starts another worker.
package enum DecodeWorker {
    /// Whether this process was started as a worker.
    package static func isRequested(_ arguments: [String]) -> Bool {
        arguments.count == 3 && arguments[1] == WorkerProtocol.argument
    }

    /// Serves jobs until the build closes the socket, then exits.
    package static func main() -> Never {
        // SIGINT from a terminal reaches the whole process group: the build decides what stops.
        signal(SIGINT, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // A fault ends the worker at once, by its signal, which the build reports: no handler (the
        // Swift runtime's backtracer would start another program, which the sandbox forbids).
        for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS] { signal(fault, SIG_DFL) }
        let prepared = WorkerSandbox.prepare(parent: Int32(CommandLine.arguments[2]) ?? -1)
        let channel = WorkerProtocol.channelFD
        var inbox = WorkerProtocol.Inbox()
        guard case .setup(let setup)? = WorkerProtocol.receive(channel, &inbox, as: WorkerProtocol.ToWorker.self) else { exit(0) }
        let memory = WorkerSandbox.limitMemory(bytes: setup.memoryLimit)
        // Before the sandbox: libvips loads its modules as it starts.
        do {
            try Decoders.start(threadsPerImage: setup.threadsPerImage)
        } catch {
            exit(70)
        }
        let source = SourceRoot(path: setup.sourcePath, directory: .adopt(fd: WorkerProtocol.sourceFD, path: setup.sourcePath))
        let journal = JournalClient(channel: channel, inbox: inbox)
        let output: OutputDirectory
        do {
            output = try OutputDirectory(worker: .adopt(fd: WorkerProtocol.outputFD, path: setup.outputPath)) {
                (paths) throws(FileSystemError) in try journal.record(paths)
            }
        } catch {
            exit(73)
        }
        var sandbox = WorkerSandbox.Status(seccomp: "not asked", landlock: "not asked")
        if setup.sandbox {
            // Reading /usr: the decoders' own data files, opened lazily (iconv's modules for EXIF
            // text, libheif's plugins).
            let usr = Foundation.open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            sandbox = WorkerSandbox.apply(read: [WorkerProtocol.sourceFD] + (usr >= 0 ? [usr] : []), write: [WorkerProtocol.outputFD])
            if usr >= 0 { close(usr) }
            if let prepared { sandbox.seccomp = sandbox.seccomp ?? prepared }
        }
        guard WorkerProtocol.send(channel, WorkerProtocol.frame(WorkerProtocol.FromWorker.ready(sandbox: sandbox, memory: memory)))
        else { exit(0) }
        let context = ProcessingContext(
            recipes: setup.recipes, settings: setup.settings, source: source, output: output, limits: setup.limits,
            overwrite: setup.overwrite)
        while let message = journal.next() {
            let answer: WorkerProtocol.FromWorker
            switch message {
            case .job(let job): answer = .done(make(job, context: context))
            case .probe(let path): answer = probe(path)
            case .setup, .journaled: exit(0)
            }
            guard WorkerProtocol.send(channel, WorkerProtocol.frame(answer)) else { break }
        }
        exit(0)
    }

    /// One file made into an item, as the build would in process.
    private static func make(_ job: WorkerProtocol.Job, context: ProcessingContext) -> WorkerProtocol.Done {
        var context = context
        context.recorded = job.recorded
        let timed = ItemProcessor.timed(
            job.source, context: context, previous: job.previous, previousIdentifier: job.previousIdentifier, known: job.known)
        var done = WorkerProtocol.Done(outputUnwritable: timed.outputUnwritable)
        switch timed.outcome {
        case .item(let item):
            done.item = .init(
                file: item.file, media: item.media, image: item.image, exif: item.exif, thumbnails: item.thumbnails,
                placeholder: item.placeholder, contentIdentifier: item.contentIdentifier, thumbnailsWritten: item.thumbnailsWritten)
        case .failed(let failure, _):
            // One file at a time in a worker: libvips' message is this file's own.
            done.failure = failure
        }
        return done
    }

    /// Opens a socket and reads a file, as a decoder gone wrong might: what the sandbox lets through.
    private static func probe(_ path: String) -> WorkerProtocol.FromWorker {
        func outcome(_ fd: Int32) -> String? {
            guard fd >= 0 else { return String(cString: strerror(errno)) }
            close(fd)
            return nil
        }
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        return .probed(socket: outcome(socket(AF_INET, stream, 0)), read: outcome(Foundation.open(path, O_RDONLY | O_CLOEXEC)))
    }

    /// The worker's end of the socket once set up: jobs in, and journal lines out, which the build
    /// answers once they are on disk. `@unchecked Sendable`: one job runs at a time, on the
    /// worker's one calling thread.
    private final class JournalClient: @unchecked Sendable {
        let channel: Int32
        var inbox: WorkerProtocol.Inbox

        init(channel: Int32, inbox: WorkerProtocol.Inbox) {
            self.channel = channel
            self.inbox = inbox
        }

        func record(_ paths: [String]) throws(FileSystemError) {
            guard WorkerProtocol.send(channel, WorkerProtocol.frame(WorkerProtocol.FromWorker.journal(paths))),
                case .journaled(let problem)? = WorkerProtocol.receive(channel, &inbox, as: WorkerProtocol.ToWorker.self)
            else { exit(0) }
            if let problem { throw problem }
        }

        /// The build's next message; nil once it closed the socket.
        func next() -> WorkerProtocol.ToWorker? {
            WorkerProtocol.receive(channel, &inbox, as: WorkerProtocol.ToWorker.self)
        }
    }
}
