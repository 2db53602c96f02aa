import Foundation

/// What a UIKit or SwiftUI grid and its photo browser need, in one place: the sections and
/// their counts, the item at a grid position, its layout for the screen it is on (any screen:
/// computed where the manifest has no such viewport), the thumbnail that covers a cell, and the
/// crop a zoom transition starts from. Placeholders decode with `item.placeholder?.picture`.
extension ManifestReader {
    /// One section as a grid shows it.
    public struct GridSection: Sendable, Hashable {
        /// The heading: the folder's name, or the day.
        public var title: String
        /// Items in the section.
        public var count: Int
        /// Flat index of its first item.
        public var start: Int
    }

    /// The sections in display order, from the top document alone (no page read).
    public var gridSections: [GridSection] {
        document.sections.map { GridSection(title: $0.title, count: $0.count, start: $0.start) }
    }

    /// The item at a grid position (section, item within it).
    public func item(at position: IndexMap.Position) throws(ManifestError) -> Manifest.Item {
        let index: Int
        do {
            index = try indexMap.index(of: position)
        } catch {
            throw .outOfRange(error)
        }
        return try item(at: index)
    }

    /// The item's layout on a screen of `viewport`'s size and scale: the manifest's own when it
    /// has a viewport of that size and scale, else the same numbers from `LayoutEngine` for the
    /// pixels the manifest's layouts are for (a new phone, an iPad in split view).
    public func layout(of item: Manifest.Item, in viewport: Viewport) -> Layout {
        let settings = document.settings
        if let known = settings.viewports.first(where: {
            $0.width == viewport.width && $0.height == viewport.height && $0.scale == viewport.scale
        }), let layout = item.layouts[known.name] {
            return layout
        }
        return settings.layout(image: item.image, kind: item.kind, thumbnails: item.thumbnails, in: viewport)
    }

    /// The smallest thumbnail whose pixels cover a cell of `width` × `height` points at `scale`,
    /// among those that show the whole picture (`settings.srcset`) and, for a square cell, the
    /// cover recipes (never the deep-zoom `tiles`); the largest there is when none covers it.
    public func thumbnail(
        of item: Manifest.Item, forCellWidth width: Double, height: Double, scale: Double
    ) -> Manifest.Thumbnail? {
        Self.thumbnail(among: item.thumbnails, aspect: item.aspectRatio, width: width, height: height, scale: scale)
    }

    /// The same for a grid cell (`cells(in:)`): the smallest of its thumbnails that covers it.
    public func thumbnail(
        of cell: ManifestGridPage.Cell, forCellWidth width: Double, height: Double, scale: Double
    ) -> Manifest.Thumbnail? {
        Self.thumbnail(among: cell.thumbnails, aspect: cell.aspectRatio, width: width, height: height, scale: scale)
    }

    private static func thumbnail(
        among thumbnails: [String: Manifest.Thumbnail], aspect: Double, width: Double, height: Double, scale: Double
    ) -> Manifest.Thumbnail? {
        let candidates = thumbnails.values.filter { thumbnail in
            // Deep-zoom tiles are no picture a cell can load.
            guard thumbnail.tiles == nil else { return false }
            // A cover thumbnail shows a crop: right for a cell of its own shape only.
            guard thumbnail.crop != nil else { return true }
            return abs(Double(thumbnail.width) / Double(max(1, thumbnail.height)) - width / max(1, height)) < 0.01
        }
        // Aspect fill: the picture's covering size in the cell, in pixels.
        let fill = max(width / aspect, height) * scale
        let needed = (width: fill * aspect, height: fill)
        let sorted = candidates.sorted { ($0.width * $0.height, $0.path) < ($1.width * $1.height, $1.path) }
        return sorted.first { thumbnail in
            thumbnail.crop != nil
                ? Double(thumbnail.width) >= width * scale - 0.5 && Double(thumbnail.height) >= height * scale - 0.5
                : Double(thumbnail.width) >= needed.width - 0.5 && Double(thumbnail.height) >= needed.height - 0.5
        } ?? sorted.last
    }
}

extension Manifest.Item {
    /// Display width over height (the orientation applied), for a cell's shape.
    public var aspectRatio: Double { Double(image.width) / Double(max(1, image.height)) }

    /// The part of the picture, as 0…1 fractions of it, that a cell of `width` × `height` shows
    /// when the picture fills it centred (aspect fill, `UIView.ContentMode.scaleAspectFill`): the
    /// crop a zoom transition starts from (a layer's `contentsRect`), ending at the whole
    /// picture (0, 0, 1, 1) in the layout's `frame`.
    public func aspectFillCrop(cellWidth width: Double, cellHeight height: Double) -> Manifest.Rect {
        guard width > 0, height > 0 else { return Manifest.Rect(x: 0, y: 0, width: 1, height: 1) }
        let cell = width / height
        if cell > aspectRatio {
            // A wider cell: the full width, a band of the height.
            let band = aspectRatio / cell
            return Manifest.Rect(x: 0, y: (1 - band) / 2, width: 1, height: band)
        }
        let band = cell / aspectRatio
        return Manifest.Rect(x: (1 - band) / 2, y: 0, width: band, height: 1)
    }
}

