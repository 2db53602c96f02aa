import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

// One browser at a time: PhotoSwipe ignores clicks until its opening animation ends and
// reads two queued clicks as a double tap, which several Chromiums sharing two cores provoke.
@Suite("Web viewer", .serialized)
struct ViewerTests {
    static let packageRoot = Fixtures.packageRoot
    static let browserAvailable =
        ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy(FileManager.default.isExecutableFile(atPath:))
        && ((try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import selenium"]))?.status == 0)
    static let sampleToolsAvailable = Processes.tool("vips") != nil && Processes.tool("exiftool") != nil
    /// PhotoSwipe 5.4.4's files, where `scripts/bootstrap --test` puts them.
    static let photoswipe =
        ProcessInfo.processInfo.environment["THUMBFRAME_PHOTOSWIPE"]
        ?? (ProcessInfo.processInfo.environment["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache") + "/thumbframe/photoswipe-5.4.4"
    static let photoswipeAvailable = FileManager.default.fileExists(atPath: photoswipe + "/photoswipe-lightbox.esm.js")

    @Test(
        "--viewer writes its three files and the file:// data; a rerun changes none; someone's index.html is left alone and stops the build (73), and validate names it"
    )
    func writesItsFiles() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(
                root + "/lib", [.photo("one.jpg", width: 300, height: 200), .photo("a/two.jpg", width: 200, height: 300)])
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            _ = try await Builder(options: options).run()
            let names = ["index.html", "index.html.br", "index.html.gz", "thumbframe-viewer-data.js"]
            var stamps: [String: Date] = [:]
            for name in names {
                let attributes = try FileManager.default.attributesOfItem(atPath: root + "/out/" + name)
                stamps[name] = attributes[.modificationDate] as? Date
            }
            let data = try String(contentsOfFile: root + "/out/thumbframe-viewer-data.js", encoding: .utf8)
            #expect(data.contains("window.thumbframeData = {\"manifest\": {") && data.contains("a/two.jpg"))
            try await Task.sleep(nanoseconds: 20_000_000)
            let again = try await Builder(options: options).run()
            #expect(!again.manifestWritten)
            for name in names {
                let attributes = try FileManager.default.attributesOfItem(atPath: root + "/out/" + name)
                #expect(attributes[.modificationDate] as? Date == stamps[name], "\(name) rewritten by a no-op run")
            }
            // A new photo: the data script follows the manifest.
            try Fixtures.writeImage(to: root + "/lib/three.jpg", width: 100, height: 100)
            _ = try await Builder(options: options).run()
            #expect(try String(contentsOfFile: root + "/out/thumbframe-viewer-data.js", encoding: .utf8).contains("three.jpg"))
            // validate checks the viewer against what thumbframe writes for the manifest: as
            // written, nothing; a viewer file changed behind its back (its marker kept), named.
            #expect(try ViewerCheck.problems(beside: root + "/out/manifest.json") == [])
            let page = root + "/out/index.html"
            let original = try Data(contentsOf: URL(fileURLWithPath: page))
            try (original + Data("\n<script>fetch('https://evil.example/');</script>\n".utf8)).write(to: URL(fileURLWithPath: page))
            #expect(
                try ViewerCheck.problems(beside: root + "/out/manifest.json") == [
                    "index.html is not the viewer thumbframe writes for this manifest"
                ])
            try original.write(to: URL(fileURLWithPath: page))

            // Someone's own index.html in OUT_DIR (small, large, or a link): kept as it is, the
            // viewer not written, the build stopped naming it.
            let large = "<h1>my site</h1>" + String(repeating: "<p>text</p>\n", count: 2000)
            try Fixtures.write(Array("theirs".utf8), to: root + "/elsewhere.html")
            for plant in ["small", "large", "link"] {
                try FileManager.default.removeItem(atPath: root + "/out/index.html")
                switch plant {
                case "small": try Fixtures.write(Array("<h1>my site</h1>".utf8), to: root + "/out/index.html")
                case "large": try Fixtures.write(Array(large.utf8), to: root + "/out/index.html")
                default:
                    try FileManager.default.createSymbolicLink(
                        atPath: root + "/out/index.html", withDestinationPath: root + "/elsewhere.html")
                }
                // The build stops with 73, naming the file; nothing of the viewer is written.
                var stopped = ""
                do {
                    _ = try await Builder(options: options).run()
                } catch {
                    stopped = error.localizedDescription
                }
                if plant == "link" {
                    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/out/index.html") == root + "/elsewhere.html")
                    #expect(try String(contentsOfFile: root + "/elsewhere.html", encoding: .utf8) == "theirs")
                } else {
                    #expect(
                        try String(contentsOfFile: root + "/out/index.html", encoding: .utf8)
                            == (plant == "small" ? "<h1>my site</h1>" : large), "\(plant)")
                }
                #expect(stopped.contains("index.html: not thumbframe's viewer"), "\(plant): \(stopped)")
                #expect(try ViewerCheck.problems(beside: root + "/out/manifest.json").contains("index.html is not thumbframe's viewer"))
            }
        }
    }

    @Test(
        "index.html carries its script, style sheet and first screen (manifest.json and the first 60 cells) inline, no name can end its script, and an older viewer's files are removed but someone's kept"
    )
    func firstScreenInline() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            // One folder, `a<`: its files' paths begin `a</`, and one of them goes on to end a
            // script element and start an image that runs a script, were it written as it is.
            try Fixtures.makeLibrary(
                root + "/lib/a<", (0..<61).map { .photo(String(format: "x%02d.jpg", $0), width: 40 + $0, height: 30) })
            try Fixtures.writeImage(to: root + "/lib/a</script><img src=x onerror=alert(1)>.jpg", width: 30, height: 40)
            // What 0.5.0 wrote beside index.html, and someone's file of one of those names.
            try Fixtures.write(Array("// thumbframe viewer: the old script\n".utf8), to: root + "/out/thumbframe-viewer.js")
            let gzip = try await Processes.run("/bin/sh", ["-c", "gzip -kn \"$1\"", "sh", root + "/out/thumbframe-viewer.js"])
            #expect(gzip.status == 0)
            try Fixtures.write(Array("body { color: red }\n".utf8), to: root + "/out/thumbframe-viewer.css")
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            _ = try await Builder(options: options).run()
            let html = try String(contentsOfFile: root + "/out/index.html", encoding: .utf8)
            let manifest = try ManifestFile.open(root + "/out/manifest.json").document
            // One response holds what the first screen needs: nothing to fetch before it paints.
            #expect(html.contains(ViewerAssets.script) && html.contains(ViewerAssets.styleSheet))
            #expect(!html.contains("rel=\"preload\"") && !html.contains("src=\"thumbframe-viewer.js\""))
            #expect(html.contains("<title>a&lt; · 62 items</title>") && html.contains("<h1 id=\"tf-title\">a&lt;</h1>"))
            #expect(!html.contains("</script><img"), "a file name ended the script element")
            let open = "<script type=\"application/json\" id=\"tf-first\">"
            let json = try #require(html.components(separatedBy: open).last?.components(separatedBy: "</script>").first)
            #expect(json.contains("a\\u003c/script>\\u003cimg src=x onerror=alert(1)>.jpg") && !json.contains("<"))
            let first = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            let carried = try #require(first["manifest"] as? [String: Any])
            #expect(carried["itemCount"] as? Int == 62)
            let reference = try #require(manifest.sections.first?.pages?.first)
            #expect(first["grid"] as? String == reference.grid && first["complete"] == nil)
            let cells = try #require((first["cells"] as? [String: Any])?["items"] as? [[String: Any]])
            #expect(cells.count == min(60, reference.count) && cells.first?["item"] as? Int == 0)
            // The phone's largest picture of its first screen rides along, its thumbnail's bytes
            // as a data: URL (which one the browser tests check: it is the largest contentful paint).
            let picture = try #require(first["picture"] as? [String: Any])
            let cell = try #require(cells.first { $0["item"] as? Int == picture["item"] as? Int })
            let path = try #require(picture["path"] as? String)
            let srcset = (cell["thumbnails"] as? [String: [String: Any]] ?? [:])
                .filter { manifest.settings.srcset?.contains($0.key) == true }
            #expect(srcset.values.contains { $0["path"] as? String == path }, "\(path) is not a srcset thumbnail of the cell")
            let src = try #require(picture["src"] as? String)
            #expect(src.hasPrefix("data:image/jpeg;base64,"))
            let bytes = Data(base64Encoded: String(src.dropFirst("data:image/jpeg;base64,".count)))
            #expect(bytes != nil && bytes == FileManager.default.contents(atPath: root + "/out/" + path))
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
            #expect(try ViewerCheck.problems(beside: root + "/out/manifest.json") == [])
            // The old script and its sibling are gone; someone's style sheet is not.
            #expect(!FileManager.default.fileExists(atPath: root + "/out/thumbframe-viewer.js"))
            #expect(!FileManager.default.fileExists(atPath: root + "/out/thumbframe-viewer.js.gz"))
            #expect(try String(contentsOfFile: root + "/out/thumbframe-viewer.css", encoding: .utf8) == "body { color: red }\n")
            // A later build without --viewer that writes a new manifest keeps index.html's first
            // screen current, and an earlier viewer's script goes then too.
            try Fixtures.write(Array("// thumbframe viewer: the old script\n".utf8), to: root + "/out/thumbframe-viewer.js")
            try Fixtures.writeImage(to: root + "/lib/a</y.jpg", width: 30, height: 30)
            options.viewer = false
            _ = try await Builder(options: options).run()
            #expect(try String(contentsOfFile: root + "/out/index.html", encoding: .utf8).contains("<title>a&lt; · 63 items</title>"))
            #expect(!FileManager.default.fileExists(atPath: root + "/out/thumbframe-viewer.js"))
            #expect(try ViewerCheck.problems(beside: root + "/out/manifest.json") == [])
        }
    }

    @Test(
        "in Chromium at 390×844 and 1440×900: frames to 1 px, long images from the top, placeholders first, file://; with touch: pull to dismiss, double-tap zoom in and out, keys, deep links and Back, focus, contrast, rotation",
        .enabled(
            if: browserAvailable && sampleToolsAvailable,
            "needs chromium, chromium-driver and Python's selenium, and the vips CLI and exiftool (scripts/bootstrap --test)"))
    func inChromium() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let sample = try await Processes.run(Self.packageRoot + "/scripts/sample-library", [root + "/lib"])
            #expect(sample.status == 0, "\(sample.stderr)")
            // With the zoom ladder, which the viewer swaps in as it zooms.
            var options = BuildOptions(source: root + "/lib", output: root + "/out").zooming(.ladder)
            options.viewer = true
            _ = try await Builder(options: options).run()
            // Screenshots are kept as test artifacts.
            let artifacts = Self.packageRoot + "/.build/test-artifacts/viewer"
            let run = try await Processes.run(
                "/usr/bin/env", ["python3", Self.packageRoot + "/scripts/test-helpers/viewer-test.py", root + "/out", artifacts])
            #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains(" 0 failed"), "\(run.stdout)")
            // axe-core: landmarks and the rest, on the grid and the lightbox, phone and desktop.
            for view in ["phone", "desktop"] {
                #expect(run.stdout.contains("ok   \(view): axe-core finds nothing on the grid"), "\(run.stdout)")
                #expect(run.stdout.contains("ok   \(view): axe-core finds nothing on the lightbox"), "\(run.stdout)")
                // Hands and screen readers (issue 55).
                for check in [
                    "no heading twice", "the grid and header are inert", "Previous, Next and Close are at least 44 px",
                    "Previous and Next at the sides", "the new photo is announced", "zoomed in, ArrowRight pans",
                ] {
                    #expect(run.stdout.contains("ok   \(view): \(check)"), "\(check): \(run.stdout)")
                }
            }
            // The same build on a touch screen and a keyboard, and turned.
            let touch = try await Processes.run(
                "/usr/bin/env", ["python3", Self.packageRoot + "/scripts/test-helpers/viewer-touch-test.py", root + "/out", artifacts])
            #expect(touch.status == 0, "\(touch.stdout)\n\(touch.stderr)")
            #expect(touch.stdout.contains("14 passed, 0 failed"), "\(touch.stdout)")
        }
    }

    @Test(
        "the PhotoSwipe page of docs/frontends.md, unchanged, against PhotoSwipe 5.4.4 in Chromium: frames, doubleTap and max of the manifest, for the display thumbnail and for the original",
        .enabled(
            if: browserAvailable && sampleToolsAvailable && photoswipeAvailable,
            "needs chromium, chromium-driver, Python's selenium, the vips CLI, exiftool and PhotoSwipe 5.4.4 (scripts/bootstrap --test)"))
    func photoSwipePage() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let sample = try await Processes.run(Self.packageRoot + "/scripts/sample-library", [root + "/lib"])
            #expect(sample.status == 0, "\(sample.stderr)")
            let artifacts = Self.packageRoot + "/.build/test-artifacts/photoswipe"
            for originals in [false, true] {
                var options = BuildOptions(source: root + "/lib", output: root + "/out-\(originals)")
                options.preset = .photoswipe
                options.originalURL = originals ? "originals/" : nil
                _ = try await Builder(options: options).run()
                let run = try await Processes.run(
                    "/usr/bin/env",
                    [
                        "python3", Self.packageRoot + "/scripts/test-helpers/photoswipe-test.py",
                        Self.packageRoot + "/docs/frontends.md", Self.photoswipe, root + "/out-\(originals)",
                        artifacts,
                    ] + (originals ? ["--originals", root + "/lib"] : []))
                #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
                #expect(run.stdout.contains(" 0 failed") && !run.stdout.contains("FAIL"), "\(run.stdout)")
                // Reachable and described (issue 55): audited on the grid and the open lightbox.
                for view in ["phone", "desktop"] {
                    for check in [
                        "axe-core finds nothing on the grid", "Tab reaches the first cell", "axe-core finds nothing on the open lightbox",
                    ] {
                        #expect(run.stdout.contains("ok   \(view): \(check)"), "\(check): \(run.stdout)")
                    }
                }
            }
        }
    }

    @Test(
        "in Chromium at 1440×900, zoomed past the largest rendition: the DeepZoom level that covers the device pixels within 1.25, at most 1.5× the window's device pixels fetched, only tiles in view and none fetched for nothing, each in place; panning loads more; on an HDR screen only the gain-map renditions show: no SDR small, no tile",
        .enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (scripts/bootstrap --test)"))
    func tilesInChromium() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // 5 000 px wide: at the desktop's zoom 2 it is shown 2 700 device px wide, where the
            // 2 500 px level stretched 1.08 times costs a quarter of the full level's tiles.
            try Fixtures.writeImage(to: root + "/large.jpg", width: 5000, height: 3333)
            try Fixtures.writeImage(to: root + "/map.jpg", width: 1250, height: 833)
            try Fixtures.writeImage(to: root + "/lib/small.jpg", width: 1200, height: 800)
            // An Ultra HDR JPEG (its gain map any picture): its renditions carry gain maps, its tiles are SDR.
            let parameters = GainMapParameters(gainMin: 0, gainMax: 2, capacityMax: 2)
            let bytes = { (path: String) in Array(try Data(contentsOf: URL(fileURLWithPath: root + path))) }
            let (base, map) = (try bytes("/large.jpg"), try bytes("/map.jpg"))
            try Fixtures.write(
                try #require(GainMapJPEG.assemble(base: base, map: map, parameters: parameters)), to: root + "/lib/large.jpg")
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            // Renditions to 2048 px: the desktop at zoom 2 needs 2 700 px of this photo's 5 000,
            // more than 2048 stretched by the 1.25 a 1× browser allows (2 560 would cover it).
            options.ladderMaxSide = 2048
            options.tilePixels = 10_000_000
            let (_, manifest) = try await Fixtures.build(options)
            #expect(manifest.items.filter { $0.thumbnails[Manifest.tilesName] != nil }.map(\.path) == ["large.jpg"])
            try await Self.browserChecks(root + "/out", "--tiles", passing: 15)
        }
    }

    @Test(
        "in Chromium, a library of several pages over HTTP: no data script, only the pages near the screen load; the rest as it scrolls or opens",
        .enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (scripts/bootstrap --test)"))
    func lazyPages() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            for index in 0..<600 {
                try Fixtures.writeImage(to: root + "/lib/IMG_\(index).jpg", width: 40 + index % 7 * 8, height: 30)
            }
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            // Seven pictures, each many times: `--stacks all` would fold the library into seven cells.
            options.stacks = .none
            let report = try await Builder(options: options).run()
            #expect(try ManifestFile.open(report.manifestPath).document.sections.first?.pages?.count == 3)
            try await Self.browserChecks(root + "/out", "--lazy", passing: 12)
        }
    }

    @Test(
        "in Chromium, a timeline of 600 photos over three months: the manifest's rows and height before any page, a scrubber to every month, a few screens of cells, no jump",
        .enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (scripts/bootstrap --test)"))
    func timeline() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try TimelineTests.library(root)
            var options = BuildOptions(source: root + "/lib", output: root + "/out", order: .date)
            options.viewer = true
            options.stacks = .none
            _ = try await Builder(options: options).run()
            try await Self.browserChecks(root + "/out", "--timeline", passing: 14)
        }
    }

    /// Runs `viewer-test.py` on OUT in `mode` (its screenshots kept as test artifacts) and
    /// expects all of its `passing` checks to pass.
    static func browserChecks(_ out: String, _ mode: String, passing: Int) async throws {
        let artifacts = Self.packageRoot + "/.build/test-artifacts/viewer"
        let run = try await Processes.run(
            "/usr/bin/env", ["python3", Self.packageRoot + "/scripts/test-helpers/viewer-test.py", out, artifacts, mode])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("\(passing) passed, 0 failed"), "\(run.stdout)")
    }

    @Test(
        "in Chromium, stacks: one cell a stack with its count, a strip of its members in the lightbox, a tap shows a member, paging passes folded members",
        .enabled(if: browserAvailable, "needs chromium, chromium-driver and Python's selenium (scripts/bootstrap --test)"))
    func stacks() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Fixtures.photos(4, width: 160, height: 120))
            // Two copies of a photo, as a chat or a second import leaves them: a stack of three.
            for copy in ["IMG_0 (1).jpg", "IMG_0 (2).jpg"] {
                try FileManager.default.copyItem(atPath: root + "/lib/album/IMG_0.jpg", toPath: root + "/lib/album/" + copy)
            }
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            let (_, manifest) = try await Fixtures.build(options)
            #expect(manifest.items.filter { $0.stack != nil }.count == 3)
            try await Self.browserChecks(root + "/out", "--stacks", passing: 8)
        }
    }

    @Test(
        "in Chromium, places: a list of the places with their counts, each opening a photo of it, no third-party server",
        .enabled(
            if: browserAvailable && Processes.tool("exiftool") != nil,
            "needs chromium, chromium-driver, Python's selenium and exiftool (scripts/bootstrap --test)"))
    func places() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Fixtures.photos(3, width: 160, height: 120))
            let spots = [("IMG_0.jpg", 48.8566, 2.3522), ("IMG_1.jpg", 48.8601, 2.3400), ("IMG_2.jpg", 41.9028, 12.4964)]
            for (name, lat, lon) in spots {
                let tagged = try await Processes.run(
                    try #require(Processes.tool("exiftool")),
                    [
                        "-q", "-overwrite_original", "-GPSLatitude=\(lat)", "-GPSLatitudeRef=N", "-GPSLongitude=\(lon)",
                        "-GPSLongitudeRef=E", root + "/lib/album/" + name,
                    ])
                #expect(tagged.status == 0, "\(tagged.stderr)")
            }
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.viewer = true
            options.locations = .city
            _ = try await Fixtures.build(options)
            #expect(
                try ManifestFile.open(root + "/out/manifest.json").document.summary.places == [
                    "Paris, Ile-de-France, FR": 2, "Rome, Latium, IT": 1,
                ])
            try await Self.browserChecks(root + "/out", "--places", passing: 4)
        }
    }

    @Test(
        "in Chromium, a mixed library: videos open at the manifest's frame and play, Live and Motion Photos play their motion, a RAW + JPEG pair offers its RAW, cells say what they are",
        .enabled(
            if: browserAvailable && Fixtures.ffmpeg != nil && rawFixturesAvailable,
            "needs chromium, chromium-driver, Python's selenium, tifffile and numpy, and the ffmpeg program (scripts/bootstrap --test)"
        ))
    func mediaInChromium() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            let identifier = "5EEDF00D-0000-4000-8000-000000000001"
            try Fixtures.makeLibrary(
                lib,
                [
                    .photo("a.jpg", width: 400, height: 300),
                    .livePhoto("IMG_7.JPG", width: 400, height: 300, contentIdentifier: identifier),
                    .animation("loop.gif", width: 80, height: 60, delays: [200, 200, 200]),
                    .bytes("memo.m4a", Array("\0\0\0\u{18}ftypM4A ".utf8)),
                ])
            try await Fixtures.makeVideos(
                lib,
                [
                    // An iPhone's HEVC: plays in Safari, not in Chromium without a hardware decoder.
                    ("phone.mov", VideoFixture().with { $0.codec = "libx265" }),
                    // An old camera's MPEG-4 Part 2 in AVI: plays nowhere as it is.
                    ("old.avi", VideoFixture().with { $0.codec = "mpeg4" }),
                    (
                        "clip.webm",
                        VideoFixture().with {
                            $0.codec = "libvpx-vp9"
                            $0.seconds = 3
                            $0.options = ["-b:v", "200k"]
                        }
                    ),
                    (
                        "portrait.mp4",
                        VideoFixture().with {
                            $0.seconds = 3
                            $0.rotate = 90
                            $0.audio = true
                        }
                    ),
                    ("IMG_7.MOV", MediaKindTests.liveMOV(identifier)),
                    (
                        "clips/motion.mp4",
                        VideoFixture().with {
                            $0.seconds = 2
                            $0.width = 200
                            $0.height = 150
                        }
                    ),
                ])
            let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: lib + "/clips/motion.mp4")))
            try FileManager.default.removeItem(atPath: lib + "/clips")
            try Fixtures.writeMotionPhoto(to: lib + "/PXL_1.MP.jpg", width: 400, height: 300, mp4: mp4, style: .containerDirectory)
            // A RAW + JPEG pair: one item, the JPEG shown, the RAW offered to download.
            try await RawTests.makeFixtures(root + "/raw")
            try FileManager.default.copyItem(atPath: root + "/raw/mosaic.dng", toPath: lib + "/DSC_9.dng")
            try Fixtures.writeImage(to: lib + "/DSC_9.JPG", width: 600, height: 400)
            // A TIFF original no browser but Safari shows: the lightbox shows its display thumbnail.
            try Pixels.patches().save(lib + "/scan.tif")
            var options = BuildOptions(source: lib, output: root + "/out")
            options.viewer = true
            options.originalURL = "originals/"
            // The fixture photos are one picture at one size: `--stacks all` would fold them into one cell.
            options.stacks = .none
            let (_, manifest) = try await Fixtures.build(options)
            #expect(manifest.items.map(\.kind) == [.photo, .video, .photo, .photo, .animated, .video, .video, .video, .photo, .photo])
            #expect(manifest.settings.browserFormats == Manifest.browserImageFormats)
            #expect(manifest.items.filter { $0.rawFile != nil }.map(\.path) == ["DSC_9.JPG"])
            #expect(manifest.items.filter { $0.motion != nil }.count == 2)
            // The sound alone is counted, not an item; every item is valid and has its poster.
            #expect(try ManifestFile.open(root + "/out/manifest.json").document.skipped == ["audio": 1])
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
            #expect(manifest.items.allSatisfy { $0.placeholder != nil && $0.thumbnails.count == ThumbnailRecipe.defaults.count })
            try FileManager.default.createSymbolicLink(atPath: root + "/out/originals", withDestinationPath: lib)
            let artifacts = Self.packageRoot + "/.build/test-artifacts/viewer-media"
            let run = try await Processes.run(
                "/usr/bin/env", ["python3", Self.packageRoot + "/scripts/test-helpers/viewer-media-test.py", root + "/out", artifacts])
            #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
            #expect(run.stdout.contains(" 0 failed") && run.stdout.contains("portrait.mp4 plays"), "\(run.stdout)")
            // HEVC plays everywhere from its rendition; every video that has one lists it.
            // Every video plays, and scrubs with its sprite.
            for video in ["phone.mov", "clip.webm", "portrait.mp4", "old.avi"] {
                #expect(run.stdout.contains("ok   lightbox: \(video) plays"), "\(video): \(run.stdout)")
                #expect(run.stdout.contains("ok   lightbox: \(video) scrubbed to"), "\(video): \(run.stdout)")
                #expect(
                    run.stdout.contains("ok   lightbox: \(video)'s timeline under the pointer previews its time"), "\(video): \(run.stdout)"
                )
            }
            let videos = manifest.items.compactMap { item in item.video.map { (item.path, $0) } }
            #expect(videos.filter { $0.1.rendition != nil }.map(\.0) == videos.filter { $0.1.delivery != .original }.map(\.0))
            #expect(videos.contains { $0.0 == "phone.mov" && $0.1.rendition?.delivery == .transcode })
            #expect(run.stdout.contains("ok   lightbox: phone.mov's poster first, then"), "\(run.stdout)")
            // Without renditions, HEVC either plays here or says in words that it does not.
            let bare = root + "/bare"
            try Fixtures.makeDirectory(bare)
            try FileManager.default.copyItem(atPath: lib + "/phone.mov", toPath: bare + "/phone.mov")
            var none = BuildOptions(source: bare, output: root + "/bare-out")
            (none.viewer, none.originalURL, none.renditions.mode) = (true, "originals/", .none)
            _ = try await Builder(options: none).run()
            try FileManager.default.createSymbolicLink(atPath: root + "/bare-out/originals", withDestinationPath: bare)
            let note = try await Processes.run(
                "/usr/bin/env",
                ["python3", Self.packageRoot + "/scripts/test-helpers/viewer-media-test.py", root + "/bare-out", artifacts + "-bare"])
            #expect(
                note.stdout.contains("ok   lightbox: phone.mov plays")
                    || note.stdout.contains("ok   lightbox: phone.mov (hevc) says in words it does not play here"), "\(note.stdout)")
            #expect(run.stdout.contains("ok   lightbox: scan.tif (tiff) shows the thumbnail its ladder names"), "\(run.stdout)")
            #expect(run.stdout.contains("ok   lightbox: a.jpg (jpeg) shows its original"), "\(run.stdout)")
            // The PhotoSwipe page of docs/frontends.md plays the same videos at PhotoSwipe's frame, the manifest's.
            guard Self.photoswipeAvailable else { return }
            options.output = root + "/pswp"
            options.viewer = false
            options.preset = .photoswipe
            _ = try await Builder(options: options).run()
            let page = try await Processes.run(
                "/usr/bin/env",
                [
                    "python3", Self.packageRoot + "/scripts/test-helpers/photoswipe-test.py", Self.packageRoot + "/docs/frontends.md",
                    Self.photoswipe,
                    root + "/pswp", artifacts, "--originals", lib,
                ])
            #expect(page.status == 0 && page.stdout.contains("video portrait.mp4 plays"), "\(page.stdout)\n\(page.stderr)")
            #expect(page.stdout.contains("video phone.mov at the manifest's frame, from its rendition"), "\(page.stdout)")
            #expect(page.stdout.contains("video phone.mov plays") && page.stdout.contains("video old.avi plays"), "\(page.stdout)")
            #expect(page.stdout.contains("ok   phone: video portrait.mp4 scrubbed to"), "\(page.stdout)")
            #expect(page.stdout.contains("ok   phone: scan.tif loads the original or a rendition of the srcset"), "\(page.stdout)")
        }
    }
}
