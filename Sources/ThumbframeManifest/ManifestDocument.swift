public import Foundation

/// The top document of a paged manifest (`manifest.json`, version 3): settings, sections with
/// their page files, and failures — a few KB whatever the library's size. Items live in pages
/// (`ManifestPage`), one or more per section, content-addressed (`pages/XX/<hash>.json`) so an
/// unchanged section keeps its files and a CDN can cache them forever.
public struct ManifestDocument: Codable, Hashable, Sendable {
    /// Always `thumbframe-manifest`.
    public var format: String
    /// 3 as written now; 2 in manifests written before items had kinds (read as photos).
    public var version: Int
    /// The tool and library versions that wrote the manifest.
    public var generator: Manifest.Generator
    /// Every option that changes the output.
    public var settings: Manifest.Settings
    /// Sections in display order, each with its pages.
    public var sections: [Manifest.Section]
    /// The number of items of all sections.
    public var itemCount: Int
    /// Counts over every item, so a summary needs no page.
    public var summary: Summary
    /// Every file that looked like an image but could not be processed.
    public var failures: [Manifest.Failure]
    /// Files the build met that are neither items nor failures, counted by kind: `video`,
    /// `audio`, `sidecar` (XMP, AAE, THM, a Takeout `.json` beside a photo), `document` (PDF,
    /// office files) and `other` (`video` in manifests of 0.3, which did not read videos); nil
    /// when there are none. (Hidden files and what `--exclude` or an ignore file leaves out are
    /// not counted: they were left out on purpose.)
    public var skipped: [String: Int]?
    /// The scrubber of a timeline: where each month begins (libraries ordered by capture time),
    /// else each section, with its offset in every viewport's grid. nil in manifests before 0.6.
    public var timeline: [Manifest.TimelineEntry]?

    /// The value of `format` in every thumbframe manifest.
    public static let formatName = Manifest.formatName
    /// The manifest version this library reads and writes.
    public static let currentVersion = Manifest.currentVersion

    /// Creates a top document.
    public init(
        generator: Manifest.Generator, settings: Manifest.Settings, sections: [Manifest.Section], itemCount: Int,
        summary: Summary, failures: [Manifest.Failure], skipped: [String: Int]? = nil
    ) {
        self.summary = summary
        self.format = Self.formatName
        self.version = Self.currentVersion
        self.generator = generator
        self.settings = settings
        self.sections = sections
        self.itemCount = itemCount
        self.failures = failures
        self.skipped = skipped
    }

    /// Encodes deterministically: sorted keys, two-space indentation, no escaped slashes, a
    /// final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// Decodes a top document, rejecting JSON that is not a thumbframe manifest of a version this
    /// library reads (`Manifest.readableVersions`: 2, whose items are all photos, and 3).
    public static func decode(from data: Data) throws(ManifestError) -> ManifestDocument {
        try ManifestCoding.decode(ManifestDocument.self, from: data, format: formatName)
    }
}

extension ManifestDocument {
    /// Counts over every item of a manifest, kept in the top document.
    public struct Summary: Codable, Hashable, Sendable {
        /// Items per kind (`photo`, `video`, `animated`; `motion` for photos with a moving part,
        /// `rawPair` for photos shown in place of the RAW shot with them).
        public var kinds: [String: Int] = [:]
        /// Items per image format (a video's container).
        public var formats: [String: Int] = [:]
        /// Items per EXIF orientation (keys `"1"`…`"8"`).
        public var orientations: [String: Int] = [:]
        /// Items whose height is at least three times their width (scrolled, not fitted).
        public var longImages = 0
        /// Thumbnails per recipe name.
        public var thumbnails: [String: Int] = [:]
        /// Bytes of the thumbnail files as recorded, per recipe name (`tiles`: the `.dzi` files
        /// and every tile).
        public var thumbnailBytes: [String: Int] = [:]
        /// Deep-zoom tile files (nil when no item has tiles).
        public var tileFiles: Int?
        /// HDR photos per `image.hdr` kind (nil when there are none).
        public var hdr: [String: Int]?
        /// Thumbnails that carry a gain map, `headroom` set (nil when none do).
        public var gainMaps: Int?
        /// Stacks per reason (`burst`, `time+similar`, `duplicate`; nil when there are none).
        public var stacks: [String: Int]?
        /// Photos in stacks, covers included (nil when there are none).
        public var stacked: Int?
        /// Items per place (`Place.label`; nil without `settings.locations` or when no photo has one).
        public var places: [String: Int]?

