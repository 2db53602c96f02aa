import Foundation

/// Every kind of file thumbframe reads, in one table (`MediaFormat.all`): the walk takes a file
/// by a format's extensions or first bytes, the build hands it to the format's decoder, the
/// limits count what its decode holds in memory, and the layouts and frontends learn what it
/// can give (frames, pages, motion, tiles, an original browsers show). Adding a format is a row
/// here, its decoder, and its test (docs/adding-a-format.md).
package struct MediaFormat: Sendable {
    /// The library that decodes a format.
    package enum Decoder: Sendable {
        /// libvips (in `VipsDecoder`; HEIF and JPEG XL pictures through libheif and libjxl when HDR).
        case libvips
        /// LibRaw (`RawDecoder`), never libvips: most RAW files are TIFFs whose first directory
        /// is a small preview or the raw mosaic.
        case libraw
        /// FFmpeg's libraries (`VideoDecoder`), reading a descriptor a block at a time.
        case ffmpeg
    }

    /// Formats that share how they are read.
    package enum Family: Sendable {
        case jpeg, png, gif, webp, tiff
        /// HEIC, AVIF and other HEIF pictures: libheif decodes them and applies their rotation.
        case heif
        case jxl
        /// Formats libvips is built with but thumbframe keeps blocked (untrusted loaders): their
        /// files fail as `unsupported format`, saying which loader and why, instead of vanishing.
        case unsupported
        case raw
        case video
    }

    /// What a decode of the format holds in memory beyond the rows it streams, counted against
    /// `--max-decode-bytes` from the header (`ResourceLimits`).
    package enum DecodeMemory: Sendable {
        /// Rows are streamed (TIFF strips and tiles).
        case streamed
        /// Streamed when baseline; a progressive JPEG holds its coefficients, 2 bytes a sample.
        case progressiveCoefficients
        /// Streamed unless interlaced (Adam7): then the whole picture.
        case interlacedPicture
        /// libnsgif's canvas and previous frame, libvips' copy and the thumbnail's working
        /// copies: 16 bytes a canvas pixel, measured.
        case gifCanvas
        /// An animated WebP's RGBA canvas; a still WebP streams.
        case animatedCanvas
        /// The whole picture at once.
        case wholePicture
        /// libheif decodes the picture whole: its codec's YUV planes, its RGB picture and libvips'
        /// copy, 10 bytes a pixel (measured 8 for a 12 MP iPhone grid, 9.5 for a 25 MP picture;
        /// "whole picture" said 3).
        case heifPicture
        /// The whole picture and libjxl's float plane per channel, and a byte a pixel of its own
        /// (705 MiB for a lossless 48 MP picture, 370 for a lossless 25 MP one, measured).
        case jxlPlanes
        /// Counted by its own decoder: LibRaw's allocation cap, a video's reference frames.
        case ownDecoder
    }

    /// Where a Motion Photo's video lies in a still of the format.
    package enum MotionPlace: Sendable {
        /// After the JPEG's data, where its XMP (`Container`, `MicroVideoOffset`) says.
        case afterJPEG
        /// In a top-level `mpvd` box (Samsung's and Google's HEIF Motion Photos).
        case heifBox
    }

    /// What a file of the format can give beside its picture.
    package struct Gives: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Animation frames: several frames make an `animated` item.
        package static let frames = Gives(rawValue: 1 << 0)
        /// Several pages, of which smaller reduced-resolution copies are a pyramid (one page).
        package static let pages = Gives(rawValue: 1 << 1)
        /// Deep-zoom tiles, from libvips' full-resolution decode.
        package static let tiles = Gives(rawValue: 1 << 2)
        /// An embedded preview, used when it covers the thumbnails (RAW).
        package static let preview = Gives(rawValue: 1 << 3)
        /// Its decoder applies the picture's rotation (HEIF's `irot`/`imir`, JPEG XL's
        /// codestream orientation): EXIF orientation is not applied again.
        package static let orientsItself = Gives(rawValue: 1 << 4)
        /// Every common browser decodes it, so a frontend may show the original
        /// (`settings.browserFormats`).
        package static let browsersShow = Gives(rawValue: 1 << 5)
    }

    /// The name the manifest's `image.format` has for it (`jpeg`, `heic`; `raw` and `video`
    /// name families whose items say their own format).
    package let name: String
    /// How it is read.
    package let family: Family
    /// Lowercased file name extensions that make a file a candidate.
    package let extensions: Set<String>
    /// Whether a file's first bytes (`MediaFormat.headBytes` of them, or the whole file when
    /// shorter) are of this format; nil when only its extensions say so.
    package let signature: (@Sendable ([UInt8]) -> Bool)?
    /// Which library decodes it.
    package let decoder: Decoder
    /// What its decode holds in memory.
    package let memory: DecodeMemory
    /// What it can give.
    package let gives: Gives
    /// Where a Motion Photo's video lies in it, when it can hold one.
    package let motion: MotionPlace?

    init(
        _ name: String, _ family: Family, extensions: Set<String>, signature: (@Sendable ([UInt8]) -> Bool)? = nil,
        decoder: Decoder = .libvips, memory: DecodeMemory = .wholePicture, gives: Gives = [], motion: MotionPlace? = nil
    ) {
        self.name = name
        self.family = family
        self.extensions = extensions
        self.signature = signature
        self.decoder = decoder
        self.memory = memory
        self.gives = gives
        self.motion = motion
    }
}

