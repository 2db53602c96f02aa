internal import CExif
internal import CThumbframeShim
import Foundation
import ThumbframeManifest

/// What thumbframe takes from an EXIF block.
struct ExifFacts: Equatable {
    /// IFD0 Orientation, when present and 1–8.
    var orientation: Int?
    /// Capture facts for the manifest.
    var info = Manifest.ExifInfo()
    /// Apple's content identifier from the MakerNote: what pairs a Live Photo with its MOV.
    var contentIdentifier: String?
    /// The HDR headroom Apple's MakerNote gives a photo with a gain map (`AppleMakerNote.headroom`).
    var appleHeadroom: Double?
    /// The burst Apple's MakerNote says the photo is a frame of.
    var burst: BurstMark?
    /// The GPS position, read only to be made coarse (`--locations`) and never kept as it is.
    var location: GeoPoint?
}

/// A position in degrees (WGS 84), as a GPS IFD gives it.
package struct GeoPoint: Sendable, Equatable, Hashable {
    package var latitude: Double
    package var longitude: Double

    package init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Reads EXIF blocks with libexif. The only file that touches libexif.
enum ExifReader {
    /// The most libexif reads of an EXIF block: a JPEG APP1 segment's limit (64 KiB less its
    /// header). Longer input is cut here rather than copied in full.
    static let maximumBlockLength = 0xFFF0

    /// Parses an EXIF block: `Exif\0\0` + TIFF structure (as libvips hands out JPEG's), or a
    /// bare TIFF structure (some HEIF files' EXIF item, or a whole TIFF file, whose IFD0 is its
    /// EXIF IFD0). libexif follows no offset past 64 KiB (the JPEG APP1 limit): a TIFF file is
    /// first gathered into a small block by `TIFFExifBlock`, wherever its IFDs lie.
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
        // The first date that is a real calendar date, with the fractional seconds and UTC
        // offset that belong to that date and no other.
        let dates: [(ExifIfd, ExifTag, subSeconds: ExifTag, offset: ExifTag)] = [
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, EXIF_TAG_OFFSET_TIME_ORIGINAL),
            (EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_DIGITIZED, EXIF_TAG_SUB_SEC_TIME_DIGITIZED, EXIF_TAG_OFFSET_TIME_DIGITIZED),
            (EXIF_IFD_0, EXIF_TAG_DATE_TIME, EXIF_TAG_SUB_SEC_TIME, EXIF_TAG_OFFSET_TIME),
        ]
        for (ifd, tag, subSeconds, offset) in dates {
            guard let date = ascii(exif, ifd, tag).flatMap(ExifText.captureDate) else { continue }
            let fraction = ascii(exif, EXIF_IFD_EXIF, subSeconds).flatMap(ExifText.fraction) ?? ""
            facts.info.capturedAt = date + fraction
            facts.info.offset = ascii(exif, EXIF_IFD_EXIF, offset).flatMap(ExifText.utcOffset)
            break
        }
        facts.info.make = ascii(exif, EXIF_IFD_0, EXIF_TAG_MAKE).flatMap(ExifText.label)
        facts.info.model = ascii(exif, EXIF_IFD_0, EXIF_TAG_MODEL).flatMap(ExifText.label)
        facts.location = location(exif)
        if let entry = tf_exif_entry(exif, EXIF_IFD_EXIF, EXIF_TAG_MAKER_NOTE), let data = entry.pointee.data, entry.pointee.size > 0 {
            let note = Array(UnsafeBufferPointer(start: data, count: Int(entry.pointee.size)))
            facts.contentIdentifier = AppleMakerNote.contentIdentifier(note)
            facts.appleHeadroom = AppleMakerNote.headroom(note)
            facts.burst = BurstMark.apple(note)
        }
        return facts
    }

    /// The GPS IFD's latitude and longitude (degrees, minutes, seconds as three rationals, with
    /// their N/S and E/W references); nil when either is missing, out of range, or 0, 0 (a
    /// camera without a fix).
    private static func location(_ exif: UnsafeMutablePointer<ExifData>) -> GeoPoint? {
        let order = exif_data_get_byte_order(exif)
        func degrees(_ tag: ExifTag, _ referenceTag: ExifTag, negative: UInt8) -> Double? {
            guard let entry = tf_exif_entry(exif, EXIF_IFD_GPS, tag), entry.pointee.format == EXIF_FORMAT_RATIONAL,
                entry.pointee.components == 3, let data = entry.pointee.data, entry.pointee.size >= 24
            else { return nil }
            var parts: [Double] = []
            for index in 0..<3 {
                let value = exif_get_rational(data + index * 8, order)
                guard value.denominator != 0 else { return nil }
                parts.append(Double(value.numerator) / Double(value.denominator))
            }
            let value = parts[0] + parts[1] / 60 + parts[2] / 3600
            let reference = ascii(exif, EXIF_IFD_GPS, referenceTag)?.first
            return reference == negative ? -value : value
        }
        // libexif names the GPS tags with macros, imported as numbers.
        let tag = { (number: Int32) in ExifTag(rawValue: UInt32(number)) }
        guard let latitude = degrees(tag(EXIF_TAG_GPS_LATITUDE), tag(EXIF_TAG_GPS_LATITUDE_REF), negative: UInt8(ascii: "S")),
            let longitude = degrees(tag(EXIF_TAG_GPS_LONGITUDE), tag(EXIF_TAG_GPS_LONGITUDE_REF), negative: UInt8(ascii: "W")),
            latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180, latitude != 0 || longitude != 0
        else { return nil }
        return GeoPoint(latitude: latitude, longitude: longitude)
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
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second),
            day <= daysIn(month: month, year: year)
        else { return nil }
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }

    /// Days in a month of the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// SubSecTime* (`123`, `5  `) as the fraction of a second, `.123`; nil when not digits.
    static func fraction(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return "." + text
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

    /// Make or model: printable text, trimmed, at most 128 characters; nil when empty. A control
    /// character (a tab, a line break) becomes a space, so the words on either side stay apart;
    /// invisible format and unassigned characters are dropped.
    static func label(_ bytes: [UInt8]) -> String? {
        var scalars = String.UnicodeScalarView()
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control: scalars.append(" ")
            case .unassigned, .format, .surrogate, .privateUse: continue
            default: scalars.append(scalar)
            }
        }
        let trimmed = String(scalars).trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        return String(trimmed.prefix(128))
    }
}

