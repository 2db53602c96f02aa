/// The web viewer's justified grid (`justify` in viewer/src/layout.js), computed the same way so
/// the build knows a screen's rows before a browser lays them out: a row closes once its cells at
/// the target height fill the width, then is scaled to fill it exactly; the last row keeps the
/// target height unless its cells overflow it.
public enum JustifiedRows {
    /// The gap between cells and rows, in points (the viewer's `--gap`).
    public static let gap = 4.0

    /// The row height aimed at in a window `width` points wide (`rowTarget` in grid.js).
    public static func target(forWindowWidth width: Double) -> Double { width < 600 ? 110 : 200 }

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
}
