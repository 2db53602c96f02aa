import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Every EXIF orientation must give the right display size and upright thumbnails: the marker
/// picture (red top-left, green top-right, blue bottom) must come out where a viewer shows it.
@Suite("Orientation")
struct OrientationTests {
    static let displayWidth = 600
    static let displayHeight = 400

    /// Checks the three marker regions of a decoded thumbnail.
    static func expectUpright(_ path: String, _ label: String) throws {
        let image = try Fixtures.decode(path)
        let probes: [(Int, Int, Fixtures.Colour)] = [
            (image.width / 4, image.height / 4, .red),
            (image.width * 3 / 4, image.height / 4, .green),
            (image.width / 2, image.height * 3 / 4, .blue),
        ]
        for (x, y, expected) in probes {
            let found = image.colour(x: x, y: y)
            #expect(found.isNear(expected), "\(label): at (\(x), \(y)) expected \(expected), found \(found)")
        }
    }

    @Test("all eight orientations", arguments: [("jpg", TF_FORMAT_JPEG), ("webp", TF_FORMAT_WEBP)])
    func allOrientations(ext: String, format: TFFormat) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            for orientation in 1...8 {
                try Fixtures.writeMarkerImage(
                    to: "\(source)/o\(orientation).\(ext)", displayWidth: Self.displayWidth,
                    displayHeight: Self.displayHeight, orientation: orientation, format: format)
            }
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            #expect(report.failures.isEmpty)
            let manifest = try ManifestFile.load(report.manifestPath)
            #expect(manifest.items.map(\.path) == (1...8).map { "o\($0).\(ext)" })
            for item in manifest.items {
                let orientation = item.item + 1
                #expect(item.image.orientation == orientation)
                #expect(item.image.width == Self.displayWidth && item.image.height == Self.displayHeight)
                let swapped = orientation >= 5
                #expect(item.image.storedWidth == (swapped ? Self.displayHeight : Self.displayWidth))
                #expect(item.image.storedHeight == (swapped ? Self.displayWidth : Self.displayHeight))
                for (name, thumbnail) in item.thumbnails {
                    let file = root + "/out/" + thumbnail.path
                    try Self.expectUpright(file, "\(item.path) \(name)")
                    let decoded = try Fixtures.decode(file)
                    #expect(decoded.width == thumbnail.width && decoded.height == thumbnail.height)
                }
                // The preview keeps the display aspect: 600×400 is never enlarged.
                #expect(item.thumbnails["preview"]?.width == 600 && item.thumbnails["preview"]?.height == 400)
            }
        }
    }

    /// libheif has already applied a HEIF/AVIF container's rotation, so an EXIF orientation
    /// inside must not rotate the pixels again.
    @Test("AVIF is not rotated twice")
    func avifNotRotatedTwice() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeMarkerImage(
                to: source + "/phone.avif", displayWidth: 300, displayHeight: 200, orientation: 6,
                format: TF_FORMAT_AVIF, applyOrientation: false)
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            let item = try #require(try ManifestFile.load(report.manifestPath).items.first)
            #expect(item.image.format == "avif")
            #expect(item.image.orientation == 1)
            #expect(item.image.width == 300 && item.image.height == 200)
            for thumbnail in item.thumbnails.values {
                try Self.expectUpright(root + "/out/" + thumbnail.path, "avif \(thumbnail.path)")
            }
        }
    }

    /// Thumbnails are stripped: no EXIF block and no orientation tag left for a viewer to apply.
    @Test("thumbnails carry no orientation")
    func thumbnailsStripped() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeMarkerImage(
                to: source + "/r.jpg", displayWidth: 600, displayHeight: 400, orientation: 6, format: TF_FORMAT_JPEG)
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            let item = try #require(try ManifestFile.load(report.manifestPath).items.first)
            for thumbnail in item.thumbnails.values {
                let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: root + "/out/" + thumbnail.path)))
                let metadata = try #require(Vips.withImage(bytes, failOn: 0) { ($0.blob("exif-data"), $0.int("orientation")) })
                #expect(metadata.0 == nil)
                #expect(metadata.1 == nil || metadata.1 == 1)
            }
        }
    }
}
