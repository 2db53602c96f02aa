/// The web viewer's justified grid (`justify` in viewer/src/layout.js), computed the same way so
/// a page's rows and heights are known before a browser lays them out: a row closes once its
/// cells at the target height fill the width, then is scaled to fill it exactly; the last row
/// keeps the target height unless its cells overflow it. Rows break at page boundaries, so each
/// manifest page lays out alone.
///
/// A cell's aspect is its `GridGeometry` code's, not the picture's: every frontend lays out the
/// same numbers (IEEE additions and divisions in the same order give the same rows to the bit).
public enum JustifiedRows {
    /// The gap between cells and rows, in points (the viewer's `--gap`).
    public static let gap = 4.0

    /// The row height aimed at in a window `width` points wide (`rowTarget` in grid.js).
    public static func target(forWindowWidth width: Double) -> Double {
        let rule = Manifest.GridRule()
        return width < rule.wideFrom ? rule.rowHeight : rule.wideRowHeight
    }

    /// The grid's width in a window `width` points wide: the window less its padding (`gridWidth`).
    public static func gridWidth(forWindowWidth width: Double) -> Double { width - 2 * gap }

    /// One row: the indices of its cells in the input, their widths and the row's height.
    public struct Row: Hashable, Sendable {
        public var cells: Range<Int>
        public var widths: [Double]
        public var height: Double
    }

    /// The rows of cells with these aspects (width over height), `width` points across.
    public static func rows(aspects: [Double], width: Double, target: Double, gap: Double = gap) -> [Row] {
        var rows: [Row] = []
        var start = 0
        var sum = 0.0
        func flush(upTo end: Int, last: Bool) {
            guard end > start else { return }
            let fill = (width - gap * Double(end - start - 1)) / sum
            let height = last ? min(target, fill) : fill
            rows.append(Row(cells: start..<end, widths: aspects[start..<end].map { $0 * height }, height: height))
            start = end
            sum = 0
        }
        for (index, aspect) in aspects.enumerated() {
            sum += aspect
            if sum * target + gap * Double(index - start) >= width { flush(upTo: index + 1, last: false) }
        }
        flush(upTo: aspects.count, last: true)
        return rows
    }

    /// A page's rows in a window `windowWidth` points wide, and the height of its block (each row
    /// and the gap under it).
    public static func page(aspects: [Double], windowWidth: Double) -> (rows: [Row], height: Double) {
        let rows = rows(
            aspects: aspects, width: gridWidth(forWindowWidth: windowWidth), target: target(forWindowWidth: windowWidth))
        return (rows, rows.reduce(0) { $0 + $1.height + gap })
    }
}

/// The compact geometry a manifest page reference carries (`aspects`, `rows`): cell aspects as
/// two characters each and row lengths as one (three past 62), in the URL-safe Base64 alphabet.
public enum GridGeometry {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    static let values: [UInt8: Int] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, $0) })
    /// Steps per octave of aspect: a cell's aspect is within 0.08 % of its picture's.
    static let steps = 682
    /// The octaves codes cover, from 1/8: a cell is never narrower than 1:8 nor wider than 8:1
    /// (a longer picture is cropped to it, as Google Photos' grid does).
    static let octaves = [0.125, 0.25, 0.5, 1, 2, 4]

    /// The code of the cell for a picture of this aspect (width over height).
    public static func code(aspect: Double) -> Int {
        let clamped = aspect.isFinite ? min(max(aspect, 0.125), 8) : 1
        var octave = 0
        while octave < octaves.count - 1 && clamped >= octaves[octave + 1] { octave += 1 }
        var step = Int(((clamped / octaves[octave] - 1) * Double(steps)).rounded())
        if step >= steps {
            if octave < octaves.count - 1 {
                octave += 1
                step = 0
            } else {
                step = steps - 1
            }
        }
        return octave * steps + step
    }

    /// The cell aspect of a code (the same arithmetic as `aspectOf` in layout.js).
    public static func aspect(code: Int) -> Double {
        Double(steps + code % steps) / Double(steps) * octaves[min(code / steps, octaves.count - 1)]
    }

    /// `aspects` for the cells of these codes.
    public static func encode(codes: [Int]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(codes.count * 2)
        for code in codes { bytes += [alphabet[code / 64 % 64], alphabet[code % 64]] }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The codes of `aspects`, or nil when it is not two alphabet characters a cell.
    public static func codes(_ text: String) -> [Int]? {
        let bytes = Array(text.utf8)
        guard bytes.count % 2 == 0 else { return nil }
        var codes: [Int] = []
        codes.reserveCapacity(bytes.count / 2)
        for index in stride(from: 0, to: bytes.count, by: 2) {
            guard let high = values[bytes[index]], let low = values[bytes[index + 1]], high * 64 + low < octaves.count * steps
            else { return nil }
            codes.append(high * 64 + low)
        }
        return codes
    }

    /// `rows` for rows of these lengths: one character for 1 to 62 cells, `_` and two for more.
    public static func encode(rowLengths: [Int]) -> String {
        var bytes: [UInt8] = []
        for length in rowLengths {
            if length < 63 {
                bytes.append(alphabet[length])
            } else {
                bytes += [alphabet[63], alphabet[length / 64 % 64], alphabet[length % 64]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The row lengths of `rows`, or nil when it is not well formed.
    public static func rowLengths(_ text: String) -> [Int]? {
        let bytes = Array(text.utf8)
        var lengths: [Int] = []
        var index = 0
        while index < bytes.count {
            guard let value = values[bytes[index]], value > 0 else { return nil }
            if value < 63 {
                lengths.append(value)
                index += 1
            } else {
                guard index + 2 < bytes.count, let high = values[bytes[index + 1]], let low = values[bytes[index + 2]],
                    high * 64 + low >= 63
                else { return nil }
                lengths.append(high * 64 + low)
                index += 3
            }
        }
        return lengths
    }

    /// A height as the manifest writes it: to 1/100 point.
    public static func rounded(_ height: Double) -> Double { (height * 100).rounded() / 100 }
}
