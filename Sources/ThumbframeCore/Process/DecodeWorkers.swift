import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// The build's decode workers: at most one process per pool thread (`--jobs`), each the
/// thumbframe executable serving `DecodeWorker`, started when first needed and kept for the next
/// file. Each file's decode, thumbnails, posters, tiles and motion are made in a worker; this
/// process, which owns the state index, journal and manifest, gets the facts. A worker that dies
/// (a signal, a trap, an abort, its memory cap) or outlives the file's deadline (killed) fails
/// that file alone with a sentence, and the next file gets a new worker.
///
/// `@unchecked Sendable`: `idle`, `handed` and `reported` are only touched while `lock` is held;
/// a `Worker` belongs to the one thread that took it (or, handed a file ahead, to the one that
/// processes that file next).
final class DecodeWorkers: @unchecked Sendable {
    let executable: String
    private let setup: WorkerProtocol.Setup
    /// Kept open for the workers to inherit.
    private let source: SourceRoot
    private let output: OutputDirectory
    private let events: @Sendable (BuildEvent) -> Void
    private let lock = NSLock()
    private var idle: [Worker] = []
    /// Workers handed a file ahead (`process`'s `upcoming`), by the file's index in the plan.
    private var handed: [Int: (Worker, Handout)] = [:]
    private var reported = false
    /// Workers are started from one thread that lives as long as the pool: a worker dies with the
    /// thread that started it (`PR_SET_PDEATHSIG`), and the pool's threads end as the files run out.
    private let spawner = Spawner()

    init(
        executable: String, setup: WorkerProtocol.Setup, source: SourceRoot, output: OutputDirectory,
        events: @escaping @Sendable (BuildEvent) -> Void
    ) {
        self.executable = executable
        self.setup = setup
        self.source = source
        self.output = output
        self.events = events
    }

    deinit { stop() }

    /// The executable to start workers from: this one when its entry point serves workers
    /// (`DecodeWorker.servesWorkers`, whatever the file is called: a renamed copy decodes in
    /// workers too), through `/proc/self/exe`, which still runs it if the file was replaced; else a
    /// `thumbframe` beside it (a test bundle's); nil when there is none, and then nothing is
    /// decoded (a build fails rather than decode in its own process).
    static func executable() -> String? {
        #if os(Linux)
            if DecodeWorker.servesWorkers { return "/proc/self/exe" }
            let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        #else
            guard let path = Bundle.main.executablePath else { return nil }
            if DecodeWorker.servesWorkers { return path }
            let own = URL(fileURLWithPath: path)
        #endif
        let sibling = own.deletingLastPathComponent().appendingPathComponent("thumbframe").path
        return FileManager.default.isExecutableFile(atPath: sibling) ? sibling : nil
    }

    /// How long a file may keep its worker before it is killed: the decode deadline (which the
    /// worker keeps itself, failing the file cleanly), as long again from 5 s up to 30 s (a loaded
    /// machine), and a second a 256 MiB of file to read and hash; nil without a deadline.
    static func hardDeadline(limits: ResourceLimits, bytes: Int) -> Double? {
        let timeout = limits.decodeTimeout
        guard timeout > 0 else { return nil }
        return timeout + min(max(timeout, 5), 30) + Double(bytes) / Double(256 << 20)
    }

    /// How long a video phase (a rendition, a scrub preview, a Motion Photo's clip) may keep the
    /// worker: `--video-timeout` and as long again from 30 s up to 60 s, so the worker's own
    /// deadline fails the phase cleanly first even on a starved machine (a short timeout's worker
    /// still has its scrub preview to give up); nil without a deadline.
    static func videoDeadline(limits: ResourceLimits) -> Double? {
        let limit = limits.videoTimeout
        return limit > 0 ? limit + min(max(limit, 30), 60) : nil
    }

    /// How many video phases a job may announce (`rendering`), by what its first bytes are: a
    /// video's rendition and scrub preview, a still of a format that embeds motion its clip, any
    /// other file none. Decided by the build when it hands the job out; the worker cannot ask more.
    static func videoPhases(head: [UInt8], fileExtension: String) -> Int {
        if MediaFormat.decoder(fileExtension: fileExtension, head: head) == .ffmpeg { return 2 }
        return MediaFormat.recognized(head)?.motion == nil ? 0 : 1
    }

