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

    @Test("every index runs once, never more than jobs at a time, on threads of the pool", arguments: [1, 3])
    func runsEveryIndexOnce(jobs: Int) async {
        let gauge = Gauge()
        let results = WorkerPool.run(
            count: 40, jobs: jobs, stop: { false },
            work: { index in
                gauge.enter()
                defer { gauge.leave() }
                usleep(2000)
                return (index, Thread.isMainThread)
            })
        var seen: [Int] = []
        for await (index, output) in results {
            #expect(output.0 == index && !output.1)
            seen.append(index)
        }
        #expect(seen.sorted() == Array(0..<40))
        #expect(gauge.most <= jobs && gauge.most >= 1)
        let none = WorkerPool.run(count: 0, jobs: 2, stop: { false }, work: { $0 })
        for await _ in none { Issue.record("no work, no result") }
    }

    @Test("a stop takes effect before the next index; results wait for a slow caller, at most jobs × 4 of them")
    func stopsAndWaits() async {
        let stopped = Gauge()  // `most` > 0 once stopped
        let started = Gauge()
        let results = WorkerPool.run(
            count: 1000, jobs: 2, stop: { stopped.most > 0 },
            work: { index in
                started.enter()
                return index
            })
        var taken = 0
        for await _ in results {
            taken += 1
            if taken == 1 {
                // The caller is slow: the pool fills the room for results and waits.
                try? await Task.sleep(for: .milliseconds(100))
                #expect(started.most <= 2 * 4 + 1, "\(started.most) files started while 1 result was taken")
            }
            if taken == 20 { stopped.enter() }
        }
        #expect(taken >= 20 && taken <= 20 + 2 * 4 + 2, "\(taken) results after the stop")
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
