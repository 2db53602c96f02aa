internal import CThumbframeShim
internal import CVips
package import ThumbframeManifest

/// Header facts of one image, read without decoding pixels, as Swift values.
package struct ImageHeader: Sendable, Equatable {
    package var format: String
    package var storedWidth: Int
    package var storedHeight: Int
    /// The orientation a viewer applies to the decoded pixels (1 for HEIF/AVIF: libheif has
    /// already applied the container's rotation, and rotating again would be wrong).
    package var orientation: Int
    /// libvips' own reading of the orientation, kept to check it against libexif's.
    package var vipsOrientation: Int?
    /// libexif's IFD0 Orientation.
    package var exifOrientation: Int?
    package var pages: Int
    package var hasAlpha: Bool
    /// CMYK pixels (converted to sRGB before any resize).
    package var isCMYK: Bool
    package var interlaced: Bool
    package var exif: Manifest.ExifInfo
    /// A photo, or an animated GIF/WebP with its frames, duration and loop (the thumbnails are
    /// of its first frame, what a browser shows before it animates).
    package var media = Manifest.Media.photo
    /// Apple's content identifier (a photo's MakerNote, a MOV's QuickTime metadata): the two
    /// halves of a Live Photo share it.
    package var contentIdentifier: String?
    /// The burst the camera says the photo is a frame of (MakerNote, XMP); nil for most photos.
    package var burst: BurstMark?
    /// Where the photo was taken (EXIF GPS): in the worker's memory only, made coarse by
    /// `--locations` or dropped; no file ever holds it.
    package var location: GeoPoint?
    /// The intent the embedded ICC profile converts with (`tf_profile_intent`, read once with
    /// the header; the decode converts with it), or TF_PROFILE_NONE / TF_PROFILE_UNUSABLE.
    var profileIntent = Int32(TF_PROFILE_NONE)
    /// The embedded ICC profile's bytes when it is used (`profileIntent` an intent), copied at
    /// the probe: the decode converts with these, never with the blob its loader attached
    /// (`tf_with_profile` says why).
    var iccProfile: [UInt8]?

    /// A GIF's canvas as its first frame grows it (`GIFBlocks.scan`), which the decode holds.
    var gifCanvasPixels: Int?

    /// The picture is HDR: PQ or HLG code values (tone-mapped by the decode), or an SDR picture
    /// with a gain map (`HDRFacts`).
    package var hdr: Manifest.ImageInfo.HDR?

    /// The H.273 transfer of a PQ or HLG picture, which the decode tone-maps; nil for SDR (and
    /// an SDR picture with a gain map).
    var toneMappedTransfer: Int? {
        switch hdr?.kind {
        case .pq: HDRFacts.pq
        case .hlg: HDRFacts.hlg
        default: nil
        }
    }

    /// How the embedded ICC profile is used when not with its relative-colorimetric intent.
    package var profile: Manifest.ImageInfo.ProfileUse? {
        switch profileIntent {
        case Int32(VIPS_INTENT_PERCEPTUAL.rawValue): .perceptual
        case Int32(VIPS_INTENT_SATURATION.rawValue): .saturation
        case TF_PROFILE_UNUSABLE: .ignored
        default: nil
        }
    }

    /// Orientations 5–8 turn the image a quarter, swapping width and height; so does a video's
    /// rotation of 90 or 270 degrees.
    package var displayWidth: Int { displaySize.width }
    package var displayHeight: Int { displaySize.height }

    private var displaySize: (width: Int, height: Int) {
        let size = Orientation.display(width: storedWidth, height: storedHeight, orientation: orientation)
        let quarter = (media.video?.rotation ?? 0) % 180 == 90
        return quarter ? (size.height, size.width) : size
    }

    /// A video's header: `storedWidth` × `storedHeight` the picture as coded (wider by its sample
    /// aspect ratio), turned by `media.video.rotation` for display; the poster made upright.
    init(video: Manifest.VideoInfo, width: Int, height: Int, contentIdentifier: String? = nil) {
        self.contentIdentifier = contentIdentifier
        format = video.container
        storedWidth = width
        storedHeight = height
        orientation = 1
        pages = 1
        hasAlpha = false
        isCMYK = false
        interlaced = false
        exif = Manifest.ExifInfo()
        media = Manifest.Media(kind: .video, video: video)
    }

    package var imageInfo: Manifest.ImageInfo {
        Manifest.ImageInfo(
            format: format, width: displayWidth, height: displayHeight, storedWidth: storedWidth,
            storedHeight: storedHeight, orientation: orientation, pages: pages, hasAlpha: hasAlpha,
            interlaced: interlaced, profile: profile, hdr: hdr)
    }

    /// Reads the header of an image libvips has opened lazily; `fileBytes` serves TIFF, whose
    /// EXIF is its own IFD0 rather than a block libvips hands out, and GIF's frame count.
    init(_ image: VipsImageHandle, fileBytes: UnsafeRawBufferPointer) {
        let loader = image.string("vips-loader") ?? "unknown"
        format = Self.formatName(loader: loader, heifCompression: image.string("heif-compression"))
        storedWidth = image.width
        storedHeight = image.height
        pages = max(1, image.int("n-pages") ?? 1)
        let family = MediaFormat.named(format)?.family
        if family == .gif, let gif = GIFBlocks.scan(fileBytes), gif.frames > 0 {
            pages = gif.frames
            gifCanvasPixels = gif.width * gif.height
        } else if family == .tiff, pages > 1, Self.isPagePyramid(fileBytes, pages: pages, width: storedWidth, height: storedHeight) {
            // The other pages are smaller copies of the first (a page-based pyramid), not pages.
            pages = 1
        }
        if MediaFormat.named(format)?.gives.contains(.frames) == true, pages > 1 {
            media = Manifest.Media(kind: .animated, animation: Self.animation(image, frames: pages))
        }
        hasAlpha = image.hasAlpha
        isCMYK = image.isCMYK
        profileIntent = tf_profile_intent(image.pointer)
        iccProfile = profileIntent >= 0 ? image.blob("icc-profile-data") : nil
        interlaced = (image.int("interlaced") ?? 0) != 0
        vipsOrientation = image.int("orientation").flatMap { (1...8).contains($0) ? $0 : nil }

        let facts: ExifFacts
        if let block = image.blob("exif-data") {
            facts = ExifReader.read(block)
        } else if family == .tiff {
            facts = ExifReader.read(TIFFExifBlock.block(fileBytes) ?? Array(fileBytes.prefix(ExifReader.maximumBlockLength)))
        } else {
            facts = ExifFacts()
        }
        exifOrientation = facts.orientation
        exif = facts.info
        hdr = HDRFacts.read(
            format: format, file: fileBytes, xmp: image.blob("xmp-data"), icc: image.blob("icc-profile-data"),
            appleHeadroom: facts.appleHeadroom)
        contentIdentifier = facts.contentIdentifier
        burst = facts.burst ?? BurstMark.googleCamera(xmp: image.blob("xmp-data"))
        location = facts.location
        orientation = Self.decoderApplies(format: format) ? 1 : (exifOrientation ?? vipsOrientation ?? 1)
    }

    /// An animated image's facts from the loader's `delay` (milliseconds per frame) and `loop`
    /// (plays, 0 forever). A frame without a delay (libvips 8.14 lists at most 4 097 of a GIF's)
    /// counts 100 ms; so does a frame of 10 ms or less, which browsers play at 100 ms (libvips'
    /// WebP loader already reports it so).
    static func animation(_ image: VipsImageHandle, frames: Int) -> Manifest.AnimationInfo {
        let delays = image.ints("delay") ?? []
        var milliseconds = 0
        for frame in 0..<frames {
            let delay = frame < delays.count ? max(0, delays[frame]) : 100
            milliseconds = milliseconds.addingReportingOverflow(delay <= 10 ? 100 : delay).partialValue
        }
        return Manifest.AnimationInfo(frames: frames, duration: Double(milliseconds) / 1000, loop: max(0, image.int("loop") ?? 0))
    }

    /// A content identifier as both halves of a Live Photo give it: letters, digits and dashes
    /// (a UUID; nothing that could be taken for a path or markup), at most 128, in upper case.
    static func contentIdentifier(_ bytes: some Collection<UInt8>) -> String? {
        func allowed(_ byte: UInt8) -> Bool {
            byte == 0x2D || (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        guard (1...128).contains(bytes.count), bytes.allSatisfy(allowed) else { return nil }
        return String(decoding: bytes, as: UTF8.self).uppercased()
    }

    /// A TIFF whose pages 1, 2, ... each halve the one before (rounded either way) down to the
    /// last and are marked reduced-resolution copies (NewSubfileType bit 0, as libvips and other
    /// pyramid writers mark them): a page-based pyramid. A document whose second page happens to
    /// be half its first is not one. Opens each page's header, no pixels.
    static func isPagePyramid(_ file: UnsafeRawBufferPointer, pages: Int, width: Int, height: Int) -> Bool {
        guard pages <= 32 else { return false }  // 2^31 pixels wide at the base: not a pyramid
        guard let reduced = TIFFPages.reducedResolution(file, pages: pages), reduced.dropFirst().allSatisfy({ $0 }) else {
            return false
        }
        var previous = (width, height)
        for page in 1..<pages {
            var w: Int32 = 0
            var h: Int32 = 0
            guard tf_page_size(file.baseAddress, file.count, Int32(page), &w, &h) == 0 else {
                Vips.clearErrors()
                return false
            }
            func halves(_ side: Int32, _ of: Int) -> Bool { Int(side) == of / 2 || Int(side) == (of + 1) / 2 }
            guard halves(w, previous.0), halves(h, previous.1) else { return false }
            previous = (Int(w), Int(h))
        }
        return true
    }

    /// What the thumbnails' content address adds for this format: a revision of how its pixels
    /// are made, raised when thumbframe corrects them, so the files an earlier version wrote
    /// under the old address are never taken for the new ones. HEIF 2: the profile is the
    /// probe's copy (`iccProfile`; earlier builds converted with freed memory).
    package var pixelsRevision: String? { Self.pixelsRevision(format: format) }

    /// `pixelsRevision` of a format (`image.format`).
    package static func pixelsRevision(format: String) -> String? {
        MediaFormat.named(format)?.family == .heif ? "heif-2" : nil
    }

    /// The row of the format table for this image's format (nil for a RAW's or a video's).
    package var mediaFormat: MediaFormat? { MediaFormat.named(format) }

    /// HEIF containers carry their rotation outside EXIF, and libheif applies it while decoding;
    /// libjxl applies a JPEG XL's codestream orientation (`MediaFormat.Gives.orientsItself`).
    package static func decoderApplies(format: String) -> Bool {
        MediaFormat.named(format)?.gives.contains(.orientsItself) ?? false
    }

    /// `jpegload_buffer` → `jpeg`; HEIF containers are named by their codec (`heic`, `avif`).
    static func formatName(loader: String, heifCompression: String?) -> String {
        var name = Substring(loader)
        for suffix in ["load_buffer", "load_source", "load"] where name.hasSuffix(suffix) {
            name = name.dropLast(suffix.count)
            break
        }
        switch name {
        case "heif":
            switch heifCompression {
            case "av1": return "avif"
            case "hevc": return "heic"
            default: return "heif"
            }
        case "jp2k": return "jp2"
        case "rad": return "hdr"
        default: return String(name)
        }
    }
}

/// The page directories of a TIFF, read from its bytes (bounded: at most `pages` directories,
/// each offset inside the file, no directory twice).
enum TIFFPages {
    /// For each of the first `pages` directories, whether its NewSubfileType (tag 254) marks a
    /// reduced-resolution copy; nil when the chain cannot be read that far.
    static func reducedResolution(_ file: UnsafeRawBufferPointer, pages: Int) -> [Bool]? {
        guard file.count >= 8, let reader = TIFFNumbers(file, byteOrderAt: 0) else { return nil }
        let number = reader.number
        guard number(2, 2) == 42, var directory = number(4, 4) else { return nil }
        var seen: Set<Int> = []
        var result: [Bool] = []
        while result.count < pages {
            guard directory > 0, seen.insert(directory).inserted, let count = number(directory, 2), count <= 4096 else { return nil }
            var reduced = false
            for index in 0..<count {
                let entry = directory + 2 + index * 12
                guard let tag = number(entry, 2), let type = number(entry + 2, 2) else { return nil }
                if tag == 254 {
                    let value = type == 3 ? number(entry + 8, 2) : number(entry + 8, 4)
                    reduced = (value ?? 0) & 1 == 1
                }
            }
            result.append(reduced)
            guard let next = number(directory + 2 + count * 12, 4) else { return nil }
            directory = next
            if directory == 0 && result.count < pages { return nil }
        }
        return result
    }
}
