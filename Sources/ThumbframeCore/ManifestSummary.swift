import Foundation
import ThumbframeManifest

/// What `thumbframe inspect` reports about a manifest.
public struct ManifestSummary: Codable, Equatable, Sendable {
    /// One section's line.
    public struct SectionLine: Codable, Equatable, Sendable {
        /// Section key.
        public var name: String
        /// Section heading.
        public var title: String
        /// First flat index.
        public var start: Int
        /// Number of items.
        public var count: Int
    }

    /// The tool that wrote the manifest, e.g. `thumbframe 0.1.0 (libvips 8.14.1)`.
    public var generator: String
    /// Number of items.
    public var items: Int
    /// Sections in order.
    public var sections: [SectionLine]
    /// Items per image format.
    public var formats: [String: Int]
    /// Items per EXIF orientation (keys `"1"`…`"8"`).
    public var orientations: [String: Int]
    /// Items whose height is at least three times their width (scrolled, not fitted).
    public var longImages: Int
    /// Thumbnails per recipe name.
    public var thumbnails: [String: Int]
    /// Every failure of the build.
    public var failures: [Manifest.Failure]

    /// Summarizes a manifest.
    public init(_ manifest: Manifest) {
        generator = "\(manifest.generator.name) \(manifest.generator.version) (libvips \(manifest.generator.libvips))"
        items = manifest.items.count
        sections = manifest.sections.map { SectionLine(name: $0.name, title: $0.title, start: $0.start, count: $0.count) }
        var formats: [String: Int] = [:]
        var orientations: [String: Int] = [:]
        var thumbnails: [String: Int] = [:]
        var longImages = 0
        for item in manifest.items {
            formats[item.image.format, default: 0] += 1
            orientations[String(item.image.orientation), default: 0] += 1
            if item.image.height >= 3 * item.image.width { longImages += 1 }
            for name in item.thumbnails.keys { thumbnails[name, default: 0] += 1 }
        }
        self.formats = formats
        self.orientations = orientations
        self.thumbnails = thumbnails
        self.longImages = longImages
        failures = manifest.failures
    }

    /// The summary for people: aligned lines, largest counts first.
    public func rendered() -> String {
        func counts(_ table: [String: Int]) -> String {
            guard !table.isEmpty else { return "none" }
            return table.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        }
        var lines = [
            "generator     \(generator)",
            "items         \(items) in \(sections.count) section\(sections.count == 1 ? "" : "s")",
            "formats       \(counts(formats))",
            "orientations  \(counts(orientations))",
            "long images   \(longImages)",
            "thumbnails    \(counts(thumbnails))",
            "failures      \(failures.count)",
        ]
        for failure in failures {
            lines.append("  \(failure.path)  [\(failure.stage)] \(failure.reason)")
        }
        lines.append("sections")
        let width = sections.map(\.name.count).max() ?? 0
        for (index, section) in sections.enumerated() {
            let padded = section.name.padding(toLength: width, withPad: " ", startingAt: 0)
            lines.append("  \(index)  \(padded)  \(section.count) item\(section.count == 1 ? "" : "s") from #\(section.start)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
