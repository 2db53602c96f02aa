import CThumbframeShim
import CVips
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

    /// Content-addressed location of a thumbnail: it changes when the source bytes or the
    /// recipe change, never otherwise, so renamed and copied files share their thumbnails.
    func thumbnailPath(sourceSHA256: String, recipe: ThumbnailRecipe) -> String {
        let key = Digest.sha256("thumbframe-thumbnail-v1\n\(sourceSHA256)\n\(recipe.canonicalRecipe)")
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
    /// Thumbnails encoded by this run (the others already existed under their content address).
    var thumbnailsWritten: Int
}

extension ProcessedItem {
    /// A previous manifest's entry for an unchanged file, taken without opening it.
    init(reusing previous: Manifest.Item, source: SourceFile) {
        self.init(
            source: source, file: previous.file, image: previous.image, exif: previous.exif,
            thumbnails: previous.thumbnails, thumbnailsWritten: 0)
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
}

/// The synchronous work for one file: read once, hash, probe the header, read EXIF, decode once
/// at the scale of the largest thumbnail, derive and write every thumbnail. Owns its libvips
/// handles from start to end; any problem becomes a failure for this file alone.
enum ItemProcessor {
    /// Processes one file. With `previous` (`--verify`), the file and its thumbnails are only
    /// re-hashed, and the previous entry is reused when all of them are the same bytes.
    static func process(_ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil) -> FileOutcome {
        defer { Vips.threadDone() }
        let bytes: [UInt8]
        do {
            bytes = try context.source.read(source, limit: context.limits.maxFileBytes)
        } catch {
            return .failed(failure(source, .read, error.localizedDescription))
        }
        guard !bytes.isEmpty else { return .failed(failure(source, .read, "empty file")) }
        return bytes.withUnsafeBytes { raw in
            let sha256 = Digest.sha256(raw)
            var context = context
            if let previous, previous.file.sha256 == sha256 {
                let intact = previous.thumbnails.values.allSatisfy { thumbnail in
                    guard let sha256 = thumbnail.sha256, let bytes = context.output.read(thumbnail: thumbnail.path) else {
                        return false
                    }
                    return bytes.withUnsafeBytes(Digest.sha256) == sha256
                }
                if intact { return .item(ProcessedItem(reusing: previous, source: source)) }
                // A thumbnail was replaced behind thumbframe's back: write them all again.
                context.overwrite = true
            }
            switch build(source, raw, sha256: sha256, context: context) {
            case .success(let item): return .item(item)
            case .failure(let problem):
                return .failed(failure(source, problem.stage, problem.reason), fromVips: problem.fromVips)
            }
        }
    }

    private struct Problem: Error {
        var stage: FailureStage
        var reason: String
        /// The reason is libvips' (shared) error buffer.
        var fromVips = false

        static func vips(_ stage: FailureStage, _ prefix: String = "") -> Problem {
            Problem(stage: stage, reason: prefix + Vips.takeError(), fromVips: true)
        }
    }

    private static func failure(_ source: SourceFile, _ stage: FailureStage, _ reason: String) -> Manifest.Failure {
        let line = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Manifest.Failure(
            path: source.relativePath, rawPath: source.manifestRawPath, stage: stage.rawValue,
            reason: String(line.prefix(300)), bytes: source.stat.size, modified: source.stat.modifiedRFC3339)
    }

    /// Truncated and corrupt data fail the file instead of giving a half-grey thumbnail.
    private static let failOn = Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)

