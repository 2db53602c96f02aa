import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Renditions every browser plays (issue 39, items 1 and 2): a fast-start MP4 of the same
/// streams, or H.264 High + AAC, content-addressed in OUT_DIR, with ffprobe as the oracle.
@Suite("Video renditions")
struct VideoRenditionTests {
    static let ffprobeAvailable = Fixtures.ffmpeg != nil && Processes.tool("ffprobe") != nil

    /// What ffprobe says of a file: its streams and container.
    struct Probe: Decodable {
        struct Stream: Decodable {
            var codecName: String?
            var codecType: String
            var profile: String?
            var width: Int?
            var height: Int?
            var pixelFormat: String?
            var colorTransfer: String?
            var sideData: [[String: AnyValue]]?

            enum CodingKeys: String, CodingKey {
                case codecName = "codec_name"
                case codecType = "codec_type"
                case profile, width, height
                case pixelFormat = "pix_fmt"
                case colorTransfer = "color_transfer"
                case sideData = "side_data_list"
            }
        }
        struct Format: Decodable {
            var duration: String?
            var tags: [String: String]?
        }
        var streams: [Stream]
        var format: Format

        var video: Stream? { streams.first { $0.codecType == "video" } }
        var audio: Stream? { streams.first { $0.codecType == "audio" } }
        var duration: Double { Double(format.duration ?? "") ?? 0 }
        /// The display matrix's rotation as ffprobe prints it (degrees counter-clockwise), or 0.
        var rotation: Int {
            for entry in video?.sideData ?? [] { if case .number(let value)? = entry["rotation"] { return Int(value) } }
            return 0
        }
    }

    enum AnyValue: Decodable {
        case number(Double)
        case text(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
    }

    static func probe(_ path: String) async throws -> Probe {
        let run = try await Processes.run(
            "/usr/bin/env", ["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", path])
        try #require(run.status == 0, "ffprobe \(path): \(run.stderr)")
        return try JSONDecoder().decode(Probe.self, from: Data(run.stdout.utf8))
    }

    /// The mixed library: (name, fixture, delivery, whether its picture is encoded again).
    static let library: [(String, VideoFixture, Manifest.VideoInfo.Delivery, Bool)] = {
        let base = VideoFixture().with { $0.seconds = 1 }
        return [
            ("fast.mp4", base.with { $0.options = ["-movflags", "+faststart"] }, .original, false),
            // A camera's QuickTime file with its index at the end.
            ("camera.mov", base.with { $0.audio = true }, .remux, false),
            ("clip.mkv", base.with { $0.audio = true }, .remux, false),
            (
                "phone.mov",
                base.with {
                    $0.codec = "libx265"
                    $0.width = 1920
                    $0.height = 1080
                    $0.audio = true
                    $0.rotate = 90
                    $0.options = ["-metadata", "location=+48.8577+002.2950/", "-metadata", "title=Private"]
                }, .transcode, true
            ),
            ("old.avi", base.with { $0.codec = "mpeg4" }, .transcode, true),
            (
                "pcm.mov",
                base.with {
                    $0.audio = true
                    $0.options = ["-c:a", "pcm_s16le"]
                }, .transcode, false
            ),
            (
                "hlg.mp4",
                base.with {
                    $0.codec = "libx265"
                    $0.pixelFormat = "yuv420p10le"
                    $0.source = "color=c=0xBFBFBF"
                    $0.transfer = "arib-std-b67"
                }, .transcode, true
            ),
        ]
    }()

