import CExif
import CThumbframeShim
import ThumbframeManifest

/// What thumbframe takes from an EXIF block.
struct ExifFacts: Equatable {
    /// IFD0 Orientation, when present and 1–8.
    var orientation: Int?
    /// Capture facts for the manifest.
    var info = Manifest.ExifInfo()
}

/// Reads EXIF blocks with libexif. The only file that touches libexif.
enum ExifReader {
    /// The most libexif reads of an EXIF block: a JPEG APP1 segment's limit (64 KiB less its
    /// header). Longer input is cut here rather than copied in full.
    static let maximumBlockLength = 0xFFF0

    /// Parses an EXIF block: `Exif\0\0` + TIFF structure (as libvips hands out JPEG's), or a
    /// bare TIFF structure (some HEIF files' EXIF item, or a whole TIFF file, whose IFD0 is its
    /// EXIF IFD0). libexif reads at most 64 KiB (the JPEG APP1 limit), so a TIFF whose IFDs lie
    /// further in yields no capture facts; its orientation still comes from libvips.
    static func read(_ block: [UInt8]) -> ExifFacts {
        let isBareTIFF = block.starts(with: [0x49, 0x49, 0x2A, 0x00]) || block.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
        // libexif wants the APP1 signature in front of the TIFF header.
        let bytes = isBareTIFF ? Array("Exif\0\0".utf8) + block.prefix(maximumBlockLength) : block
        guard bytes.count > 6, bytes.count <= Int(UInt32.max) else { return ExifFacts() }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let exif = tf_exif_load(buffer.baseAddress, UInt32(buffer.count)) else { return ExifFacts() }
            defer { exif_data_unref(exif) }
            return facts(exif)
        }
    }

    private static func facts(_ exif: UnsafeMutablePointer<ExifData>) -> ExifFacts {
        var facts = ExifFacts()
        if let entry = tf_exif_entry(exif, EXIF_IFD_0, EXIF_TAG_ORIENTATION) {
            let value = Int(tf_exif_short(exif, entry))
            if (1...8).contains(value) { facts.orientation = value }
        }
        let dateTags: [(ExifIfd, ExifTag)] = [
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL),
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED),
            (EXIF_IFD_0, EXIF_TAG_DATE_TIME),
        ]
        for (ifd, tag) in dateTags {
            if let date = ascii(exif, ifd, tag).flatMap(ExifText.captureDate) {
                facts.info.capturedAt = date
                // The offset belongs to DateTimeOriginal only.
                if tag == EXIF_TAG_DATE_TIME_ORIGINAL {
                    facts.info.offset = ascii(exif, EXIF_IFD_EXIF, EXIF_TAG_OFFSET_TIME_ORIGINAL)
                        .flatMap(ExifText.utcOffset)
                }
                break
            }
        }
        facts.info.make = ascii(exif, EXIF_IFD_0, EXIF_TAG_MAKE).flatMap(ExifText.label)
        facts.info.model = ascii(exif, EXIF_IFD_0, EXIF_TAG_MODEL).flatMap(ExifText.label)
        return facts
    }

    /// An ASCII entry's bytes up to the first NUL, or nil when absent or not ASCII-typed.
    private static func ascii(_ exif: UnsafeMutablePointer<ExifData>, _ ifd: ExifIfd, _ tag: ExifTag) -> [UInt8]? {
        guard let entry = tf_exif_entry(exif, ifd, tag), entry.pointee.format == EXIF_FORMAT_ASCII,
            let data = entry.pointee.data, entry.pointee.size > 0
        else { return nil }
        let bytes = UnsafeBufferPointer(start: data, count: Int(entry.pointee.size))
        return Array(bytes.prefix { $0 != 0 })
    }
}

/// Validation of EXIF text values: files in the wild hold blanks, zeros and garbage here.
enum ExifText {
    /// `YYYY:MM:DD HH:MM:SS` (or with `-` in the date) to `YYYY-MM-DDTHH:MM:SS`; nil when not a real date.
    static func captureDate(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        let chars = Array(text.utf8)
        guard chars.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (48...57).contains(chars[index]) else { return nil }
                value = value * 10 + Int(chars[index] - 48)
            }
            return value
        }
        let dateSeparators: Set<UInt8> = [58, 45]  // ':' '-'
        guard dateSeparators.contains(chars[4]), dateSeparators.contains(chars[7]),
            chars[10] == 32 || chars[10] == 84,  // ' ' or 'T'
            chars[13] == 58, chars[16] == 58,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1..<10_000).contains(year), (1...12).contains(month), (1...31).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }

    /// `+HH:MM` / `-HH:MM`; nil otherwise.
    static func utcOffset(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        let chars = Array(text.utf8)
        guard chars.count == 6, chars[0] == 43 || chars[0] == 45, chars[3] == 58,
            [1, 2, 4, 5].allSatisfy({ (48...57).contains(chars[$0]) })
        else { return nil }
        let hours = Int(chars[1] - 48) * 10 + Int(chars[2] - 48)
        let minutes = Int(chars[4] - 48) * 10 + Int(chars[5] - 48)
        guard hours <= 14, minutes <= 59 else { return nil }
        return text
    }

    /// Make or model: printable text, trimmed, at most 128 characters; nil when empty.
    static func label(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
            .unicodeScalars.filter { !$0.properties.generalCategory.isControlOrUnassigned }
        let trimmed = String(String.UnicodeScalarView(text)).trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        return String(trimmed.prefix(128))
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrUnassigned: Bool {
        switch self {
        case .control, .unassigned, .format, .surrogate, .privateUse: true
        default: false
        }
    }
}
