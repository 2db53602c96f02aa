import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("Shards and merge")
struct ShardTests {
    /// Three folders of photos, one broken file, one sidecar (skipped, counted), one animated GIF.
    static let library =
        ["", "2019/trip", "2020"].enumerated().flatMap { Fixtures.photos(5, in: [$1], width: 120 + $0 * 10, height: 90) }
        + [
            .bytes("2020/broken.jpg", Array("not a jpeg".utf8)), .bytes("2019/trip/IMG_0.xmp", Array("<x:xmpmeta/>".utf8)),
            .animation("2020/loop.gif", width: 40, height: 30, delays: [80, 80], loop: 0),
            .livePhoto("2019/trip/IMG_L.JPG", width: 120, height: 90, contentIdentifier: livePair),
        ]

    /// The content identifier of the library's Live Photo (its MOV is made by `makeVideos`).
    static let livePair = "0C0FFEE0-0000-4000-8000-000000000001"

    static func buildShards(_ source: String, _ out: String, count: Int, only: [Int]? = nil) async throws {
        for index in only ?? Array(0..<count) {
            var options = BuildOptions(source: source, output: out)
            options.shard = Shard(index: index, count: count)
            let report = try await Builder(options: options).run()
            #expect(!report.manifestWritten)
        }
    }

