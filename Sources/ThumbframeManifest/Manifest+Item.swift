import Foundation

extension Manifest {
    /// One photo, video or animated image of the library.
    public struct Item: Codable, Hashable, Sendable {
        /// Position in `items`.
        public var index: Int
        /// Index of the section holding the item.
        public var section: Int
        /// Position inside that section.
        public var item: Int
        /// Path relative to the source directory, `/`-separated, as UTF-8 text.
        public var path: String
        /// Base64 of the path's bytes, present only when they are not valid UTF-8 (see `RawPath`).
        public var rawPath: String?
        /// What the source file was when it was read.
        public var file: FileInfo
        /// What a frontend shows: a photo, a video or an animated image (its cell).
        public var kind: Kind
        /// The picture's header facts: a photo's, a video's poster frame's (display size after
        /// rotation), an animated image's.
        public var image: ImageInfo
        /// A video's facts (`kind` video).
        public var video: VideoInfo?
        /// An animated image's frames, duration and loop (`kind` animated).
        public var animation: AnimationInfo?
        /// A Live Photo's or Motion Photo's moving part (`kind` photo).
        public var motion: MotionPart?
        /// A RAW photo's rendering: from its embedded preview or demosaiced (`kind` photo).
        public var raw: RawInfo?
        /// The RAW file shot with this JPEG or HEIF (`kind` photo, `settings.rawPairs` merge).
        public var rawFile: RawFile?
        /// Capture facts from EXIF; absent when the file has none of them.
        public var exif: ExifInfo?
        /// Thumbnails by recipe name.
        public var thumbnails: [String: Thumbnail]
        /// What a frontend paints before any thumbnail arrives.
        public var placeholder: Placeholder?
        /// The layout in each viewport, by viewport name.
        public var layouts: [String: Layout]
        /// The stack the photo is in (`settings.stacks`); nil for most items.
        public var stack: Stack?
        /// Where the photo was taken, as coarsely as `settings.locations` says; nil without it.
        public var place: Place?

        /// Creates an item.
        public init(
            index: Int, section: Int, item: Int, path: String, rawPath: String? = nil, file: FileInfo,
            media: Media = .photo, image: ImageInfo, exif: ExifInfo?, thumbnails: [String: Thumbnail],
            placeholder: Placeholder? = nil, layouts: [String: Layout]
        ) {
            self.index = index
            self.section = section
            self.item = item
            self.path = path
            self.rawPath = rawPath
            self.file = file
            kind = media.kind
            video = media.video
            animation = media.animation
            motion = media.motion
            raw = media.raw
            rawFile = media.rawFile
            self.image = image
            self.exif = exif
            self.thumbnails = thumbnails
            self.placeholder = placeholder
            self.layouts = layouts
        }
    }

    /// A picture of the image for the moment before its thumbnail loads.
    public struct Placeholder: Codable, Hashable, Sendable {
        /// ThumbHash of the image (alpha kept), base64: `ThumbHash.decode` paints it.
        public var thumbhash: String
        /// The average colour, `#rrggbb` in sRGB (alpha-weighted).
        public var color: String

        /// Creates a placeholder.
        public init(thumbhash: String, color: String) {
            self.thumbhash = thumbhash
            self.color = color
        }

        /// The placeholder of 8-bit sRGB RGBA pixels of at most 100 × 100.
        public init(width: Int, height: Int, rgba: [UInt8]) {
            thumbhash = Data(ThumbHash.encode(width: width, height: height, rgba: rgba)).base64EncodedString()
            var sums = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
            for i in stride(from: 0, to: rgba.count, by: 4) {
                let alpha = Double(rgba[i + 3])
                sums.r += Double(rgba[i]) * alpha
                sums.g += Double(rgba[i + 1]) * alpha
                sums.b += Double(rgba[i + 2]) * alpha
                sums.a += alpha
            }
            func hex(_ sum: Double) -> String {
                let value = sums.a > 0 ? Int((sum / sums.a).rounded()) : 0
                let digits = String(min(255, max(0, value)), radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }
            color = "#" + hex(sums.r) + hex(sums.g) + hex(sums.b)
        }

        /// The ThumbHash decoded: RGBA pixels at most 32 on the long side.
        public var picture: (width: Int, height: Int, rgba: [UInt8])? {
            Data(base64Encoded: thumbhash).flatMap { ThumbHash.decode(Array($0)) }
        }
    }

