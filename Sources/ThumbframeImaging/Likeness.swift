import Foundation

/// What a photo looks like, small enough to compare a library's worth of photos without their
/// pixels: the evidence `--stacks` groups near-copies by. Made from the placeholder's pixels (the
/// picture fitted into 100 × 100, upright, sRGB), which every decode already makes, so it costs
/// no decode of its own.
package struct Likeness: Sendable, Equatable, Hashable {
    /// Difference hashes of the luma reduced to 9 × 8 (`horizontal`: each of the 8 × 8 cells
    /// brighter than its right neighbour) and 8 × 9 (`vertical`: than the one below). Robust to
    /// re-encoding, exposure, and shifts of a few percent; unrelated pictures differ in about
    /// half their 128 bits.
    package var horizontal: UInt64
    package var vertical: UInt64
    /// FNV-1a (64-bit) of the pixels and their size: equal for pictures that decode the same at
    /// placeholder size (a copy re-saved losslessly, or with other metadata).
    package var pixels: UInt64
    /// Mean squared Laplacian of the luma (the placeholder's pixels, 8-bit) over its variance,
    /// × 1000: higher is sharper, whatever the exposure. The cover of a burst is its sharpest
    /// frame when the camera named none.
    package var sharpness: Int
    /// How many of the hashes' 128 comparisons differ by at least `Likeness.margin` levels of
    /// luma: a flat picture (a blank wall, a covered lens) has few, and hashes that say nothing.
    package var detail: Int

    /// The luma difference (of 255) that makes a hash bit count as detail.
    package static let margin = 2.0
    /// Pictures with fewer comparisons of detail than this are never called alike.
    package static let minimumDetail = 32

    package init(horizontal: UInt64, vertical: UInt64, pixels: UInt64, sharpness: Int, detail: Int) {
        (self.horizontal, self.vertical, self.pixels, self.sharpness, self.detail) = (horizontal, vertical, pixels, sharpness, detail)
    }

    /// Whether the hashes describe the picture (it is not flat).
    package var comparable: Bool { detail >= Self.minimumDetail }

    /// The likeness of 8-bit sRGB RGBA pixels (alpha over mid-grey), `width` × `height`.
    package init(width: Int, height: Int, rgba: [UInt8]) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4)
        var luma = [Double](repeating: 0, count: width * height)
        for index in 0..<(width * height) {
            let alpha = Double(rgba[index * 4 + 3]) / 255
            let value = 0.299 * Double(rgba[index * 4]) + 0.587 * Double(rgba[index * 4 + 1]) + 0.114 * Double(rgba[index * 4 + 2])
            luma[index] = value * alpha + 128 * (1 - alpha)
        }
        let across = Self.differenceHash(luma, width: width, height: height, columns: 9, rows: 8) { cells, row, column in
            cells[row * 9 + column] - cells[row * 9 + column + 1]
        }
        let down = Self.differenceHash(luma, width: width, height: height, columns: 8, rows: 9) { cells, row, column in
            cells[row * 8 + column] - cells[(row + 1) * 8 + column]
        }
        (horizontal, vertical, detail) = (across.hash, down.hash, across.detail + down.detail)
        var sum = 0.0
        var count = 0
        if width > 2, height > 2 {
            for y in 1..<(height - 1) {
                for x in 1..<(width - 1) {
                    let at = y * width + x
                    let laplacian = luma[at - 1] + luma[at + 1] + luma[at - width] + luma[at + width] - 4 * luma[at]
                    sum += laplacian * laplacian
                    count += 1
                }
            }
        }
        // Over the luma's variance: a brighter or more contrasted frame of a burst is not sharper.
        let mean = luma.reduce(0, +) / Double(luma.count)
        let variance = luma.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(luma.count)
        sharpness = count == 0 ? 0 : Int((1000 * sum / Double(count) / max(1, variance)).rounded())
        pixels = Self.fnv(rgba + [UInt8(truncatingIfNeeded: width), UInt8(truncatingIfNeeded: height)])
    }

    /// Bits set where `difference(cells, row, column)` is positive for the 8 × 8 comparisons of
    /// the luma's area averages over a `columns` × `rows` grid, and how many differ by `margin`.
    private static func differenceHash(
        _ luma: [Double], width: Int, height: Int, columns: Int, rows: Int, difference: ([Double], Int, Int) -> Double
    ) -> (hash: UInt64, detail: Int) {
        var cells = [Double](repeating: 0, count: columns * rows)
        for row in 0..<rows {
            // Each cell covers at least one pixel, so a picture narrower than the grid still hashes.
            let y0 = row * height / rows
            let y1 = max(y0 + 1, (row + 1) * height / rows)
            for column in 0..<columns {
                let x0 = column * width / columns
                let x1 = max(x0 + 1, (column + 1) * width / columns)
                var sum = 0.0
                for y in y0..<min(y1, height) {
                    for x in x0..<min(x1, width) { sum += luma[y * width + x] }
                }
                cells[row * columns + column] = sum / Double((min(y1, height) - y0) * (min(x1, width) - x0))
            }
        }
        var hash: UInt64 = 0
        var detail = 0
        for bit in 0..<64 {
            let value = difference(cells, bit / 8, bit % 8)
            if value > 0 { hash |= 1 << UInt64(bit) }
            if abs(value) >= margin { detail += 1 }
        }
        return (hash, detail)
    }

    /// How many of the 128 hash bits differ: 0 for the same picture, about 64 for unrelated ones.
    package func distance(to other: Likeness) -> Int {
        (horizontal ^ other.horizontal).nonzeroBitCount + (vertical ^ other.vertical).nonzeroBitCount
    }

    /// `<horizontal> <vertical> <pixels> <sharpness> <detail>`, the hashes in 16 hex digits: how
    /// the state index keeps it.
    package var text: String { "\(Self.hex(horizontal)) \(Self.hex(vertical)) \(Self.hex(pixels)) \(sharpness) \(detail)" }

    /// The likeness of its `text`, nil when malformed.
    package init?(text: some StringProtocol) {
        let parts = text.split(separator: " ")
        guard parts.count == 5, let horizontal = UInt64(parts[0], radix: 16), let vertical = UInt64(parts[1], radix: 16),
            let pixels = UInt64(parts[2], radix: 16), let sharpness = Int(parts[3]), sharpness >= 0, let detail = Int(parts[4]),
            (0...128).contains(detail)
        else { return nil }
        self.init(horizontal: horizontal, vertical: vertical, pixels: pixels, sharpness: sharpness, detail: detail)
    }

    /// FNV-1a, 64-bit: an identity for a few bytes within one library, not a digest against
    /// tampering.
    package static func fnv(_ bytes: some Sequence<UInt8>) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }

    /// 16 lower-case hex digits.
    package static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension Likeness: Codable {
    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let made = Likeness(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a likeness"))
        }
        self = made
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
