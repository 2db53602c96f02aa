import Foundation

/// What a build makes past the preview for zooming (`--zoom`): one switch for the zoom ladder
/// and the deep-zoom tiles, which `--ladder-max-side` and `--tile-pixels` then tune.
///
/// Off by default: on photos of 2–24 MP the ladder is 90 % of the thumbnail bytes (1.5 MB a
/// photo against 155 KB for the three recipes) and 2.7× the build time, what a lightbox needs
/// only where it zooms past the preview's sharpness — a cost a library's owner chooses.
public enum ZoomRenditions: String, Codable, CaseIterable, Sendable {
    /// No renditions past the recipes: a lightbox zooms the preview (or the original, with
    /// `--original-url`).
    case none
    /// The zoom ladder (`ZoomLadder`, up to `ZoomLadder.defaultMaxSide`).
    case ladder
    /// The ladder, and DeepZoom pyramids for photos of `Manifest.TileSettings.defaultMinPixels`
    /// and more that it cannot keep sharp.
    case tiles

    /// What `thumbframe build` makes without `--zoom`.
    public static let `default` = ZoomRenditions.none

    /// The `--ladder-max-side` it stands for (0: no ladder).
    public var ladderMaxSide: Int { self == .none ? 0 : ZoomLadder.defaultMaxSide }
    /// The `--tile-pixels` it stands for (0: no tiles).
    public var tilePixels: Int { self == .tiles ? Manifest.TileSettings.defaultMinPixels : 0 }
}

/// The renditions a photo gets past its display thumbnail so a frontend stays sharp up to the
/// preset's maximum zoom (`settings.ladder`): fit boxes that double from the display recipe's
/// box up to `maxSide`, in its format and quality. An item gets a rung only while a viewport's
/// maximum zoom needs more pixels than the renditions before it have, and only when its
/// original has more pixels than they have (never enlarging). Each layout then says up to which
/// zoom each rendition is sharp (`Layout.ladder`).
public struct ZoomLadder: Codable, Hashable, Sendable {
    /// The rung recipes, smallest box first, named `zoom-<side>`.
    public var renditions: [ThumbnailRecipe]
    /// No rendition is larger than this many pixels a side (`--ladder-max-side`).
    public var maxSide: Int

    /// The ladder's cap with `--zoom ladder` or `tiles`: 4096 px, what every default viewport
    /// but the desktop needs at jx3's maximum zoom (a 3:2 photo: 2 340 px on a phone, 3 510 in landscape,
    /// 3 280 on the tablet; the desktop's 5 400 is 76 % sharp), and at most 16.7 megapixels
    /// (67 MB decoded as RGBA, what a browser holds for one rendition).
    public static let defaultMaxSide = 4096
    /// `--ladder-max-side` is 0 (no ladder) or from the smallest box a rung can have to this.
    public static let largestMaxSide = 65_500

    /// The ladder above `display` (a fit recipe), or nil when `maxSide` leaves no rung above it.
    public init?(display: ThumbnailRecipe, maxSide: Int) {
        let start = max(display.width, display.height)
        guard display.fit == .fit, maxSide > start else { return nil }
        var boxes: [Int] = []
        var side = start
        while side < maxSide {
            side = min(2 * side, maxSide)
            boxes.append(side)
        }
        renditions = boxes.map {
            ThumbnailRecipe(name: "zoom-\($0)", width: $0, height: $0, fit: .fit, format: display.format, quality: display.quality)
        }
        self.maxSide = maxSide
    }

    /// A rendition and the zoom up to which it is sharp in one layout.
    public struct Rung: Codable, Hashable, Sendable {
        /// A key of the item's `thumbnails`.
        public var name: String
        /// The zoom (in the layout's `zoom` units) at which one of its pixels covers one device
        /// pixel: past it, a frontend loads the next rung.
        public var native: Double

        /// Creates a rung, rounding `native` to the manifest's 4 decimals.
        public init(name: String, native: Double) {
            self.name = name
            self.native = native.roundedForManifest
        }
    }
}

extension Manifest.Settings {
    /// The ladder renditions an item of this image and kind gets: none for videos and animated
    /// images (they play; their thumbnails are a frame) and where a frontend shows the original
    /// (`--original-url` and a format browsers decode), else the rungs up to what the most
    /// demanding viewport needs at its maximum zoom, each larger than the one before.
    public func ladderRecipes(image: Manifest.ImageInfo, kind: Manifest.Kind) -> [ThumbnailRecipe] {
        zoomExtras(image: image, kind: kind).rungs
    }