/// The EXIF of a TIFF file, gathered into a small TIFF structure libexif can read whole.
///
/// A TIFF's IFD0 is its EXIF IFD0, but writers put IFDs anywhere, often after megabytes of
/// pixels, and libexif follows no offset past 64 KiB. This copies the entries thumbframe reads
/// (from IFD0 and the Exif IFD, wherever they lie) with their values into a block of a few
/// hundred bytes in the file's byte order; libexif then parses that block as usual.
enum TIFFExifBlock {
    static let ifd0Tags: Set<UInt16> = [0x010F, 0x0110, 0x0112, 0x0132]  // Make, Model, Orientation, DateTime
    /// DateTimeOriginal, DateTimeDigitized, OffsetTime*, SubSecTime*.
    static let exifTags: Set<UInt16> = [0x9003, 0x9004, 0x9010, 0x9011, 0x9012, 0x9290, 0x9291, 0x9292]
    static let exifPointer: UInt16 = 0x8769
    /// The longest value taken (dates are 20 bytes, a camera's make or model a few dozen).
    static let maximumValueBytes = 1024

    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        var value: [UInt8]
    }

    /// The gathered block (a bare TIFF structure), or nil when `file` is not a classic TIFF.
    static func block(_ file: UnsafeRawBufferPointer) -> [UInt8]? {
        guard file.count >= 8 else { return nil }
        let little: Bool
        switch (file[0], file[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> UInt16? {
            guard at >= 0, at + 2 <= file.count else { return nil }
            return little ? UInt16(file[at]) | UInt16(file[at + 1]) << 8 : UInt16(file[at]) << 8 | UInt16(file[at + 1])
        }
        func u32(_ at: Int) -> UInt32? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? UInt32(a) | UInt32(b) << 16 : UInt32(a) << 16 | UInt32(b)
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return nil }

        /// The wanted entries of the IFD at `offset` (the first of each tag: a file that repeats
        /// one entry 65 535 times gives it once), and the Exif IFD pointer if it has one. The
        /// gathered block is thus at most a dozen values of `maximumValueBytes` each, whatever
        /// the file declares.
        func entries(at offset: Int, wanted: Set<UInt16>) -> (entries: [Entry], exif: Int?) {
            guard let count = u16(offset) else { return ([], nil) }
            var found: [Entry] = []
            var exif: Int?
            for index in 0..<Int(count) {
                let at = offset + 2 + 12 * index
                guard let tag = u16(at), let type = u16(at + 2), let components = u32(at + 4) else { break }
                if tag == exifPointer, exif == nil, let pointer = u32(at + 8) { exif = Int(pointer) }
                guard wanted.contains(tag), !found.contains(where: { $0.tag == tag }) else { continue }
                let sizes: [UInt16: Int] = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8]
                guard let size = sizes[type], size * Int(components) <= maximumValueBytes else { continue }
                let length = size * Int(components)
                let start = length <= 4 ? at + 8 : Int(u32(at + 8) ?? UInt32.max)
                guard start + length <= file.count else { continue }
                found.append(Entry(tag: tag, type: type, count: components, value: Array(file[start..<start + length])))
            }
            return (found, exif)
        }
        let first = entries(at: Int(ifd0), wanted: ifd0Tags)
        let exif = first.exif.map { entries(at: $0, wanted: exifTags).entries } ?? []

        var out: [UInt8] = []
        func put16(_ value: UInt16) {
            out += little ? [UInt8(value & 0xFF), UInt8(value >> 8)] : [UInt8(value >> 8), UInt8(value & 0xFF)]
        }
        func put32(_ value: UInt32) {
            if little {
                put16(UInt16(value & 0xFFFF))
                put16(UInt16(value >> 16))
            } else {
                put16(UInt16(value >> 16))
                put16(UInt16(value & 0xFFFF))
            }
        }
        var ifd0Entries = first.entries
        if !exif.isEmpty { ifd0Entries.append(Entry(tag: exifPointer, type: 4, count: 1, value: [])) }
        ifd0Entries.sort { $0.tag < $1.tag }
        let exifEntries = exif.sorted { $0.tag < $1.tag }
        let ifd0Size = 2 + 12 * ifd0Entries.count + 4
        let exifOffset = 8 + ifd0Size
        let dataOffset = exifOffset + (exifEntries.isEmpty ? 0 : 2 + 12 * exifEntries.count + 4)
        var data: [UInt8] = []
        func write(_ entries: [Entry]) {
            put16(UInt16(entries.count))
            for entry in entries {
                put16(entry.tag)
                put16(entry.type)
                put32(entry.count)
                if entry.tag == exifPointer {
                    put32(UInt32(exifOffset))
                } else if entry.value.count <= 4 {
                    out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    put32(UInt32(dataOffset + data.count))
                    data += entry.value
                    if data.count % 2 == 1 { data.append(0) }  // values start on a word boundary
                }
            }
            put32(0)  // no next IFD
        }
        out += little ? [0x49, 0x49] : [0x4D, 0x4D]
        put16(42)
        put32(8)
        write(ifd0Entries)
        if !exifEntries.isEmpty { write(exifEntries) }
        return out + data
    }
}