/// A grid's cells from the grid pages (`ManifestGridPage`): what a screen of cells needs, read
/// without the full pages, which only a cell that opens needs. A manifest written before grid
/// pages gives the same cells, made from its full pages.
extension ManifestReader {
    /// The cell at flat index `index`.
    public func cell(at index: Int) throws(ManifestError) -> ManifestGridPage.Cell {
        let (reference, position) = try locate(index)
        let offset = position.item - reference.start
        return try gridCells(reference, offset..<offset + 1)[0]
    }

    /// The cells of a range of flat indexes (clamped to the manifest), in order.
    public func cells(in range: Range<Int>) throws(ManifestError) -> [ManifestGridPage.Cell] {
        let range = range.clamped(to: 0..<indexMap.count)
        var cells: [ManifestGridPage.Cell] = []
        cells.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let (reference, position) = try locate(index)
            let from = position.item - reference.start
            let taken = min(reference.count - from, range.upperBound - index)
            cells += try gridCells(reference, from..<from + taken)
            index += taken
        }
        return cells
    }

    /// Cells of one page's grid page: from the cache, else only those lines decoded (a grid
    /// page as thumbframe writes it holds a cell a line), else the grid page (read once) whole.
    private func gridCells(_ reference: Manifest.PageReference, _ offsets: Range<Int>) throws(ManifestError)
        -> [ManifestGridPage.Cell]
    {
        guard let path = reference.grid, gridCache[path] == nil else { return Array(try gridPage(reference).items[offsets]) }
        let data = try bytes(page: path)
        if let cells = ManifestGridPage.cells(at: offsets, from: data, expected: reference.count) {
            try Self.checkPositions(cells.map(\.item), from: offsets.lowerBound, of: reference, in: path, noun: "cell")
            return cells
        }
        return Array(try decodedGridPage(reference, path, data).items[offsets])
    }

    /// `cells(in:)` off the caller's actor, which also decodes the grid pages of the range whole
    /// into the cache (5 ms a page of 256, off the caller's actor): `cells(in:)` on them is then
    /// a lookup (3 µs a screen) where cold it decodes its lines (0.6 ms).
    public func loadCells(in range: Range<Int>) async throws(ManifestError) -> [ManifestGridPage.Cell] {
        try await Self.detached { () throws(ManifestError) in
            var index = max(0, range.lowerBound)
            while index < min(range.upperBound, self.indexMap.count) {
                let (reference, position) = try self.locate(index)
                _ = try self.gridPage(reference)
                index += reference.count - (position.item - reference.start)
            }
            return try self.cells(in: range)
        }
    }

    /// A page's grid page, checked against its reference: from the cache when read lately.
    public func gridPage(_ reference: Manifest.PageReference) throws(ManifestError) -> ManifestGridPage {
        let key = reference.grid ?? reference.path
        if let page = gridCache[key] { return page }
        if let path = reference.grid { return try decodedGridPage(reference, path, try bytes(page: path)) }
        let page = ManifestGridPage(try self.page(reference), settings: document.settings)
        gridCache[key] = page
        return page
    }

    /// A grid page's bytes decoded whole, checked against its reference, and cached.
    private func decodedGridPage(_ reference: Manifest.PageReference, _ path: String, _ data: Data) throws(ManifestError)
        -> ManifestGridPage
    {
        let page = try ManifestGridPage.decode(from: data)
        guard page.items.count == reference.count else {
            throw .badPage(path: path, reason: "holds \(page.items.count) cells, the manifest says \(reference.count)")
        }
        try Self.checkPositions(page.items.map(\.item), from: 0, of: reference, in: path, noun: "cell")
        gridCache[path] = page
        return page
    }
}

extension ManifestReader {
    /// The whole grid at a window width from the top document alone (`GridTimeline`); nil for a
    /// manifest whose pages carry no geometry (before 0.6).
    public func timeline(windowWidth: Double, titleHeight: Double = 0) -> GridTimeline? {
        GridTimeline(document, windowWidth: windowWidth, titleHeight: titleHeight)
    }

    /// What a timeline's cell shows: its grid page's shown cell (the grid page read, or cached).
    public func cell(_ place: GridTimeline.Cell) throws(ManifestError) -> ManifestGridPage.Cell {
        guard document.sections.indices.contains(place.section), let pages = document.sections[place.section].pages,
            pages.indices.contains(place.page)
        else { throw .outOfRange(.sectionOutOfRange(section: place.section, sectionCount: document.sections.count)) }
        let shown = try gridPage(pages[place.page]).shownCells
        guard shown.indices.contains(place.cell) else {
            throw .outOfRange(.itemOutOfRange(section: place.section, item: place.cell, count: shown.count))
        }
        return shown[place.cell]
    }
}
