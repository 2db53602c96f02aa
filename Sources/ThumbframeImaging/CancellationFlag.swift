internal import CThumbframeShim
import Foundation

/// Set from a signal handler to stop a build: no new file starts, and decodes in flight are
/// killed within a tile (libvips' eval callback reads `pointer`).
package final class CancellationFlag: @unchecked Sendable {
    // @unchecked: `signalNumber` is only touched while `lock` is held; `pointer` is written
    // and read with atomic operations only (tf_flag_set/tf_flag_get), and freed in deinit,
    // when no build holds the flag any more.
    private let lock = NSLock()
    private var signalNumber: Int32?
    /// Non-zero once cancelled; read by the C decode guard.
    let pointer: UnsafeMutablePointer<Int32>

    /// Creates a flag that is not set.
    package init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: 0)
    }

    deinit {
        pointer.deallocate()
    }

    /// Asks the build to stop: no new file starts, and decodes in flight are killed.
    package func cancel(signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if signalNumber == nil { signalNumber = signal }
        tf_flag_set(pointer, 1)
    }

    /// The signal that cancelled the build, if any.
    package var signal: Int32? {
        lock.lock()
        defer { lock.unlock() }
        return signalNumber
    }
}
