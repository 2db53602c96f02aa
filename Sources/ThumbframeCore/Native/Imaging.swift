internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

/// The libvips half of the per-file work: open and probe the image, decode it once at the scale
/// of the largest thumbnail, derive, encode and write the thumbnails and the placeholder. The
/// only place that holds libvips images; everything it returns is Swift values.
extension ItemProcessor {
    /// Truncated and corrupt data fail the file instead of giving a half-grey thumbnail.
    private static let failOn = Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)

    static func build(
        _ source: SourceFile, _ raw: UnsafeRawBufferPointer, sha256: String, size: Int, context: ProcessingContext,
        placeholder known: Manifest.Placeholder? = nil
    ) -> Result<ProcessedItem, Problem> {
        // The probe: the header, read from an image that lives only as long as this call.
        guard
            let (header, bands, bytesPerBand) = Vips.withImage(
                raw, failOn: failOn, { image in (ImageHeader(image, fileBytes: raw), image.bands, image.bytesPerBand) })
        else {
            return .failure(.vips(.probe, "not a readable image: "))
        }
        if let refusal = context.limits.refusal(header, bands: bands, bytesPerBand: bytesPerBand, file: raw) {
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
        // a file whose thumbnails all exist under their content address is still decoded once,
        // unless the placeholder of the same bytes is known (a touched file).
        let placeholder: Manifest.Placeholder
        if missing.isEmpty, let known {
            placeholder = known
        } else {
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
        }
        return .success(
            ProcessedItem(
                source: source,
                file: Manifest.FileInfo(bytes: size, modified: source.stat.modifiedRFC3339, sha256: sha256),
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
                return .failure(
                    Problem(
                        stage: .write, reason: "cannot write thumbnail \(path): \(error.localizedDescription)",
                        outputUnwritable: error.isOutputUnwritable))
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
        let started = DispatchTime.now().uptimeNanoseconds
        let quarterTurn = Orientation.swapsAxes(header.orientation)
        let storedBox = quarterTurn ? (plan.decodeHeight, plan.decodeWidth) : (plan.decodeWidth, plan.decodeHeight)
        var rotate = false
        let lazy: Result<VipsImageHandle, Problem>
        if header.format == "jpeg" || header.isCMYK {
            rotate = true
            let shrink =
                header.format == "jpeg"
                ? plan.jpegShrink(storedWidth: header.storedWidth, storedHeight: header.storedHeight, quarterTurn: quarterTurn)
                : 1
            lazy = step(.decode) { out in
                switch (header.format, header.interlaced) {
                case ("jpeg", false): tf_jpeg_load_shrunk(raw.baseAddress, raw.count, out, Int32(shrink), failOn)
                case ("jpeg", true):
                    // Progressive: every scan is decoded before the first row; the decoder's
                    // input ends at the deadline (or a signal), so the decode cannot outlast it.
                    tf_jpeg_load_shrunk_deadline(
                        raw.baseAddress, raw.count, out, Int32(shrink), failOn, context.limits.decodeTimeout,
                        context.cancellation?.pointer)
                default: tf_image_from_buffer(raw.baseAddress, raw.count, out, failOn)
                }
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
        return lazy.flatMap { materialize($0, context: context, started: started) }.flatMap { decoded in
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
                .flatMap { materialize($0, context: context, started: started) }
        }
    }

    /// Computes an image into memory, under the decode deadline and the build's cancellation.
    private static func materialize(
        _ lazy: VipsImageHandle, context: ProcessingContext, started: UInt64
    ) -> Result<VipsImageHandle, Problem> {
        var stopped: Int32 = 0
        if let decoded = tf_copy_memory_guarded(
            lazy.pointer, context.limits.decodeTimeout, context.cancellation?.pointer, &stopped)
        {
            return .success(VipsImageHandle(decoded))
        }
        // A decoder whose input was cut at the deadline or by a signal fails as truncated: the
        // reason is the deadline or the signal, not the file.
        if stopped == Int32(TF_STOP_NONE.rawValue) {
            if context.cancellation?.signal != nil {
                stopped = Int32(TF_STOP_REQUESTED.rawValue)
            } else if context.limits.decodeTimeout > 0,
                Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9 >= context.limits.decodeTimeout
            {
                stopped = Int32(TF_STOP_DEADLINE.rawValue)
            }
        }
        switch stopped {
        case Int32(TF_STOP_DEADLINE.rawValue):
            Vips.clearErrors()
            return .failure(
                Problem(
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
            return .failure(
                Problem(
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
        let encoded = Array(UnsafeRawBufferPointer(start: buffer, count: length))
        return .success(output.recipe.format == .webp ? MetadataBounds.webpWithoutMetadata(encoded) : encoded)
    }
}
