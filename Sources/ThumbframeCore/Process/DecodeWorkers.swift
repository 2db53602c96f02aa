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
    private var handed: [Int: Worker] = [:]
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

    /// The executable to start workers from: this one when it is thumbframe (through
    /// `/proc/self/exe`, which still runs it if the file was replaced), else a `thumbframe` beside
    /// it (a test bundle's); nil when there is none.
    static func executable() -> String? {
        #if os(Linux)
            let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            if own.lastPathComponent == "thumbframe" { return "/proc/self/exe" }
        #else
            guard let path = Bundle.main.executablePath else { return nil }
            let own = URL(fileURLWithPath: path)
            if own.lastPathComponent == "thumbframe" { return path }
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

    /// Makes `work` (the plan's file at `index`) into an item in a worker. `upcoming`, the file
    /// this thread makes next, is handed to the same worker now, so it finds its next job waiting
    /// when it sends this one's facts rather than sleeping until the build wakes to send it (on a
    /// library of small files, that was two processes woken a file instead of one).
    func process(
        _ index: Int, _ work: ReusePlan.Work, upcoming: (index: Int, work: ReusePlan.Work)?, cancellation: CancellationFlag?
    ) -> ItemProcessor.Timed {
        let file = work.file
        func failed(_ reason: String) -> ItemProcessor.Timed {
            ItemProcessor.Timed(outcome: .failed(ItemProcessor.failure(file, .decode, reason)))
        }
        lock.lock()
        let ahead = handed.removeValue(forKey: index)
        lock.unlock()
        let worker: Worker
        if let ahead {
            worker = ahead
        } else {
            do {
                worker = try take()
            } catch {
                return failed(error.reason)
            }
            guard WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.job(.init(work)).wire) else {
                return failed(end(worker, killing: true, reason: nil))
            }
        }
        var handedOn = false
        if let upcoming, WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.job(.init(upcoming.work)).wire) {
            lock.lock()
            handed[upcoming.index] = worker
            lock.unlock()
            handedOn = true
        }
        let deadline = Self.hardDeadline(limits: setup.limits, bytes: file.stat.size).map { Worker.now() + $0 }
        var answer = wait(worker, deadline: deadline, cancellation: cancellation)
        // A video's rendition: from now on the deadline is --video-timeout's (more than one for
        // a Motion Photo with a moving part to transcode as well).
        while case .answer(.rendering) = answer {
            let limit = setup.limits.videoTimeout
            let deadline = limit > 0 ? Worker.now() + limit + min(max(limit, 5), 60) : nil
            answer = wait(worker, deadline: deadline, cancellation: cancellation, rendering: true)
        }
        if case .answer(.done(let done)) = answer {
            if !handedOn { give(back: worker) }
            return timed(done, file)
        }
        if handedOn, let upcoming {
            // The worker is gone: the next file starts over in another.
            lock.lock()
            handed[upcoming.index] = nil
            lock.unlock()
        }
        switch answer {
        case .answer: return failed(end(worker, killing: true, reason: "decoder sent an unexpected message"))
        case .ended(let reason): return failed(reason)
        }
    }

    /// What a worker's sandbox lets through (`WorkerProtocol.ToWorker.probe`).
    func probe(path: String) -> (socket: String?, read: String?)? {
        guard let worker = try? take() else { return nil }
        guard WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.probe(path: path).wire),
            case .answer(.probed(let socket, let read)) = wait(worker, deadline: Worker.now() + 30, cancellation: nil)
        else { return nil }
        give(back: worker)
        return (socket, read)
    }

    /// Closes every idle worker's socket and waits for it to exit; kills those handed a file no
    /// thread will ask for (the run stopped).
    func stop() {
        lock.lock()
        let (workers, abandoned) = (idle, Array(handed.values))
        (idle, handed) = ([], [:])
        lock.unlock()
        for worker in workers { _ = end(worker, killing: false, reason: "") }
        for worker in abandoned { _ = end(worker, killing: true, reason: "") }
        spawner.stop()
    }

    // MARK: One conversation

    private enum Ending {
        case answer(WorkerProtocol.FromWorker)
        case ended(String)
    }

    /// Waits until the worker answers, dies, or the deadline or a stop comes (then it is killed).
    private func wait(_ worker: Worker, deadline: Double?, cancellation: CancellationFlag?, rendering: Bool = false) -> Ending {
        switch worker.next(until: deadline, cancellation: cancellation) {
        case .message(let answer):
            return .answer(answer)
        case .garbled:
            return .ended(end(worker, killing: true, reason: "decoder sent a malformed message"))
        case .closed:
            return .ended(end(worker, killing: false, reason: nil))
        case .deadline:
            let limit =
                rendering
                ? "\(ResourceLimits.seconds(setup.limits.videoTimeout)) (--video-timeout)"
                : "\(ResourceLimits.seconds(setup.limits.decodeTimeout)) (--decode-timeout)"
            return .ended(end(worker, killing: true, reason: "timed out after \(limit), killed"))
        case .cancelled:
            return .ended(end(worker, killing: true, reason: "stopped by a signal"))
        }
    }

    /// A finished job as the build's outcome. A failure that an allocation past the worker's
    /// memory cap caused says so.
    private func timed(_ done: WorkerProtocol.Done, _ file: SourceFile) -> ItemProcessor.Timed {
        var timed: ItemProcessor.Timed
        switch done.outcome {
        case .item(let item, let written):
            timed = ItemProcessor.Timed(outcome: .encoded(item, thumbnailsWritten: written))
        case .failed(var failure):
            if WorkerEnd.isAllocationFailure(failure.reason) {
                failure.reason = String((WorkerEnd.overMemory(setup.memoryLimit) + ": " + failure.reason).prefix(300))
            }
            timed = ItemProcessor.Timed(outcome: .failed(failure))
        }
        timed.outputUnwritable = done.outputUnwritable
        timed.note = done.note
        return timed
    }

    // MARK: Workers

    /// A started worker, or why none could start.
    private func take() throws(WorkerStartError) -> Worker {
        lock.lock()
        let reused = idle.popLast()
        lock.unlock()
        if let reused { return reused }
        let (executable, source, output) = (executable, source.directory.fd, output.root.fd)
        let worker = try spawner.run { () throws(WorkerStartError) in try Worker.spawn(executable, source: source, output: output) }.get()
        guard WorkerProtocol.send(worker.channel, WorkerProtocol.ToWorker.setup(setup).wire),
            case .message(.ready(let sandbox, let memory)) = worker.next(until: Worker.now() + 60, cancellation: nil)
        else {
            let reason = end(worker, killing: true, reason: nil)
            throw WorkerStartError(reason: "cannot start a decode worker: \(reason)")
        }
        report(sandbox, memory: memory)
        return worker
    }

    private func give(back worker: Worker) {
        lock.lock()
        defer { lock.unlock() }
        idle.append(worker)
    }

    /// Ends a worker (killed first when `killing`), reaps it, and says why it ended: `reason`,
    /// else what its exit status and last words tell.
    private func end(_ worker: Worker, killing: Bool, reason: String?) -> String {
        if killing { kill(worker.pid, SIGKILL) }
        close(worker.channel)
        let status = worker.reap()
        return reason ?? WorkerEnd.reason(status: status, lastWords: worker.lastWords, memoryLimit: setup.memoryLimit)
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

/// How a worker's end reads in a failure.
enum WorkerEnd {
    /// A reason from a wait status (`waitpid`) and the last of what the worker wrote on stderr.
    static func reason(status: Int32, lastWords: String, memoryLimit: Int) -> String {
        let signal = status & 0x7F
        if isAllocationFailure(lastWords) { return overMemory(memoryLimit) }
        if signal != 0 { return "decoder crashed (\(name(of: signal)))" }
        let code = (status >> 8) & 0xFF
        return code == 0 ? "decoder exited before it answered" : "decoder exited with status \(code)"
    }

    static func overMemory(_ limit: Int) -> String {
        "over the memory limit (\(ResourceLimits.mebibytes(limit)))"
    }

    /// What glibc, GLib, the Swift runtime, C++ and the decoders say when an allocation fails.
    static func isAllocationFailure(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return [
            "out of memory", "cannot allocate memory", "failed to allocate", "could not allocate", "bad_alloc",
            "memory allocation", "not enough memory", "unable to allocate", "insufficient memory",
        ].contains { lowered.contains($0) }
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
    let channel: Int32
    private let errors: Int32
    private var errorsOpen = true
    private var inbox = WorkerProtocol.Inbox()
    /// Where its stderr is read.
    private var chunk = [UInt8](repeating: 0, count: 4096)
    /// The last 4 KiB of what the worker wrote on stderr (a crash's last words).
    private var tail: [UInt8] = []

    private init(pid: pid_t, channel: Int32, errors: Int32) {
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

    /// Waits for the process to end (its last stderr read first) and returns its wait status.
    func reap() -> Int32 {
        var status: Int32 = 0
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

    /// Starts the executable as a worker: its socket at descriptor 3, the source directory at 4,
    /// OUT_DIR at 5, stdin from /dev/null, stdout and stderr into a pipe of the build's; signals at
    /// their defaults and none blocked.
    static func spawn(_ executable: String, source: Int32, output: Int32) throws(WorkerStartError) -> Worker {
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
        let ends = [pipeEnds[1], pair[1], source, output].map { fcntl($0, F_DUPFD_CLOEXEC, 10) }
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
        for (fd, target) in [(ends[0], Int32(1)), (ends[0], 2), (ends[1], 3), (ends[2], 4), (ends[3], 5)] {
            posix_spawn_file_actions_adddup2(&actions, fd, target)
        }
        #if os(Linux)
            // Nothing else: a descriptor a host program left without close-on-exec (a lock,
            // a socket) never reaches a worker.
            _ = spawnFileActionsCloseFrom(&actions, 6)
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
            let environment = environ
        #else
            let environment = _NSGetEnviron().pointee
        #endif
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environment)
        guard status == 0 else {
            close(pair[0])
            close(pipeEnds[0])
            throw failure(executable, status)
        }
        return Worker(pid: pid, channel: pair[0], errors: pipeEnds[0])
    }
}

#if os(Linux)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which its headers declare to
    /// Swift only under _GNU_SOURCE.
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private func spawnFileActionsCloseFrom(
        _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32
    ) -> Int32
#endif
