import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// What the build keeps of a worker's answer (`WorkerContract`): a real item passes; each way a
/// worker running an attacker's code could bend one is refused, with its reason.
@Suite("Worker contract")
struct WorkerContractTests {
    @Test("a real item passes; out-of-range numbers, foreign names, nesting, size and another file's failure do not")
    func refusesWhatIsOutOfContract() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", [.photo("a.jpg", width: 120, height: 90)])
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: root + "/lib", output: root + "/out"))
            let item = try #require(manifest.items.first)
            let stored = StateIndex.StoredItem(
                file: item.file, image: item.image, exif: item.exif, thumbnails: item.thumbnails, placeholder: item.placeholder)
            var info = stat()
            #expect(stat(root + "/lib/a.jpg", &info) == 0)
            var source = SourceFile(path: Array("a.jpg".utf8))
            source.stat = FileStat(info)
            let setup = WorkerProtocol.Setup(
                recipes: ThumbnailRecipe.defaults, settings: manifest.settings, limits: ResourceLimits(), overwrite: false,
                threadsPerImage: 1, sourcePath: root + "/lib", outputPath: root + "/out", memoryLimit: 1 << 30)
            func breach(_ json: [UInt8]) -> String? {
                do {
                    _ = try WorkerContract.item(json, source: source, setup: setup)
                    return nil
                } catch {
                    return error.what
                }
            }
            func breach(_ change: (inout StateIndex.StoredItem) -> Void) throws -> String? {
                var forged = stored
                change(&forged)
                return breach(Array(try JSONEncoder().encode(forged)))
            }
            #expect(try breach { _ in } == nil)
            #expect(try breach { $0.image.width = 20_000_000 }?.contains("20000000 pixels a side") == true)
            #expect(try breach { $0.image.orientation = 99 }?.contains("orientation 99 is not 1–8") == true)
            #expect(try breach { $0.placeholder?.color = "red;background:url(https://evil.example/)" }?.contains("#rrggbb") == true)
            #expect(try breach { $0.file.bytes += 1 } == "another file's size")
            #expect(try breach { $0.thumbnails["evil"] = $0.thumbnails["grid"] } == "a thumbnail named evil")
            #expect(try breach { $0.thumbnails["grid"]?.headroom = 1e301 }?.contains("headroom 1e+301 is not 1–1000") == true)
            #expect(try breach { $0.exif = Manifest.ExifInfo(capturedAt: "+292277026596-12-04T15:30:07") } != nil)
            #expect(try breach { $0.exif = Manifest.ExifInfo(make: String(repeating: "x", count: 300)) } == "a text of 300 bytes")
            #expect(
                try breach { $0.place = Manifest.Place(latitude: 48.85341, longitude: 2.3488, name: "Paris", region: nil, country: "FR") }
                    != nil, "a place without --locations")
            #expect(
                breach(Array(repeating: UInt8(ascii: "["), count: 100) + Array(repeating: UInt8(ascii: "]"), count: 100))
                    == "an item nested deeper than 16")
            #expect(
                breach(Array(repeating: UInt8(ascii: " "), count: WorkerContract.maximumItemBytes + 1))?.hasPrefix("an item of") == true)
            #expect(breach(Array("{\"file\": 1}".utf8)) == "an item that is not one")
            // A failure is the job's own file, whatever it names; only its stage and one line are kept.
            let forged = Manifest.Failure(
                path: "../../etc/shadow", rawPath: nil, stage: "decode", reason: "forged\nsecond line", bytes: 1,
                modified: "2020-01-01T00:00:00.000000000Z")
            let done = WorkerProtocol.Done(outcome: .failed(forged))
            guard case .failed(let kept) = try WorkerContract.checked(done, source: source, setup: setup) else {
                Issue.record("not a failure")
                return
            }
            #expect(kept.path == "a.jpg" && kept.reason == "forged second line" && kept.bytes == source.stat.size)
            #expect(throws: WorkerContract.Breach.self) {
                var bad = forged
                bad.stage = "anything"
                _ = try WorkerContract.checked(WorkerProtocol.Done(outcome: .failed(bad)), source: source, setup: setup)
            }
            // Its cause is memory or time, which a worker knows; never a crash, never anything else.
            for (cause, kept) in [("memory", true), ("time", true), ("crash", false), ("disk", false), ("", false)] {
                var claimed = forged
                claimed.cause = cause
                let checked = try? WorkerContract.checked(WorkerProtocol.Done(outcome: .failed(claimed)), source: source, setup: setup)
                guard case .failed(let failure)? = checked else {
                    #expect(!kept, "cause \(cause) refused")
                    continue
                }
                #expect(kept && failure.cause == cause, "cause \(cause) kept as \(String(describing: failure.cause))")
            }
        }
    }
}
