import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// No single input — a file, a name, a manifest, an option value — can hang a run, take the
/// machine's memory, or crash it. Memory is held under an address-space limit (`ulimit -v`)
/// that a normal run fits in many times over: a run that would need gigabytes fails there.
@Suite("One input cannot exhaust the machine", .serialized)
struct ExhaustionTests {
    /// Address space a run is given (1 GiB; a build of small files needs about a quarter).
    static let addressSpaceKiB = 1 << 20

    /// Runs thumbframe under `ulimit -v` and `timeout`, so neither memory nor time can run away.
    static func bounded(_ arguments: [String], seconds: Int = 120) async throws -> Processes.Output {
        let quoted = ([CLITests.executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try await Processes.run(
            "/bin/bash", ["-c", "ulimit -v \(addressSpaceKiB); exec timeout \(seconds) " + quoted.joined(separator: " ")])
    }

    static func little(_ value: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// An 8×8 RGB TIFF whose Exif IFD repeats DateTimeOriginal 65 535 times, each 4 096 doubles
    /// (32 KiB; 2 GiB if every copy were gathered).
    static func exifBombTIFF() -> [UInt8] {
        let pixels = [UInt8](repeating: 128, count: 8 * 8 * 3)
        let value = [UInt8](repeating: 0x40, count: 32_768)
        let valueOffset = 8 + pixels.count
        let ifd0Offset = valueOffset + value.count
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ field: Int) -> [UInt8] {
            little(tag, 2) + little(type, 2) + little(count, 4) + little(field, 4)
        }
        var ifd0 = [
            entry(256, 4, 1, 8), entry(257, 4, 1, 8), entry(258, 3, 1, 8), entry(259, 3, 1, 1), entry(262, 3, 1, 2),
            entry(273, 4, 1, 8), entry(277, 3, 1, 3), entry(278, 4, 1, 8), entry(279, 4, 1, pixels.count),
        ]
        let exifOffset = ifd0Offset + 2 + 12 * (ifd0.count + 1) + 4
        ifd0.append(entry(0x8769, 4, 1, exifOffset))
        var file = Array("II".utf8) + little(42, 2) + little(ifd0Offset, 4) + pixels + value
        file += little(ifd0.count, 2) + ifd0.flatMap { $0 } + little(0, 4)
        file += little(65_535, 2)
        let repeated = entry(0x9003, 12, value.count / 8, valueOffset)
        for _ in 0..<65_535 { file += repeated }
        return file + little(0, 4)
    }

    /// An 8×8 PNG with 200 zTXt chunks, each inflating to 10 MB.
    static func textBombPNG() -> [UInt8] {
        let script = """
            import struct, sys, zlib
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
            rows = b"".join(b"\\x00" + bytes([100]) * 24 for _ in range(8))
            bomb = zlib.compress(b"A" * (10 << 20), 9)
            png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
            png += b"".join(chunk(b"zTXt", b"Comment%d\\x00\\x00" % i + bomb) for i in range(200))
            sys.stdout.buffer.write(png + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }

    @Test("metadata bombs (a TIFF repeating an EXIF entry 65 535 times, a PNG of 200 zTXt bombs) are built in bounded memory")
    func metadataBombs() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.write(Self.exifBombTIFF(), to: root + "/src/exif.tif")  // (makes src/)
            let png = Self.textBombPNG()
            #expect(png.count > 1_000_000, "the PNG fixture was made")
            try Fixtures.write(png, to: root + "/src/text.png")
            try Fixtures.writeImage(to: root + "/src/plain.jpg", width: 60, height: 40)
            let run = try await Self.bounded(["build", root + "/src", "--out", root + "/out", "--jobs", "2"])
            #expect(run.status == 0, "status \(run.status): \(run.stderr.suffix(600))")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["exif.tif", "plain.jpg", "text.png"])
            #expect(manifest.items.first?.exif?.capturedAt == nil, "a 32 KiB date is no date")
        }
    }

    @Test("a progressive JPEG stops decoding at --decode-timeout, not after its whole decode (CPU time against the full decode)")
    func progressiveDeadline() async throws {
        guard let vips = Processes.tool("vips") else {
            print("skipped: the vips CLI (libvips-tools) makes this fixture; scripts/bootstrap --test installs it")
            return
        }
        try await Fixtures.withTemporaryDirectory { root in
            // Noise: a progressive JPEG whose scans take real work to decode (about a second).
            try Fixtures.makeDirectory(root + "/src")
            for step in [
                ["gaussnoise", root + "/n.v", "6000", "6000", "--sigma", "60"], ["cast", root + "/n.v", root + "/n8.v", "uchar"],
                ["bandjoin", "\(root)/n8.v \(root)/n8.v \(root)/n8.v", root + "/n3.v"],
                ["jpegsave", root + "/n3.v", root + "/src/progressive.jpg", "--interlace", "--Q", "95"],
            ] {
                let made = try await Processes.run(vips, step)
                #expect(made.status == 0, "vips \(step): \(made.stderr)")
            }
            /// User plus system CPU seconds of one build.
            func cpu(_ extra: [String]) async throws -> (Double, Processes.Output) {
                let script = """
                    import resource, subprocess, sys
                    run = subprocess.run(sys.argv[1:], capture_output=True, text=True)
                    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                    print(usage.ru_utime + usage.ru_stime); sys.stderr.write(run.stderr); sys.exit(run.returncode)
                    """
                let out = root + "/out-\(extra.count)"
                let run = try await Processes.run(
                    "/usr/bin/env",
                    ["python3", "-c", script, CLITests.executable, "build", root + "/src", "--out", out, "--jobs", "1"] + extra)
                return (Double(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .infinity, run)
            }
            let (whole, built) = try await cpu([])
            #expect(built.status == 0, "\(built.stderr)")
            let (stopped, failed) = try await cpu(["--decode-timeout", "0.05"])
            #expect(failed.status == 1 && failed.stderr.contains("--decode-timeout"), "\(failed.stderr)")
            // The whole decode is ~0.5 s of CPU or more; stopped at 0.05 s it costs a fraction.
            #expect(stopped < whole * 0.6, "stopped at the deadline: \(stopped) s of CPU, the whole decode \(whole) s")
        }
    }

    @Test("a FIFO at one of thumbframe's own names in OUT_DIR stops the build with 73 at once, never hangs it")
    func fifoInOutput() async throws {
        try await SafetyTests.withBuiltLibrary(2) { _, source, out in
            for name in [".thumbframe-journal", ".thumbframe-thumbs"] {
                try? FileManager.default.removeItem(atPath: out + "/" + name)
                #expect(mkfifo(out + "/" + name, 0o644) == 0)
                try Fixtures.writeImage(to: source + "/album/new-\(name.count).jpg", width: 50, height: 30)
                let run = try await Self.bounded(["build", source, "--out", out], seconds: 30)
                #expect(run.status == 73, "\(name): status \(run.status) \(run.stderr)")
                #expect(run.stderr.contains(name), "\(run.stderr)")
                try FileManager.default.removeItem(atPath: out + "/" + name)
            }
            await #expect(try SafetyTests.build(source, out).status == 0)
        }
    }

    @Test("a directory chain 16 000 levels deep is a walk failure past 256 levels; the rest is built")
    func deepDirectories() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/src")
            try Fixtures.writeImage(to: root + "/src/top.jpg", width: 40, height: 30)
            try Fixtures.writeImage(to: root + "/photo.jpg", width: 40, height: 30)
            // Made and removed one component at a time (the path is far past PATH_MAX).
            let chain = """
                import os, shutil, sys
                root, depth, photo = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "rb").read()
                fd = os.open(root, os.O_RDONLY)
                for level in range(depth):
                    if level == 10:
                        with open(os.open("shallow.jpg", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f: f.write(photo)
                    os.mkdir("d", dir_fd=fd)
                    child = os.open("d", os.O_RDONLY, dir_fd=fd)
                    os.close(fd)
                    fd = child
                with open(os.open("deep.jpg", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f: f.write(photo)
                """
            let made = try await DataKeptTests.python(chain, [root + "/src", "16000", root + "/photo.jpg"])
            #expect(made.status == 0, "\(made.stderr)")
            defer {
                let remove = """
                    import os, sys
                    top = sys.argv[1]
                    while os.path.isdir(top + "/d"):
                        for name in os.listdir(top + "/d"):
                            if name != "d": os.unlink(top + "/d/" + name)
                        if os.path.isdir(top + "/d/d"):
                            os.rename(top + "/d/d", top + "/x"); os.rmdir(top + "/d"); os.rename(top + "/x", top + "/d")
                        else:
                            os.rmdir(top + "/d")
                    """
                _ = try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", remove, root + "/src"])
            }
            let run = try await Self.bounded(["build", root + "/src", "--out", root + "/out"])
            #expect(run.status == 1, "status \(run.status): \(run.stderr.suffix(400))")
            #expect(run.stderr.contains("nested more than 256 levels"), "\(run.stderr.suffix(400))")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path).sorted() == ["d/d/d/d/d/d/d/d/d/d/shallow.jpg", "top.jpg"])
            #expect(manifest.failures.count == 1)
        }
    }

    @Test("readers refuse oversized documents and pages, and a top document naming one page many times, at once (65)")
    func readerLimits() async throws {
        try await SafetyTests.withBuiltLibrary(3) { _, source, out in
            let manifestPath = out + "/manifest.json"
            let original = try String(contentsOfFile: manifestPath, encoding: .utf8)
            let document = try ManifestFile.open(manifestPath).document
            let page = try #require(document.sections.first?.pages?.first)

            // One page named 5 000 times.
            var top = try #require(try JSONSerialization.jsonObject(with: Data(original.utf8)) as? [String: Any])
            var sections = try #require(top["sections"] as? [[String: Any]])
            sections[0]["pages"] = (0..<5000).map { ["path": page.path, "start": $0 * page.count, "count": page.count] }
            sections[0]["count"] = 5000 * page.count
            top["sections"] = sections
            top["itemCount"] = 5000 * page.count
            try JSONSerialization.data(withJSONObject: top).write(to: URL(fileURLWithPath: manifestPath))
            for command in [["inspect", "--files"], ["show", "--path", "nothing.jpg"], ["diff", manifestPath], ["validate"]] {
                let run = try await Self.bounded([command[0], manifestPath] + command.dropFirst(), seconds: 30)
                #expect(run.status == 65, "\(command): \(run.status)")
                #expect((run.stderr + run.stdout).contains("named more than once"), "\(command): \(run.stderr) \(run.stdout)")
            }

            // A page swollen past 16 MiB (sparse: costs no disk) is refused from its size.
            try original.write(toFile: manifestPath, atomically: false, encoding: .utf8)
            #expect(truncate(out + "/" + page.path, 64 << 20) == 0)
            let show = try await Self.bounded(["show", manifestPath, "--index", "0"], seconds: 30)
            #expect(show.status == 65 && show.stderr.contains("over the 16777216 bytes"), "\(show.stderr)")

            // A 1.5 GB manifest.json (sparse) is refused by readers from its size, and a build
            // that meets it (no state index: it looks for a 0.1 manifest's thumbnails) does not
            // read it whole.
            // (It begins as thumbframe's encoder begins every manifest: a damaged one of its own.)
            let damaged = Array("{\n  \"failures\" : [".utf8)
            try Fixtures.write(damaged, to: manifestPath)
            #expect(truncate(manifestPath, 1_500_000_000) == 0)
            let inspect = try await Self.bounded(["inspect", manifestPath], seconds: 30)
            #expect(inspect.status == 65 && inspect.stderr.contains("over the 33554432"), "\(inspect.stderr)")
            for name in [".thumbframe-state.sqlite", ".thumbframe-state.sqlite-wal", ".thumbframe-state.sqlite-shm"] {
                try? FileManager.default.removeItem(atPath: out + "/" + name)
            }
            let rebuilt = try await Self.bounded(["build", source, "--out", out], seconds: 60)
            #expect(rebuilt.status == 0, "status \(rebuilt.status): \(rebuilt.stderr.suffix(400))")
        }
    }

    @Test("option values past their range are one-line usage errors (64) made before anything is created")
    func boundedOptions() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/src")
            try Fixtures.writeImage(to: root + "/src/a.jpg", width: 40, height: 30)
            for extra in [["--jobs", "4611686018427387904"], ["--jobs", "0"], ["--decode-timeout", "1e300"], ["--max-pixels", "-5"]] {
                let run = try await CLITests.run(["build", root + "/src", "--out", root + "/out"] + extra)
                #expect(run.status == 64, "\(extra): \(run.stderr)")
                // One error line (then ArgumentParser's usage hint), no backtrace.
                #expect(run.stderr.hasPrefix("thumbframe: error: ") && run.stderr.count < 400, "\(extra): \(run.stderr)")
                #expect(run.stderr.components(separatedBy: "error").count == 2, "\(extra): \(run.stderr)")
            }
            #expect(!FileManager.default.fileExists(atPath: root + "/out"))
            // merge on a mistyped OUT_DIR: one short line, no lock files made.
            try Fixtures.makeDirectory(root + "/typo")
            for shards in ["10000", "20000"] {
                let merge = try await CLITests.run(["merge", "--out", root + "/typo", "--shards", shards])
                #expect(merge.status == (shards == "10000" ? 66 : 64), "\(merge.stderr)")
                #expect(merge.stderr.count < 400, "\(merge.stderr.count) bytes: \(merge.stderr.prefix(200))")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/typo").isEmpty)
        }
    }
}
