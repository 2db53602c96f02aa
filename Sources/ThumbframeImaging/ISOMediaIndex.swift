import Foundation

/// The sample tables of an MP4 or QuickTime file's `moov`, read from its boxes before FFmpeg
/// is given the file: FFmpeg's demuxer allocates an index entry for every sample a table
/// claims (a 3 KB MP4 whose `stsz` claims 30 million samples took 318 MB), and nothing in it
/// bounds that count. Every size is checked against the file's end and the boxes read.
enum ISOMediaIndex {
    /// Bytes FFmpeg's mov demuxer holds a sample: its index entry (24), the sample's size (4)
    /// and composition offset (8), rounded up.
    static let bytesPerSample = 40
    /// Top-level boxes walked to find `moov`.
    static let maximumTopBoxes = 4096
    /// Nested boxes walked inside `moov`.
    static let maximumBoxes = 65_536

    /// The samples the file's tracks claim together (each track's larger of its `stsz`/`stz2`
    /// count and its `stts` total) and whether its `moov` comes before its media data (`mdat`:
    /// a browser plays it before it has the whole file), from one walk of the top-level boxes;
    /// nil when it has no `moov` box it can read. `read` gives `length` bytes at `offset` of the
    /// `size`-byte file (fewer at its end); `moovLimit` caps the bytes of `moov` read (a larger
    /// one counts as `Int.max` samples).
    static func index(size: Int, moovLimit: Int, read: (Int, Int) -> [UInt8]) -> (samples: Int, first: Bool)? {
        var at = 0
        var mediaBefore = false
        for _ in 0..<maximumTopBoxes {
            guard at <= size - 8, let (boxSize, type, header) = boxHeader(read(at, 16), remaining: size - at) else { return nil }
            if type == "mdat" { mediaBefore = true }
            if type == "moov" {
                guard boxSize - header <= moovLimit else { return (Int.max, !mediaBefore) }
                let moov = read(at + header, boxSize - header)
                guard moov.count == boxSize - header else { return nil }
                return (samples(in: moov), !mediaBefore)
            }
            at += boxSize
        }
        return nil
    }

    /// A box's size (64-bit sizes and "to the end" resolved), type and header length, or nil
    /// when the bytes are no box or it runs past `remaining`.
    static func boxHeader(_ bytes: [UInt8], remaining: Int) -> (size: Int, type: String, header: Int)? {
        guard bytes.count >= 8 else { return nil }
        let size32 = bytes[0..<4].reduce(0) { $0 << 8 | Int($1) }
        let type = String(decoding: bytes[4..<8], as: UTF8.self)
        var (size, header) = (size32, 8)
        if size32 == 1 {
            guard bytes.count >= 16 else { return nil }
            let large = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard large <= UInt64(remaining) else { return nil }
            (size, header) = (Int(large), 16)
        } else if size32 == 0 {
            size = remaining
        }
        guard size >= header, size <= remaining else { return nil }
        return (size, type, header)
    }

    /// The samples of every track in `moov`'s bytes, added without overflow (Int.max past it).
    static func samples(in moov: [UInt8]) -> Int {
        let containers: Set<String> = ["trak", "mdia", "minf", "stbl"]
        var total = 0
        var walked = 0
        // Depth-first over (start, end) ranges of container bodies; one sample count per `stbl`.
        var pending: [(Int, Int, String)] = [(0, moov.count, "moov")]
        while let (start, end, kind) = pending.popLast() {
            var at = start
            var (sizes, times) = (0, 0)
            while at <= end - 8, walked < maximumBoxes {
                walked += 1
                guard let (size, type, header) = boxHeader(Array(moov[at..<min(end, at + 16)]), remaining: end - at) else { break }
                let body = (at + header)..<(at + size)
                if containers.contains(type) { pending.append((body.lowerBound, body.upperBound, type)) }
                if kind == "stbl" {
                    let number = { (offset: Int) -> Int in
                        let from = body.lowerBound + offset
                        return from + 4 <= body.upperBound ? moov[from..<(from + 4)].reduce(0) { $0 << 8 | Int($1) } : 0
                    }
                    switch type {
                    case "stsz", "stz2": sizes = number(8)  // after version/flags and the size field
                    case "stts":
                        // Entries of (count, duration) after version/flags and the entry count.
                        let entries = min(number(4), max(0, body.count - 8) / 8)
                        for index in 0..<entries {
                            let (sum, overflow) = times.addingReportingOverflow(number(8 + index * 8))
                            times = overflow ? Int.max : sum
                        }
                    default: break
                    }
                }
                at += size
            }
            if kind == "stbl" {
                let sum = total.addingReportingOverflow(max(sizes, times))
                total = sum.overflow ? Int.max : sum.partialValue
            }
        }
        return total
    }
}