    /// The source file's identity.
    public struct FileInfo: Codable, Hashable, Sendable {
        /// Size in bytes.
        public var bytes: Int
        /// Modification time, RFC 3339 in UTC with nanoseconds.
        public var modified: String
        /// SHA-256 of the file's bytes, lowercase hex.
        public var sha256: String

        /// Creates file facts.
        public init(bytes: Int, modified: String, sha256: String) {
            self.bytes = bytes
            self.modified = modified
            self.sha256 = sha256
        }
    }

    /// Header facts about the image.
    public struct ImageInfo: Codable, Hashable, Sendable {
        /// Container format: `jpeg`, `png`, `webp`, `gif`, `tiff`, `heic`, `avif`, ...
        public var format: String
        /// Display width in pixels: the orientation already applied.
        public var width: Int
        /// Display height in pixels: the orientation already applied.
        public var height: Int
        /// Width of the pixel data as decoded, before orientation.
        public var storedWidth: Int
        /// Height of the pixel data as decoded, before orientation.
        public var storedHeight: Int
        /// EXIF orientation (1–8) a viewer must apply to the decoded pixels; 1 for HEIF/AVIF,
        /// whose container rotation the decoder has already applied.
        public var orientation: Int
        /// Number of pages or frames.
        public var pages: Int
        /// Whether the image has an alpha channel.
        public var hasAlpha: Bool
        /// Whether the file is progressive (JPEG) or interlaced (PNG, GIF).
        public var interlaced: Bool
        /// How the embedded ICC profile was used, when not as usual (absent: converted to sRGB
        /// with its relative-colorimetric intent, or the file has none).
        public var profile: ProfileUse?
        /// The picture is HDR (absent: SDR): its thumbnails are tone-mapped to SDR sRGB.
        public var hdr: HDR?

        /// What makes a still picture HDR.
        public struct HDR: Codable, Hashable, Sendable {
            /// How the picture carries its high dynamic range.
            public enum Kind: String, Codable, Hashable, Sendable {
                /// SMPTE ST 2084 (HDR10) code values: tone-mapped, reference white (203 cd/m²) to
                /// SDR white, highlights rolled off.
                case pq
                /// BT.2100 hybrid log-gamma: tone-mapped as PQ, through a 1000 cd/m² display.
                case hlg
                /// An SDR picture with an HDR gain map beside it (an iPhone's HEIC, an Ultra HDR
                /// JPEG): the thumbnails are the SDR picture.
                case gainMap
            }

            /// How the picture carries its high dynamic range.
            public var kind: Kind
            /// How many times brighter than SDR white its brightest highlights are meant to be
            /// shown, where the file says so.
            public var headroom: Double?

            /// Creates an HDR fact.
            public init(kind: Kind, headroom: Double? = nil) {
                self.kind = kind
                self.headroom = headroom
            }
        }

        /// How an embedded ICC profile was used to make the thumbnails' sRGB.
        public enum ProfileUse: String, Codable, Hashable, Sendable {
            /// The profile has no relative-colorimetric table (XYB JPEGs, some CMYK profiles):
            /// its perceptual one was used.
            case perceptual
            /// The profile has only a saturation table, which was used.
            case saturation
            /// The profile cannot be used (lcms cannot read it, or it is for other channels than
            /// the image's): the pixels were taken as sRGB, CMYK through libvips' default profile.
            case ignored
        }

        /// Creates image facts.
        public init(
            format: String, width: Int, height: Int, storedWidth: Int, storedHeight: Int,
            orientation: Int, pages: Int, hasAlpha: Bool, interlaced: Bool, profile: ProfileUse? = nil, hdr: HDR? = nil
        ) {
            self.format = format
            self.width = width
            self.height = height
            self.storedWidth = storedWidth
            self.storedHeight = storedHeight
            self.orientation = orientation
            self.pages = pages
            self.hasAlpha = hasAlpha
            self.interlaced = interlaced
            self.profile = profile
            self.hdr = hdr
        }
    }

    /// Capture facts read from EXIF; each key only when the file has it.
    public struct ExifInfo: Codable, Hashable, Sendable {
        /// Local capture time, `YYYY-MM-DDTHH:MM:SS` (from DateTimeOriginal, DateTimeDigitized or DateTime).
        public var capturedAt: String?
        /// UTC offset of `capturedAt`, `+HH:MM` (from OffsetTimeOriginal).
        public var offset: String?
        /// Camera maker.
        public var make: String?
        /// Camera model.
        public var model: String?

