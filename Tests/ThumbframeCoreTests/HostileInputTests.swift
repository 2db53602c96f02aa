import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Every kind of bad input of ../shared/SPEC.md §8 becomes one failure with a one-line reason, and every
/// good file beside it is still built.
@Suite("Hostile input")
struct HostileInputTests {
    /// CRC-32 (IEEE), for hand-made PNG chunks.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A 60-byte PNG that declares 100 000 × 100 000 pixels: a decompression bomb, valid to
    /// its header (correct CRCs).
    static func pngBomb() -> [UInt8] {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
        }
        let header = bigEndian(100_000) + bigEndian(100_000) + [8, 2, 0, 0, 0]
        let idat: [UInt8] = [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    /// A 4×4 BMP: a format only ImageMagick reads in libvips, whose loader is blocked as untrusted.
    static func bmp() -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] {
            [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        let pixels = [UInt8](repeating: 0x80, count: 4 * 4 * 3)
        let info =
            le32(40) + le32(4) + le32(4) + [1, 0, 24, 0] + le32(0) + le32(UInt32(pixels.count)) + le32(2835) + le32(2835) + le32(0)
            + le32(0)
        return Array("BM".utf8) + le32(UInt32(54 + pixels.count)) + le32(0) + le32(54) + info + pixels
    }

    /// A real progressive JPEG whose SOF2 header is patched to claim `width` × `height`.
    static func hugeProgressiveJPEG(at path: String, width: Int, height: Int) throws {
        try Fixtures.writeImage(to: path + ".small.jpg", width: 64, height: 64)
        // Re-encode progressively through libvips' option string.
        try Fixtures.reencode(path + ".small.jpg", to: path, options: "[interlace]")
        try FileManager.default.removeItem(atPath: path + ".small.jpg")
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let sof2 = try #require((0..<bytes.count - 9).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC2 })
        bytes[sof2 + 5] = UInt8(height >> 8)
        bytes[sof2 + 6] = UInt8(height & 0xFF)
        bytes[sof2 + 7] = UInt8(width >> 8)
        bytes[sof2 + 8] = UInt8(width & 0xFF)
        try Fixtures.write(bytes, to: path)
    }

    @Test("each kind of bad file is one failure and the rest is built")
    func badFiles() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/good.jpg", width: 320, height: 240)
            try Fixtures.writeImage(to: source + "/good.png", width: 200, height: 100, format: TF_FORMAT_PNG)
            try Fixtures.writeImage(to: source + "/good.gif.source", width: 120, height: 90)
            try Fixtures.reencode(source + "/good.gif.source", to: source + "/anim.gif", options: "")
            try FileManager.default.removeItem(atPath: source + "/good.gif.source")
            func truncate(_ from: String, _ to: String) throws {
                let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: source + "/" + from)))
                try Fixtures.write(Array(bytes.prefix(bytes.count * 2 / 3)), to: source + "/" + to)
            }
            try truncate("good.jpg", "truncated.jpg")
            try truncate("good.png", "truncated.png")
            try truncate("anim.gif", "truncated.gif")
            try Fixtures.write([], to: source + "/empty.jpg")
            var random = SplitMix64(state: 5000)
            try Fixtures.write((0..<5000).map { _ in UInt8.random(in: 0...255, using: &random) }, to: source + "/noise.jpg")
            try FileManager.default.copyItem(atPath: source + "/good.png", toPath: source + "/png-named.jpg")
            try Fixtures.write(Self.bmp(), to: source + "/old.bmp")
            try Fixtures.write(Array("8BPS not really a photoshop file".utf8), to: source + "/layers.psd")
            try Fixtures.writeImage(to: source + "/big.jpg", width: 400, height: 300)
            try Fixtures.write(Self.pngBomb(), to: source + "/bomb.png")
            try Self.hugeProgressiveJPEG(at: source + "/progressive.jpg", width: 15_000, height: 15_000)
            try Fixtures.write(Array("x".utf8), to: source + "/notes.txt")

            // No hang: the bomb and the huge progressive JPEG are refused from their headers
            // (below), never decoded.
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out", maxPixels: 100_000))
            #expect(manifest.items.map(\.path) == ["anim.gif", "good.jpg", "good.png", "png-named.jpg"])
            #expect(manifest.items.first { $0.path == "png-named.jpg" }?.image.format == "png")
            let reasons = Dictionary(uniqueKeysWithValues: manifest.failures.map { ($0.path, "\($0.stage): \($0.reason)") })
            #expect(
                reasons.keys.sorted() == [
                    "big.jpg", "bomb.png", "empty.jpg", "layers.psd", "noise.jpg", "old.bmp", "progressive.jpg",
                    "truncated.gif", "truncated.jpg", "truncated.png",
                ])
            #expect(reasons["empty.jpg"] == "read: empty file")
            #expect(reasons["big.jpg"] == "probe: 400×300 pixels is over --max-pixels 100000")
            #expect(reasons["bomb.png"] == "probe: 100000×100000 pixels is over --max-pixels 100000")
            #expect(
                reasons["old.bmp"]?.hasPrefix("probe: unsupported format: a format libvips reads only through ImageMagick") == true,
                "untrusted loader, said as such: \(reasons["old.bmp"] ?? "")")
            #expect(reasons["layers.psd"]?.hasPrefix("probe: unsupported format: a format libvips reads only through ImageMagick") == true)
            #expect(reasons["noise.jpg"]?.hasPrefix("probe: ") == true)
            for name in ["truncated.jpg", "truncated.png"] {
                #expect(reasons[name]?.hasPrefix("decode: ") == true, "\(name): \(reasons[name] ?? "")")
            }
            // libvips' GIF loader reads a whole GIF to learn its frames, so truncation shows at once.
            #expect(reasons["truncated.gif"]?.contains("Unexpected end of GIF") == true)
            for failure in manifest.failures {
                #expect(!failure.reason.isEmpty && !failure.reason.contains("\n") && failure.reason.count <= 300)
            }

            // The progressive limit holds under the default --max-pixels too.
            let defaults = try await Builder(options: BuildOptions(source: source, output: root + "/out2")).run()
            let progressive = try #require(defaults.failures.first { $0.path == "progressive.jpg" })
            #expect(
                progressive.reason == "decoding 15000×15000 pixels would hold about 1287 MiB (progressive JPEG coefficients), "
                    + "over --max-decode-bytes 512 MiB")
            #expect(defaults.failures.first { $0.path == "bomb.png" }?.reason.contains("over --max-pixels 268402689") == true)
        }
    }

    @Test(
        "a GIF whose first frame lies far outside its screen is counted by the canvas it grows: 16 bytes a pixel, as measured, not 4"
    )
    func gifCanvas() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            // 64 × 319 on screen, its first frame at x = 65 280: libnsgif grows the canvas to 65 344 × 319.
            func u16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
            let frame: [UInt8] =
                [0x21, 0xF9, 4, 4, 10, 0, 0, 0, 0x2C] + u16(65_280) + u16(0) + u16(64) + u16(319) + [0, 2, 2, 0x44, 0x01, 0]
            let gif =
                Array("GIF89a".utf8) + u16(64) + u16(319) + [0x80, 0, 0, 0, 0, 0, 255, 255, 255] + frame + frame + [0x3B]
            try Fixtures.write(gif, to: root + "/lib/wide.gif")
            #expect(gif.count < 100)
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.limits.maxDecodeBytes = 300 << 20
            let report = try await Builder(options: options).run()
            #expect(
                report.failures.first?.reason
                    == "decoding 65344×319 pixels would hold about 318 MiB (GIF canvas and frame buffers), over --max-decode-bytes 300 MiB")
            // Under the default 512 MiB it is built (about 300 MB measured for it).
            let built = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/out2")).run()
            #expect(built.failures.isEmpty && built.items == 1)
        }
    }

    @Test("a file that vanishes between the walk and its turn is a read failure")
    func vanished() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.writeImage(to: root + "/gone.jpg", width: 10, height: 10)
            let source = try SourceRoot.open(root)
            let walk = try SourceWalker(root: source, excluded: []).walk()
            let file = try #require(walk.files.first)
            try FileManager.default.removeItem(atPath: root + "/gone.jpg")
            try Fixtures.makeDirectory(root + "/out")
            let context = ProcessingContext(
                recipes: ThumbnailRecipe.defaults, source: source, output: try OutputDirectory(root + "/out", create: true),
                limits: ResourceLimits())
            let outcome = ItemProcessor.process(file, context: context)
            #expect(
                outcome
                    == .failed(
                        Manifest.Failure(
                            path: "gone.jpg", stage: "read", reason: "No such file or directory", bytes: file.stat.size,
                            modified: file.stat.modifiedRFC3339)))
        }
    }

    @Test("names that are not UTF-8 are items with a lossless rawPath, in directories too; reruns reuse them")
    func invalidNames() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/ok.jpg", width: 20, height: 20)
            // Latin-1 bytes (0xE9, 0xFF), which are not UTF-8, in a file and in a directory name,
            // beside a UTF-8 name that displays the same ("caf\u{FFFD}.jpg").
            func raw(_ parts: [UInt8]...) -> [UInt8] { Array(source.utf8) + parts.flatMap { $0 } + [0] }
            var directory = raw(Array("/d".utf8), [0xFF])
            #expect(mkdir(&directory, 0o755) == 0)
            for target in [raw(Array("/caf".utf8), [0xE9], Array(".jpg".utf8)), raw(Array("/d".utf8), [0xFF], Array("/x.jpg".utf8))] {
                var path = target
                try FileManager.default.copyItem(atPath: source + "/ok.jpg", toPath: source + "/tmp.jpg")
                #expect(rename(source + "/tmp.jpg", &path) == 0)
            }
            try FileManager.default.copyItem(atPath: source + "/ok.jpg", toPath: source + "/caf\u{FFFD}.jpg")
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            #expect(report.items == 4 && report.failures.isEmpty)
            let manifest = try ManifestFile.load(report.manifestPath)
            let byRaw = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.pathBytes, $0) })
            #expect(byRaw.count == 4, "four distinct identities")
            let latin = try #require(byRaw[Array("caf".utf8) + [0xE9] + Array(".jpg".utf8)])
            #expect(
                latin.path == "caf\u{FFFD}.jpg"
                    && latin.rawPath == Data(Array("caf".utf8) + [0xE9] + Array(".jpg".utf8)).base64EncodedString())
            #expect(byRaw[Array("caf\u{FFFD}.jpg".utf8)]?.rawPath == nil)
            let inDirectory = try #require(byRaw[Array("d".utf8) + [0xFF] + Array("/x.jpg".utf8)])
            #expect(manifest.sections[inDirectory.section].rawName == Data(Array("d".utf8) + [0xFF]).base64EncodedString())
            #expect(ManifestValidator.problems(of: manifest, thumbnailRoot: root + "/out").isEmpty)
            let again = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            #expect(again.reused == 4 && !again.manifestWritten)
        }
    }

    @Test("symbolic links: skipped by default; followed only inside the source; broken links and loops fail")
    func symlinks() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source + "/real")
            try Fixtures.writeImage(to: source + "/real/photo.jpg", width: 40, height: 30)
            try Fixtures.writeImage(to: root + "/outside.jpg", width: 40, height: 30)
            let links = [
                ("alias.jpg", "real/photo.jpg"), ("escape.jpg", "../outside.jpg"), ("dangling.jpg", "nowhere.jpg"),
                ("loop-a.jpg", "loop-b.jpg"), ("loop-b.jpg", "loop-a.jpg"), ("again", "real"), ("up", ".."),
            ]
            for (name, target) in links {
                try FileManager.default.createSymbolicLink(atPath: source + "/" + name, withDestinationPath: target)
            }
            let before = IncrementalTests.snapshot(root)

            let plain = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            #expect(plain.items == 1 && plain.failures.isEmpty)

            var options = BuildOptions(source: source, output: root + "/out-follow")
            options.followSymlinks = true
            let (_, manifest) = try await Fixtures.build(options)
            // A directory reached twice ("again" → "real") is walked once, under its real name
            // whatever order readdir gives: links are followed after the tree without them.
            #expect(Set(manifest.items.map(\.path)) == ["alias.jpg", "real/photo.jpg"])
            let reasons = Dictionary(uniqueKeysWithValues: manifest.failures.map { ($0.path, $0.reason) })
            #expect(
                reasons == [
                    "escape.jpg": "symbolic link points outside the source directory",
                    "up": "symbolic link points outside the source directory",  // a directory, whatever its name
                    "dangling.jpg": "broken symbolic link",
                    "loop-a.jpg": "symbolic link loop",
                    "loop-b.jpg": "symbolic link loop",
                ])
            // Nothing outside the output directories was written.
            let after = IncrementalTests.snapshot(root).filter { !$0.key.hasPrefix("out/") && !$0.key.hasPrefix("out-follow/") }
            #expect(after == before)
        }
    }
}