    private static func build(
        _ source: SourceFile, _ raw: UnsafeRawBufferPointer, sha256: String, context: ProcessingContext
    ) -> Result<ProcessedItem, Problem> {
        guard let opened = tf_image_new_from_buffer(raw.baseAddress, raw.count, failOn) else {
            return .failure(.vips(.probe, "not a readable image: "))
        }
        let handle = VipsImageHandle(opened)
        let header = ImageHeader(handle, fileBytes: raw)
        if let refusal = context.limits.refusal(header, bands: handle.bands, bytesPerBand: handle.bytesPerBand, file: raw) {
            return .failure(Problem(stage: .probe, reason: refusal))
        }

        let plan = ThumbnailPlan(width: header.displayWidth, height: header.displayHeight, recipes: context.recipes)
        var thumbnails: [String: Manifest.Thumbnail] = [:]
        var missing: [(ThumbnailPlan.Output, String)] = []
        for output in plan.outputs {
            let path = context.thumbnailPath(sourceSHA256: sha256, recipe: output.recipe)
            let entry = Manifest.Thumbnail(path: path, width: output.width, height: output.height, crop: output.crop)
            if !context.overwrite, let existing = existingThumbnail(path, context: context) {
                thumbnails[output.recipe.name] = Manifest.Thumbnail(
                    path: path, width: output.width, height: output.height, crop: output.crop,
                    bytes: existing.bytes, sha256: existing.sha256)
            } else {
                thumbnails[output.recipe.name] = entry
                missing.append((output, path))
            }
        }
        if !missing.isEmpty {
            switch writeThumbnails(missing, plan: plan, header: header, raw: raw, context: context) {
            case .failure(let problem): return .failure(problem)
            case .success(let written):
                for output in plan.outputs {
                    guard let (bytes, sha256) = written[output.recipe.name] else { continue }
                    thumbnails[output.recipe.name]?.bytes = bytes
                    thumbnails[output.recipe.name]?.sha256 = sha256
                }
            }
        }
        return .success(ProcessedItem(
            source: source,
            file: Manifest.FileInfo(bytes: raw.count, modified: source.stat.modifiedRFC3339, sha256: sha256),
            image: header.imageInfo,
            exif: header.exif.isEmpty ? nil : header.exif,
            thumbnails: thumbnails,
            thumbnailsWritten: missing.count))
    }

    /// A thumbnail already at its content address: taken when it still has the size the state
    /// index recorded, or (written by a run killed before it recorded it) when it can be read
    /// now; its hash is taken from its bytes. Anything else is written again.
    private static func existingThumbnail(_ path: String, context: ProcessingContext) -> (bytes: Int, sha256: String)? {
        guard let stat = context.output.stat(thumbnail: path), stat.isRegularFile, stat.size > 0 else { return nil }
        if let bytes = context.recorded[path], bytes != stat.size { return nil }
        guard let bytes = context.output.read(thumbnail: path), bytes.count == stat.size else { return nil }
        return (bytes.count, bytes.withUnsafeBytes(Digest.sha256))
    }