    /// Makes `work` (the plan's file at `index`) into an item in a worker. `upcoming`, the file
    /// this thread makes next, is handed to the same worker now, so it finds its next job waiting
    /// when it sends this one's facts rather than sleeping until the build wakes to send it (on a
    /// library of small files, that was two processes woken a file instead of one).
    func process(
        _ index: Int, _ work: ReusePlan.Work, upcoming: (index: Int, work: ReusePlan.Work)?, cancellation: CancellationFlag?
    ) -> ItemProcessor.Timed {
        let file = work.file
        func failed(_ reason: String, _ stage: FailureStage = .decode) -> ItemProcessor.Timed {
            ItemProcessor.Timed(outcome: .failed(ItemProcessor.failure(file, stage, reason)))
        }
        func failed(_ ending: WorkerEnd) -> ItemProcessor.Timed {
            ItemProcessor.Timed(outcome: .failed(ItemProcessor.failure(file, .decode, ending.reason, cause: ending.cause)))
        }
        if let recorded = work.recordedFailure, let opened = try? source.open(file), let stat = opened.stat(),
            Digest.sha256(fd: opened.fd, size: stat.size) == recorded.sha256, opened.stat() == stat
        {
            // The bytes that failed, touched (a checkout): they fail as they failed, undecoded.
            var timed = ItemProcessor.Timed(outcome: .failed(recorded.failure))
            timed.sourceSHA256 = recorded.sha256
            return timed
        }
        lock.lock()
        let ahead = handed.removeValue(forKey: index)
        lock.unlock()
        let worker: Worker
        var job: Handout
        if let ahead {
            (worker, job) = ahead
        } else {
            let opened: Handout
            switch handout(work) {
            case .success(let made): opened = made
            case .failure(let problem): return failed(problem.localizedDescription, .read)
            }
            do {
                worker = try take()
            } catch {
                return failed(error.reason)
            }
            guard WorkerProtocol.send(worker.channel, opened.wire, attaching: opened.file.fd) else {
                return failed(end(worker, killing: true, reason: nil))
            }
            job = opened
            worker.jobsSent += 1
            job.number = worker.jobsSent
        }
        var handedOn = false
        // (A recorded failure's file is not handed ahead: it may need no worker.)
        if let upcoming, upcoming.work.recordedFailure == nil, case .success(var next) = handout(upcoming.work),
            WorkerProtocol.send(worker.channel, next.wire, attaching: next.file.fd)
        {
            worker.jobsSent += 1
            next.number = worker.jobsSent
            lock.lock()
            handed[upcoming.index] = (worker, next)
            lock.unlock()
            handedOn = true
        }
        // The deadline is the build's, set here by the job's kind: each video phase the worker
        // announces moves it to that phase's own limit, as many as the kind has and no more.
        let started = Worker.now()
        var deadline = Self.hardDeadline(limits: setup.limits, bytes: file.stat.size).map { started + $0 }
        var phases = job.videoPhases
        var answer = wait(worker, deadline: deadline, cancellation: cancellation)
        while case .answer(.rendering) = answer {
            guard phases > 0 else {
                answer = .ended(end(worker, killing: true, reason: Self.breach("a video phase for a file that has none left")))
                break
            }
            phases -= 1
            deadline = Self.videoDeadline(limits: setup.limits).map { Worker.now() + $0 }
            answer = wait(worker, deadline: deadline, cancellation: cancellation, rendering: true)
        }
        if case .answer(.done(let done)) = answer {
            let folder = Array(String(job.number).utf8)
            let kept = keep(done, job: job, scratch: try? worker.scratch.subdirectory(folder))
            _ = worker.scratch.removeTree(folder, OutputDirectory.scratchShape)
            switch kept {
            case .success(var timed):
                if !handedOn { give(back: worker) }
                if job.file.stat() == job.stat { timed.sourceSHA256 = job.job.sha256 }
                return timed
            case .failure(let breach):
                answer = .ended(end(worker, killing: true, reason: Self.breach(breach.what)))
            }
        }
        if handedOn, let upcoming {
            // The worker is gone: the next file starts over in another.
            lock.lock()
            handed[upcoming.index] = nil
            lock.unlock()
        }
        switch answer {
        case .answer: return failed(end(worker, killing: true, reason: Self.breach("an answer that is not the job's")))
        case .ended(let ending):
            // A file cut short while the worker read it (it maps a still's bytes: SIGBUS) changed
            // under it; the next run reads it settled.
            if ending.cause == .crash, job.file.stat() != job.stat {
                return failed(FileSystemError.changedWhileReading.localizedDescription, .read)
            }
            var timed = failed(ending)
            timed.sourceSHA256 = job.job.sha256
            return timed
        }
    }

