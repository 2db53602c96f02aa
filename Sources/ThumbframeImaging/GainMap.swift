import Foundation
import ThumbframeManifest

/// How a gain map turns an SDR picture into its HDR one, one set of numbers for every channel:
/// ISO 21496-1's metadata and Ultra HDR v1's `hdrgm` XMP say the same thing. A map value `m`
/// (0…1) is a log2 gain `G = min + (max − min) · m^(1/gamma)`; the HDR picture, in the SDR
/// one's linear light, is `(sdr + offsetSDR) · 2^(G · w) − offsetHDR`, where `w` is 1 on a
/// screen with `2^capacityMax` of headroom (0 under `2^capacityMin`).
package struct GainMapParameters: Sendable, Equatable {
    /// log2 of the smallest and largest gain the map's codes 0 and 255 stand for.
    package var gainMin: Double
    package var gainMax: Double
    /// The map's codes are `normalized^gamma`.
    package var gamma: Double
    package var offsetSDR: Double
    package var offsetHDR: Double
    /// log2 of the display headroom where the HDR picture starts to show, and where it is whole.
    package var capacityMin: Double
    package var capacityMax: Double

    /// Every value to 1/10 000, the precision both forms carry (`denominator`).
    package init(
        gainMin: Double, gainMax: Double, gamma: Double = 1, offsetSDR: Double = 0, offsetHDR: Double = 0, capacityMin: Double = 0,
        capacityMax: Double
    ) {
        func rounded(_ value: Double) -> Double {
            let value = (value * Double(Self.denominator)).rounded() / Double(Self.denominator)
            return value == 0 ? 0 : value
        }
        self.gainMin = rounded(gainMin)
        self.gainMax = rounded(gainMax)
        self.gamma = rounded(gamma)
        self.offsetSDR = rounded(offsetSDR)
        self.offsetHDR = rounded(offsetHDR)
        self.capacityMin = rounded(capacityMin)
        self.capacityMax = rounded(capacityMax)
    }

    /// Every ISO 21496-1 fraction thumbframe writes has this denominator.
    static let denominator: Int32 = 10_000

    /// How many times brighter than SDR white the HDR picture's highlights are shown where the
    /// screen can: `2^capacityMax`, to 3 decimals (the manifest's `headroom`).
    package var headroom: Double { (pow(2, capacityMax) * 1000).rounded() / 1000 }

    /// The largest capacity (stops over SDR white) a map may say: `Manifest.maximumHeadroom`'s.
    package static let largestCapacity = log2(Manifest.maximumHeadroom)

    /// The numbers make a picture: finite, an SDR base (capacityMin < capacityMax), a capacity
    /// a screen means (at most `largestCapacity`: `HDRCapacityMax` 1000 would say a headroom of
    /// 10^301, 9999 an infinite one), gamma above 0, min ≤ max, and nothing out of the range a
    /// fraction of `denominator` holds. A photo whose map is not usable is shown by its SDR
    /// picture alone.
    package var isUsable: Bool {
        let values = [gainMin, gainMax, gamma, offsetSDR, offsetHDR, capacityMin, capacityMax]
        return values.allSatisfy { $0.isFinite && abs($0) < 100_000 } && gamma > 0 && gainMin <= gainMax
            && capacityMin >= 0 && capacityMin < capacityMax && capacityMax <= Self.largestCapacity && offsetSDR >= 0 && offsetHDR >= 0
    }

    /// The same numbers within what their decimal and fractional forms can differ by.
    package func agrees(with other: GainMapParameters) -> Bool {
        let pairs = [
            (gainMin, other.gainMin), (gainMax, other.gainMax), (gamma, other.gamma), (offsetSDR, other.offsetSDR),
            (offsetHDR, other.offsetHDR), (capacityMin, other.capacityMin), (capacityMax, other.capacityMax),
        ]
        return pairs.allSatisfy { abs($0.0 - $0.1) <= 1.5e-4 }
    }
}