    /// For a photo a frontend shows through its thumbnails: the device pixels across the picture
    /// the most demanding viewport needs at its maximum zoom, the ladder rungs it gets and the
    /// width of the largest of its fit thumbnails and rungs (no rungs without a ladder). nil for
    /// videos, animated images, photos whose original is shown, and without a fit recipe.
    func zoomSupply(image: Manifest.ImageInfo, kind: Manifest.Kind) -> (rungs: [ThumbnailRecipe], need: Double, have: Int)? {
        guard kind == .photo, !showsOriginal(kind: kind, format: image.format), let display,
            let shown = thumbnails.first(where: { $0.name == display })
        else { return nil }
        let shownSize = shown.fittedSize(width: image.width, height: image.height)
        let loaded = [display: Manifest.Thumbnail(path: "", width: shownSize.width, height: shownSize.height, crop: nil)]
        // Device pixels across the image at the maximum zoom, in the most demanding viewport.
        // (The engine's geometry alone: `layout(image:…)` would also list the rungs.)
        let size = layoutSize(image: image, kind: kind, thumbnails: loaded)
        let need =
            viewports.map { viewport -> Double in
                let layout = LayoutEngine.layout(width: size.width, height: size.height, viewport: viewport, preset: preset)
                return layout.frame.width / layout.zoom.min * layout.zoom.max * viewport.scale
            }.max() ?? 0
        var have =
            srcset?.compactMap { name in thumbnails.first { $0.name == name } }
            .map { $0.fittedSize(width: image.width, height: image.height).width }.max() ?? shownSize.width
        var rungs: [ThumbnailRecipe] = []
        for rung in ladder?.renditions ?? [] where rung.fit == .fit && rung.width > 0 && rung.height > 0 {
            guard Double(have) + 0.5 < need else { break }
            let width = rung.fittedSize(width: image.width, height: image.height).width
            guard width > have else { break }
            rungs.append(rung)
            have = width
        }
        return (rungs, need, have)
    }

    /// An item's renditions in `layout` (the fit thumbnails and ladder rungs it has, smallest
    /// first, then its deep-zoom `tiles`) with the zoom up to which each is sharp; nil without a
    /// ladder or tiles, for videos and
    /// animated images (a frontend plays their originals), where the original is shown, and for
    /// an item without fit thumbnails.
    func ladderRungs(
        layout: Layout, image: Manifest.ImageInfo, kind: Manifest.Kind, thumbnails: [String: Manifest.Thumbnail],
        in viewport: Viewport
    ) -> [ZoomLadder.Rung]? {
        guard ladder != nil || thumbnails[Manifest.tilesName] != nil, kind == .photo,
            !showsOriginal(kind: kind, format: image.format)
        else { return nil }
        // The tiles last: the full picture, wider than every rendition.
        let names = (srcset ?? []) + (ladder?.renditions.map(\.name) ?? []) + [Manifest.tilesName]
        // By width; equal widths (a narrow image's small and preview) in the settings' order.
        let present = names.enumerated().compactMap { order, name in thumbnails[name].map { (order, name, $0) } }
            .sorted { ($0.2.width, $0.0) < ($1.2.width, $1.0) }.map { ($0.1, $0.2) }
        guard !present.isEmpty, layout.frame.width > 0 else { return nil }
        return present.map { name, thumbnail in
            ZoomLadder.Rung(name: name, native: Double(thumbnail.width) * layout.zoom.min / (layout.frame.width * viewport.scale))
        }
    }
}

extension Layout {
    /// The rendition an app shows at `zoom` (in this layout's zoom units): the smallest whose
    /// pixels still cover the device's at that zoom once stretched by `stretch` (1: none; the web
    /// viewer's is `zoomStretch(scale:)`, as its deep-zoom levels'), else the largest there is;
    /// nil when the layout has no ladder. Past the last rung's `native` the picture is as sharp
    /// as its pixels. `tiles` names the item's deep-zoom tiles (`tileLevel(forZoom:tiles:)` gives
    /// the level).
    public func rendition(forZoom zoom: Double, stretch: Double = 1) -> String? {
        guard let ladder, let last = ladder.last else { return nil }
        return (ladder.first { $0.native * max(1, stretch) >= zoom - 0.0001 } ?? last).name
    }
}
