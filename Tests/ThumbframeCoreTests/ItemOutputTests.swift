import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// The build's half of every output kind (`ItemOutput.take` through `ScratchOutputs.settle`):
/// each names its files from the source's hash and the item's facts, whatever path the worker
/// gave; takes what the worker made from its scratch folder, hashing it; finds the rest in
/// OUT_DIR; and calls anything else a breach.
@Suite("Item outputs")
struct ItemOutputTests {
    @Test("names come from the build, files from the scratch folder or OUT_DIR, anything else is a breach")
    func takesWhatTheBuildNames() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", [.photo("a.jpg", width: 3000, height: 2000)])
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            (options.ladderMaxSide, options.tilePixels) = (0, 1_000_000)
            let (_, manifest) = try await Fixtures.build(options)
            let item = try #require(manifest.items.first)
            #expect(item.thumbnails[Manifest.tilesName]?.tiles != nil, "the photo has a pyramid")
            let stored = StateIndex.StoredItem(
                file: item.file, image: item.image, exif: item.exif, thumbnails: item.thumbnails, placeholder: item.placeholder)
            let setup = WorkerProtocol.Setup(
                recipes: ThumbnailRecipe.defaults, settings: manifest.settings, limits: ResourceLimits(), overwrite: false,
                threadsPerImage: 1, sourcePath: root + "/lib", outputPath: root + "/out", memoryLimit: 1 << 30)
            let output = try OutputDirectory(root + "/out", create: false)
            let source = try Directory.open(root + "/lib").openFile(Array("a.jpg".utf8))

            func settled(
                scratch: Directory? = nil, motion: Range<Int>? = nil, _ change: (inout StateIndex.StoredItem) -> Void = { _ in }
            ) -> (item: StateIndex.StoredItem?, written: Int, breach: String?) {
                var forged = stored
                change(&forged)
                var outputs = ScratchOutputs(scratch: scratch, output: output, setup: setup, source: source, sourceSHA256: item.file.sha256)
                do throws(ScratchOutputs.Problem) {
                    try outputs.settle(&forged, motion: motion)
                    return (forged, outputs.written, nil)
                } catch {
                    guard case .breach(let what) = error else { return (nil, 0, "not a breach: \(error)") }
                    return (nil, 0, what)
                }
            }

            // Every file already in OUT_DIR: the item comes back as the build recorded it, even
            // when the worker named other paths and sizes.
            let same = settled()
            #expect(same.breach == nil && same.written == 0)
            #expect(same.item?.thumbnails == stored.thumbnails)
            let renamed = settled {
                for name in $0.thumbnails.keys {
                    $0.thumbnails[name]?.path = "../../../../etc/passwd"
                    $0.thumbnails[name]?.bytes = 1
                    $0.thumbnails[name]?.sha256 = String(repeating: "0", count: 64)
                }
            }
            #expect(renamed.breach == nil)
            #expect(renamed.item?.thumbnails == stored.thumbnails)

            // What the build does not make, or a file neither made nor there.
            #expect(settled { $0.thumbnails["evil"] = $0.thumbnails["grid"] }.breach == "a thumbnail named evil")
            let video = Manifest.VideoInfo(
                container: "mp4", codec: "h264", duration: 1, frameRate: 30, audio: nil, rotation: 0, hdr: nil, poster: 0)
            let rendition = Manifest.VideoRendition(
                path: "x", delivery: .remux, codecs: "avc1.64001f", width: 900, height: 600, duration: 1, bytes: 1, sha256: "")
            var media = Manifest.Media.photo
            media.video = video
            media.video?.rendition = rendition
            let photoWithRendition = settled { $0.media = media }
            #expect(photoWithRendition.breach != nil, "a rendition nobody made")
            var moving = Manifest.Media.photo
            moving.motion = Manifest.MotionPart(source: .embedded, path: "x", bytes: 1, sha256: "", video: video, width: 1, height: 1)
            #expect(settled { $0.media = moving }.breach == "a motion part that is not the file's")

            let grid = try #require(item.thumbnails["grid"])
            let gridBytes = try #require(output.read(file: grid.path))
            #expect(unlink(root + "/out/" + grid.path) == 0)
            #expect(settled().breach?.hasSuffix("which it did not make") == true)
            // The grid made again by the worker: copied from its scratch folder, hashed as copied.
            try FileManager.default.createDirectory(
                atPath: root + "/scratch/"
                    + (grid.path as NSString).deletingLastPathComponent.replacingOccurrences(of: "thumbs/", with: ""),
                withIntermediateDirectories: true)
            let inScratch = root + "/scratch/" + grid.path.replacingOccurrences(of: "thumbs/", with: "")
            try Data(gridBytes).write(to: URL(fileURLWithPath: inScratch))
            let copied = settled(scratch: try Directory.open(root + "/scratch"))
            #expect(copied.breach == nil && copied.written == 1)
            #expect(copied.item?.thumbnails["grid"] == grid)
            #expect(output.read(file: grid.path) == gridBytes)
            // A scratch file larger than any thumbnail may be, or empty, is a breach.
            try Data().write(to: URL(fileURLWithPath: inScratch))
            #expect(settled(scratch: try Directory.open(root + "/scratch")).breach?.contains("made of 0 bytes") == true)

            // Tiles the build was not asked for.
            var untiled = setup
            untiled.settings?.tiles = nil
            var outputs = ScratchOutputs(scratch: nil, output: output, setup: untiled, source: source, sourceSHA256: item.file.sha256)
            var forged = stored
            #expect(throws: ScratchOutputs.Problem.self) { try outputs.settle(&forged, motion: nil) }
        }
    }
}
