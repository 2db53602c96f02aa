import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Videos from every container a phone, a camera or a download makes (issue 53, items 1–6):
/// renditions that start at the first frame and decode cleanly, deliveries by container and
/// picture, scrub tiles at their cues' own times, durations from the frames, display matrices
/// that only turn. Oracles: the ffprobe and ffmpeg programs.
@Suite("Containers")
struct ContainerTests {
    static let tools = Fixtures.ffmpeg != nil && Processes.tool("ffprobe") != nil

    /// What ffprobe says of a file's video stream: its first time and frame count (`-count_frames`).
    static func videoStream(_ path: String) async throws -> (start: Double, frames: Int) {
        let run = try await Processes.run(
            "/usr/bin/env",
            [
                "ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries", "stream=start_time,nb_read_frames",
                "-of", "csv=p=0", path,
            ])
        let fields = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        return (Double(fields.first ?? "") ?? .nan, Int(fields.last ?? "") ?? -1)
    }

    /// Decodes every frame of the video with ffmpeg, stopping at the first error or decode time
    /// that goes back: its complaints (empty when the file is clean).
    static func decodeErrors(_ path: String) async throws -> String {
        let run = try await Processes.run(
            "/usr/bin/env", ["ffmpeg", "-v", "error", "-xerror", "-i", path, "-fps_mode", "passthrough", "-f", "framemd5", "-"])
        return run.status == 0 ? run.stderr.trimmingCharacters(in: .whitespacesAndNewlines) : "exit \(run.status): \(run.stderr)"
    }

