import Foundation

/// A thumbframe manifest as a whole: everything an image browser needs to lay out and page
/// through a photo library without decoding any original. On disk it is paged: a top document
/// (`ManifestDocument`, `OUT_DIR/manifest.json`) and section pages (`ManifestPage`); a
/// `ManifestReader` reads it whole or a page at a time.
public struct Manifest: Codable, Hashable, Sendable {
    /// The value of `format` in every thumbframe manifest.
    public static let formatName = "thumbframe-manifest"
    /// The manifest version this library writes: 3, paged (see `ManifestDocument`), every item
    /// with a `kind`.
    public static let currentVersion = 3
    /// The versions this library reads: 2 (paged, every item a photo) and 3.
    public static let readableVersions = 2...3

    /// Always `thumbframe-manifest`.
    public var format: String
    /// Always 1 for this layout of keys.
    public var version: Int
    /// The tool and library versions that wrote the manifest.
    public var generator: Generator
    /// Every option that changes the output.
    public var settings: Settings
    /// Sections in display order; each covers `count` consecutive items from `start`.
    public var sections: [Section]
    /// Every readable image, in display order (`items[i].index == i`).
    public var items: [Item]
    /// Every file that looked like an image but could not be processed.
    public var failures: [Failure]

    /// Creates a version-1 manifest.
    public init(
        generator: Generator, settings: Settings, sections: [Section], items: [Item], failures: [Failure]
    ) {
        self.format = Self.formatName
        self.version = Self.currentVersion
        self.generator = generator
        self.settings = settings
        self.sections = sections
        self.items = items
        self.failures = failures
    }
}

extension Manifest {
    /// Names the program that wrote a manifest.
    public struct Generator: Codable, Hashable, Sendable {
        /// Always `thumbframe`.
        public var name: String
        /// thumbframe's version.
        public var version: String
        /// The libvips version that decoded and encoded the images.
        public var libvips: String

        /// Creates a generator record.
        public init(name: String = "thumbframe", version: String, libvips: String) {
            self.name = name
            self.version = version
            self.libvips = libvips
        }
    }

    /// The options that shaped the output.
    public struct Settings: Codable, Hashable, Sendable {
        /// Which browser's layout and zoom rules `layouts` follow.
        public var preset: LayoutPreset
        /// How items are grouped into sections.
        public var sections: SectionMode
        /// How items are ordered inside a section.
        public var order: ItemOrder
        /// The viewports every item is laid out for, in the order they were given.
        public var viewports: [Viewport]
        /// The preset's behaviour constants (page spacing, pan-to-dismiss).
        public var frontend: FrontendConstants
        /// The thumbnail recipes, in the order they were given.
        public var thumbnails: [ThumbnailRecipe]
        /// The thumbnail a lightbox loads: the fit recipe with the largest box (nil when every
        /// recipe crops). With `preset` photoswipe the layouts are computed for this file's pixels,
        /// the numbers PhotoSwipe derives from the `width`/`height` it is given.
        public var display: String?
        /// The fit recipes, smallest box first: one picture at several widths, for `srcset`.
        public var srcset: [String]?
        /// Where the originals are served (`--original-url`): an item's original is this prefix
        /// followed by its `path`, URL-encoded. With it, photoswipe layouts are the original's where
        /// it is shown (`showsOriginal`).
        public var originalURL: String?
        /// Whether a RAW file and the JPEG or HEIF beside it of the same name are one item
        /// (`--raw-pairs`); nil in manifests written before the option, which merged none.
        public var rawPairs: RawPairs?
        /// With `originalURL`: the `image.format`s whose originals every current browser decodes
        /// (`Manifest.browserImageFormats`). A frontend loads another photo's (HEIC, TIFF, RAW,
        /// JPEG XL) `display` thumbnail instead, and the photoswipe layouts are that thumbnail's.
        /// nil without `originalURL` (and in manifests written before it: every original shown).
        public var browserFormats: [String]?
        /// The renditions past the display thumbnail for zooming (`--ladder-max-side`); nil
        /// without them (and in manifests written before them).
        public var ladder: ZoomLadder?
        /// Deep-zoom tiles for photos the ladder cannot keep sharp (`--tile-pixels`); nil without
        /// them (and in manifests written before them).
        public var tiles: Manifest.TileSettings?
        /// What an HDR photo's lightbox renditions are (`--hdr`); nil in manifests written before
        /// gain maps, whose renditions were all SDR.
        public var hdr: HDRRenditions?
        /// Which photos are gathered into stacks (`--stacks`); nil in manifests written before
        /// stacks, which have none.
        public var stacks: StackMode?
        /// How precisely photos' places are published (`--locations`); nil for none (the default,
        /// and manifests written before places).
        public var locations: Locations?
        /// The rule the pages' `rows` and `heights` follow (`JustifiedRows`), for a frontend
        /// laying out the grid at a width no viewport has; nil in manifests written before 0.6.
        public var grid: GridRule?

