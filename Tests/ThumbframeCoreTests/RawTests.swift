import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// RAW files through LibRaw (issue 22): the sensor's oriented size, never a stray TIFF
/// directory's; thumbnails from the embedded preview when it covers them, else demosaiced.
/// Whether the RAW fixtures can be made: python3 with tifffile, numpy, imagecodecs and Pillow.
let rawFixturesAvailable =
    (try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import tifffile, numpy, imagecodecs, PIL"]).status) == 0

@Suite(
    "RAW files", .enabled(if: rawFixturesAvailable, "needs python3 with tifffile, numpy, imagecodecs and Pillow (scripts/bootstrap --test)")
)
struct RawTests {
    /// Runs `scripts/test-helpers/raw-fixtures.py` into `directory`.
    static func makeFixtures(_ directory: String) async throws {
        let run = try await Processes.run(
            "/usr/bin/env", ["python3", Fixtures.packageRoot + "/scripts/test-helpers/raw-fixtures.py", directory])
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test(
        "RAW + JPEG pairs: one item by default (the JPEG shown, the RAW its rawFile), two with --raw-pairs separate; a RAW whose JPEG failed or is gone stays an item; a changed RAW changes its JPEG's rawFile"
    )
    func rawJPEGPairs() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try await Self.makeFixtures(root + "/seeds")
            let lib = root + "/lib"
            try Fixtures.makeDirectory(lib + "/sub")
            let manager = FileManager.default
            try manager.copyItem(atPath: root + "/seeds/mosaic-6.dng", toPath: lib + "/IMG_1.dng")
            try Fixtures.writeImage(to: lib + "/IMG_1.JPG", width: 400, height: 600)
            try manager.copyItem(atPath: root + "/seeds/mosaic.dng", toPath: lib + "/IMG_2.dng")
            try Fixtures.writeImage(to: lib + "/IMG_3.jpg", width: 300, height: 200)
            // Another folder's JPEG of the same name is another shot.
            try Fixtures.writeImage(to: lib + "/sub/IMG_1.jpg", width: 300, height: 200)
            try manager.copyItem(atPath: root + "/seeds/mosaic.dng", toPath: lib + "/IMG_5.dng")
            try Fixtures.write(Array("not a JPEG".utf8), to: lib + "/IMG_5.jpg")

            func build(_ out: String, _ pairs: Manifest.RawPairs = .merge) async throws -> [String: Manifest.Item] {
                var options = BuildOptions(source: lib, output: root + "/" + out)
                options.rawPairs = pairs
                let (_, manifest) = try await Fixtures.build(options)
                #expect(manifest.consistencyProblems() == [])
                #expect(manifest.settings.rawPairs == pairs)
                return Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            }
            func rawFile(of path: String) throws -> Manifest.RawFile {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: lib + "/" + path))
                return Manifest.RawFile(
                    original: path, format: "dng", bytes: bytes.count, sha256: bytes.withUnsafeBytes(Digest.sha256),
                    width: 400, height: 600)
            }

            var merged = try await build("out")
            #expect(Set(merged.keys) == ["IMG_1.JPG", "IMG_2.dng", "IMG_3.jpg", "IMG_5.dng", "sub/IMG_1.jpg"])
            #expect(merged["IMG_1.JPG"]?.rawFile == (try rawFile(of: "IMG_1.dng")))
            #expect(merged["IMG_1.JPG"]?.image.format == "jpeg" && merged["IMG_1.JPG"]?.raw == nil)
            #expect(merged.values.filter { $0.rawFile != nil }.count == 1)
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.kinds == ["photo": 5, "rawPair": 1])
            #expect(document.failures.map(\.path) == ["IMG_5.jpg"])

            let separate = try await build("separate", .separate)
            #expect(Set(separate.keys) == Set(merged.keys).union(["IMG_1.dng"]))
            #expect(separate.values.allSatisfy { $0.rawFile == nil })

            // The RAW changes: its JPEG's item says so. The JPEG goes: the RAW is shown.
            try manager.removeItem(atPath: lib + "/IMG_1.dng")
            try manager.copyItem(atPath: root + "/seeds/preview-6.dng", toPath: lib + "/IMG_1.dng")
            merged = try await build("out")
            #expect(merged["IMG_1.JPG"]?.rawFile == (try rawFile(of: "IMG_1.dng")))
            try manager.removeItem(atPath: lib + "/IMG_1.JPG")
            merged = try await build("out")
            #expect(merged["IMG_1.dng"]?.raw?.rendering == .preview && merged["IMG_1.JPG"] == nil)
        }
    }

    @Test(
        "every generated layout: the sensor's oriented size (raw-identify's output size), the right rendering, the picture upright; a file LibRaw cannot open is a failure, never a stray directory's picture"
    )
    func layouts() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try await Self.makeFixtures(source)
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            #expect(Set(manifest.failures.map(\.path)) == ["stray-ifd.NEF", "cut-in-preview.dng"])
            #expect(manifest.failures.allSatisfy { $0.reason.hasPrefix("not a RAW file LibRaw can open: ") }, "\(manifest.failures)")
            let expected: [String: (Manifest.RawInfo.Rendering, orientation: Int, make: String)] = [
                "mosaic.dng": (.demosaic, 1, "Thumbframe"), "mosaic-6.dng": (.demosaic, 6, "Thumbframe"),
                "preview-6.dng": (.preview, 6, "Thumbframe"), "small-preview.dng": (.demosaic, 1, "Thumbframe"),
                "letterbox.dng": (.demosaic, 1, "Thumbframe"),
                // Its mosaic is cut but its preview whole: the preview is the picture.
                "truncated.dng": (.preview, 6, "Thumbframe"),
                // The makers' TIFF layouts: a small thumbnail in IFD0, the preview and mosaic in SubIFDs.
                "nikon-6.nef": (.preview, 6, "NIKON CORPORATION"), "sony.arw": (.preview, 1, "SONY"),
                "pentax.pef": (.demosaic, 1, "PENTAX"),
            ]
            #expect(Set(items.keys) == Set(expected.keys))
            for (path, (rendering, orientation, make)) in expected {
                let item = try #require(items[path])
                let format = String(path.split(separator: ".").last!)
                #expect(item.raw?.rendering == rendering, "\(path): \(String(describing: item.raw))")
                #expect(item.image.format == format && item.image.orientation == orientation && item.kind == .photo, "\(path)")
                #expect(item.exif?.capturedAt == "2021-05-06T07:08:09" && item.exif?.make == make, "\(path)")
                if let identify = Processes.tool("raw-identify"), path != "truncated.dng" {
                    let run = try await Processes.run(identify, ["-v", source + "/" + path])
                    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Output size:") }
                    let numbers = line.map { $0.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } } ?? []
                    #expect(numbers == [item.image.width, item.image.height], "\(path): \(line ?? "no output size")")
                }
                // The red square of the sensor's top-left corner and the green of its bottom-left,
                // where the orientation puts them.
                let preview = try Fixtures.decode(root + "/out/" + item.thumbnails["preview"]!.path)
                let (w, h) = (preview.width, preview.height)
                let red = orientation == 6 ? preview.colour(x: w - 15, y: 15) : preview.colour(x: 15, y: 15)
                let green = orientation == 6 ? preview.colour(x: 15, y: 15) : preview.colour(x: 15, y: h - 15)
                #expect(red.r > 200 && red.g < 90 && green.g > 200 && green.r < 90, "\(path): \(red) \(green)")
            }
            #expect(items["small-preview.dng"]?.raw?.previewWidth == 300 && items["mosaic.dng"]?.raw?.previewWidth == nil)
            // LibRaw crops a D700's sensor by 4 columns: the item is its output, not the 600 the file stores.
            #expect((items["nikon-6.nef"]?.image.width, items["nikon-6.nef"]?.image.height) == (400, 596))
            #expect(items["pentax.pef"]?.raw?.previewWidth == nil, "its 160×120 thumbnail is of another aspect ratio: demosaiced")
            #expect(manifest.consistencyProblems() == [])
        }
    }

    @Test(
        "the thumbnails are the reference renderings: a demosaic matches LibRaw's own dcraw_emu, a preview the embedded JPEG turned upright",
        .enabled(if: Processes.tool("dcraw_emu") != nil && Processes.tool("simple_dcraw") != nil, "needs libraw-bin"))
    func referenceRenderings() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try await Self.makeFixtures(source)
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            for (path, reference) in [
                ("mosaic-6.dng", "demosaic"), ("preview-6.dng", "preview"), ("nikon-6.nef", "preview"), ("pentax.pef", "demosaic"),
            ] {
                let item = try #require(manifest.items.first { $0.path == path })
                let thumbnail = try #require(item.thumbnails["preview"])
                let file = root + "/\(reference).tif"
                if reference == "demosaic" {
                    // Full size, camera white balance, sRGB, 8 bits, turned: LibRaw's own pipeline.
                    let run = try await Processes.run(
                        "/bin/sh", ["-c", "dcraw_emu -w -o 1 -T -Z - '\(source)/\(path)' > '\(file)'"])
                    #expect(run.status == 0, "\(run.stderr)")
                } else {
                    let run = try await Processes.run(Processes.tool("simple_dcraw")!, ["-e", source + "/" + path])
                    #expect(run.status == 0, "\(run.stderr)")
                    // The preview as stored, turned a quarter clockwise (orientation 6).
                    try Fixtures.reencode(source + "/" + path + ".thumb.jpg", to: root + "/stored.png", options: "")
                    let turned = try await Processes.run("/bin/sh", ["-c", "vips rot '\(root)/stored.png' '\(file)' d90"])
                    #expect(turned.status == 0, "\(turned.stderr)")
                }
                let resized = try await Processes.run(
                    "/bin/sh",
                    [
                        "-c",
                        // --no-rotate: the reference is upright already (LibRaw's extracted preview
                        // carries the RAW's orientation tag, which the turn above has applied).
                        "vips thumbnail '\(file)' '\(root)/reference.png' \(thumbnail.width) --height \(thumbnail.height) --size force --no-rotate",
                    ])
                #expect(resized.status == 0, "\(resized.stderr)")
                let ours = try Fixtures.decode(root + "/out/" + thumbnail.path)
                let theirs = try Fixtures.decode(root + "/reference.png")
                let difference = MediaKindTests.difference(ours, theirs)
                #expect(difference < 8, "\(path) against \(reference): \(difference)")
                #expect(MediaKindTests.difference(ours, theirs, halfTurn: true) > 30, "\(path): the reference turned round is not it")
            }
        }
    }
}
