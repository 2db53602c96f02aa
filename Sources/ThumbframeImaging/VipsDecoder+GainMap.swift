internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

/// An HDR picture's gain map beside its decode, in the decode's orientation: what each
/// lightbox rendition's map is resized from.
struct GainMapSource {
    /// 8-bit codes (grey, or three channels), in memory.
    var map: VipsImageHandle
    var parameters: GainMapParameters
    /// The map's sides as a fraction of the picture's: each rendition's map keeps it, up to
    /// `largestScale`.
    var scale: Double

    /// A rendition's map has at most half its sides (a quarter of its pixels), as Apple's maps
    /// do: a camera's map keeps its own resolution up to that; gains change slowly across a
    /// picture, and a map at full size would add a third to the rendition's bytes or more.
    static let largestScale = 0.5
    /// The map thumbframe computes for a PQ or HLG still has a quarter of the rendition's sides:
    /// on the bench's HDR scenes (`scripts/benchmarks/bench-hdr`) half the bytes of a map at half
    /// the sides (+15 % on the renditions instead of +26 %), its HDR picture 47 dB from the
    /// source's instead of 51 (GainMapTests).
    static let computedScale = 0.25
    /// The map's JPEG quality.
    static let quality = 85

    /// The gain map a file carries beside its SDR picture (an iPhone HEIC's auxiliary image, an
    /// Ultra HDR or ISO 21496-1 JPEG's second image), or nil: none, or one thumbframe cannot use
    /// (the rendition is then the SDR picture alone, as from an SDR file).
    static func beside(header: ImageHeader, raw: UnsafeRawBufferPointer, limits: ResourceLimits) -> GainMapSource? {
        guard let hdr = header.hdr, hdr.kind == .gainMap else { return nil }
        switch header.mediaFormat?.family {
        case .heif: return apple(raw, headroom: hdr.headroom, header: header, limits: limits)
        case .jpeg: return jpeg(raw, header: header, limits: limits)
        default: return nil
        }
    }

    /// Apple's map: code values in Rec. 709's curve of a linear weight `g`, the HDR picture being
    /// the SDR one times `1 + (headroom − 1) · g` (Apple, "Applying Apple HDR effect to your
    /// photos"). Written again as log2 gains over log2 headroom, ISO 21496-1's form.
    static func apple(_ raw: UnsafeRawBufferPointer, headroom: Double?, header: ImageHeader, limits: ResourceLimits) -> GainMapSource? {
        guard let headroom, headroom > 1.02 else { return nil }
        var map: UnsafeMutablePointer<UInt8>?
        var (width, height): (Int32, Int32) = (0, 0)
        var message = [CChar](repeating: 0, count: 256)
        guard
            tf_heif_gain_map(raw.baseAddress, raw.count, Int64(limits.maxPixels), &map, &width, &height, &message, message.count) == 0,
            let map
        else { return nil }
        defer { free(map) }
        let stops = log2(headroom)
        let parameters = GainMapParameters(gainMin: 0, gainMax: stops, capacityMax: stops)
        let table = (0..<256).map { code -> UInt8 in
            let value = Double(code) / 255
            let linear = value < 0.081 ? value / 4.5 : pow((value + 0.099) / 1.099, 1 / 0.45)
            let normalized = log2(1 + (headroom - 1) * linear) / parameters.gainMax
            return UInt8(max(0, min(255, (normalized * 255).rounded())))
        }
        let count = Int(width) * Int(height)
        for index in 0..<count { map[index] = table[Int(map[index])] }
        guard case .success(let image) = VipsDecoder.step(.decode, { tf_image_from_grey(map, count, width, height, $0) }) else {
            return nil
        }
        return GainMapSource(map: image, parameters: parameters, scale: Double(width) / Double(max(1, header.storedWidth)))
    }

    /// An Ultra HDR or ISO 21496-1 JPEG's map, the second image its MPF index names, with its
    /// own numbers (the ISO box's, else the XMP's), in the picture's stored orientation.
    static func jpeg(_ raw: UnsafeRawBufferPointer, header: ImageHeader, limits: ResourceLimits) -> GainMapSource? {
        guard let parsed = GainMapJPEG.read(raw), let range = parsed.map, let parameters = parsed.parameters else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: raw[range])
        guard
            let image = Vips.withImage(
                bytes, failOn: Int32(VIPS_FAIL_ON_TRUNCATED.rawValue),
                { image -> VipsImageHandle? in
                    guard image.width * image.height <= min(limits.maxPixels, header.storedWidth * header.storedHeight),
                        image.bytesPerBand == 1, image.bands == 1 || image.bands == 3,
                        case .success(let copy) = VipsDecoder.inMemory(image)
                    else { return nil }
                    return copy
                }) ?? nil
        else {
            Vips.clearErrors()
            return nil
        }
        return GainMapSource(map: image, parameters: parameters, scale: Double(image.width) / Double(max(1, header.storedWidth)))
    }
}
