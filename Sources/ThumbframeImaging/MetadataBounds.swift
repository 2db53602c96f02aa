import Foundation

/// Metadata is bounded before any decoder parses it: what a loader would inflate or allocate per
/// entry never reaches it. A PNG's text chunks (`tEXt`, `zTXt`, `iTXt`) are dropped from the
/// bytes libvips is given — thumbframe reads nothing from them, and libpng inflates each `zTXt`
/// up to 8 MB (200 of them in a 1.5 MB file took 22 s and 2.3 GB). A TIFF's EXIF is gathered by
/// `TIFFExifBlock`, which takes each wanted tag once and at most `maximumValueBytes` of it.
/// The file's hash and size are those of the file as it is; only the decoder's copy is changed.
package enum MetadataBounds {
    /// Ancillary chunks that carry only text.
    static let pngTextChunks: Set<[UInt8]> = [Array("tEXt".utf8), Array("zTXt".utf8), Array("iTXt".utf8)]

    /// The PNG without its text chunks, or nil when `file` is not a PNG or has none (the
    /// common case: nothing is copied).
    static func pngWithoutText(_ file: UnsafeRawBufferPointer) -> [UInt8]? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard file.count > 8, file.prefix(8).elementsEqual(signature) else { return nil }
        var kept: [Range<Int>] = [0..<8]
        var dropped = false
        var at = 8
        while at + 12 <= file.count {
            let length = Int(file[at]) << 24 | Int(file[at + 1]) << 16 | Int(file[at + 2]) << 8 | Int(file[at + 3])
            let end = at + 12 + length
            guard length <= 0x7FFF_FFFF, end <= file.count else { break }  // damaged: the decoder says so
            if pngTextChunks.contains(Array(file[(at + 4)..<(at + 8)])) {
                dropped = true
            } else if let last = kept.last, last.upperBound == at {
                kept[kept.count - 1] = last.lowerBound..<end
            } else {
                kept.append(at..<end)
            }
            at = end
        }
        guard dropped else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(file.count)
        for range in kept { bytes += file[range] }
        if at < file.count { bytes += file[at...] }
        return bytes
    }

    /// A WebP without its `EXIF`, `XMP ` and `ICCP` chunks (and their flags in `VP8X` cleared).
    /// libvips 8.14's webpsave writes an EXIF block of its own making (resolution, orientation)
    /// whatever it is told: no thumbnail carries any. Anything that is not a WebP of the
    /// extended layout is returned as it is.
    package static func webpWithoutMetadata(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 20, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) else {
            return bytes
        }
        let dropped: Set<[UInt8]> = [Array("EXIF".utf8), Array("XMP ".utf8), Array("ICCP".utf8)]
        var out = Array(bytes[0..<12])
        var at = 12
        while at + 8 <= bytes.count {
            let kind = Array(bytes[at..<(at + 4)])
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            let end = at + 8 + size + (size & 1)
            guard end <= bytes.count else { return bytes }  // not a layout this understands: untouched
            if !dropped.contains(kind) {
                var chunk = Array(bytes[at..<end])
                // VP8X flags: ICC 0x20, EXIF 0x08, XMP 0x04.
                if kind == Array("VP8X".utf8), chunk.count > 8 { chunk[8] &= ~UInt8(0x20 | 0x08 | 0x04) }
                out += chunk
            }
            at = end
        }
        let riff = out.count - 8
        out[4] = UInt8(riff & 0xFF)
        out[5] = UInt8(riff >> 8 & 0xFF)
        out[6] = UInt8(riff >> 16 & 0xFF)
        out[7] = UInt8(riff >> 24 & 0xFF)
        return out
    }
}
