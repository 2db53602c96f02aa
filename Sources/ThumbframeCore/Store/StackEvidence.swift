import ThumbframeImaging
import ThumbframeManifest

/// What a photo offers for stacking, kept in the state index beside its capture time (the
/// `evidence` column): the camera's burst, when and by which camera it was taken, what it looks
/// like, and which bytes it is. Never published: a manifest says only which stack a photo is in
/// and why.
struct StackEvidence: Equatable {
    /// EXIF capture time in milliseconds (local time, as the camera wrote it); nil without one
    /// (a file's modification time says nothing of when it was taken).
    var captured: Int64?
    /// FNV-1a of the EXIF make and model (0: neither).
    var camera: UInt64
    /// FNV-1a of the burst's identifier (0: none).
    var burst: UInt64
    /// The camera picked this frame of its burst.
    var pick: Bool
    /// The first 8 bytes of the file's SHA-256: byte-identical copies.
    var file: UInt64
    /// Display width and height.
    var width: Int
    var height: Int
    /// What it looks like (nil with `--stacks none`, and for photos not decoded since).
    var likeness: Likeness?

    /// `1 <captured> <camera> <burst> <pick> <file> <width>x<height> <likeness>`, `-` for what is
    /// missing: the index's column.
    var text: String {
        let time = captured.map(String.init) ?? "-"
        let hash = { (value: UInt64) in value == 0 ? "-" : Likeness.hex(value) }
        return "1 \(time) \(hash(camera)) \(hash(burst)) \(pick ? 1 : 0) \(Likeness.hex(file)) \(width)x\(height) "
            + (likeness?.text ?? "-")
    }

    /// The evidence of its `text`; nil when malformed or of another version.
    init?(text: String) {
        let parts = text.split(separator: " ", maxSplits: 7)
        guard parts.count == 8, parts[0] == "1" else { return nil }
        let hash = { (part: Substring) -> UInt64? in part == "-" ? 0 : UInt64(part, radix: 16) }
        let size = parts[6].split(separator: "x")
        guard let camera = hash(parts[2]), let burst = hash(parts[3]), let file = UInt64(parts[5], radix: 16), size.count == 2,
            let width = Int(size[0]), let height = Int(size[1])
        else { return nil }
        // A time of years 0000–9999 (`milliseconds`' range), else no evidence of time.
        captured = parts[1] == "-" ? nil : Int64(parts[1]).flatMap { (-Self.latest...Self.latest).contains($0) ? $0 : nil }
        (self.camera, self.burst, self.file, self.width, self.height) = (camera, burst, file, width, height)
        pick = parts[4] == "1"
        likeness = parts[7] == "-" ? nil : Likeness(text: parts[7])
    }

    init(
        captured: Int64?, camera: UInt64, burst: UInt64, pick: Bool, file: UInt64, width: Int, height: Int, likeness: Likeness?
    ) {
        (self.captured, self.camera, self.burst, self.pick) = (captured, camera, burst, pick)
        (self.file, self.width, self.height, self.likeness) = (file, width, height, likeness)
    }

    /// A stored photo's evidence; nil for videos and animated images, which are never stacked.
    init?(_ item: StateIndex.StoredItem) {
        guard (item.media?.kind ?? .photo) == .photo, let file = UInt64(item.file.sha256.prefix(16), radix: 16) else { return nil }
        let make = item.exif?.make ?? ""
        let model = item.exif?.model ?? ""
        self.init(
            captured: item.exif?.capturedAt.flatMap(Self.milliseconds),
            camera: make.isEmpty && model.isEmpty ? 0 : Likeness.fnv(Array((make + "\n" + model).utf8)),
            burst: item.burst.map { Likeness.fnv(Array($0.id.utf8)) } ?? 0, pick: item.burst?.pick ?? false,
            file: file, width: item.image.width, height: item.image.height, likeness: item.likeness)
    }

    /// The last millisecond of year 9999: a stored time farther from 0000-03-01 than this is no
    /// capture time (`milliseconds` makes none).
    static let latest = milliseconds("9999-12-31T23:59:59.999") ?? 0

    /// `YYYY-MM-DDTHH:MM:SS[.fraction]` as milliseconds since 0000-03-01 (proleptic Gregorian):
    /// only differences matter.
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        guard var year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month)
        else { return nil }
        var fraction: Int64 = 0
        if bytes.count > 20, bytes[19] == UInt8(ascii: ".") {
            let digits = bytes[20...].prefix(3)
            for (place, byte) in digits.enumerated() where (0x30...0x39).contains(byte) {
                fraction += Int64(byte - 0x30) * [100, 10, 1][place]
            }
        }
        // Days from civil (Howard Hinnant's algorithm), from March so leap days fall last.
        if month <= 2 { year -= 1 }
        let era = year / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
    }
}
