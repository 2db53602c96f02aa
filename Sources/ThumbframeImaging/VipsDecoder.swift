internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

/// libvips as an `ImageDecoder`: opens and probes the image, decodes it once at the scale of
/// the largest thumbnail, derives and encodes the thumbnails and the placeholder. The only place
/// that holds libvips images; everything it returns is Swift values. It takes every file no
/// other decoder recognizes (libvips names what it cannot open).
package struct VipsDecoder: ImageDecoder {
    /// Truncated and corrupt data fail the file instead of giving a half-grey thumbnail.
    private static let failOn = Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)

    package init() {}

    package func recognizes(_ file: UnsafeRawBufferPointer) -> Bool { true }

    package func decode(
        _ file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Decoded {
        let opened = ErrorWindows.clock()
        func made(_ decodable: UnsafeRawBufferPointer) -> Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure> {
            Self.make(decodable, file: file, limits: limits, cancellation: cancellation, request: request)
        }
        // The decoder gets a PNG without its text chunks (the caller's hash and size stay the file's).
        let bounded = MetadataBounds.pngWithoutText(file)
        return Decoded(bounded.map { $0.withUnsafeBytes(made) } ?? made(file), since: opened)
    }

    /// The probe, the refusal, the request, the render.
    private static func make(
        _ raw: UnsafeRawBufferPointer, file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure> {
        // The probe: the header, read from an image that lives only as long as this call.
        guard
            let (header, bands, bytesPerBand) = Vips.withImage(
                raw, failOn: failOn, { image in (ImageHeader(image, fileBytes: raw), image.bands, image.bytesPerBand) })
        else {
            return .failure(Self.blockedExplained(.vips(.probe, "not a readable image: ")))
        }
        if let refusal = limits.refusal(header, bands: bands, bytesPerBand: bytesPerBand, file: raw) {
            return .failure(DecodeFailure(stage: .probe, reason: refusal))
        }
        guard let wanted = request(header), wanted.render else { return .success((header, nil)) }
        return render(wanted, header: header, raw: raw, limits: limits, cancellation: cancellation).map { (header, $0) }
    }

    /// Decodes once, into the largest size any thumbnail needs (shrink-on-load does most of the
    /// work inside the decoder), then derives each missing thumbnail and the placeholder from
    /// that copy in memory. Returns each written thumbnail's size and hash by recipe name.
    private static func render(
        _ request: RenderRequest, header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits,
        cancellation: CancellationFlag?
    ) -> Result<Rendering, DecodeFailure> {
        decode(plan: request.plan, header: header, raw: raw, limits: limits, cancellation: cancellation).flatMap {
            finish($0, request)
        }
    }

    /// The placeholder and every requested thumbnail, from the decode box in memory (upright
    /// 8-bit sRGB, exactly `plan.decodeWidth` × `plan.decodeHeight`): what a photo's decode and a
    /// video's poster frame both end in.
    static func finish(_ intermediate: VipsImageHandle, _ request: RenderRequest) -> Result<Rendering, DecodeFailure> {
        let placeholder: Manifest.Placeholder
        switch Self.placeholder(intermediate) {
        case .success(let value): placeholder = value
        case .failure(let problem): return .failure(problem)
        }
        var encoded: [[UInt8]] = []
        for output in request.outputs {
            switch encode(intermediate, output) {
            case .success(let bytes): encoded.append(bytes)
            case .failure(let problem): return .failure(problem)
            }
        }
        return .success(Rendering(encoded: encoded, placeholder: placeholder))
    }

    /// ThumbHash and average colour of the decoded image, from its pixels fitted into 100 × 100
    /// (the largest ThumbHash takes), alpha kept.
    private static func placeholder(_ image: VipsImageHandle) -> Result<Manifest.Placeholder, DecodeFailure> {
        let scale = min(1, 100 / Double(max(image.width, image.height)))
        let width = max(1, Int((Double(image.width) * scale).rounded()))
        let height = max(1, Int((Double(image.height) * scale).rounded()))
        return step(.encode) { tf_placeholder_rgba(image.pointer, $0, Int32(width), Int32(height)) }
            .flatMap { small in
                var length = 0
                guard let memory = tf_write_to_memory(small.pointer, &length) else { return .failure(.vips(.encode)) }
                defer { g_free(memory) }
                guard length == width * height * 4 else {
                    return .failure(DecodeFailure(stage: .encode, reason: "placeholder pixels came out \(length) bytes"))
                }
                let rgba = Array(UnsafeRawBufferPointer(start: memory, count: length))
                return .success(Manifest.Placeholder(width: width, height: height, rgba: rgba))
            }
    }

    /// Runs one libvips step that makes a new image from nothing or from another image.
    static func step(
        _ stage: DecodeFailure.Stage, _ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) -> Result<VipsImageHandle, DecodeFailure> {
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
        plan: ThumbnailPlan, header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits,
        cancellation: CancellationFlag?
    ) -> Result<VipsImageHandle, DecodeFailure> {
        let started = DispatchTime.now().uptimeNanoseconds
        let quarterTurn = Orientation.swapsAxes(header.orientation)
        let storedBox = quarterTurn ? (plan.decodeHeight, plan.decodeWidth) : (plan.decodeWidth, plan.decodeHeight)
        var rotate = false
        let lazy: Result<VipsImageHandle, DecodeFailure>
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
                        raw.baseAddress, raw.count, out, Int32(shrink), failOn, limits.decodeTimeout,
                        cancellation?.pointer)
                default: tf_image_from_buffer(raw.baseAddress, raw.count, out, failOn)
                }
            }
            .flatMap { loaded in
                header.isCMYK ? step(.decode) { tf_to_srgb_with(loaded.pointer, $0, header.profileIntent) } : .success(loaded)
            }
            .flatMap { image in
                step(.decode) { tf_resize_first_pass(image.pointer, $0, Int32(storedBox.0), Int32(storedBox.1)) }
            }
        } else {
            lazy = step(.decode) { out in
                tf_thumbnail_buffer(raw.baseAddress, raw.count, out, Int32(plan.decodeWidth), Int32(plan.decodeHeight), failOn)
            }
        }
        return lazy.flatMap { materialize($0, limits: limits, cancellation: cancellation, started: started) }.flatMap { decoded in
            // The lazy pass may leave the horizontal Lanczos3, which runs on the pixels in memory.
            guard decoded.width != storedBox.0 || decoded.height != storedBox.1 else { return .success(decoded) }
            return step(.decode) { tf_resize_exact(decoded.pointer, $0, Int32(storedBox.0), Int32(storedBox.1), 0) }
        }.flatMap { decoded in
            // Most photos are upright and untagged: then the decode is the box already, and is
            // not copied again.
            let turn = rotate && header.orientation != 1
            guard turn || decoded.hasProfile || decoded.isCMYK else { return .success(decoded) }
            return (turn ? step(.decode) { tf_autorot(decoded.pointer, $0, Int32(header.orientation)) } : .success(decoded))
                .flatMap { image in step(.decode) { tf_to_srgb_with(image.pointer, $0, header.profileIntent) } }
                .flatMap { materialize($0, limits: limits, cancellation: cancellation, started: started) }
        }
    }

    /// Computes an image into memory, under the decode deadline and the build's cancellation.
    private static func materialize(
        _ lazy: VipsImageHandle, limits: ResourceLimits, cancellation: CancellationFlag?, started: UInt64
    ) -> Result<VipsImageHandle, DecodeFailure> {
        var stopped: Int32 = 0
        if let decoded = tf_copy_memory_guarded(
            lazy.pointer, limits.decodeTimeout, cancellation?.pointer, &stopped)
        {
            return .success(VipsImageHandle(decoded))
        }
        // A decoder whose input was cut at the deadline or by a signal fails as truncated: the
        // reason is the deadline or the signal, not the file.
        if stopped == Int32(TF_STOP_NONE.rawValue) {
            if cancellation?.signal != nil {
                stopped = Int32(TF_STOP_REQUESTED.rawValue)
            } else if limits.decodeTimeout > 0,
                Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9 >= limits.decodeTimeout
            {
                stopped = Int32(TF_STOP_DEADLINE.rawValue)
            }
        }
        guard let problem = DecodeFailure.stopped(stopped, limits: limits) else { return .failure(.vips(.decode)) }
        Vips.clearErrors()
        return .failure(problem)
    }

    /// Computes a small image already decoded (a video's poster, a RAW's preview or demosaic,
    /// resized and turned) into memory, once, for the thumbnails derived from it.
    static func inMemory(_ lazy: VipsImageHandle) -> Result<VipsImageHandle, DecodeFailure> {
        var stopped: Int32 = 0
        guard let copy = tf_copy_memory_guarded(lazy.pointer, 0, nil, &stopped) else { return .failure(.vips(.decode)) }
        return .success(VipsImageHandle(copy))
    }

    /// Resizes the decoded image to exactly the planned size with Lanczos3 (a cover recipe crops
    /// the centre), checks that size, flattens alpha for JPEG, and encodes without metadata: the
    /// pixels are already upright and sRGB, so no viewer can rotate or convert them twice.
    private static func encode(_ decoded: VipsImageHandle, _ output: ThumbnailPlan.Output) -> Result<[UInt8], DecodeFailure> {
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
                DecodeFailure(
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

extension DecodeFailure {
    /// The failure of a decode its guard stopped — `reason` a TFStopReason: the deadline
    /// (`--decode-timeout`) or a signal — or nil when it was not stopped. libvips' kill, FFmpeg's
    /// interrupt callback and LibRaw's progress callback all report through it.
    static func stopped(_ reason: Int32, limits: ResourceLimits) -> DecodeFailure? {
        switch reason {
        case Int32(TF_STOP_DEADLINE.rawValue):
            DecodeFailure(
                stage: .decode, reason: "decoding took longer than \(ResourceLimits.seconds(limits.decodeTimeout)) (--decode-timeout)")
        case Int32(TF_STOP_REQUESTED.rawValue): DecodeFailure(stage: .decode, reason: "stopped by a signal")
        default: nil
        }
    }

    /// A failure whose reason is libvips' error buffer, taken now.
    static func vips(_ stage: Stage, _ prefix: String = "") -> DecodeFailure {
        DecodeFailure(stage: stage, reason: prefix + Vips.takeError(), fromLibrary: true)
    }
}

extension VipsDecoder {
    /// A probe failure because the only loader libvips has for the file is one thumbframe keeps
    /// off (libvips' untrusted loaders, `tf_vips_start`), said as what it is rather than as
    /// libvips' "operation is blocked".
    static func blockedExplained(_ failure: DecodeFailure) -> DecodeFailure {
        guard let range = failure.reason.range(of: ": operation is blocked") else { return failure }
        let loader = failure.reason[..<range.lowerBound].split(separator: " ").last.map(String.init) ?? ""
        let why =
            switch loader.prefix(while: { $0 != "_" }) {
            case "magickload":
                "a format libvips reads only through ImageMagick (BMP, PSD, ICO, TGA, ...), which thumbframe keeps off: "
                    + "its hundreds of decoders are not hardened against hostile files; convert it to PNG or JPEG"
            case "jp2kload":
                "JPEG 2000, which libvips 8.14 reads only through its untrusted OpenJPEG loader, which thumbframe keeps off"
            case "svgload": "SVG, a drawing: libvips' librsvg loader is untrusted and thumbframe keeps it off"
            default: "libvips reads this only through \(loader), a loader it marks untrusted, which thumbframe keeps off"
            }
        var explained = failure
        explained.reason = "unsupported format: " + why
        return explained
    }
}
