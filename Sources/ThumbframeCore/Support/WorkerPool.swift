import Foundation

/// How thumbframe runs synchronous work in parallel, the one mechanism for it: threads of its
/// own (never Swift's cooperative pool: the work blocks in libvips and file I/O), each taking
/// the next index in order under one condition lock.
///
/// - `run`: the per-file work of a build, `jobs` threads, the results handed to the caller as an
///   async sequence as they arrive. At most `jobs × 4` results wait for the caller, so memory
///   stays bounded by `jobs` however slow the caller is.
/// - `forEach`: a short fan-out whose results land in slots of their own (the walk's
///   directories, the plan's thumbnail stats); the calling thread takes part, and it returns
///   when every index is done.
enum WorkerPool {
    /// Runs `body(index)` for every index below `count` on up to `threads` threads, the caller's
    /// among them, and returns once all are done.
    static func forEach(count: Int, threads: Int, _ body: (Int) -> Void) {
        guard count > 0 else { return }
        let threads = max(1, min(threads, count))
        withoutActuallyEscaping(body) { body in
            // The threads reach `body` through the box, emptied once every one of them is done
            // (a finished `Thread` may keep its block a while longer; never `body` itself).
            let work = Borrowed(body)
            let state = State(count: count, threads: threads, pending: Int.max)
            for _ in 1..<threads {
                start {
                    while let index = state.next(stop: { false }) { work.body?(index) }
                    _ = state.threadDone()
                }
            }
            while let index = state.next(stop: { false }) { work.body?(index) }
            _ = state.threadDone()
            state.waitForThreads()
            work.body = nil
        }
    }

    /// `forEach`'s body, lent to its threads. `@unchecked Sendable`: set before the threads start,
    /// read by them, and emptied after the last one said it was done (under `State`'s lock).
    private final class Borrowed: @unchecked Sendable {
        var body: ((Int) -> Void)?
        init(_ body: @escaping (Int) -> Void) { self.body = body }
    }

    /// A thread of the pool. libjpeg and libvips want more stack than a secondary thread's default.
    private static func start(_ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Runs `work(index)` for every index below `count`, `jobs` at a time, until `stop()` holds
    /// (checked before each index: work in flight finishes). Results arrive in completion order.
    static func run<Output: Sendable>(
        count: Int, jobs: Int, stop: @escaping @Sendable () -> Bool, work: @escaping @Sendable (Int) -> Output
    ) -> Results<Output> {
        let state = State(count: count, threads: max(1, min(jobs, count)), pending: max(1, jobs) * 4)
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, Output).self)
        guard count > 0 else {
            continuation.finish()
            return Results(stream: stream, state: state)
        }
        for _ in 0..<state.threads {
            start {
                while let index = state.next(stop: stop) {
                    continuation.yield((index, work(index)))
                }
                if state.threadDone() { continuation.finish() }
            }
        }
        return Results(stream: stream, state: state)
    }

    /// The results, in completion order; each one taken frees room for the next.
    struct Results<Output: Sendable>: AsyncSequence, Sendable {
        typealias Element = (Int, Output)
        let stream: AsyncStream<(Int, Output)>
        let state: State

        struct AsyncIterator: AsyncIteratorProtocol {
            var base: AsyncStream<(Int, Output)>.AsyncIterator
            let state: State

            mutating func next() async -> (Int, Output)? {
                guard let element = await base.next() else { return nil }
                state.taken()
                return element
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: stream.makeAsyncIterator(), state: state)
        }
    }

    /// The pool's shared counters, under one condition lock.
    final class State: @unchecked Sendable {
        // @unchecked: every field is read and written with `condition` held.
        private let condition = NSCondition()
        private let count: Int
        let threads: Int
        private var nextIndex = 0
        private var running: Int
        private var room: Int

        init(count: Int, threads: Int, pending: Int) {
            self.count = count
            self.threads = threads
            running = threads
            room = pending
        }

        /// The next index to work on, once there is room for its result; nil when all are
        /// taken or `stop()` holds.
        func next(stop: () -> Bool) -> Int? {
            condition.lock()
            defer { condition.unlock() }
            while room == 0 { condition.wait() }
            guard nextIndex < count, !stop() else { return nil }
            room -= 1
            nextIndex += 1
            return nextIndex - 1
        }

        /// The caller took a result: room for one more.
        func taken() {
            condition.lock()
            room += 1
            condition.signal()
            condition.unlock()
        }

        /// A thread has no more work; true for the last one.
        func threadDone() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            running -= 1
            condition.broadcast()
            return running == 0
        }

        /// Returns once every thread has said it is done.
        func waitForThreads() {
            condition.lock()
            defer { condition.unlock() }
            while running > 0 { condition.wait() }
        }
    }
}
