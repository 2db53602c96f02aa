import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Failure messages that do not depend on --jobs, without decoding every broken file twice. Run
/// as separate processes: builds in one process share libvips' error buffer.
@Suite("Failure messages")
struct FailureMessageTests {
    @Test("one file at a time nothing is decoded twice; in parallel the messages are those of one file at a time")
    func rediagnosis() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            for index in 0..<12 {
                let good = root + "/lib/good-\(index).jpg"
                try Fixtures.writeImage(to: good, width: 300, height: 200)
                let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: good)))
                try Fixtures.write(Array(bytes.prefix(bytes.count / 2)), to: root + "/lib/broken-\(index).jpg")
            }
            func build(_ out: String, jobs: Int) async throws -> (Manifest, Int) {
                let run = try await CLITests.run([
                    "build", root + "/lib", "--out", root + "/" + out, "--jobs", "\(jobs)", "--log-format", "json",
                ])
                #expect(run.status == 1, "\(run.stderr)")
                let summary = ConventionTests.lines(run.stderr).first { $0["event"] as? String == "summary" }
                return (try ManifestFile.load(root + "/\(out)/manifest.json"), summary?["rediagnosed"] as? Int ?? -1)
            }
            let (one, twice) = try await build("one", jobs: 1)
            #expect(one.failures.count == 12 && twice == 0, "\(twice) decoded twice one file at a time")
            #expect(one.failures.allSatisfy { $0.reason == "VipsJpeg: Premature end of input file" }, "\(one.failures.map(\.reason))")
            let (four, again) = try await build("four", jobs: 4)
            #expect(four.failures == one.failures && again >= 0, "rediagnosed \(again) (-1: not in the summary)")
        }
    }

    /// Writes a DNG with tifffile: `kind` is `jxl` (raw data compressed with JPEG XL, DNG 1.7's
    /// code) or `cut` (a preview and a SubIFD of linear raw data the file ends before).
    static let dngScript = """
        import sys, numpy as np, tifffile
        kind, path = sys.argv[1], sys.argv[2]
        dng = [(50706, "B", 4, (1, 7, 0, 0)), (50707, "B", 4, (1, 1, 0, 0)), (50708, "s", 0, "Phone"), (271, "s", 0, "Apple")]
        raw = (np.random.default_rng(1).random((200, 300, 3)) * 4095).astype(np.uint16)
        if kind == "jxl":
            tifffile.imwrite(path, raw, photometric=34892, compression=52546, compressionargs={"level": 100}, tile=(128, 128),
                             extratags=dng + [(254, "I", 1, 0)])
        else:
            preview = (np.random.default_rng(2).random((60, 90, 3)) * 255).astype(np.uint8)
            with tifffile.TiffWriter(path) as tiff:
                tiff.write(preview, photometric="rgb", subifds=1, extratags=dng + [(254, "I", 1, 1)])
                tiff.write(raw, photometric=34892, extratags=[(254, "I", 1, 0), (50717, "I", 1, 4095)])
            data = open(path, "rb").read()
            open(path, "wb").write(data[: len(data) // 3])
        """

    @Test(
        "every reason names the real problem: sound in an .mp4, more than 64 streams, a JPEG XL DNG, a cut DNG; an MPEG-TS by its bytes under any name; LibRaw prints nothing of its own",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make fixtures")
    )
    func reasonsNameTheProblem() async throws {
        let ffmpeg = try #require(Fixtures.ffmpeg)
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try Fixtures.makeDirectory(lib)
            func make(_ arguments: [String]) async throws {
                let run = try await Processes.run(ffmpeg, ["-loglevel", "error", "-y"] + arguments)
                #expect(run.status == 0, "\(run.stderr)")
            }
            let picture = ["-f", "lavfi", "-i", "testsrc2=size=96x64:rate=10:duration=1"]
            try await make(["-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", "-brand", "M4A ", lib + "/song.mp4"])
            let streams = Array(repeating: ["-map", "0:v"], count: 65).flatMap { $0 }
            try await make(picture + streams + ["-c:v", "libx264", lib + "/many.mp4"])
            try await make(["-i", lib + "/many.mp4", "-map", "0", "-c", "copy", lib + "/many.mkv"])
            // A transport stream encoded straight (parameter sets in band, one keyframe), under
            // its own name, a name that says nothing and no name at all.
            try await make(picture + ["-c:v", "libx264", lib + "/clip.ts"])
            try FileManager.default.copyItem(atPath: lib + "/clip.ts", toPath: lib + "/clip.bin")
            try FileManager.default.copyItem(atPath: lib + "/clip.ts", toPath: lib + "/CLIP0001")
            for kind in ["jxl", "cut"] {
                let made = try await Processes.run("/usr/bin/env", ["python3", "-c", Self.dngScript, kind, lib + "/\(kind).dng"])
                #expect(made.status == 0, "\(made.stderr)")
            }
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--log-format", "json"])
            #expect(run.status == 1, "\(run.stderr)")
            #expect(!run.stderr.contains("unknown file"), "LibRaw's own line: \(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            let reasons = Dictionary(uniqueKeysWithValues: manifest.failures.map { ($0.path, $0.reason) })
            #expect(reasons["song.mp4"] == "no video stream (audio only)")
            for name in ["many.mp4", "many.mkv"] {
                #expect(reasons[name]?.contains("more than 64 streams") == true, "\(name): \(reasons[name] ?? "")")
            }
            #expect(reasons["jxl.dng"]?.contains("compressed with JPEG XL") == true, "\(reasons["jxl.dng"] ?? "")")
            #expect(reasons["cut.dng"]?.contains("cut short") == true, "\(reasons["cut.dng"] ?? "")")
            for name in ["clip.ts", "clip.bin", "CLIP0001"] {
                let item = manifest.items.first { $0.path == name }
                #expect(item?.kind == .video && item?.video?.container == "mpegts", "\(name): \(reasons[name] ?? "not an item")")
            }
            #expect(manifest.failures.count == 5 && manifest.items.count == 3)
        }
    }
}