        /// An empty summary.
        public init() {}

        private enum CodingKeys: String, CodingKey {
            case kinds, formats, orientations, longImages, thumbnails, thumbnailBytes, tileFiles, hdr, gainMaps, stacks, stacked, places
        }

        /// Decodes a summary; a version-2 document's (which had no `kinds`) counts every item a photo.
        public init(from decoder: any Decoder) throws {
            let keys = try decoder.container(keyedBy: CodingKeys.self)
            formats = try keys.decode([String: Int].self, forKey: .formats)
            orientations = try keys.decode([String: Int].self, forKey: .orientations)
            longImages = try keys.decode(Int.self, forKey: .longImages)
            thumbnails = try keys.decode([String: Int].self, forKey: .thumbnails)
            thumbnailBytes = try keys.decode([String: Int].self, forKey: .thumbnailBytes)
            tileFiles = try keys.decodeIfPresent(Int.self, forKey: .tileFiles)
            hdr = try keys.decodeIfPresent([String: Int].self, forKey: .hdr)
            gainMaps = try keys.decodeIfPresent(Int.self, forKey: .gainMaps)
            stacks = try keys.decodeIfPresent([String: Int].self, forKey: .stacks)
            stacked = try keys.decodeIfPresent(Int.self, forKey: .stacked)
            places = try keys.decodeIfPresent([String: Int].self, forKey: .places)
            if let kinds = try keys.decodeIfPresent([String: Int].self, forKey: .kinds) {
                self.kinds = kinds
            } else {
                let items = formats.values.reduce(0) { $0.addingReportingOverflow($1).partialValue }
                kinds = items > 0 ? [Manifest.Kind.photo.rawValue: items] : [:]
            }
        }

        /// Adds another summary's counts (of other items) to this one.
        public mutating func merge(_ other: Summary) {
            func add(_ table: inout [String: Int], _ more: [String: Int]) {
                for (key, value) in more { table[key] = table[key, default: 0].addingReportingOverflow(value).partialValue }
            }
            add(&kinds, other.kinds)
            add(&formats, other.formats)
            add(&orientations, other.orientations)
            longImages = longImages.addingReportingOverflow(other.longImages).partialValue
            add(&thumbnails, other.thumbnails)
            add(&thumbnailBytes, other.thumbnailBytes)
            if let more = other.tileFiles { tileFiles = (tileFiles ?? 0).addingReportingOverflow(more).partialValue }
            if let more = other.hdr {
                var table = hdr ?? [:]
                add(&table, more)
                hdr = table
            }
            if let more = other.gainMaps { gainMaps = (gainMaps ?? 0).addingReportingOverflow(more).partialValue }
            if let more = other.stacks {
                var table = stacks ?? [:]
                add(&table, more)
                stacks = table
            }
            if let more = other.stacked { stacked = (stacked ?? 0).addingReportingOverflow(more).partialValue }
            if let more = other.places {
                var table = places ?? [:]
                add(&table, more)
                places = table
            }
        }

        /// Counts one more item.
        public mutating func add(_ item: Manifest.Item) {
            kinds[item.kind.rawValue, default: 0] += 1
            if item.motion != nil { kinds["motion", default: 0] += 1 }
            if item.rawFile != nil { kinds["rawPair", default: 0] += 1 }
            formats[item.image.format, default: 0] += 1
            orientations[String(item.image.orientation), default: 0] += 1
            let (tripleWidth, overflow) = item.image.width.multipliedReportingOverflow(by: 3)
            if !overflow && item.image.height >= tripleWidth { longImages += 1 }
            if let place = item.place { places = (places ?? [:]).merging([place.label: 1], uniquingKeysWith: +) }
            if let stack = item.stack {
                stacked = (stacked ?? 0) + 1
                if stack.members != nil { stacks = (stacks ?? [:]).merging([stack.reason.rawValue: 1], uniquingKeysWith: +) }
            }
            if let kind = item.image.hdr?.kind { hdr = (hdr ?? [:]).merging([kind.rawValue: 1], uniquingKeysWith: +) }
            for (name, thumbnail) in item.thumbnails {
                if thumbnail.headroom != nil { gainMaps = (gainMaps ?? 0) + 1 }
                thumbnails[name, default: 0] += 1
                let (pyramid, files) = thumbnail.tiles.map { (max(0, $0.bytes), max(0, $0.files)) } ?? (0, 0)
                let bytes = thumbnailBytes[name, default: 0].addingReportingOverflow(max(0, thumbnail.bytes ?? 0))
                thumbnailBytes[name] = bytes.partialValue.addingReportingOverflow(pyramid).partialValue
                if thumbnail.tiles != nil { tileFiles = (tileFiles ?? 0).addingReportingOverflow(files).partialValue }
            }
        }
    }
}