/// The compression codes of a TIFF's directories (IFD0, the chain after it and their SubIFDs),
/// read from its bytes: at most 64 directories, each once.
enum TIFFCompressions {
    static func all(_ file: UnsafeRawBufferPointer) -> Set<Int> {
        guard let reader = TIFFNumbers(file, byteOrderAt: 0), reader.number(2, 2) == 42, let first = reader.number(4, 4) else { return [] }
        var pending = [first]
        var seen: Set<Int> = []
        var found: Set<Int> = []
        while let directory = pending.popLast(), seen.count < 64 {
            guard directory > 0, seen.insert(directory).inserted, let count = reader.number(directory, 2), count <= 4096 else { continue }
            for index in 0..<count {
                let entry = directory + 2 + index * 12
                guard let tag = reader.number(entry, 2), let type = reader.number(entry + 2, 2), let values = reader.number(entry + 4, 4)
                else { break }
                let size = type == 3 ? 2 : 4
                if tag == 259, values == 1, let value = reader.number(entry + 8, size) { found.insert(value) }
                if tag == 330 {
                    // SubIFDs: one offset in place, or up to 16 at the offset the entry gives.
                    let at = values == 1 ? entry + 8 : (reader.number(entry + 8, 4) ?? -1)
                    for sub in 0..<min(values, 16) { if let offset = reader.number(at + sub * 4, 4) { pending.append(offset) } }
                }
            }
            if let next = reader.number(directory + 2 + count * 12, 4) { pending.append(next) }
        }
        return found
    }
}

