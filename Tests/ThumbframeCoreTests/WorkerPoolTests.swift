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

    @Test("a failure is decoded again only when other libvips work that left a message overlapped it, from any build")
    func mixingRule() {
        func window(_ position: Int?, _ range: ClosedRange<UInt64>, build: Int = 1) -> ErrorWindows.Window {
            ErrorWindows.Window(build: build, position: position, window: range)
        }
        // Back to back (one file at a time): none.
        #expect(ErrorWindows.mayHaveMixed([window(0, 1...2), window(1, 3...4), window(2, 5...6)], build: 1).isEmpty)
        // Two failures at once: both; a third after them: not.
        #expect(ErrorWindows.mayHaveMixed([window(3, 1...4), window(5, 2...3), window(7, 5...6)], build: 1) == [3, 5])
        // A built file that left a message, during a failure: the failure.
        #expect(ErrorWindows.mayHaveMixed([window(nil, 1...10), window(4, 5...6), window(9, 11...12)], build: 1) == [4])
        // A long window that covers a later one several starts away.
        #expect(
            ErrorWindows.mayHaveMixed([window(1, 1...20), window(2, 3...4), window(3, 5...6), window(4, 30...31)], build: 1) == [1, 2, 3])
        // Another build in the same process counts; its own failures are its business.
        #expect(ErrorWindows.mayHaveMixed([window(8, 1...5, build: 2), window(6, 4...9), window(2, 20...21, build: 2)], build: 1) == [6])
    }
}