    /// What the build keeps of a job's outcome: checked (`WorkerContract`), its files named,
    /// copied and hashed by this process (`ScratchOutputs`); or why the worker broke its contract.
    private func keep(
        _ done: WorkerProtocol.Done, job: Handout, scratch: Directory?
    ) -> Result<ItemProcessor.Timed, WorkerContract.Breach> {
        let file = job.job.source
        func failed(_ stage: FailureStage, _ reason: String, unwritable: Bool = false) -> ItemProcessor.Timed {
            var timed = ItemProcessor.Timed(outcome: .failed(ItemProcessor.failure(file, stage, reason)))
            timed.outputUnwritable = unwritable ? reason : nil
            return timed
        }
        // The file as the walk saw it and this process hashed it, and as it is now: else it changed
        // while it was read (read again next run), and the worker's answer, of other bytes, is not
        // a breach of its contract.
        guard job.stat.size == file.stat.size, job.file.stat() == job.stat else {
            return .success(failed(.read, FileSystemError.changedWhileReading.localizedDescription))
        }
        let checked: WorkerContract.Checked
        do {
            checked = try WorkerContract.checked(done, source: file, setup: setup)
        } catch {
            return .failure(error)
        }
        if let claim = done.outputUnwritable {
            // The run stops only when OUT_DIR, tested here, cannot take twice the file's bytes
            // (about what its outputs take; a pyramid or rendition may take more): a claim alone
            // fails this file, which the next run tries again, and no more.
            let probe = min(max(64 << 10, 2 * file.stat.size), 512 << 20)
            let unwritable = !output.isWritable(bytes: probe)
            return .success(failed(.write, WorkerContract.sentence(claim), unwritable: unwritable))
        }
        var timed: ItemProcessor.Timed
        switch checked {
        case .failed(let failure):
            timed = ItemProcessor.Timed(outcome: .failed(failure))
            // An allocation the worker's memory cap refused (a header's refusal is the probe's).
            if failure.cause == FailureCause.memory.rawValue, failure.stage != FailureStage.probe.rawValue {
                timed.outcome = .failed(
                    ItemProcessor.failure(
                        file, .decode, WorkerEnd.overMemory(setup.memoryLimit) + ": " + failure.reason, cause: .memory))
            }
        case .item(var stored):
            // The item is of the bytes this process hashed (their size the contract checked).
            let sha256 = job.job.sha256
            guard stored.file.sha256 == sha256 else {
                return .failure(.init(what: "an item of other bytes than its file's"))
            }
            var outputs = ScratchOutputs(scratch: scratch, output: output, setup: setup, source: job.file, sourceSHA256: sha256)
            do throws(ScratchOutputs.Problem) {
                try outputs.settle(&stored, motion: done.motion)
            } catch {
                switch error {
                case .breach(let what): return .failure(.init(what: what))
                case .write(let reason, let unwritable): return .success(failed(.write, reason, unwritable: unwritable))
                }
            }
            do {
                timed = ItemProcessor.Timed(outcome: .encoded(try WorkerContract.encoded(stored), thumbnailsWritten: outputs.written))
            } catch {
                return .failure(error)
            }
        }
        timed.note = done.note.map(WorkerContract.sentence)
        return .success(timed)
    }

    /// The reason a file fails with when its worker broke the protocol.
    static func breach(_ what: String) -> String {
        "the decoder broke its contract: " + WorkerContract.sentence(what)
    }

    /// A job as it is handed to a worker: its message, the file opened read-only by this process
    /// (attached to the message), and how many video phases its kind has.
    private struct Handout {
        var job: WorkerProtocol.Job
        var wire: [UInt8]
        var file: OpenFile
        /// The file as it was when the build hashed it: the same after the worker's answer, or
        /// the file changed while it was read.
        var stat: FileStat
        var videoPhases: Int
        /// Its number among the worker's jobs, from 1: its scratch subfolder's name.
        var number = 0
    }

