import Foundation
import Testing
import ThumbframeImaging
import ThumbframeTestSupport

@testable import ThumbframeCore

/// The one concurrency model for per-file work, and which failures are decoded twice.
@Suite("Worker pool")
struct WorkerPoolTests {
    /// Counts work in flight.
    final class Gauge: @unchecked Sendable {
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        func enter() {
            lock.lock()
            now += 1
            most = max(most, now)
            lock.unlock()
        }
        func leave() {
            lock.lock()
            now -= 1
            lock.unlock()
        }
    }

    @Test("every index runs once, never more than jobs at a time, on threads of the pool, handled one at a time", arguments: [1, 3])
    func runsEveryIndexOnce(jobs: Int) {
        let gauge = Gauge()
        let handling = Gauge()
        var seen: [Int] = []
        // What each thread was told comes next is what it ran next: a chain per thread.
        var announced: [Int] = []
        WorkerPool.run(
            count: 40, jobs: jobs, stop: { false },
            work: { index, upcoming in
                gauge.enter()
                defer { gauge.leave() }
                usleep(2000)
                return (index, upcoming, Thread.isMainThread)
            },
            handle: { index, output in
                handling.enter()
                defer { handling.leave() }
                #expect(output.0 == index && !output.2)
                seen.append(index)
                if let upcoming = output.1 { announced.append(upcoming) }
                usleep(500)
            })
        #expect(seen.sorted() == Array(0..<40))
        #expect(announced.count == 40 - min(jobs, 40) && Set(announced).count == announced.count)
        #expect(Set(seen).subtracting(announced).count == min(jobs, 40), "each thread's first index is announced by none")
        #expect(gauge.most <= jobs && gauge.most >= 1)
        #expect(handling.most == 1, "results are handled one at a time")
        WorkerPool.run(
            count: 0, jobs: 2, stop: { false }, work: { index, _ in index }, handle: { _, _ in Issue.record("no work, no result") })
    }

    @Test("a stop takes effect before each thread's next index; the run returns once every thread is done")
    func stops() {
        let stopped = Gauge()  // `most` > 0 once stopped
        let running = Gauge()
        var handled = 0
        WorkerPool.run(
            count: 1000, jobs: 2, stop: { stopped.most > 0 },
            work: { index, _ in
                running.enter()
                defer { running.leave() }
                usleep(1000)
                return index
            },
            handle: { _, _ in
                handled += 1
                if handled == 20 { stopped.enter() }
            })
        // The other thread may finish the file it had when the stop came.
        #expect(handled >= 20 && handled <= 21, "\(handled) results after the stop")
        #expect(running.most <= 2)
    }
}