extension MediaFormat {
    /// How many first bytes a file is judged by: an MPEG transport stream shows itself by a sync
    /// byte every 188 bytes, three packets running.
    package static let headBytes = 384

    /// The ISO media brands of HEIF pictures (HEIC, AVIF and their sequences): images, never videos.
    package static let heifBrands = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis"]

    /// True when `head` has `prefix` at `offset`.
    static func starts(_ head: [UInt8], _ prefix: [UInt8], at offset: Int = 0) -> Bool {
        head.count >= offset + prefix.count && head[offset..<offset + prefix.count].elementsEqual(prefix)
    }

    /// True when `head` is ISO media (`ftyp` box first) of one of `brands`.
    static func isoMedia(_ head: [UInt8], brands: [String]) -> Bool {
        starts(head, Array("ftyp".utf8), at: 4) && brands.contains { starts(head, Array($0.utf8), at: 8) }
    }

    package static let jpeg = MediaFormat(
        "jpeg", .jpeg, extensions: ["jpg", "jpeg", "jpe", "jfif"], signature: { starts($0, [0xFF, 0xD8, 0xFF]) },
        memory: .progressiveCoefficients, gives: [.tiles, .browsersShow], motion: .afterJPEG)
    package static let png = MediaFormat(
        "png", .png, extensions: ["png", "apng"], signature: { starts($0, [0x89, 0x50, 0x4E, 0x47]) },
        memory: .interlacedPicture, gives: [.tiles, .browsersShow])
    package static let gif = MediaFormat(
        "gif", .gif, extensions: ["gif"], signature: { starts($0, Array("GIF8".utf8)) }, memory: .gifCanvas,
        gives: [.frames, .browsersShow])
    package static let webp = MediaFormat(
        "webp", .webp, extensions: ["webp"], signature: { starts($0, Array("RIFF".utf8)) && starts($0, Array("WEBP".utf8), at: 8) },
        memory: .animatedCanvas, gives: [.frames, .tiles, .browsersShow])
    package static let tiff = MediaFormat(
        "tiff", .tiff, extensions: ["tif", "tiff"],
        signature: { starts($0, [0x49, 0x49, 0x2A, 0x00]) || starts($0, [0x4D, 0x4D, 0x00, 0x2A]) }, memory: .streamed,
        gives: [.pages, .tiles])
    /// A HEIF picture of another codec (or none libvips names): recognized by every HEIF brand.
    package static let heif = MediaFormat(
        "heif", .heif, extensions: ["heif"], signature: { isoMedia($0, brands: heifBrands) }, memory: .heifPicture,
        gives: [.tiles, .orientsItself], motion: .heifBox)
    package static let heic = MediaFormat(
        "heic", .heif, extensions: ["heic", "hif"], memory: .heifPicture, gives: [.tiles, .orientsItself], motion: .heifBox)
    package static let avif = MediaFormat(
        "avif", .heif, extensions: ["avif"], memory: .heifPicture, gives: [.tiles, .orientsItself, .browsersShow],
        motion: .heifBox)
    package static let jxl = MediaFormat(
        "jxl", .jxl, extensions: ["jxl"],
        signature: { starts($0, [0xFF, 0x0A]) || starts($0, [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) }, memory: .jxlPlanes,
        gives: [.tiles, .orientsItself])
    /// Formats people keep in photo libraries whose libvips loaders stay blocked: a file of
    /// them fails saying so rather than vanishing without a word.
    package static let unsupported = MediaFormat("unsupported", .unsupported, extensions: ["jp2", "j2k", "bmp", "psd", "svg"])
    /// RAW files, by name (most are TIFF inside, as plain TIFFs are) or by the signatures of
    /// those that say so: Olympus ORF (`IIRO`, `IIRS`), Panasonic RW2 (`IIU\0`), Fujifilm RAF,
    /// Canon CR3 (`ftypcrx `).
    package static let raw = MediaFormat(
        "raw", .raw,
        extensions: [
            "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "orf", "rw2", "raf", "pef", "srw", "x3f", "3fr",
            "iiq", "rwl", "mrw", "kdc", "dcr", "erf", "mef", "mos",
        ],
        signature: {
            starts($0, Array("IIRO".utf8)) || starts($0, Array("IIRS".utf8)) || starts($0, [0x49, 0x49, 0x55, 0x00])
                || starts($0, Array("FUJIFILMCCD-RAW".utf8)) || starts($0, Array("ftypcrx ".utf8), at: 4)
        }, decoder: .libraw, memory: .ownDecoder, gives: [.preview])
    /// Containers FFmpeg reads videos from that no image format claims: ISO media of any other
    /// brand (an `.mp4` of an audio-only brand goes to FFmpeg, which finds it has no video),
    /// QuickTime, Matroska/WebM, AVI, MPEG-TS/PS, FLV, ASF.
    package static let video = MediaFormat(
        "video", .video,
        extensions: ["mp4", "m4v", "mov", "qt", "3gp", "3g2", "mkv", "webm", "avi", "mts", "m2ts", "mpg", "mpeg", "wmv", "flv"],
        signature: { head in
            if starts(head, Array("ftyp".utf8), at: 4) { return !isoMedia(head, brands: heifBrands + ["crx "]) }
            if ["moov", "mdat", "wide", "free"].contains(where: { starts(head, Array($0.utf8), at: 4) }) {
                return true  // QuickTime without ftyp
            }
            if starts(head, [0x1A, 0x45, 0xDF, 0xA3]) { return true }  // EBML: Matroska, WebM
            if starts(head, Array("RIFF".utf8)), starts(head, Array("AVI ".utf8), at: 8) { return true }
            // MPEG-TS: a sync byte every 188 bytes, three packets running (one `G` could be a GIF's).
            if head.count > 376, head[0] == 0x47, head[188] == 0x47, head[376] == 0x47 { return true }
            if starts(head, [0x00, 0x00, 0x01, 0xBA]) || starts(head, [0x00, 0x00, 0x01, 0xB3]) { return true }  // MPEG-PS, ES
            if starts(head, Array("FLV".utf8)) { return true }
            return starts(head, [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11])  // ASF (WMV)
        }, decoder: .ffmpeg, memory: .ownDecoder, gives: [.frames])

    /// Every format, in the order first bytes are matched: stills and RAW files before videos
    /// (ISO media is a video unless a picture's brand says otherwise).
    package static let all: [MediaFormat] = [jpeg, png, gif, webp, tiff, heif, heic, avif, jxl, unsupported, raw, video]

    /// The row whose name a manifest's `image.format` has (nil for a RAW's or a video's own names).
    package static func named(_ name: String) -> MediaFormat? {
        all.first { $0.name == name }
    }

    /// The row whose extensions hold `fileExtension` (lowercased).
    package static func withExtension(_ fileExtension: String) -> MediaFormat? {
        all.first { $0.extensions.contains(fileExtension) }
    }

    /// The first row whose signature `head` has.
    package static func recognized(_ head: [UInt8]) -> MediaFormat? {
        all.first { $0.signature?(head) ?? false }
    }

    /// The names of the formats that give `what` (`image.format` values, families aside).
    package static func names(giving what: Gives) -> Set<String> {
        Set(all.filter { $0.gives.isSuperset(of: what) && $0.family != .raw && $0.family != .video }.map(\.name))
    }

    /// Which library decodes a file, from its extension and first bytes: its first bytes decide
    /// (an image with a wrong extension is still an image, a video named `.jpg` a video), except
    /// that a RAW extension keeps a TIFF-based RAW file from libvips; a file whose bytes no format
    /// claims goes to libvips, which names what it cannot open.
    package static func decoder(fileExtension: String, head: [UInt8]) -> Decoder {
        if withExtension(fileExtension)?.family == .raw { return .libraw }
        return recognized(head)?.decoder ?? .libvips
    }

    /// True when `head` is a still picture's (RAW files aside: those are known by name).
    package static func isStill(_ head: [UInt8]) -> Bool {
        recognized(head).map { $0.family != .video && $0.family != .raw } ?? false
    }

    /// True when `head` is a video container's that no picture format claims.
    package static func isVideo(_ head: [UInt8]) -> Bool {
        recognized(head)?.family == .video
    }
}
