import Foundation
import ThumbframeManifest

/// What the per-file work needs to know; shared read-only by every worker.
struct ProcessingContext: Sendable {
    var recipes: [ThumbnailRecipe]
    /// The source directory, open: files are read relative to it, never through a link.
    var source: SourceRoot
    /// OUT_DIR, open: thumbnails are written relative to it, never through a link.
    var output: OutputDirectory
    var limits: ResourceLimits
    /// Rewrite thumbnails even when their content-addressed file exists (`--force`).
    var overwrite = false
    /// Byte sizes of thumbnail files the state index recorded, by path: an existing file is
    /// reused only when it still has the recorded size.
    var recorded: [String: Int] = [:]
    /// Set by SIGINT/SIGTERM: decodes in flight are killed.
    var cancellation: CancellationFlag?

    /// Content-addressed location of a thumbnail: it changes when the source bytes, the recipe
    /// or the pixel pipeline's version change, never otherwise, so renamed and copied files
    /// share their thumbnails.
    func thumbnailPath(sourceSHA256: String, recipe: ThumbnailRecipe) -> String {
        // v2: pixels from 0.3.0 on (sRGB from the ICC profile, Lanczos3 after a 2× shrink-on-load
        // margin). A new key makes an upgraded build write them instead of keeping v1's files
        // under the same names; the pruner then removes v1's, which the ledger records.
        let key = Digest.sha256("thumbframe-thumbnail-v2\n\(sourceSHA256)\n\(recipe.canonicalRecipe)")
        let name = String(key.prefix(32))
        return "thumbs/\(name.prefix(2))/\(name).\(recipe.format.fileExtension)"
    }
}

/// One processed image, before it is given its place in the manifest.
struct ProcessedItem: Sendable, Equatable {
    var source: SourceFile
    var file: Manifest.FileInfo
    var image: Manifest.ImageInfo
    var exif: Manifest.ExifInfo?
    var thumbnails: [String: Manifest.Thumbnail]
    var placeholder: Manifest.Placeholder?
    /// Thumbnails encoded by this run (the others already existed under their content address).
    var thumbnailsWritten: Int
}

extension ProcessedItem {
    /// A previous manifest's entry for an unchanged file, taken without opening it.
    init(reusing previous: Manifest.Item, source: SourceFile) {
        self.init(
            source: source, file: previous.file, image: previous.image, exif: previous.exif,
            thumbnails: previous.thumbnails, placeholder: previous.placeholder, thumbnailsWritten: 0)
    }
}

/// What became of one file: an item, or a failure entry. (Not a `Result`: a failure is an
/// ordinary outcome of a batch, not a thrown error.)
enum FileOutcome: Sendable, Equatable {
    case item(ProcessedItem)
    /// `fromVips`: the reason is libvips' error buffer, which parallel decodes can mix.
    case failed(Manifest.Failure, fromVips: Bool = false)
}

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

/// The synchronous work for one file: read once, hash, probe the header, read EXIF, decode once
/// at the scale of the largest thumbnail, derive and write every thumbnail. Owns its libvips
/// handles from start to end; any problem becomes a failure for this file alone.
enum ItemProcessor {
    /// Processes one file. With `previous` (`--verify`), the file and its thumbnails are only
    /// re-hashed, and the previous entry is reused when all of them are the same bytes.
    static func process(_ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil) -> FileOutcome {
        timed(source, context: context, previous: previous).outcome
    }

    /// A file's outcome, and when its libvips work ran (on `Vips.clock`): libvips keeps one error
    /// buffer for the whole process, so a failure's message is its own only if no other libvips
    /// work that left a message there ran at the same time (see `VipsActivity`).
    struct Timed: Sendable {
        var outcome: FileOutcome
        /// From just before the image was opened to just after its outcome was known; nil when
        /// libvips never saw the file (a read failure, an unchanged file under `--verify`).
        var window: ClosedRange<UInt64>?
        /// The file was built, yet libvips had left a message in the buffer (an operation that
        /// recovered, or another file's failure in flight); the buffer was emptied.
        var leftMessage = false
        /// OUT_DIR itself could not take the thumbnail (full disk, quota, read-only, I/O error):
        /// not this file's failure but the run's, which stops and keeps what it recorded.
        var outputUnwritable: String?
    }