/// Gain-map JPEGs, written and read with thumbframe's own segments: an SDR base JPEG, its
/// gain map as a second JPEG after it, found through the base's MPF (CIPA DC-007) index, and
/// described twice — Ultra HDR v1's XMP (`hdrgm:` in the map, a Container directory in the
/// base) and ISO 21496-1's APP2 box (its version in the base, every number in the map) —
/// which Chrome, Safari, Android and libultrahdr read. The layout is libultrahdr's: base APP1
/// XMP, APP2 ISO, APP2 MPF; map APP1 XMP, APP2 ISO.
package enum GainMapJPEG {
    static let xmpSignature = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let isoSignature = Array("urn:iso:std:iso:ts:21496:-1\0".utf8)
    static let mpfSignature = Array("MPF\0".utf8)

    /// `base` and `map` (each a whole JPEG without APP segments, as thumbframe's encoder writes
    /// them) made one gain-map JPEG; nil when either is not a JPEG.
    package static func assemble(base: [UInt8], map: [UInt8], parameters: GainMapParameters) -> [UInt8]? {
        guard base.starts(with: [0xFF, 0xD8]), map.starts(with: [0xFF, 0xD8]) else { return nil }
        var secondary: [UInt8] = [0xFF, 0xD8]
        secondary += segment(0xE1, xmpSignature + Array(mapXMP(parameters).utf8))
        secondary += segment(0xE2, isoSignature + iso(parameters))
        secondary += map.dropFirst(2)
        var head: [UInt8] = [0xFF, 0xD8]
        head += segment(0xE1, xmpSignature + Array(baseXMP(mapLength: secondary.count).utf8))
        head += segment(0xE2, isoSignature + [0, 0, 0, 0])
        // The MPF segment's size is fixed: its offsets are known once the base's length is.
        let mpfHeader = head.count + 4 + mpfSignature.count  // FF E2, its length, "MPF\0"
        let primaryLength = head.count + 4 + mpfSignature.count + mpfBodyLength + base.count - 2
        head += segment(
            0xE2, mpfSignature + mpf(primaryLength: primaryLength, secondaryLength: secondary.count, offset: primaryLength - mpfHeader))
        let primary = head + base.dropFirst(2)
        guard primary.count == primaryLength else { return nil }
        return primary + secondary
    }

    /// What a gain-map JPEG says of itself, as `read` finds it.
    package struct Parsed: Sendable, Equatable {
        /// The base's XMP says `hdrgm:Version` and names a GainMap item of `mapLength` bytes.
        package var baseXMPMapLength: Int?
        package var baseHasXMPVersion = false
        /// The base has the ISO 21496-1 version box.
        package var baseHasISOVersion = false
        /// The second image MPF points at: where it lies in the file.
        package var map: Range<Int>?
        /// The base's own length, as MPF gives it.
        package var mpfPrimaryLength: Int?
        /// The map's numbers, from its XMP and from its ISO box.
        package var xmp: GainMapParameters?
        package var iso: GainMapParameters?

        /// The numbers a reader takes: the ISO box's, else the XMP's.
        package var parameters: GainMapParameters? { iso ?? xmp }
    }

    /// Reads a JPEG's gain-map structure (nil: not a JPEG, or no MPF second image).
    package static func read(_ file: UnsafeRawBufferPointer) -> Parsed? {
        guard let segments = Self.segments(file, from: 0) else { return nil }
        var parsed = Parsed()
        for (marker, body) in segments {
            let bytes = UnsafeRawBufferPointer(rebasing: file[body])
            if marker == 0xE1, bytes.starts(with: xmpSignature) {
                let text = String(decoding: bytes.dropFirst(xmpSignature.count).prefix(1 << 16), as: UTF8.self)
                parsed.baseHasXMPVersion = HDRFacts.attribute("hdrgm:Version", in: text) != nil
                parsed.baseXMPMapLength = gainMapItemLength(text)
            } else if marker == 0xE2, bytes.starts(with: isoSignature) {
                parsed.baseHasISOVersion = bytes.count - isoSignature.count >= 4
            } else if marker == 0xE2, bytes.starts(with: mpfSignature), parsed.map == nil {
                let tiff = body.lowerBound + mpfSignature.count
                guard let entries = mpfEntries(UnsafeRawBufferPointer(rebasing: file[tiff..<body.upperBound])), entries.count >= 2
                else { continue }
                parsed.mpfPrimaryLength = entries[0].size
                let start = tiff + entries[1].offset
                guard entries[1].offset > 0, entries[1].size > 0, start < file.count, entries[1].size <= file.count - start else {
                    continue
                }
                parsed.map = start..<(start + entries[1].size)
            }
        }
        guard let map = parsed.map, let mapSegments = Self.segments(file, from: map.lowerBound) else { return nil }
        for (marker, body) in mapSegments where body.upperBound <= map.upperBound {
            let bytes = UnsafeRawBufferPointer(rebasing: file[body])
            if marker == 0xE1, bytes.starts(with: xmpSignature) {
                parsed.xmp = xmpParameters(String(decoding: bytes.dropFirst(xmpSignature.count).prefix(1 << 16), as: UTF8.self))
            } else if marker == 0xE2, bytes.starts(with: isoSignature) {
                parsed.iso = isoParameters(Array(bytes.dropFirst(isoSignature.count)))
            }
        }
        return parsed
    }

    // MARK: Writing

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// A value as XMP writes it: the shortest decimal of a multiple of 1/10 000.
    static func decimal(_ value: Double) -> String {
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    static func baseXMP(mapLength: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="thumbframe">\
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:Container="http://ns.google.com/photos/1.0/container/" \
        xmlns:Item="http://ns.google.com/photos/1.0/container/item/" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" \
        hdrgm:Version="1.0"><Container:Directory><rdf:Seq>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" Item:Length="\(mapLength)"/></rdf:li>\
        </rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
        """
    }

    static func mapXMP(_ p: GainMapParameters) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/" x:xmptk="thumbframe">\
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description rdf:about="" xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0" \
        hdrgm:GainMapMin="\(decimal(p.gainMin))" hdrgm:GainMapMax="\(decimal(p.gainMax))" hdrgm:Gamma="\(decimal(p.gamma))" \
        hdrgm:OffsetSDR="\(decimal(p.offsetSDR))" hdrgm:OffsetHDR="\(decimal(p.offsetHDR))" \
        hdrgm:HDRCapacityMin="\(decimal(p.capacityMin))" hdrgm:HDRCapacityMax="\(decimal(p.capacityMax))" \
        hdrgm:BaseRenditionIsHDR="False"/></rdf:RDF></x:xmpmeta>
        """
    }

    /// ISO 21496-1's box: versions 0, one channel, the base's colour space, every value its own
    /// fraction over `denominator` (the form Skia and libultrahdr both read).
    static func iso(_ p: GainMapParameters) -> [UInt8] {
        var out: [UInt8] = [0, 0, 0, 0, 0x40]
        func u32(_ value: UInt32) {
            out += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
        }
        func fraction(_ value: Double) {
            u32(UInt32(bitPattern: Int32((value * Double(GainMapParameters.denominator)).rounded())))
            u32(UInt32(GainMapParameters.denominator))
        }
        for value in [p.capacityMin, p.capacityMax, p.gainMin, p.gainMax, p.gamma, p.offsetSDR, p.offsetHDR] { fraction(value) }
        return out
    }

    /// The MPF body after "MPF\0": a big-endian TIFF header, an index IFD of three entries
    /// (version, image count, the entries' offset) and the two 16-byte MP entries.
    static let mpfBodyLength = 8 + 2 + 3 * 12 + 4 + 2 * 16

    static func mpf(primaryLength: Int, secondaryLength: Int, offset: Int) -> [UInt8] {
        var out: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8]
        func u16(_ value: Int) { out += [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) { out += [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
        u16(3)
        u16(0xB000)
        u16(7)
        u32(4)
        out += Array("0100".utf8)
        u16(0xB001)
        u16(4)
        u32(1)
        u32(2)
        u16(0xB002)
        u16(7)
        u32(32)
        u32(8 + 2 + 3 * 12 + 4)  // the entries follow the IFD
        u32(0)  // no next IFD
        // The base: a baseline MP primary image (0x030000) at offset 0; the map: no type, after it.
        u32(0x0003_0000)
        u32(primaryLength)
        u32(0)
        u32(0)
        u32(0)
        u32(secondaryLength)
        u32(offset)
        u32(0)
        return out
    }

    // MARK: Reading

    /// A JPEG's marker segments from its SOI at `start` to its first SOS: marker and body range
    /// (after the length). nil when it is not a JPEG there; at most 64 segments.
    static func segments(_ file: UnsafeRawBufferPointer, from start: Int) -> [(UInt8, Range<Int>)]? {
        guard start >= 0, file.count - start >= 4, file[start] == 0xFF, file[start + 1] == 0xD8 else { return nil }
        var found: [(UInt8, Range<Int>)] = []
        var at = start + 2
        while found.count < 64, at + 4 <= file.count, file[at] == 0xFF {
            let marker = file[at + 1]
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(file[at + 2]) << 8 | Int(file[at + 3])
            guard length >= 2, at + 2 + length <= file.count else { break }
            found.append((marker, (at + 4)..<(at + 2 + length)))
            at += 2 + length
        }
        return found
    }

    /// The MP entries (size, offset) of an MPF TIFF block, either byte order; at most 16.
    static func mpfEntries(_ tiff: UnsafeRawBufferPointer) -> [(size: Int, offset: Int)]? {
        guard let numbers = TIFFNumbers(Array(tiff.prefix(4096)), byteOrderAt: 0), let ifd = numbers.number(4, 4),
            let count = numbers.number(ifd, 2)
        else { return nil }
        for index in 0..<min(count, 32) {
            let entry = ifd + 2 + index * 12
            guard numbers.number(entry, 2) == 0xB002, let length = numbers.number(entry + 4, 4),
                let offset = numbers.number(entry + 8, 4)
            else { continue }
            return (0..<min(length / 16, 16)).compactMap { image in
                let at = offset + image * 16
                guard let size = numbers.number(at + 4, 4), let start = numbers.number(at + 8, 4) else { return nil }
                return (size, start)
            }
        }
        return nil
    }

    /// `Item:Length` of the Container directory's GainMap item.
    static func gainMapItemLength(_ text: String) -> Int? {
        guard let item = text.range(of: "Item:Semantic=\"GainMap\"") else { return nil }
        let rest = String(text[item.upperBound...].prefix(400))
        return HDRFacts.attribute("Item:Length", in: rest).flatMap { Int($0) }
    }

    /// The `hdrgm:` numbers of a map's XMP (Ultra HDR v1's defaults where one is left out); nil
    /// without `hdrgm:Version`, with an HDR base, or with per-channel (rdf:Seq) numbers.
    static func xmpParameters(_ text: String) -> GainMapParameters? {
        guard HDRFacts.attribute("hdrgm:Version", in: text) != nil else { return nil }
        if let base = HDRFacts.attribute("hdrgm:BaseRenditionIsHDR", in: text), base.lowercased() == "true" { return nil }
        func value(_ name: String, _ fallback: Double?) -> Double? {
            guard text.contains("hdrgm:" + name) else { return fallback }
            return HDRFacts.attribute("hdrgm:" + name, in: text).flatMap(Double.init)
        }
        guard let gainMax = value("GainMapMax", nil), let capacityMax = value("HDRCapacityMax", nil),
            let gainMin = value("GainMapMin", 0), let gamma = value("Gamma", 1), let offsetSDR = value("OffsetSDR", 1.0 / 64),
            let offsetHDR = value("OffsetHDR", 1.0 / 64), let capacityMin = value("HDRCapacityMin", 0)
        else { return nil }
        let parameters = GainMapParameters(
            gainMin: gainMin, gainMax: gainMax, gamma: gamma, offsetSDR: offsetSDR, offsetHDR: offsetHDR, capacityMin: capacityMin,
            capacityMax: capacityMax)
        return parameters.isUsable ? parameters : nil
    }

    /// The numbers of an ISO 21496-1 box (after its signature); nil for a version box alone, a
    /// minimum version above 0, an HDR base, or channels with different numbers.
    static func isoParameters(_ box: [UInt8]) -> GainMapParameters? {
        var at = 0
        func u8() -> Int? {
            guard at < box.count else { return nil }
            defer { at += 1 }
            return Int(box[at])
        }
        func u16() -> Int? { u8().flatMap { high in u8().map { high << 8 | $0 } } }
        func u32() -> UInt32? {
            guard at + 4 <= box.count else { return nil }
            defer { at += 4 }
            return box[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }
        func fraction(signed: Bool) -> Double? {
            guard let numerator = u32(), let denominator = u32(), denominator > 0 else { return nil }
            return (signed ? Double(Int32(bitPattern: numerator)) : Double(numerator)) / Double(denominator)
        }
        guard u16() == 0, u16() != nil, let flags = u8() else { return nil }
        let channels = flags & 0x80 != 0 ? 3 : 1
        // libultrahdr's drafts wrote one denominator for all (0x08); Skia reads only this form.
        var common: UInt32?
        if flags & 0x08 != 0 { common = u32() }
        func value(signed: Bool) -> Double? {
            if let common {
                guard common > 0, let numerator = u32() else { return nil }
                return (signed ? Double(Int32(bitPattern: numerator)) : Double(numerator)) / Double(common)
            }
            return fraction(signed: signed)
        }
        guard let baseHeadroom = value(signed: false), let alternateHeadroom = value(signed: false) else { return nil }
        var sets: [[Double]] = []
        for _ in 0..<channels {
            guard let min = value(signed: true), let max = value(signed: true), let gamma = value(signed: false),
                let base = value(signed: true), let alternate = value(signed: true)
            else { return nil }
            sets.append([min, max, gamma, base, alternate])
        }
        guard let first = sets.first, sets.allSatisfy({ zip($0, first).allSatisfy { abs($0 - $1) < 1e-6 } }) else { return nil }
        let parameters = GainMapParameters(
            gainMin: first[0], gainMax: first[1], gamma: first[2], offsetSDR: first[3], offsetHDR: first[4], capacityMin: baseHeadroom,
            capacityMax: alternateHeadroom)
        return parameters.isUsable ? parameters : nil
    }
}
