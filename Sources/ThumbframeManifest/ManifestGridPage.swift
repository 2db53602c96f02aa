public import Foundation

/// What a grid draws of one manifest page, apart from it (`pages/XX/<hash>.json`, named in the
/// page's reference as `grid`): per item its path, shape, kind, placeholder and the thumbnails a
/// cell loads, about a tenth of the page's bytes. A frontend lays out and paints a screen of
/// cells from it and reads the full page (layouts, ladders, EXIF, hashes) only when a photo
/// opens: the first screen of a phone is its pictures, not their lightbox data.
public struct ManifestGridPage: Codable, Hashable, Sendable {
    /// Always `thumbframe-grid`.
    public var format: String
    /// The top document's version.
    public var version: Int
    /// The cells, in the order of the page's items.
    public var items: [Cell]

    /// The value of `format` in every grid page.
    public static let formatName = "thumbframe-grid"

    /// Creates a grid page.
    public init(items: [Cell]) {
        format = Self.formatName
        version = Manifest.currentVersion
        self.items = items
    }

    /// One cell: an item as a grid shows it.
    public struct Cell: Codable, Hashable, Sendable {
        /// Position inside the section (as the page's item).
        public var item: Int
        /// Path relative to the source directory (the item's `path`).
        public var path: String
        /// Base64 of the path's bytes when they are not valid UTF-8.
        public var rawPath: String?
        /// Photo, video or animated.
        public var kind: Manifest.Kind
        /// The source's format (`jpeg`, `heic`, `gif`, …): an animated cell's badge.
        public var format: String
        /// Display width and height, the orientation applied: the cell's shape.
        public var width: Int
        public var height: Int
        /// A video's length in seconds.
        public var duration: Double?
        /// True for a Live Photo or Motion Photo (its motion is in the full page).
        public var motion: Bool?
        /// True when a RAW file was shot with this photo (`rawFile` in the full page).
        public var raw: Bool?
        /// The capture date and time from EXIF, as `exif.capturedAt`.
        public var captured: String?
        /// What a cell paints before its thumbnail arrives.
        public var placeholder: Manifest.Placeholder?
        /// The thumbnails of `settings.thumbnails` (the cell recipes; not the zoom ladder's
        /// renditions or deep-zoom tiles), each its path, size and crop.
        public var thumbnails: [String: Manifest.Thumbnail]
        /// The stack the photo is in, as the item's: a grid shows the cover's cell for it.
        public var stack: Manifest.Stack?
        /// Where the photo was taken, as the item's (`settings.locations`).
        public var place: Manifest.Place?

        /// The cell of an item, with the thumbnails of the recipes `recipes` names.
        public init(_ item: ManifestPage.Item, recipes: Set<String>) {
            self.item = item.item
            path = item.path
            rawPath = item.rawPath
            kind = item.kind
            format = item.image.format
            width = item.image.width
            height = item.image.height
            duration = item.video?.duration
            motion = item.motion == nil ? nil : true
            raw = item.rawFile == nil ? nil : true
            captured = item.exif?.capturedAt
            placeholder = item.placeholder
            stack = item.stack
            place = item.place
            thumbnails = item.thumbnails.filter { recipes.contains($0.key) && $0.value.tiles == nil }.mapValues {
                Manifest.Thumbnail(path: $0.path, width: $0.width, height: $0.height, crop: $0.crop)
            }
        }

        /// Display width over height, for the cell's shape.
        public var aspectRatio: Double { Double(width) / Double(max(1, height)) }
    }

    /// The grid page of a page, with the cell thumbnails `settings` makes.
    public init(_ page: ManifestPage, settings: Manifest.Settings) {
        let recipes = Set(settings.thumbnails.map(\.name))
        self.init(items: page.items.map { Cell($0, recipes: recipes) })
    }

    /// The first line of a grid page; a cell a line follows, then `tail`.
    static func head(format: String = formatName) -> Data { Data("{\"format\":\"\(format)\",\"items\":[\n".utf8) }
    static func tail(version: Int = Manifest.currentVersion) -> Data { Data("],\"version\":\(version)}\n".utf8) }

    /// Encodes compactly and deterministically (sorted keys, no indentation), one cell a line
    /// (so a reader decodes the cells of a screen without the rest: `cells(in:from:)`), with a
    /// final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Self.head(format: format)
        for (offset, cell) in items.enumerated() {
            data += try encoder.encode(cell)
            data += Data((offset + 1 < items.count ? ",\n" : "\n").utf8)
        }
        data += Self.tail(version: version)
        return data
    }

    /// The cells at `offsets` of a grid page as thumbframe writes it (a cell a line), decoded
    /// alone: a screen of 30 of a page's 256 without decoding the rest. nil when the bytes are
    /// not laid out so (then decode the page whole), or `expected` is not its cell count.
    public static func cells(at offsets: Range<Int>, from data: Data, expected: Int) -> [Cell]? {
        let (head, tail) = (Self.head(), Self.tail())
        guard data.starts(with: head), data.count > head.count + tail.count, data.suffix(tail.count).elementsEqual(tail),
            offsets.lowerBound >= 0, offsets.upperBound <= expected
        else { return nil }
        // Where each cell's line starts and ends (its comma left out).
        var lines: [Range<Int>] = []
        lines.reserveCapacity(expected)
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            guard let base = raw.baseAddress else { return }
            var start = head.count
            let end = raw.count - tail.count
            while start < end, lines.count <= expected,
                let found = memchr(base + start, 0x0A, end - start)
            {
                let newline = base.distance(to: found)
                lines.append(start..<(raw[newline - 1] == UInt8(ascii: ",") ? newline - 1 : newline))
                start = newline + 1
            }
            if start != end { lines.append(start..<start) }  // bytes after the last newline: not ours
        }
        guard lines.count == expected else { return nil }
        var array = Data("[".utf8)
        for (position, offset) in offsets.enumerated() {
            if position > 0 { array.append(UInt8(ascii: ",")) }
            array += data[data.startIndex + lines[offset].lowerBound..<data.startIndex + lines[offset].upperBound]
        }
        array.append(UInt8(ascii: "]"))
        return try? JSONDecoder().decode([Cell].self, from: array)
    }

    /// Decodes a grid page, rejecting JSON that is not one.
    public static func decode(from data: Data) throws(ManifestError) -> ManifestGridPage {
        try ManifestCoding.decode(ManifestGridPage.self, from: data, format: formatName)
    }
}
