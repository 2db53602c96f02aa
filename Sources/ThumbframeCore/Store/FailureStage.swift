package import ThumbframeManifest

/// Where a file failed, as written in `failures[].stage`.
enum FailureStage: String {
    case read, probe, decode, encode, write

    /// Whether an unchanged file that failed at this stage is tried again by the next build. A
    /// file libvips cannot probe or decode stays broken until it changes; reading, encoding or
    /// writing can fail for a moment (a permission, memory, a full disk) and is worth another try.
    var isRetried: Bool {
        switch self {
        case .probe, .decode: false
        case .read, .encode, .write: true
        }
    }
}

/// Why a file's decode was stopped from outside the decoder, as the build and `inspect` count
/// failures apart: `crash` (its worker died: a signal, a trap, an abort), `memory` (its worker hit
/// the memory cap the kernel enforces, or `--max-decode-bytes` refused it from its header),
/// `time` (`--decode-timeout`, kept by the worker or its kill). nil for every other failure (the
/// file itself is unreadable, damaged or refused).
package enum FailureCause: String, CaseIterable, Sendable {
    case crash, memory, time

    package init?(reason: String) {
        if reason.hasPrefix("decoder crashed") || reason.hasPrefix("decoder exited") {
            self = .crash
        } else if reason.hasPrefix("over the memory limit") || reason.contains("over --max-decode-bytes") {
            self = .memory
        } else if reason.hasPrefix("timed out after") || reason.contains("(--decode-timeout)") {
            self = .time
        } else {
            return nil
        }
    }

    /// Failures by cause, those of none left out.
    package static func counts(_ failures: [Manifest.Failure]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for failure in failures { if let cause = FailureCause(reason: failure.reason) { counts[cause.rawValue, default: 0] += 1 } }
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
