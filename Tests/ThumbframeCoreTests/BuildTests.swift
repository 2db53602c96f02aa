import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("Build")
struct BuildTests {
    /// A small tree: two directories, natural-order names, a hidden file, a non-image, a broken
    /// image, an image with the wrong extension, a PNG with alpha.
    static let library: [LibraryFile] = [
        .photo("IMG_10.jpg", width: 640, height: 480), .photo("IMG_2.jpg", width: 480, height: 640),
        .photo("2019/trip/b.jpg", width: 300, height: 200), .photo("2019/trip/a.png", width: 200, height: 300, png: true),
        .photo("2019/trip/really-a-jpeg.dat", width: 100, height: 100), .photo(".hidden.jpg", width: 50, height: 50),
        .bytes("2019/notes.txt", Array("notes".utf8)), .bytes("2019/broken.jpg", Array("this is not a jpeg".utf8)),
    ]

    @Test("sections, natural order, failures and skipped files")
    func library() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeLibrary(source, Self.library)
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(
                manifest.items.map(\.path) == [
                    "IMG_2.jpg", "IMG_10.jpg", "2019/trip/a.png", "2019/trip/b.jpg", "2019/trip/really-a-jpeg.dat",
                ])
            #expect(manifest.sections.map(\.name) == [".", "2019/trip"])
            #expect(manifest.sections.map(\.title) == ["lib", "trip"])
            #expect(manifest.sections.map(\.start) == [0, 2])
            #expect(manifest.sections.map(\.count) == [2, 3])
            for (index, item) in manifest.items.enumerated() {
                #expect(item.index == index)
                let section = manifest.sections[item.section]
                #expect(section.start + item.item == index)
            }
            #expect(manifest.failures.map(\.path) == ["2019/broken.jpg"])
            #expect(manifest.failures.first?.stage == "probe")
            #expect(report.failures == manifest.failures)
            let png = try #require(manifest.items.first { $0.path.hasSuffix(".png") })
            #expect(png.image.format == "png")
            let disguised = try #require(manifest.items.last)
            #expect(disguised.image.format == "jpeg")
            let portrait = manifest.items[0]
            #expect(portrait.image.width == 480 && portrait.image.height == 640)
            #expect(portrait.thumbnails["grid"]?.crop == Manifest.Rect(x: 0, y: 0.125, width: 1, height: 0.75))
            #expect(portrait.file.bytes > 0 && portrait.file.sha256.count == 64)
            // The hash matches coreutils' sha256sum.
            let line = try await Processes.run("/usr/bin/sha256sum", [source + "/" + portrait.path]).stdout
            #expect(line.hasPrefix(portrait.file.sha256 + " "))
        }
    }

    @Test("same inputs give a byte-identical manifest; a rerun writes nothing")
    func determinism() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeLibrary(source, Self.library)
            let first = try await Builder(options: BuildOptions(source: source, output: root + "/a", jobs: 1)).run()
            let second = try await Builder(options: BuildOptions(source: source, output: root + "/b", jobs: 4)).run()
            let bytesA = try Data(contentsOf: URL(fileURLWithPath: first.manifestPath))
            let bytesB = try Data(contentsOf: URL(fileURLWithPath: second.manifestPath))
            #expect(bytesA == bytesB)
            #expect(first.thumbnailsWritten == 5 * ThumbnailRecipe.defaults.count)

            let before = try FileManager.default.attributesOfItem(atPath: first.manifestPath)[.modificationDate] as? Date
            let again = try await Builder(options: BuildOptions(source: source, output: root + "/a")).run()
            #expect(again.thumbnailsWritten == 0)
            #expect(again.manifestWritten == false)
            let after = try FileManager.default.attributesOfItem(atPath: first.manifestPath)[.modificationDate] as? Date
            #expect(before == after)
            #expect(try Data(contentsOf: URL(fileURLWithPath: again.manifestPath)) == bytesA)
        }
    }

    @Test("thumbnail names follow content and recipe, not file names")
    func contentAddressing() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/a.jpg", width: 400, height: 300)
            try FileManager.default.copyItem(atPath: source + "/a.jpg", toPath: source + "/copy-of-a.jpg")
            try Fixtures.writeImage(to: source + "/b.jpg", width: 400, height: 301)
            // One file at a time, so a.jpg's thumbnails are on disk when its copy comes (in
            // parallel the copy may be decoded while a.jpg is, and write the same files too).
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out", jobs: 1)).run()
            let items = try ManifestFile.load(report.manifestPath).items
            #expect(items.map(\.path) == ["a.jpg", "b.jpg", "copy-of-a.jpg"])
            #expect(items[0].thumbnails == items[2].thumbnails)
            #expect(items[0].thumbnails["grid"]?.path != items[1].thumbnails["grid"]?.path)
            #expect(report.thumbnailsWritten == 2 * ThumbnailRecipe.defaults.count)  // the copy reuses a.jpg's files

            let q90 = try ThumbnailRecipe(parsing: "grid=256x256:cover:jpeg:q90")
            let other = try await Builder(options: BuildOptions(source: source, output: root + "/out", thumbnails: [q90])).run()
            let rebuilt = try ManifestFile.load(other.manifestPath).items
            #expect(rebuilt[0].thumbnails["grid"]?.path != items[0].thumbnails["grid"]?.path)
        }
    }

    @Test("custom recipes: WebP and AVIF, fit and cover, exact sizes")
    func customRecipes() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/wide.jpg", width: 1000, height: 500)
            let recipes = try ["small=100x100:cover:webp:q70", "medium=300x300:fit:avif:q50"].map(ThumbnailRecipe.init(parsing:))
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out", thumbnails: recipes))
            #expect(manifest.settings.thumbnails == recipes)
            let item = try #require(manifest.items.first)
            let small = try #require(item.thumbnails["small"])
            let medium = try #require(item.thumbnails["medium"])
            #expect(small.path.hasSuffix(".webp") && medium.path.hasSuffix(".avif"))
            #expect((small.width, small.height) == (100, 100))
            #expect(small.crop == Manifest.Rect(x: 0.25, y: 0, width: 0.5, height: 1))
            #expect((medium.width, medium.height) == (300, 150))
            for thumbnail in [small, medium] {
                let decoded = try Fixtures.decode(root + "/out/" + thumbnail.path)
                #expect((decoded.width, decoded.height) == (thumbnail.width, thumbnail.height))
            }
        }
    }

    @Test("a long screenshot previews at full width; alpha is flattened onto white")
    func longAndAlpha() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/screenshot.png", width: 1080, height: 7000, format: TF_FORMAT_PNG)
            try Fixtures.writeMarkerImage(
                to: source + "/logo.png", displayWidth: 400, displayHeight: 200, orientation: 1, format: TF_FORMAT_PNG,
                alpha: true)
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let long = try #require(manifest.items.first { $0.path == "screenshot.png" })
            #expect(long.thumbnails["preview"]?.width == 1080 && long.thumbnails["preview"]?.height == 7000)
            #expect(long.thumbnails["grid"]?.width == 256 && long.thumbnails["grid"]?.height == 256)
            let logo = try #require(manifest.items.first { $0.path == "logo.png" })
            #expect(logo.image.hasAlpha)
            let preview = try Fixtures.decode(root + "/out/" + logo.thumbnails["preview"]!.path)
            #expect(preview.bands == 3)
            #expect(preview.colour(x: 10, y: 10).isNear(Fixtures.Colour(r: 255, g: 255, b: 255)))
            #expect(preview.colour(x: 150, y: 50).isNear(.red))
        }
    }

    @Test("unreadable files become failures and the rest is built")
    func failures() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: source + "/good.jpg", width: 320, height: 240)
            try Fixtures.write([], to: source + "/empty.jpg")
            let good = try Array(Data(contentsOf: URL(fileURLWithPath: source + "/good.jpg")))
            try Fixtures.write(Array(good.prefix(good.count / 2)), to: source + "/truncated.jpg")
            try Fixtures.write((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }, to: source + "/noise.png")
            try Fixtures.writeImage(to: source + "/huge.jpg", width: 300, height: 300)
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out", maxPixels: 80_000))
            #expect(manifest.items.map(\.path) == ["good.jpg"])
            let byPath = Dictionary(uniqueKeysWithValues: manifest.failures.map { ($0.path, $0) })
            #expect(byPath.keys.sorted() == ["empty.jpg", "huge.jpg", "noise.png", "truncated.jpg"])
            #expect(byPath["empty.jpg"]?.reason == "empty file")
            #expect(byPath["huge.jpg"]?.reason.contains("--max-pixels 80000") == true)
            #expect(byPath["truncated.jpg"]?.stage == "decode")
            #expect(manifest.failures.allSatisfy { !$0.reason.isEmpty && !$0.reason.contains("\n") })
        }
    }

    @Test("an output directory inside the source is not scanned")
    func outputInsideSource() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.writeImage(to: root + "/a.jpg", width: 300, height: 200)
            let first = try await Builder(options: BuildOptions(source: root, output: root + "/thumbframe-out")).run()
            let second = try await Builder(options: BuildOptions(source: root, output: root + "/thumbframe-out")).run()
            #expect(first.items == 1 && second.items == 1)
            #expect(second.manifestWritten == false)
        }
    }
}

@Suite("Versions")
struct VersionTests {
    @Test("a build's version is the release, or release+N.gHASH after it; anything else it was given is the release")
    func buildVersion() {
        let release = ThumbframeVersion.release
        #expect(ThumbframeVersion.build(nil) == release)
        #expect(ThumbframeVersion.build(release) == release)
        #expect(ThumbframeVersion.build(release + "+12.gabc1234") == release + "+12.gabc1234")
        for wrong in [
            "9.9.9+1.gabc1234", release + "+0.gabc1234", release + "+x.gabc1234", release + "+3", release + "+3.abc1234",
            release + "+3.gABC1234", release + "+3.g12", release + "-3.gabc1234", release + "+3.gabc1234.dirty", release + "x",
        ] {
            #expect(ThumbframeVersion.build(wrong) == release, "\(wrong)")
        }
    }
}
