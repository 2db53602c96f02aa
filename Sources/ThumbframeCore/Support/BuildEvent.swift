package import ThumbframeManifest

/// What a build reports while it runs, for people (text) or machines (JSON lines).
package enum BuildEvent: Sendable, Equatable, CustomStringConvertible {
    /// A `failures` entry of the manifest being written (all of them, after the files are done);
    /// `new` when the previous run did not have it (what `--fail-on new` exits 1 for).
    case failure(Manifest.Failure, new: Bool)
    /// Something worth saying that is not a file's failure.
    case warning(String)
    /// Files finished out of those that needed opening (reused items are not counted).
    case progress(done: Int, total: Int)

    /// The line a person reads.
    package var description: String {
        switch self {
        case .failure(let failure, let new): (new ? "new failure: " : "") + "\(failure.path): \(failure.stage): \(failure.reason)"
        case .warning(let message): message
        case .progress(let done, let total): "\(done)/\(total) files"
        }
    }
}

/// Which of a run's failures the previous run did not have.
package struct NewFailures: Sendable {
    /// Failed files' paths as the manifest gives them (`rawPath`, else `path`).
    var paths: Set<String> = []
    /// The walk's failures (unreadable folders, refused links) differ from the published ones.
    var walk = false

    static func key(_ failure: Manifest.Failure) -> String { failure.rawPath ?? failure.path }
}