    /// Decodes once, into the largest size any thumbnail needs (shrink-on-load does most of the
    /// work inside the decoder), then derives each missing thumbnail from that copy in memory.
    /// Returns each written thumbnail's size and hash by recipe name.
    private static func writeThumbnails(
        _ missing: [(ThumbnailPlan.Output, String)], plan: ThumbnailPlan, header: ImageHeader,
        raw: UnsafeRawBufferPointer, context: ProcessingContext
    ) -> Result<[String: (Int, String)], Problem> {
        var lazy: UnsafeMutablePointer<VipsImage>?
        if header.format == "jpeg" {
            // libvips' thumbnail keeps a factor of two in reserve when it picks the JPEG
            // shrink-on-load; the smallest scale that still covers the decode box decodes up to
            // 4× fewer pixels, and the resize after it is still a proper Lanczos reduction.
            let shrink = plan.jpegShrink(storedWidth: header.storedWidth, storedHeight: header.storedHeight,
                                         quarterTurn: header.orientation >= 5)
            var loaded: UnsafeMutablePointer<VipsImage>?
            guard tf_jpeg_load_shrunk(raw.baseAddress, raw.count, &loaded, Int32(shrink), failOn) == 0, let loaded else {
                return .failure(.vips(.decode))
            }
            let loadedHandle = VipsImageHandle(loaded)
            guard tf_thumbnail_image_upright(loadedHandle.pointer, &lazy, Int32(plan.decodeWidth), Int32(plan.decodeHeight)) == 0
            else { return .failure(.vips(.decode)) }
        } else {
            guard tf_thumbnail_buffer(raw.baseAddress, raw.count, &lazy, Int32(plan.decodeWidth),
                    Int32(plan.decodeHeight), failOn) == 0
            else { return .failure(.vips(.decode)) }
        }
        guard let lazy else { return .failure(.vips(.decode)) }
        let lazyHandle = VipsImageHandle(lazy)
        // Materialize: every thumbnail below reads these pixels, and the source is decoded once.
        // The decode has a deadline and stops when the build is cancelled.
        var stopped: Int32 = 0
        let decoded = tf_copy_memory_guarded(
            lazyHandle.pointer, context.limits.decodeTimeout, context.cancellation?.pointer, &stopped)
        guard let decoded else {
            if stopped == Int32(TF_STOP_DEADLINE.rawValue) {
                Vips.clearErrors()
                return .failure(Problem(
                    stage: .decode,
                    reason: "decoding took longer than \(ResourceLimits.seconds(context.limits.decodeTimeout)) (--decode-timeout)"))
            }
            if stopped == Int32(TF_STOP_REQUESTED.rawValue) {
                Vips.clearErrors()
                return .failure(Problem(stage: .decode, reason: "stopped by a signal"))
            }
            return .failure(.vips(.decode))
        }
        let intermediate = VipsImageHandle(decoded)

        var written: [String: (Int, String)] = [:]
        for (output, path) in missing {
            let encoded: [UInt8]
            switch encode(intermediate, output) {
            case .success(let bytes): encoded = bytes
            case .failure(let problem): return .failure(problem)
            }
            do {
                try context.output.write(thumbnail: path, encoded)
            } catch {
                return .failure(Problem(stage: .write, reason: "cannot write thumbnail \(path): \(error.localizedDescription)"))
            }
            written[output.recipe.name] = (encoded.count, encoded.withUnsafeBytes(Digest.sha256))
        }
        return .success(written)
    }
    /// Resizes the decoded image to exactly the planned size (a cover recipe crops the centre),
    /// flattens alpha for JPEG, and encodes without metadata: the pixels are already upright, so
    /// no viewer can rotate them twice.
    private static func encode(_ decoded: VipsImageHandle, _ output: ThumbnailPlan.Output) -> Result<[UInt8], Problem> {
        var current = decoded
        if decoded.width != output.width || decoded.height != output.height {
            var resized: UnsafeMutablePointer<VipsImage>?
            let crop: Int32 = output.recipe.fit == .cover ? 1 : 0
            guard tf_thumbnail_image(decoded.pointer, &resized, Int32(output.width), Int32(output.height), crop) == 0,
                let resized
            else { return .failure(.vips(.encode)) }
            current = VipsImageHandle(resized)
        }
        if output.recipe.format == .jpeg, current.hasAlpha {
            var flat: UnsafeMutablePointer<VipsImage>?
            guard tf_flatten_white(current.pointer, &flat) == 0, let flat else {
                return .failure(.vips(.encode))
            }
            current = VipsImageHandle(flat)
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let format: TFFormat =
            switch output.recipe.format {
            case .jpeg: TF_FORMAT_JPEG
            case .webp: TF_FORMAT_WEBP
            case .avif: TF_FORMAT_AVIF
            }
        guard tf_save_buffer(current.pointer, format, Int32(output.recipe.quality), 0, &buffer, &length) == 0,
            let buffer
        else { return .failure(.vips(.encode)) }
        defer { g_free(buffer) }
        return .success(Array(UnsafeRawBufferPointer(start: buffer, count: length)))
    }
}