extension Manifest {
    /// One page file of a section: where it is and which items of the section it holds.
    public struct PageReference: Codable, Hashable, Sendable {
        /// Path relative to the manifest: `pages/XX/<32 hex>.json`, named by its content.
        public var path: String
        /// Position in the section of the page's first item.
        public var start: Int
        /// Items in the page.
        public var count: Int
        /// The page's grid page (`ManifestGridPage`, `pages/XX/<32 hex>.json`): what a grid
        /// draws of its items. Absent in manifests written before thumbframe made them.
        public var grid: String?
        /// The aspect codes of the cells the page shows (`GridGeometry`: two characters a cell,
        /// in order; a stack's cover stands for its members), so a frontend lays out every row of
        /// the library before it reads a page. Absent in manifests written before 0.6.
        public var aspects: String?
        /// Per viewport: the lengths of the page's justified rows in the viewer's grid
        /// (`JustifiedRows` at the viewport's width; `GridGeometry` row characters).
        public var rows: [String: String]?
        /// Per viewport: the height of the page's block of rows, each with the gap under it, to
        /// 1/100 point.
        public var heights: [String: Double]?
        /// Where a month begins in the page, by capture time (libraries ordered by date): the
        /// shown cell and the month (`YYYY-MM`), for a timeline's scrubber.
        public var months: [Month]?

        /// A month's first cell in a page.
        public struct Month: Codable, Hashable, Sendable {
            /// Index among the page's shown cells.
            public var cell: Int
            /// `YYYY-MM`, the capture time's local date.
            public var month: String

            public init(cell: Int, month: String) {
                self.cell = cell
                self.month = month
            }
        }

        /// Creates a page reference.
        public init(path: String, start: Int, count: Int, grid: String? = nil) {
            self.path = path
            self.start = start
            self.count = count
            self.grid = grid
        }
    }
}

/// One page of a section (`pages/XX/<hash>.json`, compact JSON): up to `ManifestPage.size`
/// consecutive items. Items carry their position in the section, never the global index, so
/// adding a photo rewrites only its own section's pages and the top document.
public struct ManifestPage: Codable, Hashable, Sendable {
    /// Always `thumbframe-page`.
    public var format: String
    /// The top document's version.
    public var version: Int
    /// The items, in section order.
    public var items: [Item]

    /// The value of `format` in every page.
    public static let formatName = "thumbframe-page"
    /// Items per page: a section of more is split in pages of this many (the last one shorter);
    /// about 400 KB of JSON, what a frontend fetches as a grid scrolls.
    public static let size = 256

    /// Creates a page.
    public init(items: [Item]) {
        self.format = Self.formatName
        self.version = Manifest.currentVersion
        self.items = items
    }

