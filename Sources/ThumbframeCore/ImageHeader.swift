import ThumbframeManifest

/// Header facts of one image, read without decoding pixels, as Swift values.
struct ImageHeader: Equatable {
    var format: String
    var storedWidth: Int
    var storedHeight: Int
    /// The orientation a viewer applies to the decoded pixels (1 for HEIF/AVIF: libheif has
    /// already applied the container's rotation, and rotating again would be wrong).
    var orientation: Int
    /// libvips' own reading of the orientation, kept to check it against libexif's.
    var vipsOrientation: Int?
    /// libexif's IFD0 Orientation.
    var exifOrientation: Int?
    var pages: Int
    var hasAlpha: Bool
    var interlaced: Bool
    var exif: Manifest.ExifInfo

    /// Orientations 5–8 turn the image a quarter, swapping width and height.
    var displayWidth: Int { orientation >= 5 ? storedHeight : storedWidth }
    var displayHeight: Int { orientation >= 5 ? storedWidth : storedHeight }

    var imageInfo: Manifest.ImageInfo {
        Manifest.ImageInfo(
            format: format, width: displayWidth, height: displayHeight, storedWidth: storedWidth,
            storedHeight: storedHeight, orientation: orientation, pages: pages, hasAlpha: hasAlpha,
            interlaced: interlaced)
    }

    /// Reads the header of an image libvips has opened lazily; `fileBytes` serves TIFF, whose
    /// EXIF is its own IFD0 rather than a block libvips hands out.
    init(_ image: VipsImageHandle, fileBytes: UnsafeRawBufferPointer) {
        let loader = image.string("vips-loader") ?? "unknown"
        format = Self.formatName(loader: loader, heifCompression: image.string("heif-compression"))
        storedWidth = image.width
        storedHeight = image.height
        pages = max(1, image.int("n-pages") ?? 1)
        hasAlpha = image.hasAlpha
        interlaced = (image.int("interlaced") ?? 0) != 0
        vipsOrientation = image.int("orientation").flatMap { (1...8).contains($0) ? $0 : nil }

        let facts: ExifFacts
        if let block = image.blob("exif-data") {
            facts = ExifReader.read(block)
        } else if format == "tiff" {
            facts = ExifReader.read(Array(fileBytes.prefix(ExifReader.maximumBlockLength)))
        } else {
            facts = ExifFacts()
        }
        exifOrientation = facts.orientation
        exif = facts.info
        orientation = Self.decoderApplies(format: format) ? 1 : (exifOrientation ?? vipsOrientation ?? 1)
    }

    /// HEIF containers carry their rotation outside EXIF, and libheif applies it while decoding.
    static func decoderApplies(format: String) -> Bool {
        format == "heic" || format == "avif" || format == "heif"
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
