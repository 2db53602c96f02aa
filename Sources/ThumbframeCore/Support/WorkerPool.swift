import Foundation

/// How thumbframe runs synchronous work in parallel, the one mechanism for it: threads of its
/// own (never Swift's cooperative pool: the work blocks in libvips and file I/O), each taking
/// the next index in order under one condition lock.
///
/// - `run`: the per-file work of a build, `jobs` threads, each with its next index taken ahead,
///   each result handled (recorded) on the thread that made it, one at a time: at most `jobs`
///   results exist at once, so memory stays bounded by `jobs`.
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
            let state = State(count: count, threads: threads)
            for _ in 1..<threads {
                start {
                    while let index = state.next(stop: { false }) { work.body?(index) }
                    state.threadDone()
                }
            }
            while let index = state.next(stop: { false }) { work.body?(index) }
            state.threadDone()
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

    /// Runs `work(index, upcoming)` for every index below `count` on `jobs` threads, until
    /// `stop()` holds (checked before each index: work in flight finishes), and hands each
    /// result to `handle` on the thread that made it, one at a time, in completion order; returns
    /// when every thread is done. `upcoming` is the index the same thread runs next, already
    /// taken (nil: none), so `work` can pass it on before it waits (a decode worker gets its next
    /// file while it makes this one). Nothing waits between a result and its handling: no queue
    /// to bound, and no thread to wake for it.
    static func run<Output>(
        count: Int, jobs: Int, stop: @escaping @Sendable () -> Bool, work: @escaping @Sendable (Int, Int?) -> Output,
        handle: (Int, Output) -> Void
    ) {
        guard count > 0 else { return }
        withoutActuallyEscaping(handle) { handle in
            let handler = Serialized(handle)
            let state = State(count: count, threads: max(1, min(jobs, count)))
            for _ in 0..<state.threads {
                start {
                    var upcoming = state.next(stop: stop)
                    while let index = upcoming {
                        upcoming = state.next(stop: stop)
                        handler.call(index, work(index, upcoming))
                        if stop() { break }
                    }
                    state.threadDone()
                }
            }
            state.waitForThreads()
            handler.release()
        }
    }

    /// `run`'s handler, lent to its threads and called by one at a time. `@unchecked Sendable`:
    /// `body` is called and emptied only while `lock` is held, and emptied after the last thread
    /// is done, so what it captures is never touched by two threads at once.
    private final class Serialized<Output>: @unchecked Sendable {
        private let lock = NSLock()
        private var body: ((Int, Output) -> Void)?
        init(_ body: @escaping (Int, Output) -> Void) { self.body = body }

        func call(_ index: Int, _ output: Output) {
            lock.lock()
            defer { lock.unlock() }
            body?(index, output)
        }

        func release() {
            lock.lock()
            defer { lock.unlock() }
            body = nil
        }
    }

    /// The pool's shared counters, under one condition lock.
    private final class State: @unchecked Sendable {
        // @unchecked: every field is read and written with `condition` held.
        private let condition = NSCondition()
        private let count: Int
        let threads: Int
        private var nextIndex = 0
        private var running: Int

        init(count: Int, threads: Int) {
            self.count = count
            self.threads = threads
            running = threads
        }

        /// The next index to work on; nil when all are taken or `stop()` holds.
        func next(stop: () -> Bool) -> Int? {
            condition.lock()
            defer { condition.unlock() }
            guard nextIndex < count, !stop() else { return nil }
            nextIndex += 1
            return nextIndex - 1
        }

        /// A thread has no more work.
        func threadDone() {
            condition.lock()
            defer { condition.unlock() }
            running -= 1
            condition.broadcast()
        }

        /// Returns once every thread has said it is done.
        func waitForThreads() {
            condition.lock()
            defer { condition.unlock() }
            while running > 0 { condition.wait() }
        }
    }
}