    /// An item as a page holds it: `Manifest.Item` without its global `index` and `section`.
    public struct Item: Codable, Hashable, Sendable {
        /// Position inside the section.
        public var item: Int
        /// Path relative to the source directory, as UTF-8 text (see `Manifest.Item.path`).
        public var path: String
        /// Base64 of the path's bytes when they are not valid UTF-8 (see `RawPath`).
        public var rawPath: String?
        /// What the source file was when it was read.
        public var file: Manifest.FileInfo
        /// Photo, video or animated (see `Manifest.Item.kind`).
        public var kind: Manifest.Kind
        /// The picture's header facts.
        public var image: Manifest.ImageInfo
        /// A video's facts.
        public var video: Manifest.VideoInfo?
        /// An animated image's facts.
        public var animation: Manifest.AnimationInfo?
        /// A Live Photo's or Motion Photo's moving part.
        public var motion: Manifest.MotionPart?
        /// A RAW photo's rendering.
        public var raw: Manifest.RawInfo?
        /// The RAW file shot with this JPEG or HEIF.
        public var rawFile: Manifest.RawFile?
        /// Capture facts from EXIF, when the file has any.
        public var exif: Manifest.ExifInfo?
        /// Thumbnails by recipe name.
        public var thumbnails: [String: Manifest.Thumbnail]
        /// What a frontend paints before any thumbnail arrives.
        public var placeholder: Manifest.Placeholder?
        /// The layout in each viewport, by viewport name.
        public var layouts: [String: Layout]
        /// The stack the photo is in.
        public var stack: Manifest.Stack?
        /// Where the photo was taken, as coarsely as `settings.locations` says.
        public var place: Manifest.Place?

        /// The page form of an item.
        public init(_ item: Manifest.Item) {
            self.item = item.item
            path = item.path
            rawPath = item.rawPath
            file = item.file
            kind = item.kind
            image = item.image
            video = item.video
            animation = item.animation
            motion = item.motion
            raw = item.raw
            rawFile = item.rawFile
            exif = item.exif
            thumbnails = item.thumbnails
            placeholder = item.placeholder
            layouts = item.layouts
            stack = item.stack
            place = item.place
        }

        /// The item with its place in the whole manifest.
        public func item(index: Int, section: Int) -> Manifest.Item {
            var item = Manifest.Item(
                index: index, section: section, item: item, path: path, rawPath: rawPath, file: file,
                media: Manifest.Media(kind: kind, video: video, animation: animation, motion: motion, raw: raw, rawFile: rawFile),
                image: image,
                exif: exif, thumbnails: thumbnails, placeholder: placeholder, layouts: layouts)
            item.stack = stack
            item.place = place
            return item
        }

        private enum CodingKeys: String, CodingKey {
            case item, path, rawPath, file, kind, image, video, animation, motion, raw, rawFile, exif, thumbnails, placeholder, layouts
            case stack, place
        }

        /// Decodes a page's item; a version-2 page's items (which had no `kind`) are photos.
        public init(from decoder: any Decoder) throws {
            let keys = try decoder.container(keyedBy: CodingKeys.self)
            item = try keys.decode(Int.self, forKey: .item)
            path = try keys.decode(String.self, forKey: .path)
            rawPath = try keys.decodeIfPresent(String.self, forKey: .rawPath)
            file = try keys.decode(Manifest.FileInfo.self, forKey: .file)
            kind = try keys.decodeIfPresent(Manifest.Kind.self, forKey: .kind) ?? .photo
            image = try keys.decode(Manifest.ImageInfo.self, forKey: .image)
            video = try keys.decodeIfPresent(Manifest.VideoInfo.self, forKey: .video)
            animation = try keys.decodeIfPresent(Manifest.AnimationInfo.self, forKey: .animation)
            motion = try keys.decodeIfPresent(Manifest.MotionPart.self, forKey: .motion)
            raw = try keys.decodeIfPresent(Manifest.RawInfo.self, forKey: .raw)
            rawFile = try keys.decodeIfPresent(Manifest.RawFile.self, forKey: .rawFile)
            exif = try keys.decodeIfPresent(Manifest.ExifInfo.self, forKey: .exif)
            thumbnails = try keys.decode([String: Manifest.Thumbnail].self, forKey: .thumbnails)
            placeholder = try keys.decodeIfPresent(Manifest.Placeholder.self, forKey: .placeholder)
            layouts = try keys.decode([String: Layout].self, forKey: .layouts)
            stack = try keys.decodeIfPresent(Manifest.Stack.self, forKey: .stack)
            place = try keys.decodeIfPresent(Manifest.Place.self, forKey: .place)
        }
    }

    /// Encodes compactly and deterministically (sorted keys, no indentation), with a final newline.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// Decodes a page, rejecting JSON that is not a thumbframe page.
    public static func decode(from data: Data) throws(ManifestError) -> ManifestPage {
        try ManifestCoding.decode(ManifestPage.self, from: data, format: formatName)
    }
}