    @Test(
        "N shards then merge write the same bytes as one build; merge again changes nothing; validate agrees",
        arguments: [1, 3, 4])
    func mergeEqualsOneBuild(count: Int) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Self.library)
            // A video is sharded and merged like a photo; so is a Live Photo whose halves are in
            // different shards (as they are for 3 and 4 shards), its MOV named otherwise (pairs are not made by name).
            let clip = VideoFixture().with {
                $0.seconds = 1
                $0.rotate = 90
            }
            try await Fixtures.makeVideos(
                root + "/lib", [("2019/trip/clip.mov", clip), ("2019/trip/clip_L.MOV", MediaKindTests.liveMOV(Self.livePair))])
            if count > 1 {
                let halves = ["2019/trip/IMG_L.JPG", "2019/trip/clip_L.MOV"].map { Shard.number(of: Array($0.utf8), count: count) }
                #expect(halves[0] != halves[1], "the pair's halves fall in one shard of \(count): \(halves)")
            }
            _ = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/single")).run()
            try await Self.buildShards(root + "/lib", root + "/multi", count: count)
            #expect(!FileManager.default.fileExists(atPath: root + "/multi/manifest.json"), "shards write no manifest")
            let merged = try await ShardMerge(output: root + "/multi", count: count).run()
            #expect(merged.manifestWritten && merged.items == 18 && merged.failures.count == 1 && merged.skipped == ["sidecar": 1])
            let document = try ManifestFile.open(root + "/multi/manifest.json").document
            #expect(document.summary.kinds == ["photo": 16, "motion": 1, "video": 1, "animated": 1])
            #expect(try Fixtures.manifestFiles(root + "/multi") == Fixtures.manifestFiles(root + "/single"))
            let thumbs = { (out: String) in
                Set(FileManager.default.enumerator(atPath: out + "/thumbs")!.compactMap { $0 as? String }.filter { $0.hasSuffix(".jpg") })
            }
            #expect(thumbs(root + "/multi") == thumbs(root + "/single"))
            #expect(try ManifestValidator.problems(at: root + "/multi/manifest.json") == [])
            let again = try await ShardMerge(output: root + "/multi", count: count).run()
            #expect(!again.manifestWritten)
        }
    }

    @Test("a missing shard, a shard of another state of the source, and one of other settings are refused; rerunning converges")
    func refusals() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Self.library)
            try await Self.buildShards(root + "/lib", root + "/out", count: 3, only: [0, 2])
            await #expect(
                throws: ThumbframeError.shardsMissing(
                    "missing 1 of 3 shards in \(FileSystem.realPath(root + "/out")!): 1/3 (run them, then merge)")
            ) {
                _ = try await ShardMerge(output: root + "/out", count: 3).run()
            }
            try await Self.buildShards(root + "/lib", root + "/out", count: 3, only: [1])
            // The source changes after the shards ran; only one shard runs again: stale partials.
            try Fixtures.writeImage(to: root + "/lib/2020/IMG_9.jpg", width: 77, height: 55)
            try await Self.buildShards(root + "/lib", root + "/out", count: 3, only: [2])
            await #expect(
                performing: { _ = try await ShardMerge(output: root + "/out", count: 3).run() },
                throws: { error in
                    guard case ThumbframeError.shardsDisagree(let why) = error else { return false }
                    return why.contains("another state of the source")
                })
            #expect(!FileManager.default.fileExists(atPath: root + "/out/manifest.json"), "nothing merged")
            // Every shard again: the merge equals one build of the library as it is now.
            try await Self.buildShards(root + "/lib", root + "/out", count: 3)
            _ = try await ShardMerge(output: root + "/out", count: 3).run()
            _ = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/single")).run()
            #expect(try Fixtures.manifestFiles(root + "/out") == Fixtures.manifestFiles(root + "/single"))
            // One shard built with other thumbnails.
            var options = BuildOptions(
                source: root + "/lib", output: root + "/out", thumbnails: [try ThumbnailRecipe(parsing: "g=64x64:cover")])
            options.shard = Shard(index: 0, count: 3)
            _ = try await Builder(options: options).run()
            await #expect(
                performing: { _ = try await ShardMerge(output: root + "/out", count: 3).run() },
                throws: { error in
                    guard case ThumbframeError.shardsDisagree(let why) = error else { return false }
                    return why.contains("other thumbnails")
                })
        }
    }

    @Test("shards share OUT_DIR's lock with each other, never with a build or a merge")
    func locks() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Self.library)
            try await Self.buildShards(root + "/lib", root + "/out", count: 2)
            let output = try OutputDirectory(FileSystem.realPath(root + "/out")!, create: false)
            // A shard in progress: OUT_DIR's lock shared and its own lock held.
            let shared = try BuildLock.acquire(in: output.root, shared: true)
            let own = try BuildLock.acquire(in: output.root, name: Shard(index: 1, count: 2).lockName)
            await #expect(
                performing: { _ = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/out")).run() },
                throws: { if case ThumbframeError.locked = $0 { true } else { false } })
            await #expect(
                performing: { _ = try await ShardMerge(output: root + "/out", count: 2).run() },
                throws: { if case ThumbframeError.locked = $0 { true } else { false } })
            // Another shard runs beside it.
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.shard = Shard(index: 0, count: 2)
            _ = try await Builder(options: options).run()
            withExtendedLifetime((shared, own)) {}
        }
    }

    @Test("--shard K/N and auto/N")
    func parsing() throws {
        #expect(try Shard.parse("2/4", environment: [:]) == Shard(index: 2, count: 4))
        #expect(try Shard.parse("auto/8", environment: ["SLURM_ARRAY_TASK_ID": "5"]) == Shard(index: 5, count: 8))
        #expect(
            try Shard.parse("auto/8", environment: ["JOB_COMPLETION_INDEX": "3", "SLURM_ARRAY_TASK_ID": "5"]) == Shard(index: 3, count: 8))
        for bad in ["4/4", "-1/4", "1/0", "x/4", "1", "auto/4"] {
            #expect(throws: ThumbframeError.self, "\(bad)") { try Shard.parse(bad, environment: [:]) }
        }
        // Every path lands in exactly one shard, and the split is roughly even.
        var counts = [0, 0, 0, 0]
        for index in 0..<4000 { counts[Shard.number(of: Array("dir/IMG_\(index).jpg".utf8), count: 4)] += 1 }
        #expect(counts.allSatisfy { (850...1150).contains($0) }, "\(counts)")
    }
}