    /// `--verify`'s test of an entry whose source bytes are unchanged, for the build and for
    /// `--check`: every thumbnail still holds the bytes the entry recorded.
    static func thumbnailsIntact(_ item: Manifest.Item, output: OutputDirectory) -> Bool {
        item.thumbnails.values.allSatisfy { thumbnail in
            guard let sha256 = thumbnail.sha256, let bytes = output.read(thumbnail: thumbnail.path) else { return false }
            return bytes.withUnsafeBytes(Digest.sha256) == sha256
        }
    }

    /// `known`: the placeholder recorded for a touched file, used when the bytes hash the same
    /// and its thumbnails exist (then the file is probed, not decoded).
    static func timed(
        _ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil,
        known: ReusePlan.KnownPlaceholder? = nil
    ) -> Timed {
        defer { Vips.threadDone() }
        let bytes: [UInt8]
        do {
            bytes = try context.source.read(source, limit: context.limits.maxFileBytes)
        } catch {
            return Timed(outcome: .failed(failure(source, .read, error.localizedDescription)))
        }
        guard !bytes.isEmpty else { return Timed(outcome: .failed(failure(source, .read, "empty file"))) }
        return bytes.withUnsafeBytes { raw in
            let sha256 = Digest.sha256(raw)
            var context = context
            if let previous, previous.file.sha256 == sha256 {
                if thumbnailsIntact(previous, output: context.output) {
                    return Timed(outcome: .item(ProcessedItem(reusing: previous, source: source)))
                }
                // A thumbnail was replaced behind thumbframe's back: write them all again.
                context.overwrite = true
            }
            let opened = Vips.clock()
            let placeholder = known.flatMap { $0.sha256 == sha256 ? $0.placeholder : nil }
            func built(_ decodable: UnsafeRawBufferPointer) -> Result<ProcessedItem, Problem> {
                build(source, decodable, sha256: sha256, size: raw.count, context: context, placeholder: placeholder)
            }
            // The decoder gets a PNG without its text chunks; the hash and size stay the file's.
            let bounded = MetadataBounds.pngWithoutText(raw)
            switch bounded.map({ $0.withUnsafeBytes(built) }) ?? built(raw) {
            case .success(let item):
                let leftMessage = Vips.hasErrors()
                if leftMessage { Vips.clearErrors() }
                return Timed(outcome: .item(item), window: opened...Vips.clock(), leftMessage: leftMessage)
            case .failure(let problem):
                return Timed(
                    outcome: .failed(failure(source, problem.stage, problem.reason), fromVips: problem.fromVips),
                    window: opened...Vips.clock(), outputUnwritable: problem.outputUnwritable ? problem.reason : nil)
            }
        }
    }

    struct Problem: Error {
        var stage: FailureStage
        var reason: String
        /// The reason is libvips' (shared) error buffer.
        var fromVips = false
        /// Writing into OUT_DIR failed for a reason of OUT_DIR's, not of this file's.
        var outputUnwritable = false

        static func vips(_ stage: FailureStage, _ prefix: String = "") -> Problem {
            Problem(stage: stage, reason: prefix + Vips.takeError(), fromVips: true)
        }
    }

    static func failure(_ source: SourceFile, _ stage: FailureStage, _ reason: String) -> Manifest.Failure {
        let line = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Manifest.Failure(
            path: source.relativePath, rawPath: source.manifestRawPath, stage: stage.rawValue,
            reason: String(line.prefix(300)), bytes: source.stat.size, modified: source.stat.modifiedRFC3339)
    }
}