    @Test(
        "every video that does not play everywhere gets a fast-start MP4 of its duration and display size, H.264 High where encoded, rotation kept, no metadata; ffprobe agrees",
        .enabled(if: ffprobeAvailable, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func renditions() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try await Fixtures.makeVideos(source, Self.library.map { ($0.0, $0.1) })
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty, "\(manifest.failures)")
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            for (name, _, delivery, encoded) in Self.library {
                let item = try #require(manifest.items.first { $0.path == name }, "\(name)")
                let video = try #require(item.video)
                #expect(video.delivery == delivery, "\(name)")
                guard delivery != .original else {
                    #expect(video.rendition == nil, "\(name)")
                    continue
                }
                let rendition = try #require(video.rendition, "\(name)")
                #expect(rendition.delivery == delivery && rendition.path.hasSuffix(".mp4"), "\(name)")
                let path = root + "/out/" + rendition.path
                let original = try await Self.probe(source + "/" + name)
                let made = try await Self.probe(path)
                // The index first: a browser plays before it has the whole file.
                #expect(try VideoDeliveryTests.moovFirst(path) == true, "\(name)")
                if name == "camera.mov" {
                    #expect(try VideoDeliveryTests.moovFirst(source + "/" + name) == false, "the original's index last")
                }
                let picture = try #require(made.video)
                #expect(picture.codecName == (encoded ? "h264" : original.video?.codecName), "\(name): \(picture)")
                if encoded {
                    #expect(picture.profile == "High" && picture.pixelFormat == "yuv420p", "\(name): \(picture)")
                    #expect(rendition.codecs.hasPrefix("avc1.64"), "\(name): \(rendition.codecs)")
                    // The long side at most --video-max-side, the aspect ratio kept.
                    let (w, h) = (picture.width ?? 0, picture.height ?? 0)
                    #expect(max(w, h) <= RenditionSettings.defaultMaxSide && w % 2 == 0 && h % 2 == 0, "\(name): \(w)×\(h)")
                    let ratio = Double(item.image.storedWidth) / Double(item.image.storedHeight)
                    #expect(abs(Double(w) / Double(h) - ratio) < 0.02, "\(name): \(w)×\(h)")
                } else {
                    #expect((picture.width, picture.height) == (original.video?.width, original.video?.height), "\(name)")
                }
                // Display size after the display matrix, which is the source's.
                #expect(made.rotation == original.rotation, "\(name): \(made.rotation) vs \(original.rotation)")
                let quarter = made.rotation % 180 != 0
                let display = quarter ? (picture.height ?? 0, picture.width ?? 0) : (picture.width ?? 0, picture.height ?? 0)
                #expect((rendition.width, rendition.height) == display, "\(name)")
                #expect(
                    (rendition.width > rendition.height) == (item.image.width > item.image.height), "\(name): turned as the original")
                #expect(abs(made.duration - original.duration) < 0.1 && abs(rendition.duration - video.duration) < 0.1, "\(name)")
                // Sound where the original has it: AAC (an original's AAC copied).
                #expect((made.audio?.codecName) == (original.audio == nil ? nil : "aac"), "\(name)")
                #expect(rendition.codecs.hasSuffix(",mp4a.40.2") == (original.audio != nil), "\(name): \(rendition.codecs)")
                // Nothing of the source's metadata: only the MP4 brand fields.
                let tags = Set((made.format.tags ?? [:]).keys)
                #expect(tags.isSubset(of: ["major_brand", "minor_version", "compatible_brands"]), "\(name): \(tags)")
                let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                #expect(rendition.bytes == bytes.count && rendition.sha256 == Digest.sha256(bytes.withUnsafeBytes { $0 }), "\(name)")
            }
            // HDR is tone-mapped as the poster is: the rendition's grey is the poster's.
            let hlg = try #require(manifest.items.first { $0.path == "hlg.mp4" })
            let hlgPath = root + "/out/" + (hlg.video?.rendition?.path ?? "")
            #expect(try await Self.probe(hlgPath).video?.colorTransfer == "bt709")
            let frame = root + "/frame.png"
            let grab = try await Processes.run(
                "/usr/bin/env", ["ffmpeg", "-v", "error", "-y", "-i", hlgPath, "-frames:v", "1", "-pix_fmt", "rgb24", frame])
            #expect(grab.status == 0, "\(grab.stderr)")
            let decoded = try Fixtures.decode(frame)
            let poster = try Fixtures.decode(root + "/out/" + (hlg.thumbnails["preview"]?.path ?? ""))
            let (a, b) = (
                decoded.colour(x: decoded.width / 2, y: decoded.height / 2), poster.colour(x: poster.width / 2, y: poster.height / 2)
            )
            #expect(abs(Int(a.g) - Int(b.g)) <= 6 && (228...250).contains(Int(a.g)), "rendition \(a), poster \(b)")
        }
    }

    @Test(
        "renditions are outputs: the same bytes whatever --jobs, reused, pruned with --video-renditions none, only remuxes with remux; --check and validate see them",
        .enabled(if: ffprobeAvailable, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func outputs() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            let base = VideoFixture().with { $0.seconds = 0.6 }
            try await Fixtures.makeVideos(
                source, [("camera.mp4", base.with { $0.audio = true }), ("phone.mov", base.with { $0.codec = "libx265" })])
            func mp4s(_ out: String) throws -> [String: String] {
                var found: [String: String] = [:]
                for case let path as String in FileManager.default.enumerator(atPath: out + "/thumbs")! where path.hasSuffix(".mp4") {
                    let bytes = try Data(contentsOf: URL(fileURLWithPath: out + "/thumbs/" + path))
                    found[path] = Digest.sha256(bytes.withUnsafeBytes { $0 })
                }
                return found
            }
            var options = BuildOptions(source: source, output: root + "/a")
            options.jobs = 1
            let (_, first) = try await Fixtures.build(options)
            options.output = root + "/b"
            options.jobs = 2
            _ = try await Fixtures.build(options)
            #expect(try mp4s(root + "/a") == (try mp4s(root + "/b")) && (try mp4s(root + "/a")).count == 2)
            let manifests = try ["a", "b"].map { try Data(contentsOf: URL(fileURLWithPath: root + "/\($0)/manifest.json")) }
            #expect(manifests[0] == manifests[1])
            #expect(first.items.allSatisfy { $0.video?.rendition != nil })
            // A rebuild reuses them; --check is up to date.
            options.output = root + "/a"
            let (again, _) = try await Fixtures.build(options)
            #expect(again.thumbnailsWritten == 0 && !again.manifestWritten)
            // Another mode: --check says the videos change, a build prunes what is not made any more.
            options.renditions.mode = .remux
            options.check = true
            let check = try await Builder(options: options).run()
            #expect(check.stale.contains { $0.contains("video renditions are made otherwise now: 2 items") }, "\(check.stale)")
            options.check = false
            let (remuxed, manifest) = try await Fixtures.build(options)
            #expect(remuxed.pruned == 1, "\(remuxed)")
            #expect(manifest.items.map { $0.video?.rendition?.delivery } == [.remux, nil])
            options.renditions.mode = .none
            let (none, bare) = try await Fixtures.build(options)
            let left = try mp4s(root + "/a")
            #expect(none.pruned == 1 && bare.items.allSatisfy { $0.video?.rendition == nil } && left.isEmpty)
            // Back to auto: made again; validate sees a rendition changed behind thumbframe's back.
            options.renditions.mode = .auto
            let (_, rebuilt) = try await Fixtures.build(options)
            let path = root + "/a/" + (rebuilt.items.first { $0.path == "phone.mov" }?.video?.rendition?.path ?? "")
            #expect(try mp4s(root + "/a") == (try mp4s(root + "/b")))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: 200)
            try handle.write(contentsOf: Data([0x55]))
            try handle.close()
            let problems = try ManifestValidator.problems(at: root + "/a/manifest.json")
            #expect(problems.contains { $0.contains(".video.rendition") && $0.contains("not the recorded bytes") }, "\(problems)")
        }
    }

    @Test(
        "a Motion Photo's HEVC motion is a fast-start MP4 with an H.264 rendition; a Live Photo's HEVC MOV gets one as the photo's motion",
        .enabled(if: ffprobeAvailable, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func motion() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let identifier = "5EEDF00D-0000-4000-8000-000000000002"
            let source = root + "/lib"
            try await Fixtures.makeVideos(
                root + "/clips",
                [
                    (
                        "motion.mp4",
                        VideoFixture().with {
                            $0.codec = "libx265"
                            $0.seconds = 0.6
                        }
                    )
                ])
            let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/clips/motion.mp4")))
            try Fixtures.makeLibrary(source, [.livePhoto("IMG_1.JPG", width: 400, height: 300, contentIdentifier: identifier)])
            try Fixtures.writeMotionPhoto(to: source + "/PXL_1.MP.jpg", width: 400, height: 300, mp4: mp4, style: .containerDirectory)
            try await Fixtures.makeVideos(
                source,
                [
                    (
                        "IMG_1.MOV",
                        MediaKindTests.liveMOV(identifier).with {
                            $0.codec = "libx265"
                            $0.seconds = 0.6
                        }
                    )
                ])
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty && manifest.items.count == 2, "\(manifest.items.map(\.path)) \(manifest.failures)")
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            let embedded = try #require(manifest.items.first { $0.path == "PXL_1.MP.jpg" }?.motion)
            #expect(embedded.source == .embedded && embedded.video.codec == "hevc")
            #expect(try VideoDeliveryTests.moovFirst(root + "/out/" + (embedded.path ?? "")) == true)
            let live = try #require(manifest.items.first { $0.path == "IMG_1.JPG" }?.motion)
            #expect(live.source == .live)
            for motion in [embedded, live] {
                let rendition = try #require(motion.video.rendition, "\(motion)")
                #expect(rendition.delivery == .transcode && rendition.codecs.hasPrefix("avc1.64"))
                let probe = try await Self.probe(root + "/out/" + rendition.path)
                #expect(probe.video?.codecName == "h264" && abs(probe.duration - motion.video.duration) < 0.1, "\(probe)")
            }
            // validate hashes the extracted MP4 as it hashes renditions: a changed byte is named.
            let extracted = root + "/out/" + (embedded.path ?? "")
            var bytes = try Data(contentsOf: URL(fileURLWithPath: extracted))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: extracted))
            let problems = try ManifestValidator.problems(at: report.manifestPath)
            #expect(
                problems.contains { $0.contains("].motion \(embedded.path ?? "")") && $0.contains("not the recorded bytes") }, "\(problems)"
            )
        }
    }

    @Test(
        "every video scrubs: a sprite sheet whose tiles are the frames at their times, upright, and a WebVTT file whose cues cover the video and name them",
        .enabled(if: ffprobeAvailable, "needs the ffmpeg and ffprobe programs (scripts/bootstrap --test)"))
    func scrubPreviews() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            // Red, green and blue seconds (one keyframe at 0, so the tiles are decoded on, not sought);
            // the second copy turned a quarter by its display matrix, the third 2 minutes long.
            let colours = [
                "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:size=320x180:rate=30:duration=2", "-f", "lavfi", "-i",
                "color=c=lime:size=320x180:rate=30:duration=2", "-f", "lavfi", "-i", "color=c=blue:size=320x180:rate=30:duration=2",
                "-filter_complex", "[0][1][2]concat=n=3:v=1[v]", "-map", "[v]", "-c:v", "libx264", "-pix_fmt", "yuv420p",
            ]
            for arguments in [
                colours + [source + "/colours.mp4"],
                ["-v", "error", "-y", "-i", source + "/colours.mp4", "-c", "copy", "-metadata:s:v:0", "rotate=90", source + "/turned.mp4"],
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=10:duration=125", "-c:v", "libx264", "-g", "50",
                    source + "/long.mp4",
                ],
                // Red above blue, turned: the tiles show it as the poster does.
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:size=320x90:rate=30:duration=2", "-f", "lavfi", "-i",
                    "color=c=blue:size=320x90:rate=30:duration=2", "-filter_complex", "[0][1]vstack[v]", "-map", "[v]", "-c:v", "libx264",
                    "-pix_fmt", "yuv420p", root + "/halves.mp4",
                ],
                ["-v", "error", "-y", "-i", root + "/halves.mp4", "-c", "copy", "-metadata:s:v:0", "rotate=90", source + "/halves.mp4"],
            ] {
                let made = try await Processes.run("/usr/bin/env", ["ffmpeg"] + arguments)
                #expect(made.status == 0, "\(made.stderr)")
            }
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty && manifest.items.count == 4)
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            for item in manifest.items {
                let video = try #require(item.video)
                let scrub = try #require(video.scrub, "\(item.path)")
                // One tile a second up to 100 s, then one every ceil(duration / 100) seconds.
                let expected = video.duration > 100 ? (interval: 2.0, count: 63) : (interval: 1.0, count: Int(video.duration.rounded(.up)))
                #expect((scrub.interval, scrub.count) == expected, "\(item.path): \(scrub)")
                #expect(scrub.columns == min(10, scrub.count))
                let landscape = item.image.width > item.image.height
                #expect((scrub.tileWidth, scrub.tileHeight) == (landscape ? (160, 90) : (90, 160)), "\(item.path)")
                let sheet = try Fixtures.decode(root + "/out/" + scrub.sprite)
                let rows = (scrub.count + scrub.columns - 1) / scrub.columns
                #expect((sheet.width, sheet.height) == (scrub.columns * scrub.tileWidth, rows * scrub.tileHeight), "\(item.path)")
                // The cues: contiguous from 0 to the video's end, each naming its tile of the sheet beside it.
                let vtt = String(decoding: try Data(contentsOf: URL(fileURLWithPath: root + "/out/" + scrub.vtt)), as: UTF8.self)
                #expect(vtt.hasPrefix("WEBVTT\n"))
                let cues = vtt.components(separatedBy: "\n\n").dropFirst().map { $0.split(separator: "\n").map(String.init) }
                #expect(cues.count == scrub.count, "\(item.path)")
                let sprite = String(scrub.sprite.split(separator: "/").last!)
                func seconds(_ text: String) -> Double {
                    let parts = text.split(separator: ":").map { Double($0)! }
                    return parts[0] * 3600 + parts[1] * 60 + parts[2]
                }
                var end = 0.0
                for (index, cue) in cues.enumerated() {
                    let times = cue[0].components(separatedBy: " --> ")
                    #expect(abs(seconds(times[0]) - end) < 0.0005, "\(item.path) cue \(index): \(cue)")
                    end = seconds(times[1])
                    let (x, y) = (index % scrub.columns * scrub.tileWidth, index / scrub.columns * scrub.tileHeight)
                    #expect(cue[1] == "\(sprite)#xywh=\(x),\(y),\(scrub.tileWidth),\(scrub.tileHeight)", "\(cue)")
                }
                #expect(abs(end - video.duration) < 0.001, "\(item.path): ends at \(end)")
                if item.path == "halves.mp4" {
                    // Left and right of the first tile are the poster's left and right.
                    let poster = try Fixtures.decode(root + "/out/" + (item.thumbnails["preview"]?.path ?? ""))
                    for side in [0.25, 0.75] {
                        let tile = sheet.colour(x: Int(Double(scrub.tileWidth) * side), y: scrub.tileHeight / 2)
                        let shown = poster.colour(x: Int(Double(poster.width) * side), y: poster.height / 2)
                        #expect(
                            (tile.r > tile.b) == (shown.r > shown.b) && abs(Int(tile.r) - Int(tile.b)) > 150, "\(side): \(tile) \(shown)")
                    }
                }
                guard item.path.hasPrefix("colours") || item.path.hasPrefix("turned") else { continue }
                // Each tile is its second's colour: red, red, green, green, blue, blue.
                for index in 0..<scrub.count {
                    let (x, y) = (index % scrub.columns * scrub.tileWidth, index / scrub.columns * scrub.tileHeight)
                    let pixel = sheet.colour(x: x + scrub.tileWidth / 2, y: y + scrub.tileHeight / 2)
                    let channel = [pixel.r, pixel.g, pixel.b]
                    let strongest = channel.firstIndex(of: channel.max()!)!
                    #expect(strongest == index / 2 && channel.max()! > 200, "\(item.path) tile \(index): \(pixel)")
                }
            }
        }
    }
}
