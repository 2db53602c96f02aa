internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

/// libvips as an `ImageDecoder`: opens and probes the image, decodes it once at the scale of
/// the largest thumbnail, derives and encodes the thumbnails and the placeholder. The only place
/// that holds libvips images; everything it returns is Swift values. It takes every file no
/// other decoder takes (libvips names what it cannot open).
package struct VipsDecoder: ImageDecoder {
    /// Truncated and corrupt data fail the file instead of giving a half-grey thumbnail.
    private static let failOn = Int32(VIPS_FAIL_ON_TRUNCATED.rawValue)

    package init() {}

    package func decode(
        _ file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Decoded {
        func made(_ decodable: UnsafeRawBufferPointer) -> Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure> {
            Self.make(decodable, file: file, limits: limits, cancellation: cancellation, request: request)
        }
        // The decoder gets a PNG without its text chunks (the caller's hash and size stay the file's).
        let bounded = MetadataBounds.pngWithoutText(file)
        return Decoded(bounded.map { $0.withUnsafeBytes(made) } ?? made(file))
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
            return .failure(DecodeFailure(stage: .probe, reason: refusal, cause: .memory))
        }
        guard let wanted = request(header), wanted.render else { return .success((header, nil)) }
        if let transfer = header.toneMappedTransfer {
            return renderHDR(wanted, transfer: transfer, header: header, raw: raw, limits: limits).map { (header, $0) }
        }
        return render(wanted, header: header, raw: raw, limits: limits, cancellation: cancellation).map { (header, $0) }
    }

    /// Decodes once, at the scale the loader gives for the largest thumbnail (shrink-on-load
    /// does most of the work inside the decoder), then resamples each missing thumbnail and the
    /// placeholder from that copy in memory. Returns each written thumbnail's encoded bytes.
    private static func render(
        _ request: RenderRequest, header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits,
        cancellation: CancellationFlag?
    ) -> Result<Rendering, DecodeFailure> {
        // A cover of a very long image is made from its crop of the original, not from a decode
        // of the whole image at the cover's scale (`ThumbnailPlan.separatingCroppedCovers`).
        var request = request
        let cropped: Set<Int>
        (request.plan, cropped) = request.plan.separatingCroppedCovers()
        let plan = request.plan
        return decode(plan: request.plan, header: header, raw: raw, limits: limits, cancellation: cancellation).flatMap { source in
            var source = source
            if request.wantsGainMap { source.gainMap = GainMapSource.beside(header: header, raw: raw, limits: limits) }
            if !cropped.isEmpty {
                source.croppedCovers = Set(cropped.map { request.plan.outputs[$0].recipe.name })
                source.crop = { output in
                    croppedCover(output, plan: plan, header: header, raw: raw, limits: limits, cancellation: cancellation)
                }
            }
            return finish(source, request)
        }
    }

    /// A cover made from its crop of the original: decoded (a JPEG shrunk on load while the crop
    /// stays twice the output), cut to the centre the plan shows, resized as it streams, then
    /// turned upright and converted to sRGB as every thumbnail is.
    private static func croppedCover(
        _ output: ThumbnailPlan.Output, plan: ThumbnailPlan, header: ImageHeader, raw: UnsafeRawBufferPointer,
        limits: ResourceLimits, cancellation: CancellationFlag?
    ) -> Result<VipsImageHandle, DecodeFailure> {
        let started = DispatchTime.now().uptimeNanoseconds
        let swaps = Orientation.swapsAxes(header.orientation)
        let (width, height) = swaps ? (output.height, output.width) : (output.width, output.height)
        let whole = plan.storedCrop(
            output, storedWidth: header.storedWidth, storedHeight: header.storedHeight, orientation: header.orientation)
        let isJPEG = header.mediaFormat?.family == .jpeg
        let shrink = isJPEG ? [8, 4, 2].first { whole.width / $0 >= 2 * width && whole.height / $0 >= 2 * height } ?? 1 : 1
        return step(.decode) { out in
            shrink > 1
                ? tf_jpeg_load_shrunk(raw.baseAddress, raw.count, out, Int32(shrink), failOn)
                : tf_image_from_buffer(raw.baseAddress, raw.count, out, failOn)
        }
        .flatMap { loaded in
            header.isCMYK ? step(.decode) { tf_to_srgb_with(loaded.pointer, $0, header.profileIntent) } : .success(loaded)
        }
        .flatMap { Source.decoded($0, header: header, orientation: header.orientation) }
        .flatMap { source in
            let region = plan.storedCrop(
                output, storedWidth: source.image.width, storedHeight: source.image.height, orientation: header.orientation)
            return step(.encode) {
                tf_extract(source.image.pointer, $0, Int32(region.left), Int32(region.top), Int32(region.width), Int32(region.height))
            }
            .flatMap { piece in step(.encode) { tf_resize_exact(piece.pointer, $0, Int32(width), Int32(height), 0) } }
            .flatMap { materialize($0, limits: limits, cancellation: cancellation, started: started) }
            .flatMap(source.upright)
        }
    }

    /// A PQ or HLG still: libheif (HEIF, AVIF), libjxl (JPEG XL) or libvips (a PNG or TIFF whose
    /// cICP or ICC `cicp` says so, its profile not applied) decodes it at its own bit depth; the
    /// signal is resized to the decode box and tone-mapped to SDR sRGB as a video's poster is
    /// (`tf_hdr_box`), and every thumbnail is resampled from that box. libvips 8.14 would read a
    /// HEIF's code values as sRGB (grey, half as bright) and take a JPEG XL's through lcms, which
    /// cannot apply PQ (near black). libheif and libjxl turn the picture upright themselves; a
    /// libvips decode is turned by the header's orientation. Neither library can be stopped
    /// mid-picture: `--decode-timeout` is checked when it returns.
    private static func renderHDR(
        _ request: RenderRequest, transfer: Int, header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits
    ) -> Result<Rendering, DecodeFailure> {
        let started = DispatchTime.now().uptimeNanoseconds
        var (width, height) = (request.plan.decodeWidth, request.plan.decodeHeight)
        var orientation: Int32 = 1
        var box = TFHdrBox()
        var message = [CChar](repeating: 0, count: 256)
        let decoded: Int32
        let gain: Int32 = request.wantsGainMap ? 1 : 0
        switch header.mediaFormat?.family {
        case .jxl, .heif:
            let decode = header.mediaFormat?.family == .jxl ? tf_jxl_decode_hdr : tf_heif_decode_hdr
            decoded = decode(
                raw.baseAddress, raw.count, Int32(transfer), Int32(width), Int32(height), Int64(limits.maxPixels), gain, &box,
                &message, message.count)
        default:
            // libvips decodes the code values (a PNG or TIFF at 16 bits) as stored; no profile is
            // applied. Their primaries are what the cICP chunk or the profile's cicp tag says.
            let primaries = HDRFacts.cicp(family: header.mediaFormat?.family, file: raw, icc: header.iccProfile)?.primaries ?? 9
            orientation = Int32(header.orientation)
            if Orientation.swapsAxes(header.orientation) { (width, height) = (height, width) }
            guard
                let made = Vips.withImage(
                    raw, failOn: failOn,
                    { image in
                        tf_hdr_decode_image(
                            image.pointer, Int32(transfer), Int32(primaries), Int32(width), Int32(height), gain, &box, &message,
                            message.count)
                    })
            else { return .failure(.vips(.decode)) }
            decoded = made
        }
        defer { tf_hdr_box_free(&box) }
        guard decoded == 0, let pixels = box.pixels else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(DecodeFailure(stage: .decode, reason: "HDR picture: " + reason))
        }
        if limits.decodeTimeout > 0, Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9 > limits.decodeTimeout,
            let late = DecodeFailure.stopped(Int32(TF_STOP_DEADLINE.rawValue), limits: limits)
        {
            return .failure(late)
        }
        func upright(_ image: Result<VipsImageHandle, DecodeFailure>) -> Result<VipsImageHandle, DecodeFailure> {
            image.flatMap { image in orientation == 1 ? .success(image) : step(.decode) { tf_autorot(image.pointer, $0, orientation) } }
                .flatMap(inMemory)
        }
        // The gain map, computed with the tone map at the decode box's size: its codes are log2
        // gains over the largest, with no offsets (the SDR picture times the gain is the HDR one).
        var gainMap: GainMapSource?
        if let gain = box.gain, box.gain_stops > 0,
            case .success(let map) = upright(step(.decode) { tf_image_from_grey(gain, width * height, Int32(width), Int32(height), $0) })
        {
            let parameters = GainMapParameters(gainMin: 0, gainMax: box.gain_stops, capacityMax: box.gain_stops)
            gainMap = GainMapSource(map: map, parameters: parameters, scale: GainMapSource.computedScale)
        }
        return upright(step(.decode) { tf_image_from_rgb(pixels, width * height * 3, Int32(width), Int32(height), $0) }).flatMap {
            var source = Source(upright: $0)
            source.gainMap = gainMap
            return finish(source, request)
        }
    }

    /// The pixels every thumbnail of one image is resampled from, in memory, and what each
    /// resampled thumbnail still needs to be upright 8-bit sRGB.
    struct Source {
        var image: VipsImageHandle
        /// The EXIF orientation each thumbnail is turned by after its resize (1: upright).
        var orientation = 1
        /// Converted to sRGB after the resize (an embedded profile, CMYK): the intent, or nil.
        var profileIntent: Int32?
        /// The HDR picture's gain map, turned as `image` is (stored orientation).
        var gainMap: GainMapSource?
        /// The cover recipes (by name) made from their crop of the original, by `crop`, rather than
        /// resampled from `image`.
        var croppedCovers: Set<String> = []
        var crop: ((ThumbnailPlan.Output) -> Result<VipsImageHandle, DecodeFailure>)?

        /// The decode box of a video's poster or a RAW's rendering: upright sRGB already.
        init(upright image: VipsImageHandle) { self.image = image }

        private init(_ image: VipsImageHandle, orientation: Int, profileIntent: Int32?) {
            self.image = image
            self.orientation = orientation
            self.profileIntent = profileIntent
        }

        /// A decode of the image `header` describes. A profile still attached to its pixels is
        /// replaced by the header's copy (see `ImageHeader.iccProfile`; none when unusable); a
        /// decode already converted (CMYK) has none.
        static func decoded(_ image: VipsImageHandle, header: ImageHeader, orientation: Int) -> Result<Source, DecodeFailure> {
            let cmyk = image.isCMYK
            guard image.hasProfile else {
                return .success(Source(image, orientation: orientation, profileIntent: cmyk ? header.profileIntent : nil))
            }
            let profile = header.iccProfile ?? []
            return step(.decode) { tf_with_profile(image.pointer, $0, profile, profile.count) }.map { tagged in
                Source(tagged, orientation: orientation, profileIntent: tagged.hasProfile || cmyk ? header.profileIntent : nil)
            }
        }

        /// `image` (resampled from this source) turned upright and converted to sRGB.
        func upright(_ image: VipsImageHandle) -> Result<VipsImageHandle, DecodeFailure> {
            let turned = turned(image)
            guard let profileIntent else { return turned }
            return turned.flatMap { turned in step(.encode) { tf_to_srgb_with(turned.pointer, $0, profileIntent) } }
        }

        /// `image` turned upright (a gain map's: no colour conversion).
        func turned(_ image: VipsImageHandle) -> Result<VipsImageHandle, DecodeFailure> {
            orientation == 1 ? .success(image) : step(.encode) { tf_autorot(image.pointer, $0, Int32(orientation)) }
        }

        /// The stored size (before `upright` turns it) of a display size.
        func stored(width: Int, height: Int) -> (Int32, Int32) {
            Orientation.swapsAxes(orientation) ? (Int32(height), Int32(width)) : (Int32(width), Int32(height))
        }
    }

    /// The placeholder and every requested thumbnail, each resampled once from `source`: what a
    /// photo's decode, a video's poster frame and a RAW's rendering all end in.
    static func finish(_ source: Source, _ request: RenderRequest) -> Result<Rendering, DecodeFailure> {
        // The placeholder is reduced from the largest fit recipe's pixels (the whole image,
        // upright and sRGB, ~1 MP; never a zoom rendition) rather than from the decode (up to
        // 16 times larger). That
        // thumbnail is resampled for it even when this run does not write it, so the
        // placeholder does not depend on what a run asks.
        let parent = request.plan.placeholderParent
        var parentPixels: VipsImageHandle?
        var encoded: [[UInt8]] = []
        var headrooms: [Double?] = []
        for output in request.outputs {
            let made = resampled(source, output).flatMap { image in
                guard output == parent else { return encode(image, output) }
                // Turned or converted, the parent is still lazy: computed once, for its file and
                // the placeholder (which then takes the exact Lanczos3 as an upright one does).
                return inMemory(image).flatMap { pixels in
                    parentPixels = pixels
                    return encode(pixels, output)
                }
            }
            switch made {
            case .success(let bytes):
                // An HDR picture's lightbox rendition: the same SDR file, its gain map after it.
                let gainMap = request.gainMaps.contains(output.recipe.name) && output.recipe.format == .jpeg ? source.gainMap : nil
                switch gainMap.map({ withGainMap(bytes, $0, source: source, output: output) }) {
                case .success(let joined)?:
                    encoded.append(joined)
                    headrooms.append(gainMap?.parameters.headroom)
                case .failure(let problem)?: return .failure(problem)
                case nil:
                    encoded.append(bytes)
                    headrooms.append(nil)
                }
            case .failure(let problem): return .failure(problem)
            }
        }
        let small: Result<VipsImageHandle, DecodeFailure>
        let (width, height) = placeholderSize(request.plan)
        if let parent {
            small = (parentPixels.map { .success($0) } ?? resampled(source, parent).flatMap(inMemory)).flatMap { pixels in
                step(.encode) { tf_resize_coarse(pixels.pointer, $0, Int32(width), Int32(height)) }
            }
        } else {
            let (storedWidth, storedHeight) = source.stored(width: width, height: height)
            small = step(.encode) { tf_resize_coarse(source.image.pointer, $0, storedWidth, storedHeight) }.flatMap(source.upright)
        }
        return small.flatMap { placeholder($0, width: width, height: height, likeness: request.likeness) }.map {
            Rendering(encoded: encoded, placeholder: $0.placeholder, headrooms: headrooms, likeness: $0.likeness)
        }
    }

    /// `base` (an output's SDR JPEG) with `gainMap` resized to the output (to `GainMapSource.scale`
    /// of its sides), turned as it is, encoded as a JPEG after it (`GainMapJPEG`).
    private static func withGainMap(
        _ base: [UInt8], _ gainMap: GainMapSource, source: Source, output: ThumbnailPlan.Output
    ) -> Result<[UInt8], DecodeFailure> {
        let (width, height) = source.stored(width: output.width, height: output.height)
        let scale = min(gainMap.scale, GainMapSource.largestScale)
        let (mapWidth, mapHeight) = (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
        // A triangle, not Lanczos3: a map's peaks stay its own (Lanczos3 overshot them by up to 24 %).
        let map = step(.encode) { tf_resize_linear(gainMap.map.pointer, $0, Int32(mapWidth), Int32(mapHeight)) }.flatMap(source.turned)
        return map.flatMap { map in
            var buffer: UnsafeMutableRawPointer?
            var length = 0
            guard tf_save_buffer(map.pointer, TF_FORMAT_JPEG, Int32(GainMapSource.quality), 0, &buffer, &length) == 0, let buffer else {
                return .failure(.vips(.encode))
            }
            defer { g_free(buffer) }
            let encoded = Array(UnsafeRawBufferPointer(start: buffer, count: length))
            guard let joined = GainMapJPEG.assemble(base: base, map: encoded, parameters: gainMap.parameters) else {
                return .failure(DecodeFailure(stage: .encode, reason: "thumbnail \(output.recipe.name): cannot join its gain map"))
            }
            return .success(joined)
        }
    }

    /// The placeholder and thumbnails of a decode box already upright and sRGB (a video's
    /// poster, a RAW's rendering).
    static func finish(_ box: VipsImageHandle, _ request: RenderRequest) -> Result<Rendering, DecodeFailure> {
        finish(Source(upright: box), request)
    }

    /// The placeholder's size: the plan's decode box fitted into 100 × 100 (the largest a
    /// ThumbHash takes).
    private static func placeholderSize(_ plan: ThumbnailPlan) -> (width: Int, height: Int) {
        let scale = min(1, 100 / Double(max(plan.decodeWidth, plan.decodeHeight)))
        return (max(1, Int((Double(plan.decodeWidth) * scale).rounded())), max(1, Int((Double(plan.decodeHeight) * scale).rounded())))
    }

    /// ThumbHash and average colour from the image's pixels at the placeholder's size (upright,
    /// sRGB), alpha kept; and from the same pixels the likeness, when asked.
    private static func placeholder(
        _ image: VipsImageHandle, width: Int, height: Int, likeness: Bool
    ) -> Result<(placeholder: Manifest.Placeholder, likeness: Likeness?), DecodeFailure> {
        var length = 0
        guard let memory = tf_placeholder_pixels(image.pointer, &length) else { return .failure(.vips(.encode)) }
        defer { g_free(memory) }
        guard length == width * height * 4 else {
            return .failure(DecodeFailure(stage: .encode, reason: "placeholder pixels came out \(length) bytes"))
        }
        let rgba = Array(UnsafeRawBufferPointer(start: memory, count: length))
        return .success(
            (
                Manifest.Placeholder(width: width, height: height, rgba: rgba),
                likeness ? Likeness(width: width, height: height, rgba: rgba) : nil
            ))
    }

    /// Runs one libvips step that makes a new image from nothing or from another image.
    static func step(
        _ stage: DecodeFailure.Stage, _ operation: (UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32
    ) -> Result<VipsImageHandle, DecodeFailure> {
        var out: UnsafeMutablePointer<VipsImage>?
        guard operation(&out) == 0, let out else { return .failure(.vips(stage)) }
        return .success(VipsImageHandle(out))
    }

    /// Whole decodes (no shrink-on-load) larger than this many times the decode box's pixels
    /// go through libvips' thumbnail instead, which streams them. A JPEG's shrink-on-load with
    /// a margin of 2 leaves less than this (under 4 × the box on each side).
    static let wholeDecodeLimit = 16
    /// Nor is a decode of more bytes than this held (a 12 MP phone HEIC or PNG is 36 MB; a
    /// JPEG's shrunk decode for the default 1280 box at most 52 MB): a larger JPEG or CMYK
    /// decode is resized to the decode box as it streams, anything else goes through libvips'
    /// thumbnail.
    static let wholeDecodeBytes = 64 << 20

    /// The decode, in memory, at the scale each thumbnail is resampled from.
    ///
    /// JPEG: libjpeg's DCT scaling to the largest 1/N that leaves a margin of 2 over the decode
    /// box (as libvips' thumbnail does); CMYK is converted to sRGB first (libvips' thumbnail
    /// would take it through its own CMYK conversion, which leaves a warm cast). PNG, WebP and
    /// HEIF of 8 bits, one page, at most `wholeDecodeLimit` × the box's pixels and
    /// `wholeDecodeBytes`: whole.
    /// Rotation and colour are left to each thumbnail, at its size. Everything else: libvips'
    /// thumbnail to the decode box (upright; the loader's shrink-on-load or the pyramid level
    /// that covers the box), from which the thumbnails are resampled.
    private static func decode(
        plan: ThumbnailPlan, header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits,
        cancellation: CancellationFlag?
    ) -> Result<Source, DecodeFailure> {
        let started = DispatchTime.now().uptimeNanoseconds
        let quarterTurn = Orientation.swapsAxes(header.orientation)
        func materialized(_ lazy: Result<VipsImageHandle, DecodeFailure>) -> Result<VipsImageHandle, DecodeFailure> {
            lazy.flatMap { materialize($0, limits: limits, cancellation: cancellation, started: started) }
        }
        let isJPEG = header.mediaFormat?.family == .jpeg
        if isJPEG || header.isCMYK {
            let shrink =
                isJPEG
                ? plan.jpegShrink(storedWidth: header.storedWidth, storedHeight: header.storedHeight, quarterTurn: quarterTurn)
                : 1
            // The decode is held whole up to `wholeDecodeBytes` (taken as 3 bands: CMYK becomes
            // sRGB; a grey one is counted high); over it, it is resized to the box as it streams.
            let holdsWhole =
                ((header.storedWidth + shrink - 1) / shrink) * ((header.storedHeight + shrink - 1) / shrink) * 3
                <= wholeDecodeBytes
            // A baseline RGB or grey JPEG held whole: libjpeg straight into memory, in this
            // thread (libvips takes every other, and any file libjpeg warns about).
            if isJPEG, !header.interlaced, !header.isCMYK, holdsWhole {
                var image: UnsafeMutablePointer<VipsImage>?
                var reason: Int32 = 0
                switch tf_jpeg_decode_here(
                    raw.baseAddress, raw.count, Int32(shrink), limits.decodeTimeout, cancellation?.pointer, &image, &reason)
                {
                case 1:
                    if let image {
                        return Source.decoded(VipsImageHandle(image), header: header, orientation: header.orientation)
                    }
                case -1: return .failure(DecodeFailure.stopped(reason, limits: limits) ?? .vips(.decode))
                default: break
                }
            }
            let lazy = step(.decode) { out in
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
            .flatMap { loaded in
                // A decode over the bound (a large CMYK TIFF, a JPEG for a very large recipe)
                // is resized to the decode box as it streams, and the smaller thumbnails are
                // resampled from that box.
                guard !holdsWhole else { return .success(loaded) }
                let (width, height) = quarterTurn ? (plan.decodeHeight, plan.decodeWidth) : (plan.decodeWidth, plan.decodeHeight)
                return step(.decode) { tf_resize_exact(loaded.pointer, $0, Int32(width), Int32(height), 0) }
            }
            return materialized(lazy).flatMap { Source.decoded($0, header: header, orientation: header.orientation) }
        }
        if header.mediaFormat?.family == .jxl {
            // libvips 8.14's loader feeds libjxl in pieces and fails on real files (a phone's
            // 16-bit P3 picture: "Invalid context map"); libjxl decodes the whole file, oriented,
            // at its own depth, with its pixels' profile (the header's copy replaces it).
            var image: UnsafeMutablePointer<VipsImage>?
            var message = [CChar](repeating: 0, count: 256)
            guard tf_jxl_decode_image(raw.baseAddress, raw.count, Int64(limits.maxPixels), &image, &message, message.count) == 0,
                let image
            else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(DecodeFailure(stage: .decode, reason: "JPEG XL: " + reason))
            }
            return Source.decoded(VipsImageHandle(image), header: header, orientation: 1)
        }
        if wholeDecode(plan: plan, header: header),
            case .success(let whole) = step(.decode, { tf_image_from_buffer(raw.baseAddress, raw.count, $0, failOn) }),
            whole.bytesPerBand == 1, whole.width * whole.height * whole.bands <= wholeDecodeBytes
        {
            return materialized(.success(whole)).flatMap { Source.decoded($0, header: header, orientation: header.orientation) }
        }
        return materialized(
            step(.decode) { out in
                tf_thumbnail_buffer(raw.baseAddress, raw.count, out, Int32(plan.decodeWidth), Int32(plan.decodeHeight), failOn)
            }
        ).flatMap { Source.decoded($0, header: header, orientation: 1) }
    }

    /// Whether the image is decoded whole and every thumbnail resampled from it (see `decode`).
    static func wholeDecode(plan: ThumbnailPlan, header: ImageHeader) -> Bool {
        guard ["png", "webp", "heif"].contains(header.format), header.pages == 1 else { return false }
        let pixels = header.storedWidth.multipliedReportingOverflow(by: header.storedHeight)
        return !pixels.overflow && pixels.partialValue <= wholeDecodeLimit * plan.decodeWidth * plan.decodeHeight
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

    /// The source resampled once to exactly the planned size with Lanczos3 (a cover recipe crops
    /// the centre), turned upright and sRGB.
    private static func resampled(_ source: Source, _ output: ThumbnailPlan.Output) -> Result<VipsImageHandle, DecodeFailure> {
        if let crop = source.crop, source.croppedCovers.contains(output.recipe.name) { return crop(output) }
        let (width, height) = source.stored(width: output.width, height: output.height)
        let resized: Result<VipsImageHandle, DecodeFailure> =
            source.image.width == Int(width) && source.image.height == Int(height)
            ? .success(source.image)
            : step(.encode) { tf_resize_exact(source.image.pointer, $0, width, height, output.recipe.fit == .cover ? 1 : 0) }
        return resized.flatMap(source.upright)
    }

    /// Checks the thumbnail's size, flattens alpha for JPEG, and encodes without metadata: the
    /// pixels are upright and sRGB, so no viewer can rotate or convert them twice.
    private static func encode(_ image: VipsImageHandle, _ output: ThumbnailPlan.Output) -> Result<[UInt8], DecodeFailure> {
        var current = image
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
                stage: .decode, reason: "decoding took longer than \(ResourceLimits.seconds(limits.decodeTimeout)) (--decode-timeout)",
                cause: .time)
        case Int32(TF_STOP_REQUESTED.rawValue): DecodeFailure(stage: .decode, reason: "stopped by a signal")
        default: nil
        }
    }

    /// A failure whose reason is libvips' error buffer, taken now.
    static func vips(_ stage: Stage, _ prefix: String = "") -> DecodeFailure {
        let message = Vips.takeError()
        let memory = DecodeFailure.isAllocationFailure(message)
        return DecodeFailure(stage: stage, reason: prefix + message, cause: memory ? .memory : nil)
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