    /// Opens the job's file (beneath the source directory, never through a link) and makes its
    /// message; a file that cannot be opened fails here, before any worker sees it.
    private func handout(_ work: ReusePlan.Work) -> Result<Handout, FileSystemError> {
        let opened: OpenFile
        do {
            opened = try source.open(work.file)
        } catch {
            return .failure(error)
        }
        // The file's one hash, here (a job handed ahead is hashed while the worker decodes the one
        // before it); the worker names and reuses by it.
        guard let stat = opened.stat(), let sha256 = Digest.sha256(fd: opened.fd, size: stat.size), opened.stat() == stat else {
            return .failure(.changedWhileReading)
        }
        var head = [UInt8](repeating: 0, count: MediaFormat.headBytes)
        let got = head.withUnsafeMutableBytes { pread(opened.fd, $0.baseAddress, $0.count, 0) }
        head.removeLast(head.count - max(0, got))
        let name = FileSignature.extension(String(decoding: work.file.name, as: UTF8.self))
        let job = WorkerProtocol.Job(work, sha256: sha256)
        return .success(
            Handout(
                job: job, wire: WorkerProtocol.ToWorker.job(job).wire, file: opened, stat: stat,
                videoPhases: Self.videoPhases(head: head, fileExtension: name)))
    }

    /// Whether a worker's sandbox lets it read `path` (`WorkerProtocol.ToWorker.probe`): nil
    /// when no worker answered, else nil inside where it could, or the error.
    func probe(path: String) -> String?? {
        guard let worker = try? take() else { return nil }
        guard WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.probe(path: path).wire),
            case .answer(.probed(let read)) = wait(worker, deadline: Worker.now() + 30, cancellation: nil)
        else { return nil }
        give(back: worker)
        return .some(read)
    }

    /// Closes every idle worker's socket and waits for it to exit; kills those handed a file no
    /// thread will ask for (the run stopped).
    func stop() {
        lock.lock()
        let (workers, abandoned) = (idle, handed.values.map(\.0))
        (idle, handed) = ([], [:])
        lock.unlock()
        for worker in workers { _ = end(worker, killing: false, reason: "") }
        for worker in abandoned { _ = end(worker, killing: true, reason: "") }
        spawner.stop()
    }

    // MARK: One conversation

    private enum Ending {
        case answer(WorkerProtocol.FromWorker)
        case ended(WorkerEnd)
    }

    /// Waits until the worker answers, dies, or the deadline or a stop comes (then it is killed).
    private func wait(_ worker: Worker, deadline: Double?, cancellation: CancellationFlag?, rendering: Bool = false) -> Ending {
        switch worker.next(until: deadline, cancellation: cancellation) {
        case .message(let answer):
            return .answer(answer)
        case .garbled:
            return .ended(end(worker, killing: true, reason: Self.breach("a malformed or oversized message")))
        case .closed:
            return .ended(end(worker, killing: false, reason: nil))
        case .deadline:
            let limit =
                rendering
                ? "\(ResourceLimits.seconds(setup.limits.videoTimeout)) (--video-timeout)"
                : "\(ResourceLimits.seconds(setup.limits.decodeTimeout)) (--decode-timeout)"
            return .ended(end(worker, killing: true, reason: "timed out after \(limit), killed", cause: .time))
        case .cancelled:
            return .ended(end(worker, killing: true, reason: "stopped by a signal"))
        }
    }

    // MARK: Workers

    /// A started worker, or why none could start.
    private func take() throws(WorkerStartError) -> Worker {
        lock.lock()
        let reused = idle.popLast()
        lock.unlock()
        if let reused { return reused }
        // Its scratch folder: the only place it may write, inside thumbs/ (one file system with
        // what the build copies into), never published, removed when it ends.
        guard let thumbs = output.thumbs else { throw WorkerStartError(reason: "cannot start a decode worker: no thumbs/") }
        let scratch: (name: String, directory: Directory)
        do {
            let name = try thumbs.makeTemporarySubdirectory()
            scratch = (name, try thumbs.subdirectory(Array(name.utf8)))
            // A build run as root gives it to the user its workers become.
            if setup.sandbox, let user = setup.user, user.count == 2, fchown(scratch.directory.fd, user[0], user[1]) != 0 {
                throw FileSystemError.posix(errno)
            }
        } catch {
            throw WorkerStartError(reason: "cannot start a decode worker: \(error.localizedDescription)")
        }
        let executable = executable
        let spawned = spawner.run { () throws(WorkerStartError) in
            try Worker.spawn(executable, thumbs: thumbs.fd, scratch: scratch)
        }
        let worker: Worker
        switch spawned {
        case .success(let started): worker = started
        case .failure(let error):
            _ = thumbs.removeTree(Array(scratch.name.utf8), OutputDirectory.scratchShape)
            throw error
        }
        guard WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.setup(setup).wire),
            case .message(.ready(let sandbox, let memory)) = worker.next(until: Worker.now() + 60, cancellation: nil)
        else {
            let ending = end(worker, killing: true, reason: nil)
            throw WorkerStartError(reason: "cannot start a decode worker: \(ending.reason)")
        }
        report(sandbox, memory: memory)
        return worker
    }

    private func give(back worker: Worker) {
        lock.lock()
        defer { lock.unlock() }
        idle.append(worker)
    }

    /// Ends a worker (killed first when `killing`; else given a second to exit once its socket
    /// closes, then killed), reaps it, and says why it ended: `reason`, else what its exit status
    /// and last words tell, with `cause` (what stopped the decode from outside the file).
    private func end(_ worker: Worker, killing: Bool, reason: String?, cause: FailureCause? = nil) -> WorkerEnd {
        if killing { kill(worker.pid, SIGKILL) }
        close(worker.channel)
        let status = worker.reap(within: killing ? nil : 1)
        _ = output.thumbs?.removeTree(Array(worker.scratchName.utf8), OutputDirectory.scratchShape)
        if let reason { return WorkerEnd(reason: reason, cause: cause) }
        return WorkerEnd(status: status, lastWords: worker.lastWords, memoryLimit: setup.memoryLimit)
    }

    /// Says once per build what of the sandbox the kernel refused.
    private func report(_ sandbox: WorkerSandbox.Status, memory: String?) {
        lock.lock()
        defer { lock.unlock() }
        guard !reported else { return }
        reported = true
        var missing: [String] = []
        if let why = sandbox.seccomp { missing.append("seccomp (\(why))") }
        if let why = sandbox.landlock { missing.append("Landlock (\(why))") }
        if let why = memory { missing.append("a memory cap (\(why))") }
        guard !missing.isEmpty, setup.sandbox else { return }
        events(.warning("decode workers run isolated without " + missing.joined(separator: ", ") + ": the kernel refused it"))
    }
}

