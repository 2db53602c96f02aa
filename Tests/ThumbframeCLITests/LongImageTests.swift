import CThumbframeShim
import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Very long images: a grid cover shows 0.5 % of a 65 535 × 318 strip, and is cut from the
/// original instead of being taken from a decode of the whole image at the cover's scale, which
/// held 1.4 GB for a 1 KB transparent GIF.
@Suite("Long images")
struct LongImageTests {
    /// A transparent GIF of `width` × `height` whose single frame is mostly left to the decoder:
    /// about 60 bytes that libnsgif turns into a canvas of every pixel.
    static func transparentGIF(width: Int, height: Int) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var bytes = Array("GIF89a".utf8) + u16(width) + u16(height) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        bytes += [0x21, 0xF9, 4, 0x01, 10, 0, 0, 0]  // graphic control: colour 0 transparent
        bytes += [0x2C] + u16(0) + u16(0) + u16(width) + u16(height) + [0]
        bytes += [2, 2, 0x4C, 0x01, 0, 0x3B]
        return bytes
    }

    @Test("a 1 KB transparent GIF of 65 535 × 318 builds in a worker held to 600 MiB")
    func longTransparentGIF() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/src")
            try Fixtures.write(Self.transparentGIF(width: 65_535, height: 318), to: root + "/src/strip.gif")
            let run = try await Processes.run(
                "/usr/bin/env",
                ["THUMBFRAME_WORKER_MEMORY=\(600 << 20)", CLITests.executable, "build", root + "/src", "--out", root + "/out"])
            #expect(run.status == 0, "\(run.stderr)")
            let item = try #require(try ManifestFile.load(root + "/out/manifest.json").items.first)
            #expect(item.image.width == 65_535 && item.image.height == 318)
            #expect(item.thumbnails["grid"].map { [$0.width, $0.height] } == [256, 256])
            #expect(item.thumbnails["preview"].map { [$0.width, $0.height] } == [1280, 6])
            // Under a --max-decode-bytes it is over (its canvas at 16 bytes a pixel: 318 MiB), it
            // fails from its header, with memory as its cause, which inspect counts.
            let refused = try await CLITests.run(["build", root + "/src", "--out", root + "/small", "--max-decode-bytes", "\(100 << 20)"])
            #expect(refused.status == 1, "\(refused.stderr)")
            let failure = try #require(try ManifestFile.load(root + "/small/manifest.json").failures.first)
            #expect(failure.stage == "probe" && failure.cause == "memory" && failure.reason.contains("over --max-decode-bytes"))
            let inspect = try await CLITests.run(["inspect", root + "/small/manifest.json"])
            #expect(inspect.stdout.contains("failures      1 (memory 1)"), "\(inspect.stdout)")
        }
    }

    @Test("a long image's cover is its upright centre, whatever the orientation and format")
    func longCoverUpright() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            let cases: [(String, TFFormat, Int)] = [
                ("o1.jpg", TF_FORMAT_JPEG, 1), ("o1.png", TF_FORMAT_PNG, 1), ("o3.jpg", TF_FORMAT_JPEG, 3),
                ("o6.jpg", TF_FORMAT_JPEG, 6), ("o8.jpg", TF_FORMAT_JPEG, 8),
            ]
            for (name, format, orientation) in cases {
                try Fixtures.writeMarkerImage(
                    to: source + "/" + name, displayWidth: 30_000, displayHeight: 400, orientation: orientation, format: format,
                    alpha: format == TF_FORMAT_PNG)
            }
            let run = try await CLITests.run(["build", source, "--out", root + "/out"])
            #expect(run.status == 0, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == cases.map(\.0))
            for item in manifest.items {
                let grid = try #require(item.thumbnails["grid"])
                #expect([grid.width, grid.height] == [256, 256] && item.image.width == 30_000, "\(item.path)")
                // The centre of the marker: red top-left, green top-right, blue below.
                let image = try Fixtures.decode(root + "/out/" + grid.path)
                for (x, y, expected) in [(64, 64, Fixtures.Colour.red), (192, 64, .green), (128, 192, .blue)] {
                    let found = image.colour(x: x, y: y)
                    #expect(found.isNear(expected), "\(item.path): at (\(x), \(y)) expected \(expected), found \(found)")
                }
            }
        }
    }
}
