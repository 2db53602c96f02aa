/// What stopped a file's decode from outside the file, as the build records it in
/// `failures[].cause` and the build and `inspect` count failures apart: `crash` (its worker
/// died: a signal, a trap, an abort), `memory` (its worker hit the memory cap the kernel enforces,
/// or `--max-decode-bytes` refused it from its header), `time` (`--decode-timeout` or
/// `--video-timeout`, kept by the worker or its kill). A failure without one is the file's own
/// (unreadable, damaged or refused). Set where the failure is made, never read from its words.
package enum FailureCause: String, CaseIterable, Sendable, Codable {
    case crash, memory, time

    /// Failures by cause, those of none left out.
    package static func counts(_ failures: [Manifest.Failure]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for failure in failures {
            if let cause = failure.cause.flatMap(FailureCause.init(rawValue:)) { counts[cause.rawValue, default: 0] += 1 }
        }
        return counts
    }

    /// ` (crash 1, time 2)`, nothing when no failure has a cause; with `new` failures first:
    /// ` (1 new; crash 1)`, ` (1 new)`.
    package static func text(_ counts: [String: Int], new: Int = 0) -> String {
        let parts = allCases.compactMap { cause in counts[cause.rawValue].map { "\(cause.rawValue) \($0)" } }
        let groups = (new > 0 ? ["\(new) new"] : []) + (parts.isEmpty ? [] : [parts.joined(separator: ", ")])
        return groups.isEmpty ? "" : " (" + groups.joined(separator: "; ") + ")"
    }
}
