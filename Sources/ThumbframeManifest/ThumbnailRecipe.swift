import Foundation

/// How one kind of thumbnail is made: `NAME=WxH[:cover|:fit][:jpeg|:webp|:avif][:qNN]`.
public struct ThumbnailRecipe: Codable, Hashable, Sendable {
    /// How the image is fitted to the box.
    public enum Fit: String, Codable, Hashable, Sendable, CaseIterable {
        /// Fill the box and crop the centre (grid cells).
        case cover
        /// Fit inside the box, keeping the whole image (previews).
        case fit
    }

    /// Encoded file format.
    public enum Format: String, Codable, Hashable, Sendable, CaseIterable {
        /// Baseline JPEG.
        case jpeg
        /// Lossy WebP.
        case webp
        /// AVIF (AV1 in HEIF).
        case avif

        /// File name extension of the thumbnail files.
        public var fileExtension: String {
            switch self {
            case .jpeg: "jpg"
            case .webp: "webp"
            case .avif: "avif"
            }
        }

        /// The largest side the format can encode: a long image's fit thumbnail is limited by it.
        public var maxDimension: Int {
            switch self {
            case .jpeg: 65_500
            case .webp: 16_383
            case .avif: 16_384
            }
        }
    }

    /// Key under `thumbnails` in each item.
    public var name: String
    /// Box width in pixels.
    public var width: Int
    /// Box height in pixels.
    public var height: Int
    /// Cover (crop) or fit.
    public var fit: Fit
    /// Output format.
    public var format: Format
    /// Encoder quality, 1–100.
    public var quality: Int

    /// Creates a recipe.
    public init(name: String, width: Int, height: Int, fit: Fit, format: Format = .jpeg, quality: Int = 80) {
        self.name = name
        self.width = width
        self.height = height
        self.fit = fit
        self.format = format
        self.quality = quality
    }

    /// The default pair: a 256×256 grid cell and a 1280 preview.
    /// `grid` (a square crop, for square grids), `small` (the whole picture in 512 px, what a
    /// justified grid's cell needs on a phone: 330 device pixels tall at row height 110 and
    /// scale 3), `preview` (the lightbox). `small` and `preview` are `settings.srcset`, so a
    /// browser loads the small one into a cell and the preview only where a cell is larger.
    public static let defaults: [ThumbnailRecipe] = [
        ThumbnailRecipe(name: "grid", width: 256, height: 256, fit: .cover, format: .jpeg, quality: 80),
        ThumbnailRecipe(name: "small", width: 512, height: 512, fit: .fit, format: .jpeg, quality: 75),
        ThumbnailRecipe(name: "preview", width: 1280, height: 1280, fit: .fit, format: .jpeg, quality: 82),
    ]

    /// The scale of a fit recipe's output for an image of `width` × `height` display pixels:
    /// the box's, never above 1. A long image (height ≥ 3 × width) is limited by width only, so
    /// a 1080×7000 screenshot previews at a readable 1080 wide instead of a thin strip; the
    /// format's largest side still bounds it.
    public func fitScale(width: Int, height: Int) -> Double {
        let (w, h) = (Double(width), Double(height))
        let limit = Double(format.maxDimension)
        let isLong = width <= height / 3
        return min(1, Double(self.width) / w, isLong ? limit / h : Double(self.height) / h, limit / w, limit / h)
    }

    /// The pixel size of a fit recipe's output for an image of `width` × `height` display pixels
    /// (at least 1 × 1, whatever numbers a damaged manifest gives).
    public func fittedSize(width: Int, height: Int) -> (width: Int, height: Int) {
        let k = fitScale(width: width, height: height)
        func scaled(_ side: Int) -> Int {
            let value = Double(side) * k
            return value.isFinite ? Int(min(max(value, 1), Double(Int32.max)).rounded()) : 1
        }
        return (scaled(width), scaled(height))
    }

    /// Everything that changes the pixels, without the name: two recipes that differ only in name
    /// make identical files, and content addressing shares them.
    public var canonicalRecipe: String {
        "\(width)x\(height):\(fit.rawValue):\(format.rawValue):q\(quality)"
    }

    /// Parses `NAME=WxH[:cover|:fit][:jpeg|:webp|:avif][:qNN]`; fit defaults to `fit`, format to
    /// `jpeg`, quality to 80.
    public init(parsing text: String) throws(ManifestError) {
        func bad(_ why: String) -> ManifestError { .invalidThumbnailSpec(text, why) }
        guard let equals = text.firstIndex(of: "=") else { throw bad("expected NAME=WxH") }
        let name = String(text[..<equals])
        guard Self.isValidName(name) else { throw bad("the name must be letters, digits, '-' or '_'") }
        var parts = text[text.index(after: equals)...].split(separator: ":", omittingEmptySubsequences: false)
        guard !parts.isEmpty else { throw bad("expected WxH after '='") }
        let size = parts.removeFirst().split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = Int(size[0]), let height = Int(size[1]),
            (1...65_500).contains(width), (1...65_500).contains(height)
        else { throw bad("the size must be WxH with both sides from 1 to 65500") }
        var recipe = ThumbnailRecipe(name: name, width: width, height: height, fit: .fit)
        for part in parts {
            if let fit = Fit(rawValue: String(part)) {
                recipe.fit = fit
            } else if let format = Format(rawValue: String(part)) {
                recipe.format = format
            } else if part.first == "q", let quality = Int(part.dropFirst()), (1...100).contains(quality) {
                recipe.quality = quality
            } else {
                throw bad("unknown part '\(part)' (expected cover, fit, jpeg, webp, avif or q1…q100)")
            }
        }
        self = recipe
    }

    /// Recipe and viewport names are keys in every item: ASCII letters, digits, `-` and `_`.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