        /// Creates capture facts.
        public init(capturedAt: String? = nil, offset: String? = nil, make: String? = nil, model: String? = nil) {
            self.capturedAt = capturedAt
            self.offset = offset
            self.make = make
            self.model = model
        }

        /// True when no key is set; such a value is left out of the manifest.
        public var isEmpty: Bool { capturedAt == nil && offset == nil && make == nil && model == nil }
    }

    /// One written thumbnail.
    public struct Thumbnail: Codable, Hashable, Sendable {
        /// Path relative to the manifest, content-addressed.
        public var path: String
        /// Pixel width of the thumbnail.
        public var width: Int
        /// Pixel height of the thumbnail.
        public var height: Int
        /// For cover thumbnails: the part of the displayed image the thumbnail shows, normalized to 0…1.
        public var crop: Rect?
        /// Size of the thumbnail file in bytes, so a truncated or replaced file is noticed.
        /// (Absent only in manifests of thumbframe 0.1.)
        public var bytes: Int?
        /// SHA-256 of the thumbnail file, lowercase hex (absent only in manifests of thumbframe 0.1).
        public var sha256: String?
        /// Only for the `tiles` entry, whose `path` is a DeepZoom `.dzi` (its size the full
        /// picture's; `bytes` and `sha256` the `.dzi`'s): the pyramid beside it.
        public var tiles: Tiles?
        /// The file is a gain-map JPEG (ISO 21496-1 and Ultra HDR v1): an HDR screen shows its
        /// highlights up to this many times brighter than SDR white, every other screen its SDR
        /// picture. Absent: an SDR file.
        public var headroom: Double?

        /// Creates a thumbnail record.
        public init(
            path: String, width: Int, height: Int, crop: Rect?, bytes: Int? = nil, sha256: String? = nil, tiles: Tiles? = nil,
            headroom: Double? = nil
        ) {
            self.headroom = headroom
            self.path = path
            self.width = width
            self.height = height
            self.crop = crop
            self.bytes = bytes
            self.sha256 = sha256
            self.tiles = tiles
        }
    }

    /// A rectangle (points, or a 0…1 fraction for crops).
    public struct Rect: Codable, Hashable, Sendable {
        /// Left edge.
        public var x: Double
        /// Top edge.
        public var y: Double
        /// Width.
        public var width: Double
        /// Height.
        public var height: Double

        /// Creates a rectangle, rounded to the manifest's 4 decimals.
        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x.roundedForManifest
            self.y = y.roundedForManifest
            self.width = width.roundedForManifest
            self.height = height.roundedForManifest
        }
    }
}

extension Double {
    /// The value rounded to 4 decimals, the precision of every fractional number in a manifest,
    /// so output does not depend on the last bits of floating-point arithmetic.
    public var roundedForManifest: Double {
        let rounded = (self * 10_000).rounded() / 10_000
        return rounded == 0 ? 0 : rounded  // no "-0"
    }
}

/// The manifest's lossless form of a path that is not valid UTF-8. `path` is always UTF-8 for
/// people and JSON (bytes that are not become U+FFFD, so two files can share it); where that
/// lost anything, `rawPath` carries the path's bytes in base64. A path's identity is
/// `rawPath` decoded when present, else `path`'s UTF-8 bytes: compared as bytes, never as
/// Swift strings (which equate NFC and NFD spellings that are different files on disk).
public enum RawPath {
    /// Base64 of `bytes`, or nil when they are valid UTF-8 (then `path` says it all).
    public static func encode(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self) == nil ? Data(bytes).base64EncodedString() : nil
    }

    /// The bytes of a path given as `path` and optional `rawPath`.
    public static func bytes(path: String, rawPath: String?) -> [UInt8] {
        if let rawPath, let data = Data(base64Encoded: rawPath) { return Array(data) }
        return Array(path.utf8)
    }
}

extension Manifest.Item {
    /// The source path's bytes: the item's identity.
    public var pathBytes: [UInt8] { RawPath.bytes(path: path, rawPath: rawPath) }

    /// The kind and its facts, together.
    public var media: Manifest.Media {
        get { Manifest.Media(kind: kind, video: video, animation: animation, motion: motion, raw: raw, rawFile: rawFile) }
        set {
            (kind, video, animation, motion, raw) = (newValue.kind, newValue.video, newValue.animation, newValue.motion, newValue.raw)
            rawFile = newValue.rawFile
        }
    }
}

extension Manifest.Failure {
    /// The source path's bytes: the failure's identity.
    public var pathBytes: [UInt8] { RawPath.bytes(path: path, rawPath: rawPath) }
}
