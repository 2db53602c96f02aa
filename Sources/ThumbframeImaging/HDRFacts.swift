internal import CThumbframeShim
import Foundation
import ThumbframeManifest

/// Whether a still picture is HDR, read from its header: a HEIF/AVIF's nclx colour (PQ, HLG)
/// or Apple's gain-map auxiliary image (libheif, `tf_heif_facts`), a JPEG XL's colour encoding
/// (libjxl, `tf_jxl_transfer`), a JPEG's Ultra HDR XMP (`hdrgm:`) or ISO 21496-1 gain-map segment.
enum HDRFacts {
    /// ITU-T H.273 transfer characteristics.
    static let pq = 16
    static let hlg = 18

    static func read(format: String, file: UnsafeRawBufferPointer, xmp: [UInt8]?) -> Manifest.ImageInfo.HDR? {
        switch format {
        case "heic", "heif", "avif":
            var facts = TFHeifFacts()
            guard tf_heif_facts(file.baseAddress, file.count, &facts) == 0 else { return nil }
            if facts.nclx != 0, facts.transfer == pq { return .init(kind: .pq) }
            if facts.nclx != 0, facts.transfer == hlg { return .init(kind: .hlg) }
            return facts.gain_map != 0 ? .init(kind: .gainMap) : nil
        case "jpeg":
            return jpegGainMap(file, xmp: xmp)
        case "jxl":
            var transfer: Int32 = 0
            guard tf_jxl_transfer(file.baseAddress, file.count, &transfer) == 0 else { return nil }
            return transfer == pq ? .init(kind: .pq) : transfer == hlg ? .init(kind: .hlg) : nil
        default:
            return nil
        }
    }

    /// An Ultra HDR JPEG (`hdrgm:Version` in its XMP; its headroom is 2 to the power of
    /// `hdrgm:HDRCapacityMax`) or an ISO 21496-1 one (its `urn:iso:std:iso:ts:21496:-1` APP2
    /// segment, looked for in the first 64 KiB).
    static func jpegGainMap(_ file: UnsafeRawBufferPointer, xmp: [UInt8]?) -> Manifest.ImageInfo.HDR? {
        if let xmp, let text = String(bytes: xmp.prefix(1 << 16), encoding: .utf8), text.contains("hdrgm:Version") {
            let capacity = attribute("hdrgm:HDRCapacityMax", in: text).flatMap(Double.init)
            let headroom = capacity.flatMap { $0.isFinite && (0...16).contains($0) ? pow(2, $0) : nil }
            return .init(kind: .gainMap, headroom: headroom.map { ($0 * 1000).rounded() / 1000 })
        }
        let iso = Array("urn:iso:std:iso:ts:21496:-1".utf8)
        let head = UnsafeRawBufferPointer(rebasing: file.prefix(1 << 16))
        guard head.count >= iso.count else { return nil }
        for start in 0...(head.count - iso.count) where head[start] == iso[0] {
            if head[start..<(start + iso.count)].elementsEqual(iso) { return .init(kind: .gainMap) }
        }
        return nil
    }

    /// An XMP attribute's value (`name="value"`, or the element `<name>value</name>`), at most 32 characters.
    static func attribute(_ name: String, in text: String) -> String? {
        for (open, close) in [(name + "=\"", "\""), ("<" + name + ">", "<")] {
            guard let start = text.range(of: open), let end = text[start.upperBound...].range(of: close),
                text.distance(from: start.upperBound, to: end.lowerBound) <= 32
            else { continue }
            return String(text[start.upperBound..<end.lowerBound]).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
