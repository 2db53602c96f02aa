/// A library's whole justified grid at one window width, from the top document alone (its pages'
/// `aspects`): every section's and page's top, the scroll height, and the cells with their
/// frames in any stretch of it — what a `UICollectionViewLayout` returns from
/// `collectionViewContentSize` and `layoutAttributesForElements(in:)` before a single page is
/// read. The numbers are the web viewer's (`JustifiedRows`; its `timeline.js`) to the bit.
///
/// Memory: a few numbers a page; a page's rows are laid out again when asked for.
public struct GridTimeline: Sendable {
    /// A cell's place: its section, the page in it, the shown cell in that page (a grid page's
    /// `shownCells` index), and its frame in points from the top of the grid.
    public struct Cell: Hashable, Sendable {
        public var section: Int
        public var page: Int
        public var cell: Int
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        public init(section: Int, page: Int, cell: Int, x: Double = 0, y: Double = 0, width: Double = 0, height: Double = 0) {
            (self.section, self.page, self.cell) = (section, page, cell)
            (self.x, self.y, self.width, self.height) = (x, y, width, height)
        }
    }

    /// One page's block.
    struct Block: Sendable {
        var section: Int
        var page: Int
        var top: Double
        var height: Double
        var aspects: String
    }

    /// The window's width in points.
    public let windowWidth: Double
    /// The height given to each section's title above its grid.
    public let titleHeight: Double
    /// The top of each section's title (its grid begins `titleHeight` below).
    public private(set) var sectionTops: [Double] = []
    /// The height of the whole grid: titles, rows and the gaps under them.
    public private(set) var height: Double = 0
    var blocks: [Block] = []

    /// The grid of `document` in a window `windowWidth` points wide, a section's title
    /// `titleHeight` points tall; nil when a page has no `aspects` (a manifest before 0.6).
    public init?(_ document: ManifestDocument, windowWidth: Double, titleHeight: Double = 0) {
        self.windowWidth = windowWidth
        self.titleHeight = titleHeight
        var top = 0.0
        for (number, section) in document.sections.enumerated() {
            sectionTops.append(top)
            top += titleHeight
            for (index, page) in (section.pages ?? []).enumerated() {
                guard let aspects = page.aspects, let codes = GridGeometry.codes(aspects) else { return nil }
                let height = JustifiedRows.page(aspects: codes.map(GridGeometry.aspect(code:)), windowWidth: windowWidth).height
                blocks.append(Block(section: number, page: index, top: top, height: height, aspects: aspects))
                top += height
            }
        }
        height = top
    }

    /// The top of a timeline entry's row (the scrubber's mark) in this grid.
    public func offset(of entry: Manifest.TimelineEntry) -> Double? {
        guard let block = blocks.first(where: { $0.section == entry.section && $0.page == entry.page }) else { return nil }
        return cells(of: block).first { $0.cell == entry.cell }?.y
    }

    /// The cells whose frames meet the band `range` of the grid, in order.
    public func cells(in range: ClosedRange<Double>) -> [Cell] {
        // The first block ending below the band's top: a binary search over the blocks' tops.
        var low = 0
        var high = blocks.count
        while low < high {
            let middle = (low + high) / 2
            if blocks[middle].top + blocks[middle].height < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var found: [Cell] = []
        for block in blocks[low...] {
            if block.top > range.upperBound { break }
            found += cells(of: block).filter { $0.y <= range.upperBound && $0.y + $0.height >= range.lowerBound }
        }
        return found
    }

    /// Every cell of a page's block.
    func cells(of block: Block) -> [Cell] {
        guard let codes = GridGeometry.codes(block.aspects) else { return [] }
        let page = JustifiedRows.page(aspects: codes.map(GridGeometry.aspect(code:)), windowWidth: windowWidth)
        var cells: [Cell] = []
        var y = block.top
        for row in page.rows {
            var x = JustifiedRows.gap
            for (offset, index) in row.cells.enumerated() {
                cells.append(
                    Cell(
                        section: block.section, page: block.page, cell: index, x: x, y: y, width: row.widths[offset],
                        height: row.height))
                x += row.widths[offset] + JustifiedRows.gap
            }
            y += row.height + JustifiedRows.gap
        }
        return cells
    }
}
