import Foundation
import ThumbframeImaging

/// Google and Samsung Motion Photos: a JPEG with a short MP4 appended, announced in its XMP
/// (`GCamera:MotionPhoto` or the older `GCamera:MicroVideo`). The MP4 is found where the XMP
/// says — the `MotionPhoto` item of its `Container:Directory` (its `Item:Length` from the end),
/// or `MicroVideoOffset` bytes from the end — else after Samsung's `MotionPhoto_Data` marker,
/// else at the last `ftyp` box after the JPEG's own data; wherever found, it must start with an
/// `ftyp` box. A HEIF Motion Photo keeps its MP4 in a top-level `mpvd` box (`locateInHEIF`).
enum MotionPhoto {
    /// How far into the file the XMP packet is looked for (it sits in an APP1 segment near the start).
    static let xmpSearchBytes = 1 << 20

    /// Where the embedded MP4 lies in the JPEG's bytes, or nil when the file is not a Motion Photo.
    static func locate(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        let head = UnsafeRawBufferPointer(rebasing: bytes.prefix(xmpSearchBytes))
        guard let open = find(Array("<x:xmpmeta".utf8), in: head),
            let close = find(Array("</x:xmpmeta>".utf8), in: head, from: open)
        else { return nil }
        let xmp = Array(head[open..<close])
        let flagged = ["MotionPhoto", "MicroVideo"].contains { flag in
            value(of: "GCamera:\(flag)", in: xmp) == "1"
        }
        guard flagged else { return nil }
        let count = bytes.count
        var candidates: [Int] = []
        // A length from the end counts only when it lies inside the file: the XMP is the file's
        // own text, and any integer (Int.min, Int.max, 20 digits) may stand there.
        func fromEnd(_ text: String?) -> Int? { text.flatMap(Int.init).flatMap { (1...count).contains($0) ? count - $0 : nil } }
        if let start = fromEnd(motionItemLength(xmp)) { candidates.append(start) }
        if let start = fromEnd(value(of: "GCamera:MicroVideoOffset", in: xmp)) { candidates.append(start) }
        if let marker = find(Array("MotionPhoto_Data".utf8), in: bytes, from: close) { candidates.append(marker + 16) }
        if let box = lastFTYP(bytes, after: close) { candidates.append(box) }
        return candidates.first { start in
            start > close && start + 16 <= count && find(Array("ftyp".utf8), in: bytes, from: start + 4) == start + 4
        }.map { $0..<count }
    }

    /// Where the MP4 of a HEIF Motion Photo lies: the payload of its top-level `mpvd` box (Google's
    /// Motion Photo format for HEIC and AVIF, and Samsung's One UI 6 HEICs), which must start
    /// with an `ftyp` box; nil when the file has none. The top-level boxes are walked by their
    /// sizes alone (at most `maximumBoxes`), every size checked against the file's end.
    static func locateInHEIF(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        let count = bytes.count
        var at = 0
        for _ in 0..<maximumBoxes {
            guard at <= count - 8 else { return nil }
            let size32 = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            let type = Array(bytes[(at + 4)..<(at + 8)])
            var header = 8
            var size = size32
            if size32 == 1 {
                // A 64-bit size: any value past the file's end (or Int's) ends the walk.
                guard at <= count - 16 else { return nil }
                let large = bytes[(at + 8)..<(at + 16)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                guard large <= UInt64(count - at) else { return nil }
                size = Int(large)
                header = 16
            } else if size32 == 0 {
                size = count - at  // to the end of the file
            }
            guard size >= header, size <= count - at else { return nil }
            if type == Array("mpvd".utf8) {
                let payload = (at + header)..<(at + size)
                guard payload.count >= 16, Array(bytes[(payload.lowerBound + 4)..<(payload.lowerBound + 8)]) == Array("ftyp".utf8)
                else { return nil }
                return payload
            }
            at += size
        }
        return nil
    }

    /// How many top-level boxes `locateInHEIF` reads before it gives up (a HEIC has about five).
    static let maximumBoxes = 4096

    /// The `Item:Length` of the `Container:Item` whose `Item:Semantic` is `MotionPhoto`, as written.
    private static func motionItemLength(_ xmp: [UInt8]) -> String? {
        var from = 0
        let itemOpen = Array("<Container:Item".utf8)
        while let start = find(itemOpen, in: xmp, from: from) {
            let end = find(Array(">".utf8), in: xmp, from: start) ?? xmp.count
            let item = Array(xmp[start..<end])
            if value(of: "Item:Semantic", in: item) == "MotionPhoto" { return value(of: "Item:Length", in: item) }
            from = end
        }
        return nil
    }

    /// An XMP property's value, written as an attribute (`name="value"`) or an element
    /// (`<name>value</name>`); at most 64 bytes of it.
    private static func value(of name: String, in xmp: [UInt8]) -> String? {
        for (open, close) in [(name + "=\"", "\""), ("<" + name + ">", "<")] {
            guard let start = find(Array(open.utf8), in: xmp), start + open.utf8.count <= xmp.count else { continue }
            let from = start + open.utf8.count
            guard let end = find(Array(close.utf8), in: xmp, from: from), end - from <= 64 else { continue }
            return String(decoding: xmp[from..<end], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The start of the last `ftyp` box after `after` whose size and brand are an MP4's.
    private static func lastFTYP(_ bytes: UnsafeRawBufferPointer, after: Int) -> Int? {
        let brands = ["isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "qt  "].map { Array($0.utf8) }
        var found: Int?
        var from = after
        while let tag = find(Array("ftyp".utf8), in: bytes, from: from) {
            from = tag + 4
            guard tag >= 4, tag + 8 <= bytes.count else { continue }
            let size = bytes[(tag - 4)..<tag].reduce(0) { $0 << 8 | Int($1) }
            if (16...512).contains(size), brands.contains(Array(bytes[(tag + 4)..<(tag + 8)])) { found = tag - 4 }
        }
        return found
    }

    private static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from: Int = 0) -> Int? {
        ByteSearch.find(needle, in: haystack, from: from)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int = 0) -> Int? {
        haystack.withUnsafeBytes { ByteSearch.find(needle, in: $0, from: from) }
    }
}
