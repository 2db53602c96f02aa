import Foundation

/// Errors of the core layer that stop a whole run (a single bad file never throws: it becomes a
/// `failures` entry).
package enum ThumbframeError: LocalizedError, Equatable, Sendable {
    /// libvips could not start.
    case vipsStart(String)
    /// No decode worker could be started for the build (no thumbframe executable to start).
    case decodeWorkers(String)
    /// The source directory cannot be read.
    case sourceUnreadable(path: String, reason: String)
    /// The output directory or manifest cannot be written.
    case cannotWrite(path: String, reason: String)
    /// A manifest file cannot be opened.
    case manifestUnreadable(path: String, reason: String)
    /// A manifest was read but is not a valid thumbframe manifest.
    case invalidManifest(path: String, reason: String)
    /// Conflicting or impossible options.
    case invalidOptions(String)
    /// Another build holds the lock on the output directory.
    case locked(path: String, holder: String)
    /// SOURCE_DIR and OUT_DIR overlap in a way that would index thumbnails or delete originals.
    case overlappingDirectories(String)
    /// The build would drop more than half of the previous manifest's items (an unmounted
    /// source, say); `--allow-shrink` accepts it.
    case wouldShrink(previous: Int, dropped: Int)
    /// SIGINT, SIGTERM or SIGHUP arrived; the run stopped before writing a manifest.
    case interrupted(signal: Int32)
    /// `merge` found fewer shards than it was told of.
    case shardsMissing(String)
    /// `merge` found shards of other versions, settings or states of the source.
    case shardsDisagree(String)

    /// The one-line sentence shown to the user.
    package var errorDescription: String? {
        switch self {
        case .vipsStart(let why): "cannot start libvips: \(why)"
        case .decodeWorkers(let why): "cannot start decode workers: \(why)"
        case .sourceUnreadable(let path, let why): "cannot read source directory \(path): \(why)"
        case .cannotWrite(let path, let why): "cannot write \(path): \(why)"
        case .manifestUnreadable(let path, let why): "cannot read \(path): \(why)"
        case .invalidManifest(let path, let why): "\(path): \(why)"
        case .invalidOptions(let why): why
        case .locked(let path, let holder):
            "another build (\(holder)) is writing \(path); try again when it has finished"
        case .overlappingDirectories(let why): why
        case .shardsMissing(let why), .shardsDisagree(let why): why
        case .wouldShrink(let previous, let dropped):
            "this build would drop \(dropped) of the previous manifest's \(previous) items (is the source mounted?); "
                + "nothing was changed; give --allow-shrink if that is meant"
        case .interrupted(let signal):
            "stopped by signal \(signal); the previous manifest is unchanged"
        }
    }
}