/// A thread that runs what it is given, one at a time, until stopped.
///
/// `@unchecked Sendable`: `tasks` and `stopped` are only touched while `condition` is held.
private final class Spawner: @unchecked Sendable {
    private let condition = NSCondition()
    private var tasks: [() -> Void] = []
    private var stopped = false

    init() {
        let thread = Thread { [self] in
            while let task = nextTask() { task() }
        }
        thread.start()
    }

    private func nextTask() -> (() -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while tasks.isEmpty && !stopped { condition.wait() }
        return tasks.isEmpty ? nil : tasks.removeFirst()
    }

    /// Runs `body` on the thread and returns its result.
    func run<Value>(_ body: @escaping () throws(WorkerStartError) -> Value) -> Result<Value, WorkerStartError> {
        let done = DispatchSemaphore(value: 0)
        var result: Result<Value, WorkerStartError> = .failure(WorkerStartError(reason: "the build is stopping"))
        condition.lock()
        guard !stopped else {
            condition.unlock()
            return result
        }
        tasks.append {
            result = Result { () throws(WorkerStartError) in try body() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return result
    }

    /// Ends the thread once what it was given is done.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Why no worker could be started.
struct WorkerStartError: Error {
    var reason: String
}

/// How a worker's end reads in a failure: why, and what stopped the decode from outside the file.
struct WorkerEnd {
    var reason: String
    var cause: FailureCause?

    init(reason: String, cause: FailureCause?) {
        (self.reason, self.cause) = (reason, cause)
    }

    /// From a wait status (`waitpid`) and the last of what the worker wrote on stderr: GLib, C++
    /// and the Swift runtime say an allocation failed only in words there, then abort; a worker
    /// that died so counts as over memory, any other end as a crash.
    init(status: Int32, lastWords: String, memoryLimit: Int) {
        let signal = status & 0x7F
        let code = (status >> 8) & 0xFF
        if DecodeFailure.isAllocationFailure(lastWords) {
            (reason, cause) = (Self.overMemory(memoryLimit), .memory)
        } else if signal != 0 {
            (reason, cause) = ("decoder crashed (\(Self.name(of: signal)))", .crash)
        } else {
            (reason, cause) = (code == 0 ? "decoder exited before it answered" : "decoder exited with status \(code)", .crash)
        }
    }

    static func overMemory(_ limit: Int) -> String {
        "over the memory limit (\(ResourceLimits.mebibytes(limit)))"
    }

    static func name(of signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGFPE: "SIGFPE", SIGABRT: "SIGABRT", SIGTRAP: "SIGTRAP",
            SIGKILL: "SIGKILL", SIGSYS: "SIGSYS", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ", SIGPIPE: "SIGPIPE",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}

/// One worker process, seen from the build: its socket and the pipe of its stderr.
final class Worker {
    let pid: pid_t
    /// Its scratch folder in thumbs/ (`ScratchOutputs`): the name, and the folder open.
    let scratchName: String
    let scratch: Directory
    /// Jobs handed to it so far (the build's count, which the worker keeps too).
    var jobsSent = 0
    let channel: Int32
    private let errors: Int32
    private var errorsOpen = true
    /// Answers are capped: a worker's item is a few kilobytes.
    private var inbox = WorkerProtocol.Inbox(limit: WorkerProtocol.maximumAnswerBytes)
    /// Where its stderr is read.
    private var chunk = [UInt8](repeating: 0, count: 4096)
    /// The last 4 KiB of what the worker wrote on stderr (a crash's last words).
    private var tail: [UInt8] = []

    private init(pid: pid_t, channel: Int32, errors: Int32, scratch: (name: String, directory: Directory)) {
        (scratchName, self.scratch) = scratch
        self.pid = pid
        self.channel = channel
        self.errors = errors
    }

    deinit { close(errors) }

    var lastWords: String { String(decoding: tail, as: UTF8.self) }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    enum Event {
        case message(WorkerProtocol.FromWorker)
        case garbled, closed, deadline, cancelled
    }

    /// The worker's next message, or what came first: its socket closed (it died), the deadline,
    /// a stop. Its stderr is read meanwhile, so it never blocks on a full pipe.
    func next(until deadline: Double?, cancellation: CancellationFlag?) -> Event {
        while true {
            if let body = inbox.next() {
                guard let message = try? WorkerProtocol.FromWorker(wire: body) else { return .garbled }
                return .message(message)
            }
            if inbox.overflowed { return .garbled }
            if cancellation?.signal != nil { return .cancelled }
            var wait: Int32 = 250
            if let deadline {
                let left = deadline - Self.now()
                if left <= 0 { return .deadline }
                wait = Int32(min(250, max(1, left * 1000)))
            }
            var fds = [
                pollfd(fd: channel, events: Int16(POLLIN), revents: 0),
                pollfd(fd: errorsOpen ? errors : -1, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0, errno != EINTR { return .closed }
            guard ready > 0 else { continue }
            if fds[1].revents != 0 {
                let got = readErrors()
                if got == 0 || (got < 0 && errno != EINTR) { errorsOpen = false }
            }
            if fds[0].revents != 0 {
                let got = inbox.fill(from: channel)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { return .closed }
            }
        }
    }

    /// Waits for the process to end (its last stderr read first) and returns its wait status;
    /// with `within`, a process still there after that many seconds is killed first (a worker
    /// that ignores its closed socket is not waited for).
    func reap(within seconds: Double? = nil) -> Int32 {
        var status: Int32 = 0
        if let seconds {
            let deadline = Self.now() + seconds
            while true {
                let got = waitpid(pid, &status, WNOHANG)
                if got == pid {
                    while errorsOpen, readErrors() > 0 {}
                    return status
                }
                if got < 0, errno != EINTR { break }
                if Self.now() >= deadline {
                    kill(pid, SIGKILL)
                    break
                }
                usleep(5000)
            }
        }
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        while errorsOpen, readErrors() > 0 {}
        return status
    }

    /// One `read` of the worker's stderr, its last 4 KiB kept in `tail`: what `read` returned.
    private func readErrors() -> Int {
        let got = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
        guard got > 0 else { return got }
        tail.append(contentsOf: chunk[0..<got])
        if tail.count > 4096 { tail.removeFirst(tail.count - 4096) }
        return got
    }

    /// Starts the executable as a worker: its socket at descriptor 3, thumbs/ at 5, its scratch
    /// folder at 6, stdin from /dev/null, stdout and stderr into a pipe of the build's; signals at
    /// their defaults and none blocked.
    static func spawn(
        _ executable: String, thumbs: Int32, scratch: (name: String, directory: Directory)
    ) throws(WorkerStartError) -> Worker {
        func failure(_ what: String, _ code: Int32 = errno) -> WorkerStartError {
            WorkerStartError(reason: "cannot start a decode worker (\(what)): \(String(cString: strerror(code)))")
        }
        var pair: [Int32] = [-1, -1]
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, stream, 0, &pair) == 0 else { throw failure("socketpair") }
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            let code = errno
            close(pair[0])
            close(pair[1])
            throw failure("pipe", code)
        }
        for fd in [pair[0], pipeEnds[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // The child's ends from 10 up, none of them already one of 0…5, and none inherited by
        // another worker started meanwhile.
        let ends = [pipeEnds[1], pair[1], thumbs, scratch.directory.fd].map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
        close(pair[1])
        close(pipeEnds[1])
        defer { for fd in ends where fd >= 0 { close(fd) } }
        guard !ends.contains(where: { $0 < 0 }) else {
            let code = errno
            close(pair[0])
            close(pipeEnds[0])
            throw failure("dup", code)
        }
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #else
            var actions: posix_spawn_file_actions_t?
            var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (fd, target) in [(ends[0], Int32(1)), (ends[0], 2), (ends[1], 3), (ends[2], 5), (ends[3], 6)] {
            posix_spawn_file_actions_adddup2(&actions, fd, target)
        }
        #if os(Linux)
            // Nothing else: a descriptor a host program left without close-on-exec (a lock,
            // a socket) never reaches a worker.
            _ = spawnFileActionsCloseFrom(&actions, 7)
        #endif
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        // The build's pid: a worker whose parent is another process by the time it starts (the
        // build died meanwhile) exits at once.
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("thumbframe"), strdup(WorkerProtocol.argument), strdup(String(getpid())), nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        #if canImport(Glibc)
            let environment = Self.workerEnvironment()
            defer { for entry in environment { free(entry) } }
        #else
            let environment = _NSGetEnviron().pointee
        #endif
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
        guard status == 0 else {
            close(pair[0])
            close(pipeEnds[0])
            throw failure(executable, status)
        }
        return Worker(pid: pid, channel: pair[0], errors: pipeEnds[0], scratch: scratch)
    }
}

#if canImport(Glibc)
    extension Worker {
        /// How glibc's allocator serves a worker (unless the user's environment says otherwise).
        /// A worker decodes file after file of other sizes: with glibc's defaults each decode's
        /// buffers stay in the heap, in holes the next file's do not fit, and a worker's resident
        /// size grew from 107 MiB after its first JPEG to 185 after a hundred. Buffers of 4 MiB
        /// and more (a decode, a resize pass) are mapped for the job and returned after it, on
        /// transparent huge pages so that mapping them again costs a few faults, not thousands;
        /// the heap's top is kept up to 32 MiB. Measured on the bench's 200 JPEGs, `--jobs 2`,
        /// three runs each: peak RSS 155–167 MiB against 172–186, CPU 17.6–18.3 s against
        /// 17.8–18.1 (docs/performance.md).
        static let allocatorTunables =
            "GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=33554432"

        /// The build's environment for a worker, with `allocatorTunables` where it sets none; each
        /// entry is the caller's to free.
        static func workerEnvironment() -> [UnsafeMutablePointer<CChar>?] {
            var entries: [UnsafeMutablePointer<CChar>?] = []
            var tuned = false
            var next = environ
            while let entry = next.pointee {
                tuned = tuned || strncmp(entry, "GLIBC_TUNABLES=", 15) == 0
                entries.append(strdup(entry))
                next += 1
            }
            if !tuned { entries.append(strdup(allocatorTunables)) }
            return entries + [nil]
        }
    }
#endif

#if os(Linux)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which its headers declare to
    /// Swift only under _GNU_SOURCE.
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private func spawnFileActionsCloseFrom(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32
    ) -> Int32
#endif