    @Test("the delivery rule: AVI and pictures browsers do not decode are transcoded")
    func rule() {
        typealias Delivery = Manifest.VideoInfo.Delivery
        #expect(Delivery.decide(container: "avi", codec: "h264", audio: "aac", indexFirst: nil) == .transcode)
        #expect(Delivery.decide(container: "mp4", codec: "h264", audio: "aac", indexFirst: true, picturePlays: false) == .transcode)
        #expect(Delivery.decide(container: "mp4", codec: "h264", audio: "aac", indexFirst: true) == .original)
        #expect(Delivery.decide(container: "matroska", codec: "vp9", audio: "opus", indexFirst: nil) == .remux)
        #expect(Delivery.decide(container: "webm", codec: "vp9", audio: "opus", indexFirst: nil) == .original)
        // The EBML header's DocType, read independently of FFmpeg (which names both `matroska,webm`).
        let header: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3, 0x8F, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84] + Array("webm".utf8) + [0x42, 0x87]
        #expect(VideoDecoder.matroskaDocType(header + [0x81, 0x02]) == "webm")
        #expect(VideoDecoder.matroskaDocType(Array(header.prefix(12))) == nil)
        #expect(VideoDecoder.matroskaDocType(Array("RIFF....AVI ".utf8)) == nil)
    }

    @Test(
        "every container's rendition starts at the source's first frame, has all its frames and decodes without an error",
        .enabled(if: tools, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func renditions() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            let base = VideoFixture().with {
                ($0.width, $0.height, $0.seconds) = (160, 96, 3)
            }
            let fast = ["-movflags", "+faststart"]
            let videos: [(String, VideoFixture, container: String, Manifest.VideoInfo.Delivery)] = [
                // One keyframe in 10 s with B-frames: AVI keeps no presentation times.
                ("long-gop.avi", base.with { ($0.audio, $0.seconds, $0.options) = (true, 6, ["-g", "300"]) }, "avi", .transcode),
                ("clip.mkv", base.with { $0.audio = true }, "matroska", .remux),
                ("stream.ts", base.with { ($0.seconds, $0.options) = (6, ["-g", "300"]) }, "mpegts", .remux),
                // VP9 in Matroska: codecs WebM has, a container Safari does not play.
                ("vp9.mkv", base.with { $0.codec = "libvpx-vp9" }, "matroska", .remux),
                ("vp9.webm", base.with { $0.codec = "libvpx-vp9" }, "webm", .original),
                ("high10.mp4", base.with { ($0.pixelFormat, $0.options) = ("yuv420p10le", fast) }, "mp4", .transcode),
                ("422.mp4", base.with { ($0.pixelFormat, $0.options) = ("yuv422p", fast) }, "mp4", .transcode),
            ]
            try await Fixtures.makeVideos(source, videos.map { ($0.0, $0.1) })
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            for (name, _, container, delivery) in videos {
                let video = try #require(manifest.items.first { $0.path == name }?.video, "\(name)")
                #expect(
                    video.container == container && video.delivery == delivery,
                    "\(name): \(video.container) \(String(describing: video.delivery))")
                #expect(video.playable == (delivery == .original), "\(name)")
                guard delivery != .original else {
                    #expect(video.rendition == nil, "\(name)")
                    continue
                }
                let rendition = try #require(video.rendition, "\(name) has a rendition")
                let made = try await Self.videoStream(root + "/out/" + rendition.path)
                let original = try await Self.videoStream(source + "/" + name)
                // From the first frame (its time as the source has it, within a frame), every frame.
                #expect(made.start <= max(0, original.start) + 1.0 / 30 + 0.001, "\(name) starts at \(made.start)")
                #expect(made.frames == original.frames, "\(name): \(made.frames) of \(original.frames) frames")
                #expect(abs(rendition.duration - video.duration) < 0.1, "\(name): \(rendition.duration) against \(video.duration)")
                #expect(try await Self.decodeErrors(root + "/out/" + rendition.path) == "", "\(name)")
                if delivery == .transcode { #expect(rendition.codecs.hasPrefix("avc1.64"), "\(name): \(rendition.codecs)") }
            }
        }
    }

    @Test(
        "each scrub tile is the frame at its cue's time, in every container, also where a seek lands past it",
        .enabled(if: tools, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func scrubTilesAtTheirTimes() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            // A colour a second (the hue turned an eighth each second), one keyframe in 10 s.
            let colours = ["-f", "lavfi", "-i", "color=c=red:size=160x96:rate=30:duration=8", "-vf", "hue=H=2*PI*floor(t)/8"]
            let h264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "300"]
            let names = [
                "colours.mp4": h264, "colours.mkv": h264, "colours.ts": h264, "colours.avi": h264,
                "colours.webm": ["-c:v", "libvpx-vp9", "-g", "300", "-b:v", "200k"],
            ]
            for (name, codec) in names {
                let made = try await Processes.run(
                    "/usr/bin/env", ["ffmpeg", "-v", "error", "-y"] + colours + codec + [source + "/" + name])
                #expect(made.status == 0, "\(made.stderr)")
            }
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            for name in names.keys.sorted() {
                let item = try #require(manifest.items.first { $0.path == name }, "\(name)")
                let scrub = try #require(item.video?.scrub, "\(name)")
                #expect(scrub.count == 8 && scrub.interval == 1, "\(name): \(scrub)")
                let sheet = try Fixtures.decode(root + "/out/" + scrub.sprite)
                for index in 0..<scrub.count {
                    let png = root + "/frame.png"
                    // Decoded from the start to the time (a seek of ffmpeg's own fails in this AVI).
                    let frame = try await Processes.run(
                        "/usr/bin/env",
                        [
                            "ffmpeg", "-v", "error", "-y", "-i", source + "/" + name, "-ss", String(index), "-frames:v", "1", "-pix_fmt",
                            "rgb24",
                            png,
                        ])
                    #expect(frame.status == 0, "\(frame.stderr)")
                    let oracle = try Fixtures.decode(png).colour(x: 80, y: 48)
                    let (x, y) = (index % scrub.columns * scrub.tileWidth, index / scrub.columns * scrub.tileHeight)
                    let tile = sheet.colour(x: x + scrub.tileWidth / 2, y: y + scrub.tileHeight / 2)
                    let apart = [Int(tile.r) - Int(oracle.r), Int(tile.g) - Int(oracle.g), Int(tile.b) - Int(oracle.b)].map(abs).max()!
                    #expect(apart <= 16, "\(name) tile \(index): \(tile) where the frame at \(index) s is \(oracle)")
                }
            }
        }
    }

    @Test(
        "a duration is what the frames say, and a display matrix that does not turn by quarters is left out and said",
        .enabled(if: tools, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func durationAndMatrix() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            // Ten seconds of frames, then one at an hour; the header then made to say 10.08 s.
            let made = try await Processes.run(
                "/usr/bin/env",
                [
                    "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x96:rate=30:duration=10", "-vf",
                    "setpts='if(eq(N,299),3600/TB,PTS)'", "-fps_mode", "vfr", "-c:v", "libx264", root + "/vfr.mkv",
                ])
            #expect(made.status == 0, "\(made.stderr)")
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/vfr.mkv")))
            // Matroska's Duration element (0x4489, 8 bytes: a double in milliseconds).
            let at = try #require((0..<(bytes.count - 11)).first { bytes[$0] == 0x44 && bytes[$0 + 1] == 0x89 && bytes[$0 + 2] == 0x88 })
            bytes.replaceSubrange((at + 3)..<(at + 11), with: withUnsafeBytes(of: (10_080.0).bitPattern.bigEndian, Array.init))
            try Data(bytes).write(to: URL(fileURLWithPath: source + "/vfr.mkv"))
            // An MP4 whose track header's matrix is garbage (not a turn).
            try await Fixtures.makeVideos(root, [("plain.mp4", VideoFixture().with { ($0.width, $0.height, $0.seconds) = (160, 96, 1) })])
            var mp4 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: root + "/plain.mp4")))
            let tkhd = try #require((0..<(mp4.count - 4)).first { mp4[$0..<($0 + 4)].elementsEqual("tkhd".utf8) }) - 4
            let garbage: [UInt32] = [0x7FFF_FFFF, 0x8000_0000, 0, 0x1_2345, 0x1_0000, 0, 0, 0, 0x4000_0000]
            mp4.replaceSubrange((tkhd + 48)..<(tkhd + 84), with: garbage.flatMap { withUnsafeBytes(of: $0.bigEndian, Array.init) })
            try Data(mp4).write(to: URL(fileURLWithPath: source + "/garbage.mp4"))

            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            let vfr = try #require(manifest.items.first { $0.path == "vfr.mkv" }?.video)
            #expect(abs(vfr.duration - 3600.033) < 0.05, "\(vfr.duration)")
            #expect(abs((vfr.rendition?.duration ?? 0) - vfr.duration) < 0.05, "\(String(describing: vfr.rendition))")
            let garbled = try #require(manifest.items.first { $0.path == "garbage.mp4" })
            #expect(garbled.video?.rotation == 0 && garbled.video?.matrixIgnored == true, "\(String(describing: garbled.video))")
            #expect((garbled.image.width, garbled.image.height) == (160, 96))
            let rendition = try #require(garbled.video?.rendition, "index last: remuxed")
            let sides = try await Processes.run(
                "/usr/bin/env",
                [
                    "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data", "-of", "csv=p=0",
                    root + "/out/" + rendition.path,
                ])
            #expect(!sides.stdout.contains("Display Matrix"), "\(sides.stdout)")
            // An ordinary file says nothing of a matrix.
            #expect(vfr.matrixIgnored == nil)
        }
    }
}
