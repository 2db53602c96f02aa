import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Items of every kind: photos, animated images, videos (§11 of the specification).
@Suite("Media kinds")
struct MediaKindTests {
    @Test(
        "an animated GIF or WebP is `animated` with its frames, duration and loop, its thumbnails of the first frame; one frame is a photo")
    func animatedImages() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            try Fixtures.makeLibrary(
                source,
                [
                    .photo("a.jpg", width: 120, height: 90),
                    // A frame of 10 ms or less plays at 100 ms in browsers.
                    .animation("b.gif", width: 80, height: 60, delays: [100, 10, 250], loop: 2),
                    .animation("c.webp", width: 60, height: 80, delays: [40, 40, 40, 40, 5], loop: 0),
                    .animation("d.gif", width: 50, height: 50, delays: [100], loop: 0),
                ])
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            #expect(items.mapValues(\.kind) == ["a.jpg": .photo, "b.gif": .animated, "c.webp": .animated, "d.gif": .photo])
            #expect(items["b.gif"]?.animation == Manifest.AnimationInfo(frames: 3, duration: 0.45, loop: 2))
            #expect(items["c.webp"]?.animation == Manifest.AnimationInfo(frames: 5, duration: 0.26, loop: 0))
            #expect(items["d.gif"]?.animation == nil && items["a.jpg"]?.video == nil)
            #expect((items["b.gif"]?.image.width, items["b.gif"]?.image.height) == (80, 60))
            #expect((items["c.webp"]?.image.width, items["c.webp"]?.image.height) == (60, 80))
            // The still every recipe is made from is the first frame (red), not a later one.
            for path in ["b.gif", "c.webp"] {
                let thumbnail = try #require(items[path]?.thumbnails["grid"])
                let decoded = try Fixtures.decode(root + "/out/" + thumbnail.path)
                let centre = decoded.colour(x: decoded.width / 2, y: decoded.height / 2)
                #expect(centre.r > 180 && centre.g < 80, "\(path): \(centre)")
            }
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.kinds == ["photo": 2, "animated": 2])
            #expect(manifest.consistencyProblems() == [])
        }
    }

    static let ffmpegAvailable = Fixtures.ffmpeg != nil

    /// Mean absolute difference of two decoded pictures of the same size, over every band value.
    /// With `halfTurn`, `b` is read turned by 180°.
    static func difference(_ a: Fixtures.Decoded, _ b: Fixtures.Decoded, halfTurn: Bool = false) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = a.colour(x: x, y: y)
                let q = halfTurn ? b.colour(x: b.width - 1 - x, y: b.height - 1 - y) : b.colour(x: x, y: y)
                total += abs(Int(p.r) - Int(q.r)) + abs(Int(p.g) - Int(q.g)) + abs(Int(p.b) - Int(q.b))
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    @Test(
        "videos are items: container, codec, duration, frame rate, audio, display size after rotation, playability, a poster past the black start",
        .enabled(if: ffmpegAvailable, "needs the ffmpeg program to make fixtures")
    )
    func videos() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            let base = VideoFixture()
            try Fixtures.makeLibrary(source, [.photo("a.jpg", width: 120, height: 90), .bytes("memo.m4a", [0, 0, 0, 0x20])])
            try await Fixtures.makeVideos(
                source,
                [
                    (
                        "plain.mp4",
                        base.with {
                            $0.width = 640
                            $0.height = 360
                            $0.seconds = 4
                            $0.audio = true
                        }
                    ),
                    // An iPhone's portrait video: landscape pixels and a display matrix.
                    (
                        "turned.mov",
                        base.with {
                            $0.rotate = 90
                            $0.seconds = 3
                            $0.options = ["-g", "15"]
                        }
                    ),
                    (
                        "upside.mp4",
                        base.with {
                            $0.rotate = 180
                            $0.seconds = 1
                        }
                    ),
                    (
                        "hevc.mp4",
                        base.with {
                            $0.codec = "libx265"
                            $0.seconds = 1
                            $0.rate = 25
                        }
                    ),
                    (
                        "fade.webm",
                        base.with {
                            $0.codec = "libvpx-vp9"
                            $0.black = 1.5
                            $0.seconds = 2
                            $0.options = ["-b:v", "300k"]
                        }
                    ),
                    ("short.mp4", base.with { $0.seconds = 0.2 }),
                ])
            // An MP4 with sound and no picture is a failure that says so, not a silent gap.
            let ffmpeg = try #require(Fixtures.ffmpeg)
            let tone = try await Processes.run(
                ffmpeg, ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", source + "/voice.mp4"])
            #expect(tone.status == 0, "\(tone.stderr)")
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            #expect(
                items.mapValues(\.kind) == [
                    "a.jpg": .photo, "plain.mp4": .video, "turned.mov": .video, "upside.mp4": .video, "hevc.mp4": .video,
                    "fade.webm": .video, "short.mp4": .video,
                ])
            #expect(manifest.failures.map(\.path) == ["voice.mp4"])
            #expect(manifest.failures.first?.reason == "no video stream (audio only)")
            #expect(report.skipped == ["audio": 1])

            let plain = try #require(items["plain.mp4"]?.video)
            #expect(
                (plain.container, plain.codec, plain.audio, plain.rotation, plain.hdr, plain.playable) == (
                    "mp4", "h264", "aac", 0, nil, true
                ))
            #expect(abs(plain.duration - 4) < 0.05 && plain.frameRate == 30, "\(plain)")
            #expect((items["plain.mp4"]?.image.width, items["plain.mp4"]?.image.height) == (640, 360))

            let turned = try #require(items["turned.mov"])
            #expect(turned.video?.container == "mov" && turned.video?.audio == nil)
            #expect((turned.image.storedWidth, turned.image.storedHeight, turned.image.width, turned.image.height) == (320, 240, 240, 320))
            #expect(turned.video?.rotation == 270, "ffmpeg's rotate=90 tag turns the picture 90° counter-clockwise")
            #expect(items["upside.mp4"]?.video?.rotation == 180)
            #expect((items["upside.mp4"]?.image.width, items["upside.mp4"]?.image.height) == (320, 240))

            let hevc = try #require(items["hevc.mp4"]?.video)
            #expect(hevc.codec == "hevc" && hevc.frameRate == 25 && !hevc.playable, "Firefox cannot play HEVC")
            let fade = try #require(items["fade.webm"]?.video)
            #expect(fade.container == "webm" && fade.codec == "vp9" && fade.playable)
            #expect(fade.poster >= 1.5 && fade.poster < 3.5, "the poster is past the black start: \(fade.poster)")
            let short = try #require(items["short.mp4"]?.video)
            #expect(short.duration > 0.15 && short.duration < 0.25 && short.poster <= short.duration)

            // The poster, turned as a player shows it: ffmpeg's own autorotated frame at the same
            // moment is the oracle; the same picture turned the other way is far from it.
            for path in ["turned.mov", "upside.mp4", "plain.mp4"] {
                let item = try #require(items[path])
                let display = try #require(item.thumbnails["preview"])
                #expect((display.width, display.height) == (item.image.width, item.image.height))
                try await Fixtures.ffmpegFrame(source + "/" + path, at: item.video!.poster, to: root + "/oracle.png")
                let ours = try Fixtures.decode(root + "/out/" + display.path)
                let oracle = try Fixtures.decode(root + "/oracle.png")
                #expect(Self.difference(ours, oracle) < 6, "\(path): \(Self.difference(ours, oracle))")
                #expect(Self.difference(ours, oracle, halfTurn: true) > 30, "\(path): the oracle turned round is not the poster")
            }
            #expect(manifest.consistencyProblems() == [])
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.kinds == ["photo": 1, "video": 6])
            #expect(document.summary.formats["mov"] == 1 && document.summary.formats["webm"] == 1)
        }
    }

    @Test(
        "an HDR video's poster is tone-mapped: HLG and PQ reference white come out near SDR white, not the grey their signal reads as",
        .enabled(if: ffmpegAvailable, "needs the ffmpeg program to make fixtures")
    )
    func hdrPosters() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            // Signal 0.75 is HLG's reference white (203 cd/m² on a 1000 cd/m² display); 0.58 is PQ's.
            let flat = VideoFixture().with {
                $0.codec = "libx265"
                $0.pixelFormat = "yuv420p10le"
                $0.seconds = 0.4
            }
            try await Fixtures.makeVideos(
                source,
                [
                    (
                        "hlg.mp4",
                        flat.with {
                            $0.source = "color=c=0xBFBFBF"
                            $0.transfer = "arib-std-b67"
                        }
                    ),
                    (
                        "pq.mp4",
                        flat.with {
                            $0.source = "color=c=0x949494"
                            $0.transfer = "smpte2084"
                        }
                    ),
                    ("sdr.mp4", flat.with { $0.source = "color=c=0xBFBFBF" }),
                ])
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            var grey: [String: Int] = [:]
            for item in manifest.items {
                let decoded = try Fixtures.decode(root + "/out/" + item.thumbnails["preview"]!.path)
                let centre = decoded.colour(x: decoded.width / 2, y: decoded.height / 2)
                #expect(abs(Int(centre.r) - Int(centre.g)) <= 3 && abs(Int(centre.g) - Int(centre.b)) <= 3, "\(item.path): \(centre)")
                grey[item.path] = Int(centre.g)
            }
            let hdr = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0.video?.hdr) })
            #expect(hdr["hlg.mp4"] == "hlg" && hdr["pq.mp4"] == "pq" && hdr["sdr.mp4"] == .some(nil), "\(hdr)")
            // Untouched, SDR grey 191 stays 191; reference white is SDR white less the highlight
            // roll-off (0.875 linear, 240); read as SDR, HLG's would stay 191 and PQ's 148.
            #expect(abs(grey["sdr.mp4", default: 0] - 191) <= 4, "\(grey)")
            #expect((228...250).contains(grey["hlg.mp4", default: 0]), "\(grey)")
            #expect((228...250).contains(grey["pq.mp4", default: 0]), "\(grey)")
        }
    }

    /// A Live Photo's MOV: H.264 with the QuickTime key that names its photo.
    static func liveMOV(_ identifier: String) -> VideoFixture {
        VideoFixture().with {
            $0.seconds = 1.5
            $0.options = ["-movflags", "use_metadata_tags", "-metadata", "com.apple.quicktime.content.identifier=\(identifier)"]
        }
    }

    @Test(
        "a Live Photo is one item, paired by Apple's content identifier in the same folder and never by name; an unpaired MOV is a video",
        .enabled(if: ffmpegAvailable, "needs the ffmpeg program to make fixtures")
    )
    func livePhotos() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/lib"
            let (a, b, c, d) = (
                "1E2B5C3A-0000-4000-8000-00000000000A", "1E2B5C3A-0000-4000-8000-00000000000B",
                "1E2B5C3A-0000-4000-8000-00000000000C", "1E2B5C3A-0000-4000-8000-00000000000D"
            )
            try Fixtures.makeLibrary(
                source,
                [
                    .livePhoto("live/IMG_1.JPG", width: 160, height: 120, contentIdentifier: a),
                    // The same name, another shoot: not a pair.
                    .livePhoto("live/IMG_2.JPG", width: 160, height: 120, contentIdentifier: b),
                    // The right identifier in another folder: not a pair either.
                    .livePhoto("elsewhere/IMG_4.JPG", width: 160, height: 120, contentIdentifier: d),
                ])
            try await Fixtures.makeVideos(
                source,
                [
                    ("live/IMG_1.MOV", Self.liveMOV(a.lowercased())), ("live/IMG_2.MOV", Self.liveMOV(c)),
                    ("live/IMG_4.MOV", Self.liveMOV(d)),
                ])
            if let exiftool = Processes.tool("exiftool") {
                // The oracle reads the fixture's MakerNote (tag 0x0011, exiftool's MediaGroupUUID)
                // and QuickTime key (ContentIdentifier) as Apple's.
                let photo = try await Processes.run(exiftool, ["-s3", "-MediaGroupUUID", source + "/live/IMG_1.JPG"])
                let mov = try await Processes.run(exiftool, ["-s3", "-ContentIdentifier", source + "/live/IMG_1.MOV"])
                #expect(photo.stdout == a + "\n" && mov.stdout.uppercased() == a + "\n", "\(photo.stdout) \(mov.stdout)")
            }
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            #expect(Set(items.keys) == ["live/IMG_1.JPG", "live/IMG_2.JPG", "live/IMG_2.MOV", "live/IMG_4.MOV", "elsewhere/IMG_4.JPG"])
            let live = try #require(items["live/IMG_1.JPG"])
            let motion = try #require(live.motion)
            let mov = try Data(contentsOf: URL(fileURLWithPath: source + "/live/IMG_1.MOV"))
            #expect(live.kind == .photo && motion.source == .live && motion.original == "live/IMG_1.MOV" && motion.path == nil)
            #expect(motion.bytes == mov.count && motion.sha256 == Digest.sha256(mov.withUnsafeBytes { $0 }))
            #expect(
                motion.video.container == "mov" && abs(motion.video.duration - 1.5) < 0.05 && (motion.width, motion.height) == (320, 240))
            #expect(items["live/IMG_2.JPG"]?.motion == nil && items["live/IMG_2.MOV"]?.kind == .video)
            #expect(items["elsewhere/IMG_4.JPG"]?.motion == nil && items["live/IMG_4.MOV"]?.kind == .video)
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.kinds == ["photo": 3, "motion": 1, "video": 2])
            #expect(manifest.consistencyProblems() == [])

            // The photo gone, its MOV is a video again; back, they pair again.
            try FileManager.default.moveItem(atPath: source + "/live/IMG_1.JPG", toPath: root + "/IMG_1.JPG")
            let (_, alone) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(alone.items.first { $0.path == "live/IMG_1.MOV" }?.kind == .video)
            try FileManager.default.moveItem(atPath: root + "/IMG_1.JPG", toPath: source + "/live/IMG_1.JPG")
            let (_, paired) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(paired == manifest)
        }
    }

    /// The MD5 of a file's video packets, as ffmpeg's stream copy reads them.
    static func packetHash(_ path: String) async throws -> String {
        let run = try await Processes.run(
            Fixtures.ffmpeg ?? "ffmpeg", ["-loglevel", "error", "-i", path, "-map", "0:v", "-c", "copy", "-f", "hash", "-hash", "md5", "-"])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout
    }

    @Test(
        "a HEIC Motion Photo (Samsung One UI 6, Google's HEIF format) is found in its top-level mpvd box, as exiftool finds it; its HEVC video is published as hvc1 with the same packets",
        .enabled(if: ffmpegAvailable && Processes.tool("exiftool") != nil, "needs the ffmpeg program and exiftool")
    )
    func heifMotionPhotos() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try await Fixtures.makeVideos(
                root + "/clips",
                [("motion.mp4", VideoFixture().with { ($0.seconds, $0.width, $0.height, $0.codec) = (1, 192, 144, "libx265") })])
            let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/clips/motion.mp4")))
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: root + "/still.jpg", width: 160, height: 120)
            try Fixtures.reencode(root + "/still.jpg", to: source + "/20240101_120000.heic", options: "[Q=80]")
            let heic = Array(try Data(contentsOf: URL(fileURLWithPath: source + "/20240101_120000.heic")))
            let size = UInt32(8 + mp4.count)
            let box = [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array("mpvd".utf8)
            try Fixtures.write(heic + box + mp4, to: source + "/20240101_120000.heic")
            // The oracle: exiftool's reading of Samsung's and Google's HEIF Motion Photos.
            let extracted = try await Processes.run(
                "/bin/sh", ["-c", "exiftool -b -MotionPhotoVideo \"$1\" | sha256sum", "sh", source + "/20240101_120000.heic"])
            #expect(extracted.stdout.hasPrefix(Digest.sha256(mp4.withUnsafeBytes { $0 })), "exiftool: \(extracted.stdout)")
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            let item = try #require(manifest.items.first)
            let motion = try #require(item.motion)
            #expect(item.kind == .photo && item.image.format == "heic" && motion.source == .embedded && motion.video.codec == "hevc")
            let path = root + "/out/" + (motion.path ?? "")
            #expect(try await Self.packetHash(path) == (try await Self.packetHash(root + "/clips/motion.mp4")))
            let probe = try await Processes.run(
                "/usr/bin/env", ["ffprobe", "-v", "error", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", path])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "hvc1", "\(probe.stdout)")
        }
    }

    @Test(
        "a Motion Photo's MP4 is remuxed into OUT_DIR (the same packets, no metadata), content-addressed, as the photo's motion; found from the XMP directory, the MicroVideo offset, or its ftyp",
        .enabled(if: ffmpegAvailable, "needs the ffmpeg program to make fixtures")
    )
    func motionPhotos() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try await Fixtures.makeVideos(
                root + "/clips",
                [
                    (
                        "motion.mp4",
                        VideoFixture().with {
                            $0.seconds = 1.2
                            $0.width = 192
                            $0.height = 144
                        }
                    )
                ])
            let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/clips/motion.mp4")))
            let source = root + "/lib"
            try Fixtures.makeDirectory(source)
            for (name, style) in [
                ("PXL_1.MP.jpg", MotionPhotoStyle.containerDirectory), ("MVIMG_2.jpg", .microVideo), ("PXL_3.jpg", .flagOnly),
            ] {
                try Fixtures.writeMotionPhoto(to: source + "/" + name, width: 160, height: 120, mp4: mp4, style: style)
            }
            // An MP4 glued to a JPEG without the XMP that says so is no Motion Photo.
            try Fixtures.writeImage(to: source + "/plain.jpg", width: 160, height: 120)
            try Fixtures.write(Array(try Data(contentsOf: URL(fileURLWithPath: source + "/plain.jpg"))) + mp4, to: source + "/plain.jpg")
            let (report, manifest) = try await Fixtures.build(BuildOptions(source: source, output: root + "/out"))
            #expect(manifest.failures.isEmpty && manifest.items.count == 4)
            var paths: Set<String> = []
            for item in manifest.items where item.path != "plain.jpg" {
                let motion = try #require(item.motion, "\(item.path)")
                #expect(item.kind == .photo && motion.source == .embedded && motion.original == nil)
                #expect(abs(motion.video.duration - 1.2) < 0.05 && (motion.width, motion.height) == (192, 144))
                let path = try #require(motion.path)
                let published = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/out/" + path)))
                #expect(motion.bytes == published.count && motion.sha256 == Digest.sha256(published.withUnsafeBytes { $0 }))
                // The same pictures: every video packet's bytes as they were (ffmpeg's hash of the stream copy).
                #expect(try await Self.packetHash(root + "/out/" + path) == (try await Self.packetHash(root + "/clips/motion.mp4")))
                paths.insert(path)
            }
            // One MP4, one file: content-addressed.
            #expect(paths.count == 1 && paths.first!.hasPrefix("thumbs/") && paths.first!.hasSuffix(".mp4"))
            #expect(manifest.items.first { $0.path == "plain.jpg" }?.motion == nil)
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
            #expect(report.thumbnailsWritten == 4 * ThumbnailRecipe.defaults.count)

            // The photos gone, their MP4 is pruned with their thumbnails.
            for name in ["PXL_1.MP.jpg", "MVIMG_2.jpg", "PXL_3.jpg"] { try FileManager.default.removeItem(atPath: source + "/" + name) }
            var options = BuildOptions(source: source, output: root + "/out")
            options.allowShrink = true
            _ = try await Fixtures.build(options)
            #expect(!FileManager.default.fileExists(atPath: root + "/out/" + paths.first!))
        }
    }
}
