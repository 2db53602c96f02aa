import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A kind of file an item has beside its facts: a thumbnail, a deep-zoom pyramid, a video's
/// rendition, its scrub preview, a Motion Photo's MP4. Each kind is one type, in a file of its
/// own, with four parts: its content address (a `path` from the source's SHA-256 and what shapes
/// its bytes), the reuse check (one already at that address is taken, in the worker), the
/// worker's half (`make`: the bytes, into the worker's scratch folder), and the build's half
/// (`take`, below). The build knows the kinds only through `ScratchOutputs.kinds`: a new kind is
/// one conforming type listed there, and its test.
protocol ItemOutput: Sendable {
    /// The build's half: names this kind's files of `item` from the source's SHA-256 and the
    /// item's facts (never a path the worker gave), takes each through `outputs` (copied from
    /// the worker's scratch folder, or found in OUT_DIR), and records the sizes and hashes this
    /// process read. Anything of this kind the build does not make is a breach.
    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem)
}

/// Why an item's file of one kind could not be made or put in place (in the worker).
struct OutputFailure: Error {
    var stage: FailureStage = .write
    var reason: String
    var cause: FailureCause?
    /// OUT_DIR could not take it: the run's failure, not the file's (`ItemProcessor.Timed`).
    var outputUnwritable: String?

    /// A write into OUT_DIR (or the worker's scratch) that failed with `error`.
    static func cannotWrite(_ what: String, _ path: String, _ error: FileSystemError) -> OutputFailure {
        let reason = "cannot write \(what) \(path): \(error.localizedDescription)"
        return OutputFailure(reason: reason, outputUnwritable: error.isOutputUnwritable ? reason : nil)
    }
}

/// Content addresses and the reuse check every kind shares.
enum ContentAddress {
    /// `thumbs/XX/<hash>.<extension>`, the hash of a kind (`version`), the source's bytes, what
    /// shapes the pixels (`recipe`), the profile's use and the format's pixels revision.
    static func path(
        _ version: String, _ sourceSHA256: String, _ recipe: String, profile: Manifest.ImageInfo.ProfileUse? = nil,
        revision: String? = nil, extension: String
    ) -> String {
        let used = profile.flatMap { $0 == .ignored ? nil : "\nprofile \($0.rawValue)" } ?? ""
        let revision = revision.map { "\nrevision \($0)" } ?? ""
        let key = Digest.sha256("\(version)\n\(sourceSHA256)\n\(recipe)\(used)\(revision)")
        return OutputName.path(area: "thumbs", hash: key, extension: `extension`)
    }

    /// A file already at its content address: taken when it still has the size the state index
    /// recorded, or (written by a run killed before it recorded it) when it can be read now; its
    /// hash is taken from its bytes, a block at a time (a rendition is as long as its video).
    /// Anything else (nil, or `--force`) is made again.
    static func existing(_ path: String, context: ProcessingContext) -> (bytes: Int, sha256: String)? {
        guard !context.overwrite, let file = context.output.open(file: path), let stat = file.stat(), stat.isRegularFile, stat.size > 0
        else { return nil }
        if let bytes = context.recorded[path], bytes != stat.size { return nil }
        return Digest.sha256(fd: file.fd, size: stat.size).map { (stat.size, $0) }
    }
}
