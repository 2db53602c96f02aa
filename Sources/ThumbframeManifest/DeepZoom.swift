import Foundation

extension Manifest {
    /// How photos too large for the zoom ladder get deep-zoom tiles (`settings.tiles`;
    /// `--tile-pixels`): a DeepZoom pyramid (`.dzi` and `_files/`, what OpenSeadragon and most
    /// deep-zoom viewers read) of the full-resolution picture, upright and sRGB, made by libvips'
    /// dzsave.
    public struct TileSettings: Codable, Hashable, Sendable {
        /// A photo gets tiles from this many pixels on, when its renditions cannot keep it sharp
        /// to the preset's maximum zoom on some viewport.
        public var minPixels: Int
        /// Tile side in pixels, without the overlap (DeepZoom's customary 254).
        public var tileSize: Int
        /// Pixels each tile repeats of its neighbours on every inner side.
        public var overlap: Int
        /// The tiles' encoding: the display recipe's when it is JPEG or WebP, else JPEG.
        public var format: ThumbnailRecipe.Format
        public var quality: Int

        /// The default `--tile-pixels`: 40 megapixels, where high-resolution cameras begin (45 MP
        /// full frame, 50–100 MP medium format) and where a 4096 px rendition holds under 30 % of
        /// the picture's pixels (a 3:2 photo of 40 MP is 7 746 px wide). A 24 MP photo's 4096 px
        /// rendition is 68 % of its width; a pyramid (about half its JPEG's bytes, and about as
        /// much build time again: README, Deep-zoom tiles) would buy it little. Panoramas and
        /// long scans of this size and up qualify.
        public static let defaultMinPixels = 40_000_000
        public static let defaultTileSize = 254
        public static let defaultOverlap = 1

        /// Settings for tiles encoded like `display`.
        public init(minPixels: Int, display: ThumbnailRecipe) {
            self.minPixels = minPixels
            tileSize = Self.defaultTileSize
            overlap = Self.defaultOverlap
            format = display.format == .webp ? .webp : .jpeg
            quality = display.quality
        }

        /// Everything that changes the tiles' bytes: part of their content address.
        public var canonical: String {
            "tiles \(tileSize) \(overlap) \(format.rawValue) q\(quality)"
        }

        /// The file name extension of every tile (the `.dzi`'s `Format`; one of `Tiles.formats`).
        public var tileExtension: String { format == .webp ? "webp" : "jpg" }
    }

    /// The pyramid behind an item's `thumbnails.tiles` entry, whose `path` is the `.dzi`: the
    /// tiles are in the folder beside it named like it with `_files` for `.dzi`, one folder per
    /// level (0: one pixel; `levels - 1`: full size), `<column>_<row>.<format>` in each.
    public struct Tiles: Codable, Hashable, Sendable {
        public var tileSize: Int
        public var overlap: Int
        /// The tiles' file name extension (`jpg`, `webp`).
        public var format: String
        /// The tile file name extensions thumbframe writes.
        public static let formats: Set<String> = ["jpg", "webp"]

        /// Levels of the pyramid: ⌈log2(max(width, height))⌉ + 1.
        public var levels: Int
        /// Tile files.
        public var files: Int
        /// Bytes of every tile file together.
        public var bytes: Int

        public init(tileSize: Int, overlap: Int, format: String, levels: Int, files: Int, bytes: Int) {
            self.tileSize = tileSize
            self.overlap = overlap
            self.format = format
            self.levels = levels
            self.files = files
            self.bytes = bytes
        }

        /// The levels a DeepZoom pyramid of `width` × `height` has. (Every function here takes
        /// any value a hostile manifest may hold without trapping.)
        public static func levels(width: Int, height: Int) -> Int {
            var side = max(1, width, height)
            var levels = 1
            while side > 1 {
                side = half(side)
                levels += 1
            }
            return levels
        }

