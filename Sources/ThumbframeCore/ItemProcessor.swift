import CThumbframeShim
import CVips
import Foundation
import ThumbframeManifest

/// What the per-file work needs to know; shared read-only by every worker.
struct ProcessingContext: Sendable {
    var recipes: [ThumbnailRecipe]
    /// The output directory (absolute); thumbnail paths are relative to it.
    var outputDirectory: String
    var maxPixels: Int
    /// Rewrite thumbnails even when their content-addressed file exists (`--force`).
    var overwrite = false

    /// A progressive JPEG is decoded through a buffer of all its DCT coefficients: about 6 bytes
    /// per pixel at 4:4:4, whatever the shrink. Above this many pixels it would need more than
    /// 1 GiB, so it fails from its header instead.
    static let progressiveJPEGMaxPixels = (1 << 30) / 6

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
    case failed(Manifest.Failure)
}

/// Where a file failed, as written in `failures[].stage`.
enum FailureStage: String {
    case read, probe, decode, encode, write
}

/// The synchronous work for one file: read once, hash, probe the header, read EXIF, decode once
/// at the scale of the largest thumbnail, derive and write every thumbnail. Owns its libvips
/// handles from start to end; any problem becomes a failure for this file alone.
enum ItemProcessor {
    /// Processes one file. With `previous` (`--verify`), the file is only re-hashed, and the
    /// previous entry is reused when the bytes are the same.
    static func process(_ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil) -> FileOutcome {
        defer { Vips.threadDone() }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(source.absolutePath)
        } catch {
            return .failed(failure(source, .read, error.localizedDescription))
        }
        guard !bytes.isEmpty else { return .failed(failure(source, .read, "empty file")) }
        return bytes.withUnsafeBytes { raw in
            let sha256 = Digest.sha256(raw)
            if let previous, previous.file.sha256 == sha256 {
                return .item(ProcessedItem(reusing: previous, source: source))
            }
            switch build(source, raw, sha256: sha256, context: context) {
            case .success(let item): return .item(item)
            case .failure(let problem): return .failed(failure(source, problem.stage, problem.reason))
            }
        }
    }

    private struct Problem: Error {
        var stage: FailureStage
        var reason: String
    }

    private static func failure(_ source: SourceFile, _ stage: FailureStage, _ reason: String) -> Manifest.Failure {
        let line = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Manifest.Failure(
            path: source.relativePath, stage: stage.rawValue, reason: String(line.prefix(300)),
            bytes: source.stat.size, modified: source.stat.modifiedRFC3339)
    }

    /// Truncated and corrupt data fail the file instead of giving a half-grey thumbnail.
    private static let failOn = Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)

    private static func build(
        _ source: SourceFile, _ raw: UnsafeRawBufferPointer, sha256: String, context: ProcessingContext
    ) -> Result<ProcessedItem, Problem> {
        guard let opened = tf_image_new_from_buffer(raw.baseAddress, raw.count, failOn) else {
            return .failure(Problem(stage: .probe, reason: "not a readable image: \(Vips.takeError())"))
        }
        let header = ImageHeader(VipsImageHandle(opened), fileBytes: raw)
        let pixels = header.storedWidth.multipliedReportingOverflow(by: header.storedHeight)
        if pixels.overflow || pixels.partialValue > context.maxPixels {
            return .failure(Problem(
                stage: .probe,
                reason: "\(header.storedWidth)×\(header.storedHeight) pixels is over --max-pixels \(context.maxPixels)"))
        }
        if header.format == "jpeg", header.interlaced, pixels.partialValue > ProcessingContext.progressiveJPEGMaxPixels {
            return .failure(Problem(
                stage: .probe,
                reason: "progressive JPEG of \(header.storedWidth)×\(header.storedHeight) pixels would need over 1 GiB to decode "
                    + "(limit \(ProcessingContext.progressiveJPEGMaxPixels) pixels)"))
        }

        let plan = ThumbnailPlan(width: header.displayWidth, height: header.displayHeight, recipes: context.recipes)
        var thumbnails: [String: Manifest.Thumbnail] = [:]
        var missing: [(ThumbnailPlan.Output, String)] = []
        for output in plan.outputs {
            let path = context.thumbnailPath(sourceSHA256: sha256, recipe: output.recipe)
            thumbnails[output.recipe.name] = Manifest.Thumbnail(
                path: path, width: output.width, height: output.height, crop: output.crop)
            if context.overwrite || FileStat.lstat(context.outputDirectory + "/" + path)?.isRegularFile != true {
                missing.append((output, path))
            }
        }
        if !missing.isEmpty {
            if let problem = writeThumbnails(missing, plan: plan, header: header, raw: raw, context: context) {
                return .failure(problem)
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

    /// Decodes once, into the largest size any thumbnail needs (shrink-on-load does most of the
    /// work inside the decoder), then derives each missing thumbnail from that copy in memory.
    private static func writeThumbnails(
        _ missing: [(ThumbnailPlan.Output, String)], plan: ThumbnailPlan, header: ImageHeader,
        raw: UnsafeRawBufferPointer, context: ProcessingContext
    ) -> Problem? {
        var lazy: UnsafeMutablePointer<VipsImage>?
        if header.format == "jpeg" {
            // libvips' thumbnail keeps a factor of two in reserve when it picks the JPEG
            // shrink-on-load; the smallest scale that still covers the decode box decodes up to
            // 4× fewer pixels, and the resize after it is still a proper Lanczos reduction.
            let shrink = plan.jpegShrink(storedWidth: header.storedWidth, storedHeight: header.storedHeight,
                                         quarterTurn: header.orientation >= 5)
            var loaded: UnsafeMutablePointer<VipsImage>?
            guard tf_jpeg_load_shrunk(raw.baseAddress, raw.count, &loaded, Int32(shrink), failOn) == 0, let loaded else {
                return Problem(stage: .decode, reason: Vips.takeError())
            }
            let loadedHandle = VipsImageHandle(loaded)
            guard tf_thumbnail_image_upright(loadedHandle.pointer, &lazy, Int32(plan.decodeWidth), Int32(plan.decodeHeight)) == 0
            else { return Problem(stage: .decode, reason: Vips.takeError()) }
        } else {
            guard tf_thumbnail_buffer(raw.baseAddress, raw.count, &lazy, Int32(plan.decodeWidth),
                    Int32(plan.decodeHeight), failOn) == 0
            else { return Problem(stage: .decode, reason: Vips.takeError()) }
        }
        guard let lazy else { return Problem(stage: .decode, reason: Vips.takeError()) }
        let lazyHandle = VipsImageHandle(lazy)
        // Materialize: every thumbnail below reads these pixels, and the source is decoded once.
        guard let decoded = vips_image_copy_memory(lazyHandle.pointer) else {
            return Problem(stage: .decode, reason: Vips.takeError())
        }
        let intermediate = VipsImageHandle(decoded)

        for (output, path) in missing {
            let encoded: [UInt8]
            switch encode(intermediate, output) {
            case .success(let bytes): encoded = bytes
            case .failure(let problem): return problem
            }
            let target = context.outputDirectory + "/" + path
            do {
                try FileSystem.makeDirectories((target as NSString).deletingLastPathComponent)
                try FileSystem.writeAtomically(encoded, to: target, durable: false)
            } catch {
                return Problem(stage: .write, reason: "cannot write thumbnail \(path): \(error.localizedDescription)")
            }
        }
        return nil
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
            else { return .failure(Problem(stage: .encode, reason: Vips.takeError())) }
            current = VipsImageHandle(resized)
        }
        if output.recipe.format == .jpeg, current.hasAlpha {
            var flat: UnsafeMutablePointer<VipsImage>?
            guard tf_flatten_white(current.pointer, &flat) == 0, let flat else {
                return .failure(Problem(stage: .encode, reason: Vips.takeError()))
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
        else { return .failure(Problem(stage: .encode, reason: Vips.takeError())) }
        defer { g_free(buffer) }
        return .success(Array(UnsafeRawBufferPointer(start: buffer, count: length)))
    }
}
