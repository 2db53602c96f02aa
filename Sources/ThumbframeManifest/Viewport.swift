import Foundation

/// A screen an image browser lays photos out on: size in points and the screen's scale
/// (device pixels per point). Parsed from `NAME=WxH@S`.
public struct Viewport: Codable, Hashable, Sendable {
    /// Key under `layouts` in each item.
    public var name: String
    /// Width in points.
    public var width: Double
    /// Height in points.
    public var height: Double
    /// Device pixels per point.
    public var scale: Double

    /// Creates a viewport.
    public init(name: String, width: Double, height: Double, scale: Double) {
        self.name = name
        self.width = width
        self.height = height
        self.scale = scale
    }

    /// The default set: an iPhone upright and sideways, an iPad, a laptop.
    public static let defaults: [Viewport] = [
        Viewport(name: "phone", width: 390, height: 844, scale: 3),
        Viewport(name: "phone-landscape", width: 844, height: 390, scale: 3),
        Viewport(name: "tablet", width: 820, height: 1180, scale: 2),
        Viewport(name: "desktop", width: 1440, height: 900, scale: 2),
    ]

    /// Parses `NAME=WxH@S`, or `WxH@S` when `requireName` is false (the name is then `WxH@S`).
    public init(parsing text: String, requireName: Bool = true) throws(ManifestError) {
        func bad(_ why: String) -> ManifestError { .invalidViewport(text, why) }
        var name: String?
        var geometry = Substring(text)
        if let equals = text.firstIndex(of: "=") {
            name = String(text[..<equals])
            geometry = text[text.index(after: equals)...]
        }
        if let name {
            guard ThumbnailRecipe.isValidName(name) else { throw bad("the name must be letters, digits, '-' or '_'") }
        } else if requireName {
            throw bad("expected NAME=WxH@S")
        }
        let sizeAndScale = geometry.split(separator: "@", omittingEmptySubsequences: false)
        guard sizeAndScale.count == 2 else { throw bad("expected WxH@S, e.g. 390x844@3") }
        let size = sizeAndScale[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = Double(size[0]), let height = Double(size[1]),
            let scale = Double(sizeAndScale[1]),
            width.isFinite, height.isFinite, scale.isFinite,
            (1...100_000).contains(width), (1...100_000).contains(height), scale > 0, scale <= 16
        else { throw bad("width and height must be 1 to 100000 points and the scale above 0 and at most 16") }
        self.init(name: name ?? String(geometry), width: width, height: height, scale: scale)
    }
}