        /// Creates settings; the frontend constants follow from the preset, `display` and
        /// `srcset` from the recipes. The defaults are a build's without options (no zoom
        /// renditions: `ZoomRenditions.default`).
        public init(
            preset: LayoutPreset = .jx3, sections: SectionMode = .directory, order: ItemOrder = .name,
            viewports: [Viewport] = Viewport.defaults, thumbnails: [ThumbnailRecipe] = ThumbnailRecipe.defaults,
            originalURL: String? = nil, rawPairs: RawPairs = .merge,
            ladderMaxSide: Int = ZoomRenditions.default.ladderMaxSide, tilePixels: Int = ZoomRenditions.default.tilePixels,
            hdr: HDRRenditions = .gainMap, stacks: StackMode = .all, locations: Locations = .none
        ) {
            self.preset = preset
            self.sections = sections
            self.order = order
            self.viewports = viewports
            self.frontend = FrontendConstants.of(preset)
            self.thumbnails = thumbnails
            let family = thumbnails.filter { $0.fit == .fit }.sorted {
                ($0.width * $0.height, $0.name) < ($1.width * $1.height, $1.name)
            }
            self.srcset = family.map(\.name)
            self.display = family.last?.name
            self.originalURL = originalURL
            self.rawPairs = rawPairs
            browserFormats = originalURL == nil ? nil : Manifest.browserImageFormats
            ladder = family.last.flatMap { ZoomLadder(display: $0, maxSide: ladderMaxSide) }
            tiles = family.last.flatMap { tilePixels > 0 ? Manifest.TileSettings(minPixels: tilePixels, display: $0) : nil }
            self.hdr = hdr
            self.stacks = stacks
            self.locations = locations == .none ? nil : locations
            grid = GridRule()
        }

        /// The thumbnails of an HDR photo that carry its gain map with `--hdr gain-map`: those a
        /// lightbox shows — the display thumbnail and the zoom ladder's renditions — where they
        /// are JPEGs (browsers read gain maps in JPEG only). The grid's and `srcset`'s smaller
        /// ones stay SDR files.
        public var gainMapNames: Set<String> {
            guard hdr == .gainMap, let display, let recipe = thumbnails.first(where: { $0.name == display }), recipe.format == .jpeg
            else { return [] }
            return Set([display] + (ladder?.renditions.map(\.name) ?? []))
        }

        /// Whether a frontend shows the item's original (served from `originalURL`): a video's
        /// always (it plays from it), a still or animated image's when browsers decode its format.
        public func showsOriginal(kind: Kind, format: String) -> Bool {
            guard originalURL != nil else { return false }
            return kind == .video || browserFormats.map { $0.contains(format) } ?? true
        }

        /// The pixel size an item's layouts are computed for: the file the lightbox loads
        /// (photoswipe: the `display` thumbnail, unless the original is shown), else the original's.
        public func layoutSize(image: ImageInfo, kind: Kind, thumbnails: [String: Thumbnail]) -> (width: Int, height: Int) {
            if preset == .photoswipe, !showsOriginal(kind: kind, format: image.format), let display,
                let loaded = thumbnails[display]
            {
                return (loaded.width, loaded.height)
            }
            return (image.width, image.height)
        }

        /// An item's layout on a screen of `viewport`: the layout engine's, for the pixels its
        /// layouts are for (`layoutSize`).
        public func layout(image: ImageInfo, kind: Kind, thumbnails: [String: Thumbnail], in viewport: Viewport) -> Layout {
            let size = layoutSize(image: image, kind: kind, thumbnails: thumbnails)
            var layout = LayoutEngine.layout(width: size.width, height: size.height, viewport: viewport, preset: preset)
            // A video plays at its frame and does not zoom (a player's controls are not a photo's
            // gestures): its zoom range is the fit alone, poster included.
            if kind == .video { (layout.zoom.max, layout.zoom.doubleTap) = (layout.zoom.min, layout.zoom.min) }
            layout.ladder = ladderRungs(layout: layout, image: image, kind: kind, thumbnails: thumbnails, in: viewport)
            return layout
        }

