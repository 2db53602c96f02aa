import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("Validate, diff and hostile manifests")
struct ValidateTests {
    /// A built library: four photos in two folders, one broken file.
    static func build(_ root: String) async throws -> String {
        try Fixtures.makeDirectory(root + "/src/x")
        try Fixtures.writeImage(
            to: root + "/src/a.jpg", width: 400, height: 300, exif: ["exif-ifd2-DateTimeOriginal": "2020:01:02 03:04:05"])
        try Fixtures.writeImage(to: root + "/src/b.jpg", width: 300, height: 400)
        try Fixtures.writeImage(to: root + "/src/x/c.jpg", width: 1080, height: 4000)
        try Fixtures.writeImage(to: root + "/src/x/d.png", width: 50, height: 40, format: TF_FORMAT_PNG)
        try Fixtures.write(Array("junk".utf8), to: root + "/src/x/e.jpg")
        return try await Builder(options: BuildOptions(source: root + "/src", output: root + "/out")).run().manifestPath
    }

    @Test("a built manifest is valid; each corruption is named")
    func corruptions() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let path = try await Self.build(root)
            #expect(try ManifestValidator.problems(at: path) == [])
            let good = try ManifestFile.load(path)
            let corruptions: [(String, (inout Manifest) -> Void)] = [
                ("items[1].index is 5", { $0.items[1].index = 5 }),
                ("sections[1].start is 1, expected 2", { $0.sections[1].start = 1 }),
                ("sections count 5 items, but there are 4", { $0.sections[1].count = 3 }),
                ("items[0].path '/etc/passwd' leaves the source directory", { $0.items[0].path = "/etc/passwd" }),
                ("items[0].path '../a.jpg' leaves the source directory", { $0.items[0].path = "../a.jpg" }),
                ("items[1].path 'a.jpg' appears twice", { $0.items[1].path = "a.jpg" }),
                ("items[0].image.orientation 9 is not 1–8", { $0.items[0].image.orientation = 9 }),
                ("items[0].image size does not follow", { $0.items[0].image.orientation = 6 }),
                ("items[2].layouts.phone is not what the layout engine gives", { $0.items[2].layouts["phone"]?.long = false }),
                ("items[0] has layouts", { $0.items[0].layouts["phone"] = nil }),
                ("items[0] has thumbnails", { $0.items[0].thumbnails["grid"] = nil }),
                (
                    "items[0].thumbnails.grid thumbs/00/00000000000000000000000000000000.jpg: missing",
                    {
                        $0.items[0].thumbnails["grid"]?.path = "thumbs/00/00000000000000000000000000000000.jpg"
                    }
                ),
                ("is 256×256, the manifest says 256×255", { $0.items[0].thumbnails["grid"]?.height = 255 }),
                ("'x/e.jpg' is both an item and a failure", { $0.items[3].path = "x/e.jpg" }),
                ("settings.frontend does not match preset jx4", { $0.settings.preset = .jx4 }),
                ("items[0] is video but video facts are missing", { $0.items[0].kind = .video }),
                ("items[1] is photo but animation facts are present", { $0.items[1].animation = .init(frames: 3, duration: 1, loop: 0) }),
                (
                    "items[2].video.rotation 45 is not 0, 90, 180 or 270",
                    {
                        $0.items[2].kind = .video
                        $0.items[2].video = .init(
                            container: "mp4", codec: "h264", duration: 1, frameRate: 30, audio: nil, rotation: 45, hdr: nil,
                            poster: 0.5)
                    }
                ),
                ("format 'thumbframe-manifesto' version 3", { $0.format = "thumbframe-manifesto" }),
            ]
            for (expected, corrupt) in corruptions {
                var manifest = good
                corrupt(&manifest)
                let problems = ManifestValidator.problems(of: manifest, thumbnailRoot: root + "/out")
                #expect(problems.contains { $0.contains(expected) }, "\(expected): \(problems)")
            }
        }
    }

    @Test("diff lists added, removed and changed items")
    func diff() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let first = try await Self.build(root)
            let a = try ManifestFile.load(first)
            #expect(ManifestDiff(from: a, to: a).isEmpty)
            try FileManager.default.removeItem(atPath: root + "/src/b.jpg")
            try Fixtures.writeImage(to: root + "/src/new.jpg", width: 10, height: 10)
            try Fixtures.writeImage(to: root + "/src/x/c.jpg", width: 1080, height: 4001)
            try Fixtures.writeImage(to: root + "/src/x/e.jpg", width: 10, height: 10)
            let b = try ManifestFile.load(
                try await Builder(options: BuildOptions(source: root + "/src", output: root + "/out2")).run().manifestPath)
            let diff = ManifestDiff(from: a, to: b)
            #expect(diff.added == ["new.jpg", "x/e.jpg"])
            #expect(diff.removed == ["b.jpg"])
            #expect(diff.changed == [ManifestDiff.Change(path: "x/c.jpg", fields: ["file", "image", "thumbnails", "layouts"])])
            // Moving an item is a change of position.
            var moved = b
            (moved.items[0].item, moved.items[1].item) = (b.items[1].item, b.items[0].item)
            #expect(
                ManifestDiff(from: b, to: moved).changed == [
                    ManifestDiff.Change(path: b.items[0].path, fields: ["position"]),
                    ManifestDiff.Change(path: b.items[1].path, fields: ["position"]),
                ])
            // A photo that joins a stack, or gets a place, is a change of those.
            var stacked = b
            stacked.items[0].stack = Manifest.Stack(cover: 1, reason: .duplicate)
            stacked.items[1].place = Manifest.Place(latitude: 48.8534, longitude: 2.3488, name: "Paris", country: "FR")
            #expect(
                ManifestDiff(from: b, to: stacked).changed == [
                    ManifestDiff.Change(path: b.items[0].path, fields: ["stack"]),
                    ManifestDiff.Change(path: b.items[1].path, fields: ["place"]),
                ])
            #expect(diff.failuresRemoved == ["x/e.jpg"] && !diff.settingsChanged)
            #expect(diff.rendered().hasPrefix("+ new.jpg\n+ x/e.jpg\n- b.jpg\n~ x/c.jpg: file, image, thumbnails, layouts\n"))
        }
    }

    /// Thousands of mutations of a real manifest through decode, validate and inspect: every
    /// one gives a result or a one-line error, never a crash (a trap ends the test run).
    @Test("fuzz: 3000 mutated manifests")
    func fuzz() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let path = try await Self.build(root)
            // The top document and one of its pages, mutated in turn.
            let top = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            let pagePath = try #require(ManifestDocument.decode(from: Data(top)).sections.first?.pages?.first?.path)
            let page = try Array(Data(contentsOf: URL(fileURLWithPath: root + "/out/" + pagePath)))
            var random = SplitMix64(state: 93)
            let hostileValues = [
                "99999999999999999999999", "-1", "1e400", "-9223372036854775808", "9223372036854775807",
                "\"x\"", "null", "[]", "{}", "true", "0.5", "\"\\u0000\"", "\"../../etc\"",
            ]
            var decoded = 0
            for round in 0..<3000 {
                let original = round % 2 == 0 ? top : page
                var bytes = original
                switch round % 5 {
                case 0:  // flip bytes
                    for _ in 0..<Int.random(in: 1...8, using: &random) {
                        bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                    }
                case 1:  // truncate
                    bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
                case 2, 3:  // replace a value with a hostile one
                    let text = String(decoding: bytes, as: UTF8.self)
                    let colons = text.indices.filter { text[$0] == ":" }
                    let colon = colons[Int.random(in: 0..<colons.count, using: &random)]
                    let valueStart = text.index(colon, offsetBy: 2)
                    let valueEnd = text[valueStart...].firstIndex { $0 == "," || $0 == "\n" } ?? text.endIndex
                    let hostile = hostileValues[Int.random(in: 0..<hostileValues.count, using: &random)]
                    bytes = Array((text[..<valueStart] + hostile + text[valueEnd...]).utf8)
                default:  // duplicate a slice somewhere else
                    let start = Int.random(in: 0..<bytes.count, using: &random)
                    let slice = bytes[start..<min(bytes.count, start + Int.random(in: 1...200, using: &random))]
                    bytes.insert(contentsOf: slice, at: Int.random(in: 0..<bytes.count, using: &random))
                }
                do {
                    let mutated = bytes
                    let document = try ManifestDocument.decode(from: Data(round % 2 == 0 ? mutated : top))
                    let reader = try ManifestReader(document: document) { path in
                        path == pagePath && round % 2 == 1
                            ? Data(mutated) : try Data(contentsOf: URL(fileURLWithPath: root + "/out/" + path))
                    }
                    if document.itemCount > 0 { _ = try? reader.item(at: Int.random(in: 0..<max(1, document.itemCount), using: &random)) }
                    let manifest = try reader.loadAll()
                    decoded += 1
                    _ = ManifestSummary(manifest, thumbnailRoot: root + "/out").rendered()
                    _ = ManifestValidator.problems(of: manifest, thumbnailRoot: root + "/out")
                    _ = ManifestDiff(from: manifest, to: manifest)
                    if let map = try? IndexMap(manifest), map.count > 0 { _ = try? map.position(of: map.count - 1) }
                } catch {
                    #expect(!error.localizedDescription.isEmpty && !error.localizedDescription.contains("\n"))
                }
            }
            #expect(decoded > 100, "some mutations still decode and reach the validator")
        }
    }
}
