import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// How every browser gets to play each video (issue 39, item 1): as it is, remuxed into a
/// fast-start MP4, or transcoded; the MP4 index's place read from the file's boxes.
@Suite("Video delivery")
struct VideoDeliveryTests {
    /// Whether the MP4's `moov` comes before its `mdat`, from its top-level boxes read here
    /// independently of thumbframe (32-bit sizes: the fixtures are small); nil without either.
    static func moovFirst(_ path: String) throws -> Bool? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            switch String(decoding: bytes[at + 4..<at + 8], as: UTF8.self) {
            case "moov": return true
            case "mdat": return false
            default: break
            }
            guard size >= 8 else { return nil }
            at += size
        }
        return nil
    }

    @Test("the rule: browser codecs in MP4 with the index first or WebM play as they are, else remuxed; other codecs transcoded")
    func rule() {
        typealias Delivery = Manifest.VideoInfo.Delivery
        #expect(Delivery.decide(container: "mp4", codec: "h264", audio: "aac", indexFirst: true) == .original)
        #expect(Delivery.decide(container: "mov", codec: "h264", audio: nil, indexFirst: false) == .remux)
        #expect(Delivery.decide(container: "webm", codec: "vp9", audio: "opus", indexFirst: nil) == .original)
        #expect(Delivery.decide(container: "matroska", codec: "h264", audio: "aac", indexFirst: nil) == .remux)
        #expect(Delivery.decide(container: "mpegts", codec: "h264", audio: "mp3", indexFirst: nil) == .remux)
        #expect(Delivery.decide(container: "matroska", codec: "h264", audio: "vorbis", indexFirst: nil) == .transcode)
        #expect(Delivery.decide(container: "mp4", codec: "hevc", audio: "aac", indexFirst: true) == .transcode)
        #expect(Delivery.decide(container: "avi", codec: "mpeg4", audio: "mp3", indexFirst: nil) == .transcode)
    }

    @Test(
        "each video's delivery and index position in the manifest, as the file's boxes say; show prints them",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make fixtures"))
    func deliveries() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            let base = VideoFixture().with { $0.seconds = 0.5 }
            let videos: [(String, VideoFixture, Manifest.VideoInfo.Delivery)] = [
                (
                    "fast.mp4",
                    base.with {
                        $0.audio = true
                        $0.options = ["-movflags", "+faststart"]
                    }, .original
                ),
                ("camera.mp4", base.with { $0.audio = true }, .remux),
                ("clip.mkv", base.with { $0.audio = true }, .remux),
                ("web.webm", base.with { $0.codec = "libvpx-vp9" }, .original),
                ("phone.mov", base.with { $0.codec = "libx265" }, .transcode),
                ("old.avi", base.with { $0.codec = "mpeg4" }, .transcode),
            ]
            try await Fixtures.makeVideos(source, videos.map { ($0.0, $0.1) })
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            for (name, _, delivery) in videos {
                let item = try #require(manifest.items.first { $0.path == name }, "\(name)")
                // A video does not zoom: its range is the fit, in every viewport.
                #expect(item.layouts.values.allSatisfy { $0.zoom.max == $0.zoom.min && $0.zoom.doubleTap == $0.zoom.min }, "\(name)")
                let video = try #require(item.video)
                #expect(video.delivery == delivery, "\(name): \(video)")
                let iso = name.hasSuffix(".mp4") || name.hasSuffix(".mov")
                #expect(video.indexFirst == (iso ? try Self.moovFirst(source + "/" + name) : nil), "\(name)")
                // An MP4 with its index last plays, once the browser has all of it.
                #expect(video.playable == (delivery == .original || (delivery == .remux && iso)), "\(name)")
            }
            let camera = try #require(manifest.items.first { $0.path == "camera.mp4" }?.video)
            #expect(ManifestQuery.describe(camera).contains("index last, delivery remux"), "\(ManifestQuery.describe(camera))")
        }
    }
}