        /// An item's layout in every viewport of these settings, by name: its `layouts`.
        public func layouts(image: ImageInfo, kind: Kind, thumbnails: [String: Thumbnail]) -> [String: Layout] {
            Dictionary(
                uniqueKeysWithValues: viewports.map {
                    ($0.name, layout(image: image, kind: kind, thumbnails: thumbnails, in: $0))
                })
        }
    }

    /// Image formats whose files Chrome, Firefox and Safari all decode in `<img>`: the originals a
    /// frontend may show (`settings.browserFormats`). HEIC, HEIF and TIFF only Safari; JPEG XL only
    /// Safari (17+); RAW none. Those `MediaFormat.all` says `browsersShow`, sorted.
    public static let browserImageFormats = MediaFormat.names(giving: .browsersShow).sorted()

    /// What becomes of a RAW file shot together with a JPEG or HEIF: same folder, same name
    /// but the extension (`IMG_0042.CR3` and `IMG_0042.JPG`).
    public enum RawPairs: String, Codable, Hashable, Sendable, CaseIterable {
        /// One item, as Lightroom, Apple Photos and Photo Mechanic show a pair: the JPEG (the
        /// camera's rendering), with the RAW as its `rawFile`.
        case merge
        /// Two items, as Immich and Google Photos show them.
        case separate
    }

    /// What an HDR photo's lightbox renditions (`Settings.gainMapNames`) are.
    public enum HDRRenditions: String, Codable, Hashable, Sendable, CaseIterable {
        /// JPEGs with the SDR picture and a gain map after it (ISO 21496-1 and Ultra HDR v1):
        /// HDR screens show the HDR picture, every other screen the SDR one.
        case gainMap = "gain-map"
        /// The SDR picture alone, as the grid's thumbnails.
        case sdr
    }

    /// How items are grouped into sections.
    public enum SectionMode: String, Codable, Hashable, Sendable, CaseIterable {
        /// One section per directory holding images.
        case directory
        /// One section per capture day (EXIF local date, else the file's UTC modification date).
        case date
        /// A single section.
        case none
    }

    /// How items are ordered inside a section.
    public enum ItemOrder: String, Codable, Hashable, Sendable, CaseIterable {
        /// Natural order of paths.
        case name
        /// Capture time, then natural order of paths.
        case date
    }

    /// A run of consecutive items shown under one heading.
    public struct Section: Codable, Hashable, Sendable {
        /// The section's key: a directory relative to the source (`.` for the root).
        public var name: String
        /// Base64 of the directory's bytes, present only when they are not valid UTF-8 (see `RawPath`).
        public var rawName: String?
        /// The heading to show: the directory's last component.
        public var title: String
        /// Flat index of the section's first item.
        public var start: Int
        /// Number of items; never 0.
        public var count: Int
        /// The page files holding the section's items, in order (in a top document).
        public var pages: [PageReference]?
        /// Per viewport: the height of the section's grid, its pages' `heights` together (its
        /// title not counted: a frontend's own), to 1/100 point.
        public var heights: [String: Double]?

        /// Creates a section.
        public init(
            name: String, rawName: String? = nil, title: String, start: Int, count: Int, pages: [PageReference]? = nil
        ) {
            self.pages = pages
            self.name = name
            self.rawName = rawName
            self.title = title
            self.start = start
            self.count = count
        }
    }

    /// A file that could not be turned into an item.
    public struct Failure: Codable, Hashable, Sendable {
        /// Path relative to the source directory, as UTF-8 text.
        public var path: String
        /// Base64 of the path's bytes, present only when they are not valid UTF-8 (see `RawPath`).
        public var rawPath: String?
        /// Where it failed: `read`, `probe`, `decode`, `encode`, `write`.
        public var stage: String
        /// One line saying why.
        public var reason: String
        /// What stopped the decode from outside the file (`FailureCause`: `crash`, `memory`,
        /// `time`), set by the build; nil for a file that is itself unreadable, damaged or refused.
        public var cause: String?
        /// The file's size when it failed, so an unchanged broken file is not decoded again.
        public var bytes: Int?
        /// The file's modification time when it failed (as `FileInfo.modified`).
        public var modified: String?

        /// Creates a failure record.
        public init(
            path: String, rawPath: String? = nil, stage: String, reason: String, cause: String? = nil, bytes: Int? = nil,
            modified: String? = nil
        ) {
            self.path = path
            self.rawPath = rawPath
            self.stage = stage
            self.reason = reason
            self.cause = cause
            self.bytes = bytes
            self.modified = modified
        }
    }
}
