package import ThumbframeManifest

/// What a build reports while it runs, for people (text) or machines (JSON lines).
package enum BuildEvent: Sendable, Equatable, CustomStringConvertible {
    /// A `failures` entry of the manifest being written (all of them, after the files are done).
    case failure(Manifest.Failure)
    /// Something worth saying that is not a file's failure.
    case warning(String)
    /// Files finished out of those that needed opening (reused items are not counted).
    case progress(done: Int, total: Int)

    /// The line a person reads.
    package var description: String {
        switch self {
        case .failure(let failure): "\(failure.path): \(failure.stage): \(failure.reason)"
        case .warning(let message): message
        case .progress(let done, let total): "\(done)/\(total) files"
        }
    }
}
