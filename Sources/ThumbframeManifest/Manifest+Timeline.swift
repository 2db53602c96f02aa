public import Foundation

extension Manifest {
    /// The justified grid's rule (`JustifiedRows`): a window W points wide lays out rows across
    /// W − 2 `padding`, aiming at `rowHeight` (`wideRowHeight` from `wideFrom` points up), `gap`
    /// between cells and under each row; a row closes once its cells at the aimed height fill
    /// the width, then is scaled to fill it; the last row of a page keeps the aimed height unless
    /// its cells overflow it; rows break at page boundaries.
    public struct GridRule: Codable, Hashable, Sendable {
        public var gap = JustifiedRows.gap
        public var padding = JustifiedRows.gap
        public var rowHeight = 110.0
        public var wideRowHeight = 200.0
        public var wideFrom = 600.0

        public init() {}
    }

    /// One mark of a timeline's scrubber (`ManifestDocument.timeline`).
    public struct TimelineEntry: Codable, Hashable, Sendable {
        /// What the scrubber shows: `YYYY-MM`, or the section's title.
        public var label: String
        /// Where it begins: the section, the page in it and the shown cell in that page.
        public var section: Int
        public var page: Int
        public var cell: Int
        /// Per viewport: the top of that cell's row, from the top of the first section's grid,
        /// the grids of the sections before it and their pages' heights counted (section titles,
        /// a frontend's own, not), to 1/100 point.
        public var offsets: [String: Double]

        public init(label: String, section: Int, page: Int, cell: Int, offsets: [String: Double]) {
            self.label = label
            self.section = section
            self.page = page
            self.cell = cell
            self.offsets = offsets
        }
    }
}

extension ManifestGridPage {
    /// The cells a grid shows: an item in no stack, or a stack's cover (`shownCells` in layout.js).
    public var shownCells: [Cell] { Self.shown(items) }

    /// The cells of `cells` a grid shows (a page's first cells give its first shown cells).
    public static func shown(_ cells: [Cell]) -> [Cell] { cells.filter { $0.stack == nil || $0.stack?.cover == $0.item } }
}

extension Manifest.PageReference {
    /// This page's geometry from its grid page: the shown cells' aspect codes, per viewport its
    /// rows and height, and (`months`) where each month of capture begins.
    public mutating func describe(_ grid: ManifestGridPage, viewports: [Viewport], months withMonths: Bool) {
        let shown = grid.shownCells
        let codes = shown.map { GridGeometry.code(aspect: Double($0.width) / Double(max(1, $0.height))) }
        aspects = GridGeometry.encode(codes: codes)
        let cellAspects = codes.map(GridGeometry.aspect(code:))
        var rows: [String: String] = [:]
        var heights: [String: Double] = [:]
        for viewport in viewports {
            let page = JustifiedRows.page(aspects: cellAspects, windowWidth: viewport.width)
            rows[viewport.name] = GridGeometry.encode(rowLengths: page.rows.map(\.cells.count))
            heights[viewport.name] = GridGeometry.rounded(page.height)
        }
        self.rows = rows
        self.heights = heights
        months = nil
        guard withMonths else { return }
        var found: [Month] = []
        for (index, cell) in shown.enumerated() {
            guard let month = Self.month(cell.captured), found.last?.month != month else { continue }
            found.append(Month(cell: index, month: month))
        }
        months = found
    }

    /// `YYYY-MM` of a capture time (`YYYY-MM-DDTHH:MM:SS`), or nil.
    static func month(_ captured: String?) -> String? {
        guard let captured, captured.utf8.count >= 7 else { return nil }
        let prefix = Array(captured.utf8.prefix(7))
        guard prefix[4] == UInt8(ascii: "-"), prefix.enumerated().allSatisfy({ $0.offset == 4 || (0x30...0x39).contains($0.element) })
        else { return nil }
        return String(decoding: prefix, as: UTF8.self)
    }

    /// The top of each row of this page in `viewport`, from the page's top (nil without `aspects`).
    public func rowTops(in viewport: Viewport) -> (tops: [Double], lengths: [Int])? {
        guard let codes = aspects.flatMap(GridGeometry.codes) else { return nil }
        let page = JustifiedRows.page(aspects: codes.map(GridGeometry.aspect(code:)), windowWidth: viewport.width)
        var tops: [Double] = []
        var top = 0.0
        for row in page.rows {
            tops.append(top)
            top += row.height + JustifiedRows.gap
        }
        return (tops, page.rows.map(\.cells.count))
    }
}

extension ManifestDocument {
    /// Fills in the sections' heights and the timeline from the pages' geometry (a manifest
    /// whose pages have none is left without).
    public mutating func describeTimeline() {
        let viewports = settings.viewports
        guard sections.allSatisfy({ ($0.pages ?? []).allSatisfy { $0.heights != nil } }) else { return }
        var offsets = [String: Double](uniqueKeysWithValues: viewports.map { ($0.name, 0) })
        var entries: [Manifest.TimelineEntry] = []
        let byDate = settings.order == .date
        for (number, section) in sections.enumerated() {
            var heights = [String: Double](uniqueKeysWithValues: viewports.map { ($0.name, 0) })
            for (pageNumber, page) in (section.pages ?? []).enumerated() {
                let marks = byDate ? (page.months ?? []).map { ($0.cell, $0.month) } : pageNumber == 0 ? [(0, section.title)] : []
                for (cell, label) in marks where entries.last?.label != label || !byDate {
                    var at: [String: Double] = [:]
                    for viewport in viewports {
                        let within = page.rowTops(in: viewport).flatMap { rows in
                            Self.rowTop(of: cell, tops: rows.tops, lengths: rows.lengths)
                        }
                        at[viewport.name] = GridGeometry.rounded(
                            offsets[viewport.name, default: 0] + heights[viewport.name, default: 0] + (within ?? 0))
                    }
                    entries.append(.init(label: label, section: number, page: pageNumber, cell: cell, offsets: at))
                }
                for (name, height) in page.heights ?? [:] { heights[name, default: 0] += height }
            }
            sections[number].heights = heights.mapValues(GridGeometry.rounded)
            for (name, height) in heights { offsets[name, default: 0] += height }
        }
        timeline = entries
    }

    /// The top of the row holding shown cell `cell`.
    static func rowTop(of cell: Int, tops: [Double], lengths: [Int]) -> Double? {
        var first = 0
        for (top, length) in zip(tops, lengths) {
            if cell < first + length { return top }
            first += length
        }
        return nil
    }

    /// What is wrong with the geometry of the pages (checked against their grid pages by the
    /// validator) and of the sections and timeline (against the pages): each problem a sentence.
    public func timelineProblems() -> [String] {
        var copy = self
        copy.timeline = nil
        for index in copy.sections.indices { copy.sections[index].heights = nil }
        copy.describeTimeline()
        var problems: [String] = []
        for (section, expected) in zip(sections, copy.sections) where section.heights != expected.heights {
            problems.append("section \(section.name): heights \(section.heights ?? [:]) are not its pages' \(expected.heights ?? [:])")
        }
        if timeline != copy.timeline {
            problems.append("timeline is not the pages' (\(timeline?.count ?? 0) entries, expected \(copy.timeline?.count ?? 0))")
        }
        return problems
    }
}
