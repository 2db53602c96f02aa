internal import CThumbframeShim
import Foundation
import ThumbframeManifest

extension ImageHeader {
    /// A RAW file's header from LibRaw: the picture LibRaw renders (its size before the flip) and
    /// the flip as an EXIF orientation; EXIF from the file's own TIFF structure where it has one,
    /// else the camera and time LibRaw read.
    init(raw info: TFRawInfo, file: UnsafeRawBufferPointer) {
        format = Self.rawFormat(info, file)
        storedWidth = Int(info.width)
        storedHeight = Int(info.height)
        // LibRaw's flip: 3 turns half round, 5 a quarter counter-clockwise, 6 a quarter clockwise.
        orientation =
            switch info.flip {
            case 3: 3
            case 5: 8
            case 6: 6
            default: 1
            }
        pages = 1
        hasAlpha = false
        isCMYK = false
        interlaced = false
        let tiff = file.starts(with: [0x49, 0x49, 0x2A, 0x00]) || file.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
        let facts = tiff ? ExifReader.read(TIFFExifBlock.block(file) ?? Array(file.prefix(ExifReader.maximumBlockLength))) : ExifFacts()
        exifOrientation = facts.orientation
        exif = facts.info
        contentIdentifier = facts.contentIdentifier
        burst = facts.burst
        location = facts.location
        func text(_ tuple: some Any) -> String? {
            let bytes = withUnsafeBytes(of: tuple) { Array($0.prefix { $0 != 0 }) }
            return ExifText.label(bytes)
        }
        if exif.make == nil { exif.make = text(info.make) }
        if exif.model == nil { exif.model = text(info.model) }
        if exif.capturedAt == nil, info.timestamp > 0 {
            // LibRaw made its timestamp with mktime from the local time it read: localtime undoes it.
            var seconds = time_t(info.timestamp)
            var parts = tm()
            if localtime_r(&seconds, &parts) != nil {
                exif.capturedAt = String(
                    format: "%04d-%02d-%02dT%02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                    Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
            }
        }
    }

    /// `dng`, or the camera maker's RAW format from the file's signature or maker.
    static func rawFormat(_ info: TFRawInfo, _ file: UnsafeRawBufferPointer) -> String {
        if info.dng != 0 { return "dng" }
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let bytes = Array(text.utf8)
            return file.count >= offset + bytes.count && file[offset..<offset + bytes.count].elementsEqual(bytes)
        }
        if starts("IIRO") || starts("IIRS") { return "orf" }
        if file.starts(with: [0x49, 0x49, 0x55, 0x00]) { return "rw2" }
        if starts("FUJIFILMCCD-RAW") { return "raf" }
        if starts("ftypcrx ", at: 4) { return "cr3" }
        if starts("CR", at: 8) { return "cr2" }
        let make = withUnsafeBytes(of: info.make) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }.uppercased()
        for (maker, format) in [
            ("NIKON", "nef"), ("SONY", "arw"), ("PENTAX", "pef"), ("RICOH", "pef"), ("SAMSUNG", "srw"), ("CANON", "crw"),
        ]
        where make.hasPrefix(maker) {
            return format
        }
        return "raw"
    }
}