/// Apple's MakerNote (iPhone and iPad photos): `Apple iOS\0`, a version, a byte order, and a
/// TIFF-style directory whose offsets count from the MakerNote's first byte. Tag 0x0011
/// (exiftool calls it MediaGroupUUID) is the content identifier a Live Photo's MOV carries
/// too, as its QuickTime key `com.apple.quicktime.content.identifier`; 0x000B the BurstUUID its
/// burst's frames share; 0x0021 and 0x0030 the HDR headroom.
enum AppleMakerNote {
    /// The headroom of an iPhone photo's HDR gain map: Apple's formula ("Applying Apple HDR effect
    /// to your photos") over MakerNote tags 0x0021 (exiftool's HDRHeadroom) and 0x0030 (HDRGain):
    /// stops of headroom, as a factor over SDR white (at least 1). nil without both tags.
    static func headroom(_ note: [UInt8]) -> Double? {
        guard let maker33 = rational(note, tag: 0x0021), let maker48 = rational(note, tag: 0x0030),
            maker33.isFinite, maker48.isFinite
        else { return nil }
        let stops =
            maker33 < 1
            ? (maker48 <= 0.01 ? -20 * maker48 + 1.8 : -0.101 * maker48 + 1.601)
            : (maker48 <= 0.01 ? -70 * maker48 + 3 : -0.303 * maker48 + 2.303)
        return (pow(2, min(16, max(0, stops))) * 1000).rounded() / 1000
    }

    /// A (signed) rational entry of the MakerNote's directory, as a number.
    static func rational(_ note: [UInt8], tag wanted: Int) -> Double? {
        guard note.count > 16, note.starts(with: Array("Apple iOS\0".utf8)), let reader = TIFFNumbers(note, byteOrderAt: 12),
            let count = reader.number(14, 2), count <= 512
        else { return nil }
        for index in 0..<count {
            let entry = 16 + index * 12
            guard let tag = reader.number(entry, 2), let type = reader.number(entry + 2, 2) else { return nil }
            guard tag == wanted, type == 5 || type == 10, let offset = reader.number(entry + 8, 4),
                let numerator = reader.number(offset, 4), let denominator = reader.number(offset + 4, 4), denominator != 0
            else { continue }
            let signed = { (value: Int) in type == 10 ? Double(Int32(truncatingIfNeeded: value)) : Double(value) }
            return signed(numerator) / signed(denominator)
        }
        return nil
    }

    static func contentIdentifier(_ note: [UInt8]) -> String? { string(note, tag: 0x0011) }

    /// An ASCII entry of the directory holding an identifier (`ImageHeader.contentIdentifier`'s
    /// characters): 0x0011 the content identifier, 0x000B the BurstUUID.
    static func string(_ note: [UInt8], tag wanted: Int) -> String? {
        let signature = Array("Apple iOS\0".utf8)
        guard note.count > 16, note.starts(with: signature), let reader = TIFFNumbers(note, byteOrderAt: 12) else { return nil }
        let number = reader.number
        guard let count = number(14, 2), count <= 512 else { return nil }
        for index in 0..<count {
            let entry = 16 + index * 12
            guard let tag = number(entry, 2), let type = number(entry + 2, 2), let length = number(entry + 4, 4) else { return nil }
            guard tag == wanted, type == 2, length > 1, length <= 128 else { continue }
            let start = length <= 4 ? entry + 8 : (number(entry + 8, 4) ?? -1)
            guard start >= 0, start + length <= note.count else { return nil }
            return ImageHeader.contentIdentifier(note[start..<(start + length)].prefix { $0 != 0 })
        }
        return nil
    }
}

/// The integers of a TIFF structure (a file, a MakerNote), in the byte order its `II` or `MM`
/// says, every read bounds-checked.
struct TIFFNumbers<Bytes: RandomAccessCollection<UInt8>> where Bytes.Index == Int {
    let bytes: Bytes
    let littleEndian: Bool

    /// Byte orders a structure may be read in without marks of its own.
    enum ByteOrder { case big, little }

    /// A reader of `bytes` in `byteOrder` (an ICC profile is big-endian throughout).
    init?(_ bytes: Bytes, byteOrder: ByteOrder) {
        self.bytes = bytes
        littleEndian = byteOrder == .little
    }

    /// nil when the two bytes at `offset` are neither `II` nor `MM`.
    init?(_ bytes: Bytes, byteOrderAt offset: Int) {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        switch (bytes[offset], bytes[offset + 1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        self.bytes = bytes
    }

    /// The unsigned integer of `length` bytes at `offset`, or nil past the end.
    func number(_ offset: Int, _ length: Int) -> Int? {
        guard offset >= 0, length <= 8, offset + length <= bytes.count else { return nil }
        let slice = bytes[offset..<(offset + length)]
        return (littleEndian ? slice.reversed() : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
    }
}
