import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Real camera and phone files from `../shared/corpus/exif-samples`, checked against
/// `exiftool -n` (sizes, orientation, EXIF text) and the `vips` CLI (what cannot be decoded).
@Suite("Real-image corpus")
struct CorpusTests {
    static let corpus: String = {
        return URL(fileURLWithPath: Fixtures.packageRoot + "/../shared/corpus/exif-samples").standardized.path
    }()

    static var available: Bool {
        FileManager.default.fileExists(atPath: corpus) && Processes.tool("exiftool") != nil && Processes.tool("vips") != nil
    }

    /// What exiftool says of one file; `-n` for numbers, EXIF group only for text. (Named as
    /// exiftool's JSON names them.)
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Oracle: Decodable {
        var SourceFile: String
        var FileType: String?
        var ImageWidth: Int?
        var ImageHeight: Int?
        var Orientation: Int?
        var Rotation: Int?
        var DateTimeOriginal: Value?
        var CreateDate: Value?
        var ModifyDate: Value?
        var OffsetTimeOriginal: Value?
        var OffsetTimeDigitized: Value?
        var OffsetTime: Value?
        var SubSecTimeOriginal: Value?
        var SubSecTimeDigitized: Value?
        var SubSecTime: Value?
        var Make: Value?
        var Model: Value?
        var Warning: Value?
        var FileSize: Int?

        /// exiftool prints numbers for some odd values; compare as text.
        struct Value: Decodable {
            var text: String
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) {
                    self.text = text
                } else {
                    let number = try container.decode(Double.self)
                    // SubSecTime "762" arrives as the number 762 (exiftool quotes "054").
                    self.text = number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
                }
            }
        }
    }

    @Test(
        "every file matches exiftool and vips",
        .enabled(if: available, "needs ../shared/corpus/exif-samples, exiftool and vips (scripts/bootstrap --test)"))
    func corpusMatchesOracles() async throws {
        try await Fixtures.withTemporaryDirectory { out in
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: Self.corpus, output: out))
            let json = Data(
                try await Processes.run(
                    Processes.tool("exiftool")!,
                    [
                        "-n", "-json", "-r", "-FileType", "-ImageWidth", "-ImageHeight", "-Orientation", "-Rotation",
                        "-EXIF:DateTimeOriginal", "-EXIF:CreateDate", "-EXIF:ModifyDate", "-EXIF:OffsetTimeOriginal",
                        "-EXIF:OffsetTimeDigitized", "-EXIF:OffsetTime", "-EXIF:SubSecTimeOriginal", "-EXIF:SubSecTimeDigitized",
                        "-EXIF:SubSecTime",
                        "-EXIF:Make", "-EXIF:Model", "-Warning", "-FileSize", Self.corpus,
                    ]
                ).stdout.utf8)
            let oracles = try JSONDecoder().decode([Oracle].self, from: json)
            #expect(oracles.count > 90)
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            let failures = Dictionary(uniqueKeysWithValues: manifest.failures.map { ($0.path, $0) })
            #expect(items.count + failures.count == oracles.count, "every image is an item or a failure, nothing else")

            for oracle in oracles {
                let path = String(oracle.SourceFile.dropFirst(Self.corpus.count + 1))
                if let failure = failures[path] {
                    // Only what libvips itself cannot decode may fail.
                    let status = try await Processes.run(
                        Processes.tool("vips")!,
                        [
                            "copy", oracle.SourceFile + "[fail_on=truncated]", out + "/oracle.v",
                        ]
                    ).status
                    #expect(status != 0, "\(path) failed (\(failure.reason)) but vips decodes it")
                    continue
                }
                let item = try #require(items[path], "\(path) is neither an item nor a failure")
                try Self.check(item, against: oracle, path: path)
                try Self.expectReadersAgree(oracle.SourceFile, path: path)
            }
            #expect(failures.keys.contains("jpg/corrupted.jpg"))
        }
    }

    /// What exiftool says of a HEIF's HDR: Apple's gain-map auxiliary image and MakerNote values,
    /// the nclx transfer.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct HDROracle: Decodable {
        var SourceFile: String
        var AuxiliaryImageType: String?
        var HDRHeadroom: Double?
        var HDRGain: Double?
        var TransferCharacteristics: Int?
    }

    @Test(
        "every phone HEIC's hdr is what exiftool finds: an Apple gain map with the headroom of Apple's formula over its MakerNote, PQ or HLG by its nclx, else none",
        .enabled(if: available, "needs ../shared/corpus/exif-samples, exiftool and vips (scripts/bootstrap --test)"))
    func heifHDRMatchesExiftool() async throws {
        try await Fixtures.withTemporaryDirectory { out in
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: Self.corpus + "/heic", output: out))
            let json = try await Processes.run(
                Processes.tool("exiftool")!,
                [
                    "-n", "-json", "-r", "-QuickTime:AuxiliaryImageType", "-Apple:HDRHeadroom", "-Apple:HDRGain",
                    "-TransferCharacteristics", Self.corpus + "/heic",
                ]
            ).stdout
            let oracles = try JSONDecoder().decode([HDROracle].self, from: Data(json.utf8))
            #expect(oracles.count == manifest.items.count && oracles.contains { $0.AuxiliaryImageType != nil })
            for oracle in oracles {
                let path = String(oracle.SourceFile.dropFirst(Self.corpus.count + "/heic/".count))
                let item = try #require(manifest.items.first { $0.path == path }, "\(path)")
                var expected: Manifest.ImageInfo.HDR?
                if oracle.AuxiliaryImageType?.hasSuffix(":hdrgainmap") == true {
                    // Apple's formula, from its documentation, over exiftool's reading of the MakerNote.
                    let (headroom, gain) = (oracle.HDRHeadroom ?? 0, oracle.HDRGain ?? 0)
                    let stops =
                        headroom < 1
                        ? (gain <= 0.01 ? -20 * gain + 1.8 : -0.101 * gain + 1.601)
                        : (gain <= 0.01 ? -70 * gain + 3 : -0.303 * gain + 2.303)
                    expected = .init(kind: .gainMap, headroom: pow(2, max(0, stops)))
                } else if oracle.TransferCharacteristics == 16 || oracle.TransferCharacteristics == 18 {
                    expected = .init(kind: oracle.TransferCharacteristics == 16 ? .pq : .hlg)
                }
                #expect(item.image.hdr?.kind == expected?.kind, "\(path): \(String(describing: item.image.hdr))")
                #expect(abs((item.image.hdr?.headroom ?? 0) - (expected?.headroom ?? 0)) < 0.01, "\(path)")
            }
        }
    }

    @Test(
        "the phone's 16-bit Display P3 JPEG XL is decoded (libvips 8.14's loader fails on it) in its colours, as libjxl's djxl shows it",
        .enabled(
            if: FileManager.default.fileExists(atPath: Fixtures.packageRoot + "/../shared/corpus/phone/16bit-HDR-P3-nclx.jxl")
                && Processes.tool("djxl") != nil && Processes.tool("vips") != nil,
            "needs ../shared/corpus/phone, djxl and vips (scripts/bootstrap --test)"))
    func realJPEGXL() async throws {
        let file = URL(fileURLWithPath: Fixtures.packageRoot + "/../shared/corpus/phone/16bit-HDR-P3-nclx.jxl").standardized.path
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try FileManager.default.copyItem(atPath: file, toPath: root + "/lib/p3.jxl")
            // Today's path, libvips' loader, fails on it: the test is of what replaces it.
            let vips = try await Processes.run(Processes.tool("vips")!, ["avg", root + "/lib/p3.jxl"])
            #expect(vips.status != 0, "libvips now decodes it: \(vips.stdout)")
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: root + "/lib", output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            let item = try #require(manifest.items.first)
            #expect(item.image.format == "jxl" && (item.image.width, item.image.height) == (5667, 3685))
            #expect(item.image.profile == nil, "its P3 profile is applied as it is: \(String(describing: item.image.profile))")
            // The oracle: libjxl's own decoder, converted to sRGB by libvips from its profile; both
            // reduced to 64 px, where only colour is left to differ.
            let oracle = try await Processes.run(Processes.tool("djxl")!, [root + "/lib/p3.jxl", root + "/djxl.png"])
            #expect(oracle.status == 0, "\(oracle.stderr)")
            let preview = root + "/out/" + (try #require(item.thumbnails["preview"])).path
            // (The untagged thumbnail is not exported again: libvips would take it through its own
            // sRGB profile, 14 ΔE00 away.)
            for (input, output, export) in [(root + "/djxl.png", root + "/o.v", true), (preview, root + "/p.v", false)] {
                let small = try await Processes.run(
                    Processes.tool("vips")!,
                    ["thumbnail", input, output + ".png", "64", "--height", "42", "--size", "force"]
                        + (export ? ["--export-profile", "srgb"] : []))
                #expect(small.status == 0, "\(small.stderr)")
                _ = try await Processes.run(Processes.tool("vips")!, ["colourspace", output + ".png", output, "lab"])
            }
            _ = try await Processes.run(Processes.tool("vips")!, ["dE00", root + "/p.v", root + "/o.v", root + "/d.v"])
            let mean = try await Processes.run(Processes.tool("vips")!, ["avg", root + "/d.v"])
            let distance = try #require(Double(mean.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "\(mean.stderr)")
            #expect(distance < 1.5, "mean ΔE00 \(distance) from djxl's colours")
            // Its deep-zoom pyramid, from the same decode.
            var tiled = BuildOptions(source: root + "/lib", output: root + "/tiled")
            (tiled.ladderMaxSide, tiled.tilePixels) = (0, 1_000_000)
            let (report, pyramid) = try await Fixtures.build(tiled)
            #expect(pyramid.failures.isEmpty, "\(pyramid.failures)")
            let tiles = try #require(pyramid.items.first?.thumbnails[Manifest.tilesName]?.tiles, "the photo has tiles")
            #expect(tiles.levels == Manifest.Tiles.levels(width: 5667, height: 3685))
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
        }
    }

    /// ../shared/SPEC.md §4: the orientation comes from libexif, and libvips' own reading must agree.
    static func expectReadersAgree(_ file: String, path: String) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
        let header = try #require(bytes.withUnsafeBytes { raw in Vips.withImage(raw, failOn: 0) { ImageHeader($0, fileBytes: raw) } })
        if let exif = header.exifOrientation, let vips = header.vipsOrientation, !ImageHeader.decoderApplies(format: header.format) {
            #expect(exif == vips, "\(path): libexif says \(exif), libvips \(vips)")
        }
    }

    static func check(_ item: Manifest.Item, against oracle: Oracle, path: String) throws {
        var width = try #require(oracle.ImageWidth, "\(path): exiftool has no size")
        var height = try #require(oracle.ImageHeight)
        let orientation: Int
        if oracle.FileType == "HEIC" || oracle.FileType == "AVIF" {
            // ispe is the coded size; libheif applies irot, and thumbframe must not rotate again.
            if oracle.Rotation == 90 || oracle.Rotation == 270 { swap(&width, &height) }
            orientation = 1
        } else {
            orientation = oracle.Orientation ?? 1
            if orientation >= 5 { swap(&width, &height) }
        }
        #expect(item.image.orientation == orientation, "\(path) orientation")
        #expect(item.image.width == width && item.image.height == height, "\(path) display size")

        // Each date with the fraction and offset of its own group; the first real date wins.
        let groups = [
            (oracle.DateTimeOriginal, oracle.SubSecTimeOriginal, oracle.OffsetTimeOriginal),
            (oracle.CreateDate, oracle.SubSecTimeDigitized, oracle.OffsetTimeDigitized),
            (oracle.ModifyDate, oracle.SubSecTime, oracle.OffsetTime),
        ]
        let chosen = groups.first { $0.0.flatMap { ExifText.captureDate(Array($0.text.utf8)) } != nil }
        let expectedDate = chosen.flatMap { group in
            group.0.flatMap { ExifText.captureDate(Array($0.text.utf8)) }.map {
                $0 + (group.1.flatMap { ExifText.fraction(Array($0.text.utf8)) } ?? "")
            }
        }
        // exiftool refuses to follow a mistyped ExifOffset that libexif follows; there the
        // oracle does not see the Exif IFD's dates at all.
        if oracle.Warning?.text.contains("ExifOffset") != true {
            #expect(item.exif?.capturedAt == expectedDate, "\(path) capturedAt")
            #expect(item.exif?.offset == chosen?.2.flatMap { ExifText.utcOffset(Array($0.text.utf8)) }, "\(path) offset")
        }
        #expect(item.exif?.make == oracle.Make.flatMap { ExifText.label(Array($0.text.utf8)) }, "\(path) make")
        #expect(item.exif?.model == oracle.Model.flatMap { ExifText.label(Array($0.text.utf8)) }, "\(path) model")
        for thumbnail in item.thumbnails.values {
            #expect(thumbnail.width >= 1 && thumbnail.height >= 1)
        }
    }
}
