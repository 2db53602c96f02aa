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

    /// `appleHeadroom`: the headroom an iPhone's MakerNote gives its gain map (`AppleMakerNote.headroom`).
    static func read(format: String, file: UnsafeRawBufferPointer, xmp: [UInt8]?, icc: [UInt8]?, appleHeadroom: Double?)
        -> Manifest.ImageInfo.HDR?
    {
        // Any format whose colour is described by H.273 numbers: a PNG's cICP chunk, an ICC
        // profile's `cicp` tag (ICC.1:2022; libvips and lcms apply neither).
        let family = MediaFormat.named(format)?.family
        if let transfer = cicp(family: family, file: file, icc: icc)?.transfer {
            return transfer == pq ? .init(kind: .pq) : transfer == hlg ? .init(kind: .hlg) : nil
        }
        switch family {
        case .heif:
            var facts = TFHeifFacts()
            guard tf_heif_facts(file.baseAddress, file.count, &facts) == 0 else { return nil }
            if facts.nclx != 0, facts.transfer == pq { return .init(kind: .pq) }
            if facts.nclx != 0, facts.transfer == hlg { return .init(kind: .hlg) }
            return facts.gain_map != 0 ? .init(kind: .gainMap, headroom: appleHeadroom) : nil
        case .jpeg:
            return jpegGainMap(file, xmp: xmp)
        case .jxl:
            var transfer: Int32 = 0
            guard tf_jxl_transfer(file.baseAddress, file.count, &transfer) == 0 else { return nil }
            return transfer == pq ? .init(kind: .pq) : transfer == hlg ? .init(kind: .hlg) : nil
        default:
            return nil
        }
    }

    /// The H.273 colour primaries and transfer of a PNG's `cICP` chunk or an ICC profile's `cicp`
    /// tag, or nil: how a PNG or TIFF says it is PQ or HLG, and in which primaries.
    static func cicp(family: MediaFormat.Family?, file: UnsafeRawBufferPointer, icc: [UInt8]?) -> (primaries: Int, transfer: Int)? {
        (family == .png ? pngCICP(file) : nil) ?? icc.flatMap(iccCICP)
    }

    /// The primaries and transfer of a PNG's `cICP` chunk (before its image data), or nil.
    static func pngCICP(_ file: UnsafeRawBufferPointer) -> (primaries: Int, transfer: Int)? {
        var at = 8
        while at <= file.count - 12 {
            let length = file[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            let kind = Array(file[(at + 4)..<(at + 8)])
            if kind == Array("cICP".utf8) {
                return length == 4 && at + 12 <= file.count ? (Int(file[at + 8]), Int(file[at + 9])) : nil
            }
            if kind == Array("IDAT".utf8) || length > file.count - at - 12 { return nil }
            at += 12 + length
        }
        return nil
    }

    /// The primaries and transfer of an ICC profile's `cicp` tag, or nil (at most 256 tags looked at).
    static func iccCICP(_ profile: [UInt8]) -> (primaries: Int, transfer: Int)? {
        guard let reader = TIFFNumbers(profile, byteOrder: .big), let count = reader.number(128, 4) else { return nil }
        for index in 0..<min(count, 256) {
            let entry = 132 + index * 12
            guard let signature = reader.number(entry, 4), let offset = reader.number(entry + 4, 4) else { return nil }
            // 'cicp' then 4 reserved bytes, then primaries, transfer, matrix, range: a byte each.
            if signature == 0x6369_6370, let primaries = reader.number(offset + 8, 1), let transfer = reader.number(offset + 9, 1),
                reader.number(offset, 4) == 0x6369_6370
            {
                return (primaries, transfer)
            }
        }
        return nil
    }

    /// An Ultra HDR JPEG (`hdrgm:Version` in its XMP; its headroom is 2 to the power of
    /// `hdrgm:HDRCapacityMax`, read from its gain map's metadata, else from the XMP) or an ISO
    /// 21496-1 one (its `urn:iso:std:iso:ts:21496:-1` APP2 segment, looked for in the first 64 KiB).
    static func jpegGainMap(_ file: UnsafeRawBufferPointer, xmp: [UInt8]?) -> Manifest.ImageInfo.HDR? {
        // Whether it is one, from the base's own marks (every JPEG is asked: nothing more is read
        // of one without them).
        let text = xmp.flatMap { String(bytes: $0.prefix(1 << 16), encoding: .utf8) }
        let ultra = text?.contains("hdrgm:Version") == true
        let iso = Array("urn:iso:std:iso:ts:21496:-1".utf8)
        guard ultra || ByteSearch.find(iso, in: UnsafeRawBufferPointer(rebasing: file.prefix(1 << 16))) != nil else { return nil }
        // The headroom: the map's own numbers, where its MPF index leads to them (Ultra HDR keeps
        // them there), else the base XMP's.
        if let parameters = GainMapJPEG.read(file)?.parameters {
            return .init(kind: .gainMap, headroom: parameters.headroom)
        }
        let capacity = text.flatMap { attribute("hdrgm:HDRCapacityMax", in: $0) }.flatMap(Double.init)
        let headroom = capacity.flatMap { $0.isFinite && (0...GainMapParameters.largestCapacity).contains($0) ? pow(2, $0) : nil }
        return .init(kind: .gainMap, headroom: headroom.map { ($0 * 1000).rounded() / 1000 })
    }

    /// An XMP attribute's value (`name="value"`, or the element `<name>value</name>`), at most
    /// `limit` characters.
    static func attribute(_ name: String, in text: String, limit: Int = 32) -> String? {
        for (open, close) in [(name + "=\"", "\""), ("<" + name + ">", "<")] {
            guard let start = text.range(of: open), let end = text[start.upperBound...].range(of: close),
                text.distance(from: start.upperBound, to: end.lowerBound) <= limit
            else { continue }
            return String(text[start.upperBound..<end.lowerBound]).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
