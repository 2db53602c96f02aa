import CThumbframeShim
import Foundation
import Testing
import ThumbframeImaging
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeManifest

@Suite("Deep-zoom tiles")
struct TileTests {
    @Test("a photo gets tiles from the pixel threshold on, only where its renditions fall short of a viewport's maximum zoom")
    func decisions() {
        let settings = Manifest.Settings.zoomed()
        #expect(settings.tiles?.minPixels == 40_000_000 && settings.tiles?.format == .jpeg && settings.tiles?.tileSize == 254)
        func gets(
            _ width: Int, _ height: Int, format: String = "jpeg", kind: Manifest.Kind = .photo, _ settings: Manifest.Settings = settings
        )
            -> Bool
        {
            var image = LadderTests.image(width, height)
            image.format = format
            return settings.getsTiles(image: image, kind: kind)
        }
        // 48 MP: the 4096 rendition is 4096 px of the desktop's 5 400 at zoom 2.
        #expect(gets(8000, 6000))
        // 24 MP: under the threshold, the ladder's 4096 px it is.
        #expect(!gets(6000, 4000))
        // A panorama over the threshold; the same at a lower threshold from 13 MP.
        #expect(gets(16_000, 3000))
        #expect(gets(8800, 1500, Manifest.Settings.zoomed(tilePixels: 10_000_000)) && !gets(8800, 1500))
        // Only a phone: the 2560 rendition covers its 2 340 px at zoom 2.
        #expect(!gets(8000, 6000, Manifest.Settings.zoomed(viewports: [Viewport(name: "phone", width: 390, height: 844, scale: 3)])))
        // Videos play, RAW files are LibRaw's, shown originals are the picture at every zoom.
        #expect(!gets(8000, 6000, kind: .video) && !gets(8000, 6000, kind: .animated) && !gets(8000, 6000, format: "nef"))
        #expect(
            !gets(8000, 6000, Manifest.Settings.zoomed(originalURL: "o/"))
                && gets(8000, 6000, format: "heic", Manifest.Settings.zoomed(originalURL: "o/")))
        #expect(Manifest.Settings.zoomed(tilePixels: 0).tiles == nil)
        // Without a ladder the preview falls short much earlier.
        #expect(gets(3000, 2000, Manifest.Settings.zoomed(ladderMaxSide: 0, tilePixels: 1_000_000)))
        // The display recipe's WebP carries over; AVIF tiles would take minutes a photo: JPEG.
        let webp = Manifest.Settings.zoomed(thumbnails: [ThumbnailRecipe(name: "p", width: 800, height: 800, fit: .fit, format: .webp)])
        let avif = Manifest.Settings.zoomed(thumbnails: [ThumbnailRecipe(name: "p", width: 800, height: 800, fit: .fit, format: .avif)])
        #expect(webp.tiles?.format == .webp && webp.tiles?.tileExtension == "webp" && avif.tiles?.format == .jpeg)
    }

    @Test("pyramid geometry: levels to one pixel, each level the full size over a power of two rounded up, tiles per level")
    func geometry() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let width = Int.random(in: 1...70_000, using: &generator)
            let height = Int.random(in: 1...70_000, using: &generator)
            let levels = Manifest.Tiles.levels(width: width, height: height)
            // DeepZoom: ⌈log2(max side)⌉ + 1 levels; level L is the size divided by 2^(top − L), rounded up.
            #expect(levels == Int(ceil(log2(Double(max(width, height))) - 1e-12)) + 1)
            var files = 0
            for level in 0..<levels {
                let divisor = Double(1 << (levels - 1 - level))
                let size = Manifest.Tiles.size(level: level, levels: levels, width: width, height: height)
                #expect(size.width == max(1, Int(ceil(Double(width) / divisor))))
                #expect(size.height == max(1, Int(ceil(Double(height) / divisor))))
                files += Int(ceil(Double(size.width) / 254)) * Int(ceil(Double(size.height) / 254))
            }
            #expect(Manifest.Tiles.size(level: 0, levels: levels, width: width, height: height) == (1, 1))
            #expect(Manifest.Tiles.fileCount(width: width, height: height, tileSize: 254) == files)
        }
    }

    @Test("hostile pyramid numbers in a manifest never trap: sizes up to Int.max, tile sizes of 0 or less, zooms of 0 or infinity")
    func hostileNumbers() {
        for (width, height) in [(Int.max, Int.max), (Int.max, 1), (0, 0), (-5, 7), (1, Int.max)] {
            let levels = Manifest.Tiles.levels(width: width, height: height)
            #expect((1...64).contains(levels))
            for tileSize in [Int.min, -1, 0, 1, 254, Int.max] {
                let count = Manifest.Tiles.fileCount(width: width, height: height, tileSize: tileSize)
                #expect(count >= 0 && (tileSize > 0 || count == 0))
                let entry = Manifest.Thumbnail(
                    path: "thumbs/00/x.dzi", width: width, height: height, crop: nil,
                    tiles: Manifest.Tiles(tileSize: tileSize, overlap: 1, format: "jpg", levels: levels, files: 1, bytes: 1))
                _ = entry.tilePath(level: levels - 1, column: Int.max, row: 0)
                _ = entry.tilePath(level: 0, column: 0, row: 0)
                var layout = LayoutEngine.layout(width: 100, height: 100, viewport: Viewport.defaults[0], preset: .jx3)
                for native in [0, 1e-300, 1, 1e300, .infinity] {
                    layout.ladder = [ZoomLadder.Rung(name: "tiles", native: native)]
                    for zoom in [0, 1e-300, 1, 1e300, .infinity] {
                        if let level = layout.tileLevel(forZoom: zoom, tiles: entry) { #expect((0..<levels).contains(level)) }
                    }
                }
            }
        }
        // Past what an Int counts, the count says so rather than wrapping.
        #expect(Manifest.Tiles.fileCount(width: Int.max, height: Int.max, tileSize: 1) == Int.max)
    }

    @Test("the last rung is the tiles at full size; the level an app loads keeps one pixel per device pixel")
    func levels() throws {
        let settings = Manifest.Settings.zoomed()
        let image = LadderTests.image(12_000, 8000)
        var thumbnails: [String: Manifest.Thumbnail] = [:]
        for recipe in settings.thumbnails + settings.ladderRecipes(image: image, kind: .photo) where recipe.fit == .fit {
            let size = recipe.fittedSize(width: image.width, height: image.height)
            thumbnails[recipe.name] = Manifest.Thumbnail(path: "", width: size.width, height: size.height, crop: nil)
        }
        let levels = Manifest.Tiles.levels(width: 12_000, height: 8000)
        let tiles = Manifest.Thumbnail(
            path: "thumbs/00/x.dzi", width: 12_000, height: 8000, crop: nil,
            tiles: Manifest.Tiles(tileSize: 254, overlap: 1, format: "jpg", levels: levels, files: 0, bytes: 0))
        thumbnails[Manifest.tilesName] = tiles
        for viewport in settings.viewports {
            let layout = settings.layout(image: image, kind: .photo, thumbnails: thumbnails, in: viewport)
            let ladder = try #require(layout.ladder)
            #expect(ladder.map(\.name) == ["small", "preview", "zoom-2560", "zoom-4096", "tiles"])
            let native = try #require(ladder.last?.native)
            // At its native zoom one picture pixel is one device pixel.
            #expect(abs(native * layout.frame.width / layout.zoom.min * viewport.scale - 12_000) < 1)
            // At the maximum zoom the phone (2 340 px across) is sharp on the 2560 rendition; the
            // desktop's 5 400 px are past the 4096 one: tiles.
            let atMaximum = layout.rendition(forZoom: layout.zoom.max)
            if viewport.name == "phone" { #expect(atMaximum == "zoom-2560") }
            if viewport.name == "desktop" { #expect(atMaximum == "tiles") }
            // The fixed stretch, and the web viewer's for this screen (2 at the phone's 3×).
            #expect(Layout.zoomStretch(scale: viewport.scale) == min(2, max(1.25, viewport.scale)))
            for zoom in stride(from: 0.05, through: native * 1.5, by: native / 37) {
                for stretch in [Layout.tileStretch, Layout.zoomStretch(scale: viewport.scale)] {
                    let level = try #require(layout.tileLevel(forZoom: zoom, tiles: tiles, stretch: stretch))
                    let width = Manifest.Tiles.size(level: level, levels: levels, width: 12_000, height: 8000).width
                    // Device pixels across the picture at this zoom, which the level's pixels cover
                    // within the stretch...
                    let needed = zoom * layout.frame.width / layout.zoom.min * viewport.scale
                    // A rendition within the same stretch: its pixels cover the device's, or it is the largest.
                    let shown = try #require(layout.rendition(forZoom: zoom, stretch: stretch))
                    let rung = try #require(ladder.first { $0.name == shown })
                    #expect(rung.native * stretch >= zoom - 0.0001 || shown == ladder.last?.name)
                    #expect(Double(width) * stretch >= min(needed, 12_000) - 1, "\(viewport.name) zoom \(zoom): level \(level)")
                    // ...and the level below would not (or this is the smallest).
                    if level > 0 {
                        let below = Manifest.Tiles.size(level: level - 1, levels: levels, width: 12_000, height: 8000).width
                        #expect(Double(below) * stretch < needed + 1, "\(viewport.name) zoom \(zoom): level \(level) is more than needed")
                    }
                }
            }
        }
    }

    /// The tile at `column`, `row` of a level `width` × `height` (DeepZoom: `overlap` pixels of
    /// each neighbour on every inner side).
    /// Reassembles levels of a DeepZoom pyramid and measures each against libvips' Lanczos3
    /// reduction of the source to the level's size (PSNR, dB): one line per level, "level psnr".
    static let levelPSNR = """
        import glob, os, subprocess, sys, tempfile
        import numpy as np
        from PIL import Image
        source, files, top, width, height, size, overlap = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
        for k in (1, 2, 3):
            w, h = width, height
            for _ in range(k): w, h = (w + 1) // 2, (h + 1) // 2
            level = np.zeros((h, w, 3))
            for tile in glob.glob(f"{files}/{top - k}/*.jpg"):
                column, row = map(int, os.path.basename(tile)[:-4].split("_"))
                pixels = np.asarray(Image.open(tile).convert("RGB"), dtype=float)
                x, y = column * size - (overlap if column else 0), row * size - (overlap if row else 0)
                level[y:y + pixels.shape[0], x:x + pixels.shape[1]] = pixels
            reference = tempfile.mktemp(suffix=".png")
            subprocess.run(["vips", "resize", source, reference, str(w / width), "--vscale", str(h / height),
                            "--kernel", "lanczos3"], check=True)
            expected = np.asarray(Image.open(reference).convert("RGB"), dtype=float)[:h, :w]
            os.remove(reference)
            print(top - k, 10 * np.log10(255 ** 2 / ((level - expected) ** 2).mean()))
        """

    @Test(
        "every level below the full size is as sharp as a Lanczos3 reduction (a page of small text: at least 27 dB, where dzsave's box levels measured 17–19 dB)",
        .enabled(if: Processes.tool("vips") != nil, "needs the vips program as the oracle (scripts/bootstrap --test)")
    )
    func sharpLevels() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // Small dark text on white, 3000 px wide: what a box filter blurs and a phase error smears.
            var seed = SplitMix64(state: 7)
            let words = (0..<1800).map { _ in
                String((0..<(2 + Int(seed.next() % 8))).map { _ in Character(UnicodeScalar(UInt8(97 + seed.next() % 26))) })
            }
            let made = try await Processes.run(
                "/usr/bin/env",
                ["vips", "text", root + "/text.v", words.joined(separator: " "), "--width", "3000", "--dpi", "150", "--font", "sans 9"])
            #expect(made.status == 0, "\(made.stderr)")
            for step in [
                ["invert", root + "/text.v", root + "/ink.v"],
                ["bandjoin", "\(root)/ink.v \(root)/ink.v \(root)/ink.v", root + "/rgb.v"],
                ["copy", root + "/rgb.v", root + "/lib/page.jpg[Q=95]"],
            ] {
                let run = try await Processes.run("/usr/bin/env", ["vips"] + step)
                #expect(run.status == 0, "\(run.stderr)")
            }
            var options = BuildOptions(
                source: root + "/lib", output: root + "/out", thumbnails: [ThumbnailRecipe(name: "p", width: 400, height: 400, fit: .fit)])
            (options.ladderMaxSide, options.tilePixels) = (0, 10_000)
            let (_, manifest) = try await Fixtures.build(options)
            let item = try #require(manifest.items.first)
            let tiles = try #require(item.thumbnails["tiles"]?.tiles, "\(manifest.failures)")
            let files = root + "/out/" + (item.thumbnails["tiles"]?.path.dropLast(4) ?? "") + "_files"
            let measured = try await Processes.run(
                "/usr/bin/env",
                [
                    "python3", "-c", Self.levelPSNR, root + "/lib/page.jpg", files, "\(tiles.levels - 1)", "\(item.image.width)",
                    "\(item.image.height)", "\(tiles.tileSize)", "\(tiles.overlap)",
                ])
            #expect(measured.status == 0, "\(measured.stderr)")
            let lines = measured.stdout.split(separator: "\n")
            #expect(lines.count == 3)
            for line in lines {
                let psnr = Double(line.split(separator: " ").last ?? "") ?? 0
                #expect(psnr >= 27, "level \(line.split(separator: " ").first ?? ""): \(psnr) dB against Lanczos3")
            }
        }
    }

    static func tileSize(column: Int, row: Int, width: Int, height: Int, tileSize: Int = 254, overlap: Int = 1) -> (Int, Int) {
        let left = column * tileSize - (column > 0 ? overlap : 0)
        let top = row * tileSize - (row > 0 ? overlap : 0)
        let right = min(width, (column + 1) * tileSize + overlap)
        let bottom = min(height, (row + 1) * tileSize + overlap)
        return (right - left, bottom - top)
    }

    @Test(
        "a large photo and a panorama get pyramids whose levels and tiles match their .dzi, upright, without metadata; a small one none; pruned with the setting"
    )
    func build() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            // Stored turned: the tiles must show it upright (red top-left, green top-right, blue below).
            try Fixtures.writeMarkerImage(
                to: source + "/large.jpg", displayWidth: 3000, displayHeight: 2000, orientation: 6, format: TF_FORMAT_JPEG)
            try Fixtures.writeImage(to: source + "/pano.jpg", width: 4000, height: 700)
            try Fixtures.writeImage(to: source + "/small.jpg", width: 900, height: 600)
            var options = BuildOptions(source: source, output: root + "/out")
            options.ladderMaxSide = 0
            options.tilePixels = 2_000_000
            let (report, manifest) = try await Fixtures.build(options)
            #expect(report.failures.isEmpty)
            let small = try #require(manifest.items.first { $0.path == "small.jpg" })
            #expect(small.thumbnails[Manifest.tilesName] == nil)
            var totalFiles = 0
            for name in ["large.jpg", "pano.jpg"] {
                let item = try #require(manifest.items.first { $0.path == name })
                let entry = try #require(item.thumbnails[Manifest.tilesName], "\(name) has no tiles")
                let pyramid = try #require(entry.tiles)
                #expect((entry.width, entry.height) == (item.image.width, item.image.height))
                let dziBytes = try Array(Data(contentsOf: URL(fileURLWithPath: root + "/out/" + entry.path)))
                let dzi = try #require(Manifest.Tiles.parseDZI(dziBytes))
                #expect(dzi.width == item.image.width && dzi.height == item.image.height && dzi.tileSize == 254 && dzi.overlap == 1)
                #expect(dzi.format == "jpg" && pyramid.format == "jpg")
                let folder = root + "/out/" + entry.path.dropLast(4) + "_files"
                let levels = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
                #expect(levels == (0..<pyramid.levels).map(String.init).sorted(), "\(name): \(levels)")
                var files = 0
                for level in 0..<pyramid.levels {
                    let (w, h) = Manifest.Tiles.size(level: level, levels: pyramid.levels, width: dzi.width, height: dzi.height)
                    let (columns, rows) = ((w + 253) / 254, (h + 253) / 254)
                    let tiles = try FileManager.default.contentsOfDirectory(atPath: "\(folder)/\(level)")
                    #expect(
                        Set(tiles) == Set((0..<columns).flatMap { c in (0..<rows).map { r in "\(c)_\(r).jpg" } }), "\(name) level \(level)")
                    files += tiles.count
                    // The corner tiles have the size the .dzi gives them.
                    for (c, r) in [(0, 0), (columns - 1, rows - 1)] {
                        let tile = try Fixtures.decode("\(folder)/\(level)/\(c)_\(r).jpg")
                        #expect(
                            (tile.width, tile.height) == Self.tileSize(column: c, row: r, width: w, height: h),
                            "\(name) level \(level) tile \(c)_\(r)")
                    }
                }
                #expect(files == pyramid.files && files == Manifest.Tiles.fileCount(width: dzi.width, height: dzi.height, tileSize: 254))
                // The Swift library names exactly these files, and no tile past a level's edge.
                var named = 0
                for level in 0..<pyramid.levels {
                    for column in 0...40 {
                        for row in 0...40 {
                            guard let tile = entry.tilePath(level: level, column: column, row: row) else { continue }
                            named += 1
                            #expect(FileManager.default.fileExists(atPath: root + "/out/" + tile), "\(tile)")
                        }
                    }
                }
                #expect(named == files && entry.tilePath(level: pyramid.levels, column: 0, row: 0) == nil)
                totalFiles += files
                // No tile carries metadata: no EXIF (the photo's original has its orientation in EXIF), XMP
                // or ICC segment. (PrivacyTests tags originals with GPS and the rest, and reads tiles with exiftool.)
                let top = pyramid.levels - 1
                let corner = try Array(Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(top)/0_0.jpg")))
                for marker in ["Exif", "http://ns.adobe.com/xap", "ICC_PROFILE"] {
                    #expect(corner.firstRange(of: Array(marker.utf8)) == nil, "\(name): a tile has \(marker)")
                }
            }
            // Upright at full size: the large photo's top-left tile red, top-right green, bottom-left blue.
            let large = try #require(manifest.items.first { $0.path == "large.jpg" }?.thumbnails[Manifest.tilesName])
            let folder = root + "/out/" + large.path.dropLast(4) + "_files/" + String(try #require(large.tiles).levels - 1)
            let lastColumn = (3000 + 253) / 254 - 1
            let lastRow = (2000 + 253) / 254 - 1
            for (tile, colour) in [("0_0", Fixtures.Colour.red), ("\(lastColumn)_0", .green), ("0_\(lastRow)", .blue)] {
                let pixels = try Fixtures.decode("\(folder)/\(tile).jpg")
                #expect(pixels.colour(x: pixels.width / 2, y: pixels.height / 2).isNear(colour), "tile \(tile)")
            }
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.tileFiles == totalFiles && document.summary.thumbnails[Manifest.tilesName] == 2)
            let summary = try ManifestSummary(ManifestFile.open(root + "/out/manifest.json")).rendered()
            #expect(summary.contains("deep zoom     2 pyramids, \(totalFiles) tiles"), "\(summary)")

            // A rerun finds everything in place; a tile gone is what validate reports.
            let again = try await Builder(options: options).run()
            #expect(again.thumbnailsWritten == 0 && again.pruned == 0 && again.foreign == 0)
            try FileManager.default.removeItem(atPath: folder + "/0_0.jpg")
            let problems = try ManifestValidator.problems(at: root + "/out/manifest.json")
            #expect(problems.count == 1 && problems.first?.contains("tiles") == true, "\(problems)")
            // Made again (its file touched), the damaged pyramid is not published as it is, nor
            // emptied while the build runs: the photo fails, the pruner clears the pyramid after,
            // and the next run makes it whole.
            try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: source + "/large.jpg")
            let damaged = try await Builder(options: options).run()
            #expect(damaged.failures.map(\.path) == ["large.jpg"] && damaged.failures.first?.reason.contains("incomplete pyramid") == true)
            let healed = try await Builder(options: options).run()
            #expect(healed.failures.isEmpty && healed.thumbnailsWritten > 0)
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])

            // Tiles off: both pyramids pruned, except a file of the user's put in one, which
            // stays with its folders and is reported.
            let pano = try #require(manifest.items.first { $0.path == "pano.jpg" }?.thumbnails[Manifest.tilesName])
            let panoFolder = root + "/out/" + pano.path.dropLast(4) + "_files"
            try Data("mine".utf8).write(to: URL(fileURLWithPath: panoFolder + "/notes.txt"))
            // And a temporary folder of a run killed in dzsave, with its name in the journal.
            let fanout = root + "/out/" + large.path.split(separator: "/").prefix(2).joined(separator: "/")
            let leftover = fanout + "/.tf-tmp-00000000000000ab"
            try Fixtures.makeDirectory(leftover + "/image_files/0")
            try Data([1]).write(to: URL(fileURLWithPath: leftover + "/image_files/0/0_0.jpg"))
            try Data((large.path + "\n").utf8).write(to: URL(fileURLWithPath: root + "/out/.thumbframe-journal"))
            options.tilePixels = 0
            let off = try await Builder(options: options).run()
            #expect(off.thumbnailsWritten == 0 && off.pruned == 3 && off.foreign == 1, "\(off)")
            let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
            #expect(!exists(root + "/out/" + large.path) && !exists(root + "/out/" + large.path.dropLast(4) + "_files"))
            #expect(!exists(root + "/out/" + pano.path) && exists(panoFolder + "/notes.txt"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: panoFolder) == ["notes.txt"])
            #expect(!exists(leftover))
            let without = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(without.settings.tiles == nil && without.summary.tileFiles == nil)

            // Tiles on again: the folder holding the user's file is in the panorama's way. It is
            // neither emptied nor published with a .dzi: the panorama fails, the photo gets its
            // pyramid. Once the user has taken the file away, the empty folder is replaced.
            options.tilePixels = 2_000_000
            let blocked = try await Builder(options: options).run()
            #expect(
                blocked.failures.map(\.path) == ["pano.jpg"] && blocked.failures.first?.reason.contains(pano.path) == true,
                "\(blocked.failures)")
            #expect(exists(root + "/out/" + large.path) && !exists(root + "/out/" + pano.path) && exists(panoFolder + "/notes.txt"))
            try FileManager.default.removeItem(atPath: panoFolder + "/notes.txt")
            let (unblocked, rebuilt) = try await Fixtures.build(options)
            #expect(unblocked.failures.isEmpty && rebuilt.items.compactMap { $0.thumbnails[Manifest.tilesName] }.count == 2)
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
        }
    }

    @Test(
        "tiles share the file's --decode-timeout: past it the file fails naming the tiles, nothing of its pyramid is left, the rest is built"
    )
    func deadline() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            // 138 MP: its thumbnails come from a quarter-size decode in a fraction of a second;
            // its tiles need the whole picture, several seconds.
            try Fixtures.writeImage(to: root + "/seed.png", width: 540, height: 360, format: TF_FORMAT_PNG)
            let large = try Pixels.Image.from(file: root + "/seed.png").apply { tf_resize_exact($0, $1, 14_400, 9600, 0) }
            try large.save(source + "/large.jpg[Q=85]")
            try Fixtures.writeImage(to: source + "/small.jpg", width: 900, height: 600)
            var options = BuildOptions(source: source, output: root + "/out")
            options.ladderMaxSide = 0
            options.tilePixels = 1_000_000
            options.limits.decodeTimeout = 1.2
            let (report, manifest) = try await Fixtures.build(options)
            #expect(manifest.items.map(\.path) == ["small.jpg"])
            let failure = try #require(report.failures.first)
            #expect(
                failure.path == "large.jpg" && failure.reason.contains("deep-zoom tiles") && failure.reason.contains("--decode-timeout"),
                "\(failure)")
            // Nothing of a pyramid anywhere: no temporary folder, no tiles, no .dzi.
            let left = (FileManager.default.enumerator(atPath: root + "/out/thumbs")?.allObjects as? [String] ?? [])
                .filter { $0.contains(".tf-tmp-") || $0.hasSuffix("_files") || $0.hasSuffix(".dzi") }
            #expect(left.isEmpty, "\(left)")
        }
    }
}