        /// `value` halved, rounded up (as dzsave halves a level), without overflow.
        private static func half(_ value: Int) -> Int { value / 2 + value % 2 }

        /// The size of `level` of a pyramid of `width` × `height` (each level halves the next,
        /// rounding up, as dzsave does).
        public static func size(level: Int, levels: Int, width: Int, height: Int) -> (width: Int, height: Int) {
            var (w, h) = (max(1, width), max(1, height))
            // 64 halvings bring any size to one pixel.
            for _
                in 0..<min(64, max(0, levels.subtractingReportingOverflow(1).partialValue.subtractingReportingOverflow(level).partialValue))
            {
                (w, h) = (half(w), half(h))
            }
            return (max(1, w), max(1, h))
        }

        /// Tiles of `tileSize` across `length` pixels.
        static func tiles(_ length: Int, _ tileSize: Int) -> Int {
            length / tileSize + (length % tileSize == 0 ? 0 : 1)
        }

        /// A `.dzi` document's image: tile size, overlap, tile format, width and height; nil when
        /// it is not DeepZoom XML with all five.
        public static func parseDZI(_ bytes: some Collection<UInt8>) -> (
            tileSize: Int, overlap: Int, format: String, width: Int, height: Int
        )? {
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.contains("http://schemas.microsoft.com/deepzoom/2008") else { return nil }
            func attribute(_ name: String) -> String? {
                guard let start = text.range(of: " \(name)=\"") ?? text.range(of: "\n\(name)=\"") ?? text.range(of: "\t\(name)=\""),
                    let end = text[start.upperBound...].firstIndex(of: "\"")
                else { return nil }
                return String(text[start.upperBound..<end])
            }
            guard let tileSize = attribute("TileSize").flatMap(Int.init), let overlap = attribute("Overlap").flatMap(Int.init),
                let format = attribute("Format"), let width = attribute("Width").flatMap(Int.init),
                let height = attribute("Height").flatMap(Int.init)
            else { return nil }
            return (tileSize, overlap, format, width, height)
        }

        /// Tile files of a pyramid of `width` × `height` with tiles of `tileSize` (`Int.max` past
        /// what an `Int` counts; 0 for no tile size).
        public static func fileCount(width: Int, height: Int, tileSize: Int) -> Int {
            guard tileSize > 0 else { return 0 }
            let levels = levels(width: width, height: height)
            var sum = 0
            for level in 0..<levels {
                let (w, h) = size(level: level, levels: levels, width: width, height: height)
                let files = tiles(w, tileSize).multipliedReportingOverflow(by: tiles(h, tileSize))
                let total = sum.addingReportingOverflow(files.partialValue)
                if files.overflow || total.overflow { return Int.max }
                sum = total.partialValue
            }
            return sum
        }
    }

    /// The `thumbnails` key of an item's deep-zoom tiles (no recipe may take it).
    public static let tilesName = "tiles"

    /// `image.format`s whose full resolution libvips decodes for tiles (not RAW, not video):
    /// those `MediaFormat.all` says give `tiles`.
    public static let tileableFormats = MediaFormat.names(giving: .tiles)
}

extension Manifest.Settings {
    /// Whether a photo gets deep-zoom tiles: `tiles` is set, the picture has at least
    /// `minPixels` in a format libvips decodes whole, and its thumbnails and renditions
    /// (`ladderRecipes`) fall short of what the most demanding viewport needs at its maximum
    /// zoom while the original has more.
    public func getsTiles(image: Manifest.ImageInfo, kind: Manifest.Kind) -> Bool {
        zoomExtras(image: image, kind: kind).tiles
    }

