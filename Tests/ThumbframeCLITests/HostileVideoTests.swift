import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Videos obey the rules images do (../shared/SPEC.md §8): a damaged, truncated, oversized or
/// slow one is one failure with a one-line reason, and the run goes on. Run out of process, so a
/// crash in a demuxer or decoder would show as the run's signal.
@Suite("Hostile videos", .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make fixtures"))
struct HostileVideoTests {
    @Test(
        "a rendition past --video-timeout is given up: the video is published without one and a warning names it; the next file goes on"
    )
    func renditionTimeout() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            let long = VideoFixture().with {
                $0.codec = "libx265"
                $0.width = 1920
                $0.height = 1080
                $0.seconds = 4
            }
            try await Fixtures.makeVideos(lib, [("long.mov", long), ("short.mkv", VideoFixture().with { $0.seconds = 0.5 })])
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--video-timeout", "0.2"])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(
                run.stderr.hasPrefix("long.mov: no rendition: its rendition timed out after 0.2 s (--video-timeout)\n"),
                "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.failures.isEmpty && manifest.items.count == 2)
            #expect(manifest.items.first { $0.path == "long.mov" }?.video?.rendition == nil)
            #expect(manifest.items.first { $0.path == "short.mkv" }?.video?.rendition?.delivery == .remux)
            // Nothing half-written is left behind: only the remux's MP4 is in OUT_DIR.
            let mp4s = FileManager.default.enumerator(atPath: root + "/out/thumbs")!.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".mp4") || $0.contains(".tf-tmp-")
            }
            #expect(mp4s.count == 1, "\(mp4s)")
            #expect(try await CLITests.run(["validate", root + "/out/manifest.json"]).stdout == "valid\n")
        }
    }

    @Test("truncated and byte-flipped MP4, MOV and WebM files: every one an item or a one-line failure, no crash")
    func mutatedContainers() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let seeds = root + "/seeds"
            let small = VideoFixture().with {
                $0.width = 160
                $0.height = 120
                $0.seconds = 1
            }
            try await Fixtures.makeVideos(
                seeds,
                [
                    ("a.mp4", small.with { $0.audio = true }), ("b.mov", small.with { $0.rotate = 90 }),
                    ("c.webm", small.with { $0.codec = "libvpx-vp9" }), ("d.mp4", small.with { $0.codec = "libx265" }),
                ])
            let lib = root + "/lib"
            var random = SplitMix64(state: 2100)
            var count = 0
            for name in ["a.mp4", "b.mov", "c.webm", "d.mp4"] {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: seeds + "/" + name)))
                let ext = (name as NSString).pathExtension
                try Fixtures.write(bytes, to: lib + "/good-\(name)")
                for fraction in [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999] {
                    try Fixtures.write(Array(bytes.prefix(Int(Double(bytes.count) * fraction))), to: lib + "/cut-\(fraction)-\(name)")
                    count += 1
                }
                for mutant in 0..<12 {
                    var damaged = bytes
                    for _ in 0..<(1 + Int(random.next() % 24)) {
                        let offset = 8 + Int(random.next() % UInt64(damaged.count - 8))
                        damaged[offset] = UInt8(truncatingIfNeeded: random.next())
                    }
                    try Fixtures.write(damaged, to: lib + "/flip-\(mutant)-\(name.prefix(1)).\(ext)")
                    count += 1
                }
            }
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--jobs", "2", "--decode-timeout", "20"])
            #expect(run.status == 0 || run.status == 1, "\(run.status): \(run.stderr.suffix(2000))")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count + manifest.failures.count == count + 4)
            let items = Set(manifest.items.map(\.path))
            #expect(["good-a.mp4", "good-b.mov", "good-c.webm", "good-d.mp4"].allSatisfy(items.contains))
            #expect(manifest.failures.allSatisfy { !$0.reason.isEmpty && !$0.reason.contains("\n") })
            // A file cut to 1% has no picture to show.
            #expect(!items.contains { $0.hasPrefix("cut-0.01-") }, "\(items.sorted())")
            #expect(
                manifest.items.allSatisfy {
                    $0.kind == .video && $0.placeholder != nil && $0.thumbnails.count == ThumbnailRecipe.defaults.count
                })
        }
    }

    /// Rewrites an MP4's sample tables (`stsz` a constant size, `stts` one entry) to claim
    /// `samples` samples: a file of a few KB that FFmpeg would index sample by sample.
    static let claimSamples = """
        import struct, sys
        CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl"}
        def parse(buf):
            out, i = [], 0
            while i + 8 <= len(buf):
                size, kind = struct.unpack(">I4s", buf[i:i + 8])
                if size < 8: break
                body = buf[i + 8:i + size]
                out.append([kind, parse(body) if kind in CONTAINERS else body])
                i += size
            return out
        def build(boxes):
            out = b""
            for kind, body in boxes:
                data = build(body) if isinstance(body, list) else body
                out += struct.pack(">I4s", 8 + len(data), kind) + data
            return out
        def claim(boxes, n):
            for box in boxes:
                if isinstance(box[1], list): claim(box[1], n)
                elif box[0] == b"stsz": box[1] = box[1][:4] + struct.pack(">II", 1, n)
                elif box[0] == b"stts": box[1] = box[1][:4] + struct.pack(">III", 1, n, 1)
        boxes = parse(open(sys.argv[1], "rb").read())
        claim(boxes, int(sys.argv[3]))
        open(sys.argv[2], "wb").write(build(boxes))
        """

    @Test(
        "an MP4 whose sample tables claim 30 million samples is refused from its boxes, before FFmpeg indexes them; a real one of the same file is built",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make fixtures")
    )
    func claimedIndex() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try await Fixtures.makeVideos(lib, [("real.mp4", VideoFixture().with { ($0.width, $0.height, $0.seconds) = (64, 48, 1) })])
            let made = try await Processes.run(
                "/usr/bin/env", ["python3", "-c", Self.claimSamples, lib + "/real.mp4", lib + "/claims.mp4", "30000000"])
            #expect(made.status == 0, "\(made.stderr)")
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--max-decode-bytes", "\(64 << 20)"])
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["real.mp4"])
            #expect(
                manifest.failures.first?.reason
                    == "its index claims 30000000 samples (about 1144 MiB for FFmpeg to hold), over --max-decode-bytes 64 MiB")
        }
    }

    @Test(
        "a video whose frames grow past its header (H.264 in MP4, MJPEG in AVI: 320×240, then 4000×4000) fails at the first large frame",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make fixtures")
    )
    func growingFrames() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try await Fixtures.makeVideos(lib, [("good.mp4", VideoFixture().with { ($0.width, $0.height, $0.seconds) = (64, 48, 1) })])
            let ffmpeg = try #require(Fixtures.ffmpeg)
            func make(_ arguments: String) async throws {
                let made = try await Processes.run(ffmpeg, ["-v", "error", "-y"] + arguments.split(separator: " ").map(String.init))
                #expect(made.status == 0, "ffmpeg \(arguments): \(made.stderr)")
            }
            // Two H.264 streams in Annex B, one after the other: the second's parameter sets
            // come in band, so the MP4's header (its avcC) is the first's, 320×240.
            try await make("-f lavfi -i color=c=gray:s=320x240:r=10:d=0.2 -c:v libx264 -preset ultrafast -f h264 \(root)/small.h264")
            try await make("-f lavfi -i testsrc=s=4000x4000:r=10:d=0.4 -c:v libx264 -preset ultrafast -f h264 \(root)/big.h264")
            let stream =
                try Data(contentsOf: URL(fileURLWithPath: root + "/small.h264"))
                + Data(contentsOf: URL(fileURLWithPath: root + "/big.h264"))
            try stream.write(to: URL(fileURLWithPath: root + "/grow.h264"))
            try await make("-r 10 -i \(root)/grow.h264 -c copy \(lib)/grow.mp4")
            // MJPEG pictures of both sizes in one AVI, whose header says 320×240.
            try await make("-f lavfi -i color=c=gray:s=320x240:r=10:d=0.2 -c:v mjpeg -f avi \(root)/small.avi")
            try await make("-f lavfi -i testsrc=s=4000x4000:r=10:d=0.4 -c:v mjpeg -f avi \(root)/big.avi")
            try "file '\(root)/small.avi'\nfile '\(root)/big.avi'\n".write(toFile: root + "/list.txt", atomically: true, encoding: .utf8)
            try await make("-f concat -safe 0 -i \(root)/list.txt -c copy \(lib)/grow.avi")
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--max-decode-bytes", "\(64 << 20)"])
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["good.mp4"])
            #expect(manifest.failures.map(\.path) == ["grow.avi", "grow.mp4"])
            // (H.264's frame is refused at its allocation, 4 032 wide: a row is padded to FFmpeg's alignment.)
            #expect(
                manifest.failures.allSatisfy {
                    $0.reason.hasPrefix("a frame of 40")
                        && $0.reason.hasSuffix(
                            "×4000 pixels in a video of 320×240 is over --max-decode-bytes 64 MiB or --max-pixels 268402689")
                }, "\(manifest.failures.map(\.reason))")
        }
    }

    @Test("a video over --max-pixels or past --decode-timeout is a failure naming the limit; the photo beside it is built")
    func limits() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try Fixtures.makeLibrary(lib, [.photo("a.jpg", width: 40, height: 30)])
            try await Fixtures.makeVideos(
                lib,
                [
                    (
                        "big.mp4",
                        VideoFixture().with {
                            $0.width = 640
                            $0.height = 480
                            $0.seconds = 1
                        }
                    )
                ])
            let pixels = try await CLITests.run(["build", lib, "--out", root + "/out", "--max-pixels", "100000"])
            #expect(
                pixels.status == 1 && pixels.stderr.contains("big.mp4: probe: 640×480 pixels is over --max-pixels 100000"),
                "\(pixels.stderr)")
            let memory = try await CLITests.run(["build", lib, "--out", root + "/out2", "--max-decode-bytes", "1000000"])
            #expect(memory.status == 1 && memory.stderr.contains("over --max-decode-bytes"), "\(memory.stderr)")
            let slow = try await CLITests.run(["build", lib, "--out", root + "/out3", "--decode-timeout", "0.000001"])
            #expect(slow.status == 1 && slow.stderr.contains("big.mp4: decode: decoding took longer than"), "\(slow.stderr)")
            #expect(try ManifestFile.load(root + "/out/manifest.json").items.map(\.path) == ["a.jpg"])
        }
    }

    @Test(
        "videos are incremental like photos: a rerun reuses them unopened, a touched one is re-hashed, a changed one is stale for --check and rebuilt, a deleted one's thumbnails are pruned"
    )
    func incremental() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, [.photo("a.jpg", width: 40, height: 30)])
            let small = VideoFixture().with {
                $0.width = 160
                $0.height = 120
                $0.seconds = 1
            }
            try await Fixtures.makeVideos(
                lib, [("b.mp4", small), ("c.mov", small.with { $0.rotate = 90 }), ("d.webm", small.with { $0.codec = "libvpx-vp9" })])
            let first = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(
                first.status == 0 && first.summary["thumbnailsWritten"] as? Int == 4 * ThumbnailRecipe.defaults.count, "\(first.stderr)")
            let manifest = try ManifestFile.load(out + "/manifest.json")
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.summary["reused"] as? Int == 4 && rerun.summary["manifestWritten"] as? Bool == false, "\(rerun.stderr)")
            #expect(try await CLITests.run(["build", lib, "--out", out, "--check"]).status == 0)
            #expect(try await CLITests.run(["build", lib, "--out", out, "--check", "--verify"]).status == 0)

            // Touched, same bytes: re-hashed, nothing written, nothing else in the manifest changed.
            let later = Date(timeIntervalSinceNow: 60)
            try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: lib + "/b.mp4")
            let touched = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(touched.summary["thumbnailsWritten"] as? Int == 0, "\(touched.stderr)")
            // Only its modification time changed: the item stands as it was, `file.modified`
            // included (the time its bytes were first read), so the manifest is not written.
            let after = try ManifestFile.load(out + "/manifest.json")
            #expect(after.items == manifest.items)
            #expect(touched.summary["manifestWritten"] as? Bool == false, "\(touched.stderr)")

            // Another video under the same name: stale for --check, rebuilt by the build.
            try FileManager.default.removeItem(atPath: lib + "/c.mov")
            try await Fixtures.makeVideos(lib, [("c.mov", small.with { $0.seconds = 2 })])
            let check = try await CLITests.run(["build", lib, "--out", out, "--check"])
            #expect(check.status == 1 && check.stdout.contains("changed c.mov"), "\(check.stdout)")
            let rebuilt = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rebuilt.summary["thumbnailsWritten"] as? Int == ThumbnailRecipe.defaults.count, "\(rebuilt.stderr)")
            let item = try ManifestFile.load(out + "/manifest.json").items.first { $0.path == "c.mov" }
            #expect(item?.video?.rotation == 0 && abs((item?.video?.duration ?? 0) - 2) < 0.05)

            // Deleted: its thumbnails go with it.
            let thumbnails = try #require(ManifestFile.load(out + "/manifest.json").items.first { $0.path == "d.webm" }?.thumbnails)
            try FileManager.default.removeItem(atPath: lib + "/d.webm")
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            #expect(thumbnails.values.allSatisfy { !FileManager.default.fileExists(atPath: out + "/" + $0.path) })
        }
    }
}
