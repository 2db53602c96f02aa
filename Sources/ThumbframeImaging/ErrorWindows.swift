import Foundation

/// libvips work that left a message in libvips' process-wide error buffer — every failure in
/// libvips, and every built file that left one (an operation that recovered) — from every build
/// running in this process, on `ErrorWindows.clock`. A failure's message is its own unless
/// another such window overlapped it; those failures are decoded once more, alone.
///
/// One per process, as the buffer is: `thumbframe build` runs one build, but the `Builder` API
/// may run several at once (the tests do). Tracking one build's windows only and running the
/// tests' in-process libvips work one at a time instead was measured: the suite took 136-141 s
/// against 108-112 s, for about 20 lines less here.
package final class ErrorWindows: @unchecked Sendable {
    // @unchecked: every field is read and written with `lock` held.
    /// The buffer is one per process, and so are its windows.
    package static let shared = ErrorWindows()

    package struct Window {
        var build: Int
        /// The failure's position in its build's work list; nil for a built file that left a message.
        var position: Int?
        var window: ClosedRange<UInt64>

        package init(build: Int, position: Int?, window: ClosedRange<UInt64>) {
            self.build = build
            self.position = position
            self.window = window
        }
    }

    private let lock = NSLock()
    private var windows: [Window] = []
    /// Running builds and the clock when each began.
    private var running: [Int: UInt64] = [:]
    private var lastBuild = 0

    /// Registers a build; returns its number.
    package func begin() -> Int {
        lock.lock()
        defer { lock.unlock() }
        lastBuild += 1
        running[lastBuild] = Self.clock()
        return lastBuild
    }

    package func record(build: Int, position: Int?, window: ClosedRange<UInt64>) {
        lock.lock()
        defer { lock.unlock() }
        windows.append(Window(build: build, position: position, window: window))
    }

    /// The build's failures (positions, in order) that another window overlapped; forgets the
    /// build, and the windows no running build can overlap any more.
    package func finish(build: Int) -> [Int] {
        lock.lock()
        defer { lock.unlock() }
        let mixed = Self.mayHaveMixed(windows, build: build)
        running[build] = nil
        let oldest = running.values.min() ?? UInt64.max
        windows.removeAll { $0.build == build || $0.window.upperBound < oldest }
        return mixed
    }

    /// A process-wide counter: each call returns a larger value, so the calls of all threads are
    /// ordered (a window of libvips work is the pair of values around it).
    package static func clock() -> UInt64 {
        ticks.lock()
        defer { ticks.unlock() }
        tick += 1
        return tick
    }

    private static let ticks = NSLock()
    nonisolated(unsafe) private static var tick: UInt64 = 0

    /// The positions of `build`'s failures that overlap any other window: sorted by start, a
    /// window overlaps an earlier one when it starts before the furthest end so far, and a later
    /// one when the next start comes before its end.
    package static func mayHaveMixed(_ windows: [Window], build: Int) -> [Int] {
        let sorted = windows.sorted { $0.window.lowerBound < $1.window.lowerBound }
        var mixed: [Int] = []
        var reach: UInt64 = 0
        for (offset, entry) in sorted.enumerated() {
            let overlapsEarlier = offset > 0 && entry.window.lowerBound < reach
            let overlapsLater = offset + 1 < sorted.count && sorted[offset + 1].window.lowerBound < entry.window.upperBound
            if entry.build == build, let position = entry.position, overlapsEarlier || overlapsLater { mixed.append(position) }
            reach = max(reach, entry.window.upperBound)
        }
        return mixed.sorted()
    }
}
