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
        // One decode serves the missing thumbnails and the placeholder, which every item carries:
        // a file whose thumbnails all exist under their content address is still decoded once.
        let placeholder: Manifest.Placeholder
        switch render(missing, plan: plan, header: header, raw: raw, context: context) {
        case .failure(let problem): return .failure(problem)
        case .success(let rendered):
            placeholder = rendered.placeholder
            for output in plan.outputs {
                guard let (bytes, sha256) = rendered.written[output.recipe.name] else { continue }
                thumbnails[output.recipe.name]?.bytes = bytes
                thumbnails[output.recipe.name]?.sha256 = sha256
            }
        }
        return .success(ProcessedItem(
            source: source,
            file: Manifest.FileInfo(bytes: raw.count, modified: source.stat.modifiedRFC3339, sha256: sha256),
            image: header.imageInfo,
            exif: header.exif.isEmpty ? nil : header.exif,
            thumbnails: thumbnails,
            placeholder: placeholder,
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
    /// work inside the decoder), then derives each missing thumbnail and the placeholder from
    /// that copy in memory. Returns each written thumbnail's size and hash by recipe name.
    private static func render(
        _ missing: [(ThumbnailPlan.Output, String)], plan: ThumbnailPlan, header: ImageHeader,
        raw: UnsafeRawBufferPointer, context: ProcessingContext
    ) -> Result<(written: [String: (Int, String)], placeholder: Manifest.Placeholder), Problem> {
        let intermediate: VipsImageHandle
        switch decode(plan: plan, header: header, raw: raw, context: context) {
        case .success(let image): intermediate = image
        case .failure(let problem): return .failure(problem)
        }
        let placeholder: Manifest.Placeholder
        switch Self.placeholder(intermediate) {
        case .success(let value): placeholder = value
        case .failure(let problem): return .failure(problem)
        }
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
        return .success((written, placeholder))
    }

    /// ThumbHash and average colour of the decoded image, from its pixels fitted into 100 × 100
    /// (the largest ThumbHash takes), alpha kept.
    private static func placeholder(_ image: VipsImageHandle) -> Result<Manifest.Placeholder, Problem> {
        let scale = min(1, 100 / Double(max(image.width, image.height)))
        let width = max(1, Int((Double(image.width) * scale).rounded()))
        let height = max(1, Int((Double(image.height) * scale).rounded()))
        return step(.encode) { tf_placeholder_rgba(image.pointer, $0, Int32(width), Int32(height)) }
            .flatMap { small in
                var length = 0
                guard let memory = vips_image_write_to_memory(small.pointer, &length) else { return .failure(.vips(.encode)) }
                defer { g_free(memory) }
                guard length == width * height * 4 else {
                    return .failure(Problem(stage: .encode, reason: "placeholder pixels came out \(length) bytes"))
                }
                let rgba = Array(UnsafeRawBufferPointer(start: memory, count: length))
                return .success(Manifest.Placeholder(width: width, height: height, rgba: rgba))
            }
    }

    /// Runs one libvips step that makes a new image from nothing or from another image.
    private static func step(
        _ stage: FailureStage, _ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) -> Result<VipsImageHandle, Problem> {
        var out: UnsafeMutablePointer<VipsImage>?
        guard operation(&out) == 0, let out else { return .failure(.vips(stage)) }
        return .success(VipsImageHandle(out))
    }

    /// The decode box in memory: upright, exactly `plan.decodeWidth` × `plan.decodeHeight`, 8-bit
    /// sRGB (converted from the embedded profile; untagged pixels untouched).
    ///
    /// JPEG: libjpeg's DCT scaling to the largest 1/N that leaves a margin of 2 (as libvips'
    /// thumbnail does), then Lanczos3 to the box; rotation and colour at the box's size. CMYK
    /// is converted before the resize (libvips' thumbnail would take it through its own CMYK
    /// conversion, which leaves a warm cast). Everything else: libvips' thumbnail, which picks
    /// the loader's shrink-on-load or the pyramid level that covers the box.
    private static func decode(
        plan: ThumbnailPlan, header: ImageHeader, raw: UnsafeRawBufferPointer, context: ProcessingContext
    ) -> Result<VipsImageHandle, Problem> {
        let quarterTurn = Orientation.swapsAxes(header.orientation)
        let storedBox = quarterTurn ? (plan.decodeHeight, plan.decodeWidth) : (plan.decodeWidth, plan.decodeHeight)
        var rotate = false
        let lazy: Result<VipsImageHandle, Problem>
        if header.format == "jpeg" || header.isCMYK {
            rotate = true
            let shrink = header.format == "jpeg"
                ? plan.jpegShrink(storedWidth: header.storedWidth, storedHeight: header.storedHeight, quarterTurn: quarterTurn)
                : 1
            lazy = step(.decode) { out in
                header.format == "jpeg"
                    ? tf_jpeg_load_shrunk(raw.baseAddress, raw.count, out, Int32(shrink), failOn)
                    : tf_image_from_buffer(raw.baseAddress, raw.count, out, failOn)
            }
            .flatMap { loaded in
                header.isCMYK ? step(.decode) { tf_to_srgb(loaded.pointer, $0) } : .success(loaded)
            }
            .flatMap { image in
                step(.decode) { tf_resize_first_pass(image.pointer, $0, Int32(storedBox.0), Int32(storedBox.1)) }
            }
        } else {
            lazy = step(.decode) { out in
                tf_thumbnail_buffer(raw.baseAddress, raw.count, out, Int32(plan.decodeWidth), Int32(plan.decodeHeight), failOn)
            }
        }
        return lazy.flatMap { materialize($0, context: context) }.flatMap { decoded in
            // The lazy pass may leave the horizontal Lanczos3, which runs on the pixels in memory.
            guard decoded.width != storedBox.0 || decoded.height != storedBox.1 else { return .success(decoded) }
            return step(.decode) { tf_resize_exact(decoded.pointer, $0, Int32(storedBox.0), Int32(storedBox.1), 0) }
        }.flatMap { decoded in
            // Most photos are upright and untagged: then the decode is the box already, and is
            // not copied again.
            let turn = rotate && header.orientation != 1
            guard turn || decoded.hasProfile || decoded.isCMYK else { return .success(decoded) }
            return (turn ? step(.decode) { tf_autorot(decoded.pointer, $0, Int32(header.orientation)) } : .success(decoded))
                .flatMap { image in step(.decode) { tf_to_srgb(image.pointer, $0) } }
                .flatMap { materialize($0, context: context) }
        }
    }

    /// Computes an image into memory, under the decode deadline and the build's cancellation.
    private static func materialize(_ lazy: VipsImageHandle, context: ProcessingContext) -> Result<VipsImageHandle, Problem> {
        var stopped: Int32 = 0
        if let decoded = tf_copy_memory_guarded(
            lazy.pointer, context.limits.decodeTimeout, context.cancellation?.pointer, &stopped)
        {
            return .success(VipsImageHandle(decoded))
        }
        switch stopped {
        case Int32(TF_STOP_DEADLINE.rawValue):
            Vips.clearErrors()
            return .failure(Problem(
                stage: .decode,
                reason: "decoding took longer than \(ResourceLimits.seconds(context.limits.decodeTimeout)) (--decode-timeout)"))
        case Int32(TF_STOP_REQUESTED.rawValue):
            Vips.clearErrors()
            return .failure(Problem(stage: .decode, reason: "stopped by a signal"))
        default:
            return .failure(.vips(.decode))
        }
    }

    /// Resizes the decoded image to exactly the planned size with Lanczos3 (a cover recipe crops
    /// the centre), checks that size, flattens alpha for JPEG, and encodes without metadata: the
    /// pixels are already upright and sRGB, so no viewer can rotate or convert them twice.
    private static func encode(_ decoded: VipsImageHandle, _ output: ThumbnailPlan.Output) -> Result<[UInt8], Problem> {
        var current = decoded
        if decoded.width != output.width || decoded.height != output.height {
            let crop: Int32 = output.recipe.fit == .cover ? 1 : 0
            switch step(.encode, { tf_resize_exact(decoded.pointer, $0, Int32(output.width), Int32(output.height), crop) }) {
            case .success(let resized): current = resized
            case .failure(let problem): return .failure(problem)
            }
        }
        // The manifest promises this size to every frontend; a thumbnail of another size is a
        // failure of this file, never a file on disk.
        guard current.width == output.width, current.height == output.height else {
            return .failure(Problem(
                stage: .encode,
                reason: "thumbnail \(output.recipe.name) came out \(current.width)×\(current.height), "
                    + "not the planned \(output.width)×\(output.height)"))
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
