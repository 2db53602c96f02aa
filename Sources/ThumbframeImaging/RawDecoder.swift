internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

/// RAW files through LibRaw: the sensor's picture size and orientation (LibRaw's flip), EXIF from
/// the file, and thumbnails from the largest embedded preview when it covers the largest recipe
/// (turned by the RAW's orientation: previews are stored as the sensor saw them), else from a
/// demosaic (half size when that covers them). A file LibRaw cannot open is a failure with
/// LibRaw's reason — never an item built from whatever its first TIFF directory holds.
package struct RawDecoder: ImageDecoder {
    /// A preview whose aspect ratio differs from the sensor's by more than this is not the picture
    /// (a letterboxed or cropped preview): the thumbnails are demosaiced instead.
    static let aspectTolerance = 0.02

    package init() {}

    package func decode(
        _ file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Decoded {
        return Decoded(Self.make(file, limits: limits, cancellation: cancellation, request: request))
    }

    private static func make(
        _ file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure> {
        var info = TFRawInfo()
        var error: Int32 = 0
        let megabytes = UInt32(max(1, min(limits.maxDecodeBytes >> 20, Int(UInt32.max))))
        guard
            let raw = tf_raw_open(file.baseAddress, file.count, megabytes, limits.decodeTimeout, cancellation?.pointer, &info, &error)
        else {
            return .failure(DecodeFailure(stage: .probe, reason: Self.openReason(error, file: file), cause: Self.cause(error)))
        }
        defer { tf_raw_close(raw) }
        guard info.width > 0, info.height > 0 else {
            return .failure(DecodeFailure(stage: .probe, reason: "LibRaw found no picture in this RAW file"))
        }
        let pixels = Int(info.width).multipliedReportingOverflow(by: Int(info.height))
        if pixels.overflow || pixels.partialValue > limits.maxPixels {
            return .failure(
                DecodeFailure(stage: .probe, reason: "\(info.width)×\(info.height) pixels is over --max-pixels \(limits.maxPixels)"))
        }
        var header = ImageHeader(raw: info, file: file)
        let quarter = Orientation.swapsAxes(header.orientation)
        let preview = Self.preview(info, quarter: quarter)
        header.media.raw = Manifest.RawInfo(
            rendering: .demosaic, previewWidth: preview.map { quarter ? $0.height : $0.width },
            previewHeight: preview.map { quarter ? $0.width : $0.height })
        guard let wanted = request(header) else { return .success((header, nil)) }
        // The preview when it covers the largest thumbnail (decided from the plan alone, so a
        // pass that renders nothing records the same rendering).
        let storedBox = quarter ? (wanted.plan.decodeHeight, wanted.plan.decodeWidth) : (wanted.plan.decodeWidth, wanted.plan.decodeHeight)
        let usePreview = preview.map { $0.width >= storedBox.0 && $0.height >= storedBox.1 } ?? false
        header.media.raw?.rendering = usePreview ? .preview : .demosaic
        guard wanted.render else { return .success((header, nil)) }
        var developed: Result<VipsImageHandle, DecodeFailure>?
        if usePreview, let preview {
            // A JPEG preview decodes with libjpeg's DCT scaling, as a photo does (a margin of 2 left).
            let shrink = wanted.plan.jpegShrink(storedWidth: preview.width, storedHeight: preview.height, quarterTurn: quarter)
            if case .success(let image) = Self.fromPreview(
                raw, expected: preview, shrink: shrink, box: storedBox, orientation: header.orientation)
            {
                developed = .success(image)
            }
        }
        if developed == nil {
            // No preview that covers the thumbnails, or one that does not decode to its stated
            // size (a preview in several strips, a damaged one): the sensor's data.
            header.media.raw?.rendering = .demosaic
            let half = Int(info.width) / 2 >= storedBox.0 && Int(info.height) / 2 >= storedBox.1
            developed = Self.demosaic(raw, half: half, box: (wanted.plan.decodeWidth, wanted.plan.decodeHeight), limits: limits)
        }
        return developed!.flatMap { VipsDecoder.finish($0, wanted) }.map { (header, $0) }
    }

    /// The embedded preview's stored size when it shows the sensor's picture (its aspect within
    /// `aspectTolerance`), else nil.
    private static func preview(_ info: TFRawInfo, quarter: Bool) -> (width: Int, height: Int)? {
        guard info.preview != Int32(TF_RAW_PREVIEW_NONE.rawValue), info.preview_width > 0, info.preview_height > 0 else { return nil }
        let sensor = Double(info.width) / Double(info.height)
        let stored = Double(info.preview_width) / Double(info.preview_height)
        guard abs(stored / sensor - 1) <= aspectTolerance else { return nil }
        return (Int(info.preview_width), Int(info.preview_height))
    }

    /// The preview decoded (its own EXIF orientation ignored), resized to the stored box, turned by
    /// the RAW's orientation, converted to sRGB, in memory.
    private static func fromPreview(
        _ raw: OpaquePointer, expected: (width: Int, height: Int), shrink: Int, box: (Int, Int), orientation: Int
    ) -> Result<VipsImageHandle, DecodeFailure> {
        var image = TFRawImage()
        let error = tf_raw_preview(raw, &image)
        defer { tf_raw_image_free(&image) }
        guard error == 0, let data = image.data else {
            return .failure(DecodeFailure(stage: .decode, reason: "the RAW's preview: " + String(cString: tf_raw_error_text(error))))
        }
        let loaded: Result<VipsImageHandle, DecodeFailure>
        var scaled = (width: expected.width, height: expected.height)
        if image.jpeg != 0 {
            // A cut or damaged preview fails (then the sensor's data is tried), never half grey.
            scaled = ((expected.width + shrink - 1) / shrink, (expected.height + shrink - 1) / shrink)
            loaded = VipsDecoder.step(.decode) {
                tf_jpeg_load_shrunk(data, image.length, $0, Int32(shrink), Int32(VIPS_FAIL_ON_TRUNCATED.rawValue))
            }
        } else {
            loaded = bitmap(image)
        }
        return loaded.flatMap { decoded in
            guard decoded.width == scaled.width, decoded.height == scaled.height else {
                return .failure(
                    DecodeFailure(stage: .decode, reason: "the RAW's preview is \(decoded.width)×\(decoded.height), not its stated size"))
            }
            return VipsDecoder.step(.decode) { tf_resize_exact(decoded.pointer, $0, Int32(box.0), Int32(box.1), 0) }
        }.flatMap { (resized: VipsImageHandle) -> Result<VipsImageHandle, DecodeFailure> in
            guard orientation != 1 else { return .success(resized) }
            // Turned from the box in memory: a quarter turn of the lazy decode would read the JPEG
            // column by column, holding and decoding it again and again (190 MiB, 1.8× the time).
            return VipsDecoder.inMemory(resized).flatMap { box in
                VipsDecoder.step(.decode) { tf_autorot(box.pointer, $0, Int32(orientation)) }
            }
        }.flatMap { turned in
            VipsDecoder.step(.decode) { tf_to_srgb(turned.pointer, $0) }
        }.flatMap(VipsDecoder.inMemory)
    }

    /// LibRaw's LIBRAW_UNSUFFICIENT_MEMORY: an allocation past its limit (`--max-decode-bytes`) or
    /// the worker's memory cap.
    static let insufficientMemory: Int32 = -100_007

    /// What stopped LibRaw from outside the file, by its error code.
    static func cause(_ error: Int32) -> FailureCause? {
        error == insufficientMemory ? .memory : nil
    }

    /// The sensor's data demosaiced by LibRaw (oriented by it), resized to the display box.
    private static func demosaic(_ raw: OpaquePointer, half: Bool, box: (Int, Int), limits: ResourceLimits) -> Result<
        VipsImageHandle, DecodeFailure
    > {
        var image = TFRawImage()
        let error = tf_raw_develop(raw, half ? 1 : 0, &image)
        defer { tf_raw_image_free(&image) }
        guard error == 0 else {
            return .failure(
                DecodeFailure.stopped(tf_raw_stopped(raw), limits: limits)
                    ?? DecodeFailure(
                        stage: .decode, reason: developReason(error, dataError: tf_raw_data_error(raw)), cause: cause(error)))
        }
        return bitmap(image).flatMap { developed in
            VipsDecoder.step(.decode) { tf_resize_exact(developed.pointer, $0, Int32(box.0), Int32(box.1), 0) }
        }.flatMap(VipsDecoder.inMemory)
    }

    /// Why LibRaw could not open the file, said as what it means.
    static func openReason(_ error: Int32, file: UnsafeRawBufferPointer) -> String {
        if error == TF_RAW_FILE_UNSUPPORTED, !TIFFCompressions.all(file).isDisjoint(with: jpegXLCompressions) {
            return "a DNG whose raw data is compressed with JPEG XL (DNG 1.7, as recent phones' ProRAW/Expert RAW write it), "
                + "which LibRaw 0.20 cannot decode"
        }
        return "not a RAW file LibRaw can open: " + String(cString: tf_raw_error_text(error))
    }

    /// TIFF's compression codes for JPEG XL: DNG 1.7's, and the draft's some writers use.
    static let jpegXLCompressions: Set<Int> = [52546, 50002]

    /// Why LibRaw could not develop the sensor's data, said as what it means (LibRaw's own words
    /// for a file its directories promise data it lacks are "Out of order call of libraw
    /// function" or "Input/output error").
    static func developReason(_ error: Int32, dataError: Int32) -> String {
        if dataError == TF_RAW_DATA_CUT || error == TF_RAW_IO_ERROR {
            return "its raw image data is cut short: the file ends before the data its directories point to"
        }
        if dataError == TF_RAW_DATA_DAMAGED || error == TF_RAW_DATA_ERROR {
            return "its raw image data is damaged (LibRaw: \(String(cString: tf_raw_error_text(error))))"
        }
        if error == TF_RAW_OUT_OF_ORDER_CALL || error == TF_RAW_NONEXISTENT_IMAGE {
            return "it has no raw image data LibRaw can develop (removed, or in a layout LibRaw 0.20 does not read)"
        }
        return "LibRaw cannot develop it: " + String(cString: tf_raw_error_text(error))
    }

    /// An 8-bit RGB bitmap of LibRaw's as an sRGB image (copied: LibRaw's memory is freed after).
    private static func bitmap(_ image: TFRawImage) -> Result<VipsImageHandle, DecodeFailure> {
        let (width, height) = (Int(image.width), Int(image.height))
        guard image.jpeg == 0, image.colors == 3, image.bits == 8, let data = image.data, image.length >= width * height * 3 else {
            return .failure(DecodeFailure(stage: .decode, reason: "LibRaw gave a \(image.colors)-channel \(image.bits)-bit picture"))
        }
        return VipsDecoder.step(.decode) { tf_image_from_rgb(data, width * height * 3, Int32(width), Int32(height), $0) }
    }

}