    /// What a photo gets past its recipes for zooming — its ladder rungs (`ladderRecipes`) and
    /// whether it gets tiles (`getsTiles`) — from one look at its viewports.
    public func zoomExtras(image: Manifest.ImageInfo, kind: Manifest.Kind) -> (rungs: [ThumbnailRecipe], tiles: Bool) {
        let pixels = image.width.multipliedReportingOverflow(by: image.height)
        let large = tiles.map { pixels.overflow || pixels.partialValue >= $0.minPixels } ?? false
        // A PQ or HLG still's tiles would be its code values read as SDR (libvips' dzsave): its
        // renditions, tone-mapped, go up to the ladder's cap instead.
        let toneMapped = image.hdr.map { $0.kind != .gainMap } ?? false
        let tileable = large && Manifest.tileableFormats.contains(image.format) && !toneMapped
        guard ladder != nil || tileable, let supply = zoomSupply(image: image, kind: kind) else { return ([], false) }
        return (supply.rungs, tileable && Double(supply.have) + 0.5 < supply.need && supply.have < image.width)
    }
}

extension Manifest.Thumbnail {
    /// For the `tiles` entry: the path (relative to the manifest, like `path`) of the tile at
    /// `column`, `row` of `level` — DeepZoom's `<name>_files/<level>/<column>_<row>.<format>`
    /// beside the `.dzi`; nil for any other thumbnail or a tile the pyramid does not have.
    public func tilePath(level: Int, column: Int, row: Int) -> String? {
        guard let tiles, path.hasSuffix(".dzi"), (0..<tiles.levels).contains(level), column >= 0, row >= 0, tiles.tileSize > 0
        else { return nil }
        let size = Manifest.Tiles.size(level: level, levels: tiles.levels, width: width, height: height)
        guard column < Manifest.Tiles.tiles(size.width, tiles.tileSize), row < Manifest.Tiles.tiles(size.height, tiles.tileSize) else {
            return nil
        }
        return "\(path.dropLast(4))_files/\(level)/\(column)_\(row).\(tiles.format)"
    }
}

extension Layout {
    /// How far a DeepZoom level's pixel may be stretched over device pixels before the next level
    /// is drawn (as a deep-zoom viewer lets a level stretch): the next level costs four times the
    /// tiles, and 1.25× upscaling is not seen on a 2× screen. The web viewer uses the same.
    public static let tileStretch = 1.25

    /// The stretch the web viewer's lightbox allows a rendition or a DeepZoom level on a screen of
    /// `scale` device pixels a point: up to a point a picture pixel, within 1.25 and 2 (1.25 at
    /// 1×, 2 at 2× and 3×, as OpenSeadragon's default `minPixelRatio` 0.5). A picture pixel so
    /// never covers more than a point, and what is fetched stays within 1.5 times the pixels
    /// shown at any zoom on phones and laptops (a fixed 1.25 fetched up to 3 times). Pass it as
    /// `stretch` to `tileLevel(forZoom:tiles:stretch:)` and `rendition(forZoom:stretch:)`.
    public static func zoomStretch(scale: Double) -> Double { min(2, max(tileStretch, scale)) }

    /// The DeepZoom level an app loads at `zoom` (this layout's units) when it shows `tiles` (an
    /// item's `thumbnails.tiles`): the smallest whose pixels cover the device's within `stretch`
    /// (`tileStretch` unless given; the web viewer's is `zoomStretch(scale:)`), the full size past
    /// the `tiles` rung's `native`. nil when the layout has no `tiles` rung.
    public func tileLevel(forZoom zoom: Double, tiles: Manifest.Thumbnail, stretch: Double = Layout.tileStretch) -> Int? {
        guard let pyramid = tiles.tiles, let native = ladder?.first(where: { $0.name == Manifest.tilesName })?.native,
            native > 0, zoom > 0
        else { return nil }
        // Level L has 2^(top - L) times fewer pixels across than the full size, sharp to native / 2^(top - L).
        let top = max(0, pyramid.levels - 1)
        let halvings = floor(log2(native * max(1, stretch) / zoom) + 1e-9)
        guard halvings.isFinite else { return halvings > 0 ? 0 : top }
        return min(top, max(0, top - Int(min(64, max(0, halvings)))))
    }
}
