import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Unattended runs never harm data: what thumbframe will not write, follow or delete, and the
/// single files that must not abort or wedge a run. Each test builds the situation first.
@Suite("Unattended safety", .serialized)
struct SafetyTests {
    static func build(_ source: String, _ out: String, _ extra: [String] = []) async throws -> Processes.Output {
        try await CLITests.run(["build", source, "--out", out] + extra)
    }

    static func read(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// Runs `body` with `count` images in `root/src` already built into `root/out`.
    static func withBuiltLibrary(
        _ count: Int, _ body: (_ root: String, _ source: String, _ out: String) async throws -> Void
    ) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, Fixtures.photos(count, width: 40, height: 30))
            await #expect(try build(source, out).status == 0)
            try await body(root, source, out)
        }
    }

    /// Every file under `directory` (relative path → inode, size and modification time).
    static func snapshot(_ directory: String) -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let path = enumerator?.nextObject() as? String {
            if let stat = FileStat.lstat(directory + "/" + path), !stat.isDirectory {
                files[path] = "\(stat.identity.inode)-\(stat.size)-\(stat.modifiedSeconds).\(stat.modifiedNanoseconds)"
            }
        }
        return files
    }

    // MARK: 1. The pruner removes only what thumbframe wrote

    @Test("pruning leaves files thumbframe did not write and says so once")
    func prunerLeavesForeignFiles() async throws {
        try await Self.withBuiltLibrary(3) { root, source, out in
            let manifest = try ManifestFile.load(out + "/manifest.json")
            let fanout = try #require(manifest.items.first?.thumbnails["grid"]?.path.split(separator: "/")[1])
            let foreign = [
                "thumbs/2019-holiday/beach.jpg", "thumbs/\(fanout)/notes.txt",
                "thumbs/\(fanout)/\(fanout)\(String(repeating: "0", count: 30)).jpg",  // thumbframe's shape, not its file
            ]
            for path in foreign { try Fixtures.write(Array("keep me".utf8), to: out + "/" + path) }
            let gone = try #require(manifest.items.last?.thumbnails.values.map(\.path))
            try FileManager.default.removeItem(atPath: source + "/album/IMG_2.jpg")

            let run = try await Self.build(source, out)
            #expect(run.status == 0, "\(run.stderr)")
            for path in foreign { #expect(try Self.read(out + "/" + path) == Data("keep me".utf8), "\(path)") }
            for path in gone { #expect(!FileManager.default.fileExists(atPath: out + "/" + path), "\(path) pruned") }
            #expect(run.stderr.components(separatedBy: "did not write").count == 2, "said once: \(run.stderr)")
            #expect(run.stderr.contains("left 3 files under thumbs/ or pages/"))
        }
    }

    // MARK: 2. Overlapping directories

    @Test("exit 64: OUT_DIR equal to SOURCE_DIR, or SOURCE_DIR inside OUT_DIR/thumbs; nothing written")
    func overlapping() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            try Fixtures.makeDirectory(root + "/out/thumbs/photos")
            try Fixtures.writeImage(to: root + "/out/thumbs/photos/a.jpg", width: 30, height: 20)
            try FileManager.default.createSymbolicLink(atPath: root + "/alias", withDestinationPath: "src")
            let before = Self.snapshot(root)
            for (from, to) in [
                (source, source), (source, root + "/alias"), (root + "/out/thumbs/photos", root + "/out"),
                (root + "/out/thumbs", root + "/out"),
            ] {
                let run = try await Self.build(from, to)
                #expect(run.status == 64, "\(from) → \(to): \(run.stderr)")
                #expect(run.stderr.contains("SOURCE_DIR"), "\(run.stderr)")
            }
            #expect(Self.snapshot(root) == before)
            // OUT_DIR inside SOURCE_DIR stays fine: the walk never enters it.
            await #expect(try Self.build(source, source + "/site").status == 0)
        }
    }

    // MARK: 3. Links under OUT_DIR

    @Test("exit 73 for a thumbs/ or lock that is a link (targets untouched); --out through a link works")
    func linksUnderOutput() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            try Fixtures.write(Array("precious".utf8), to: root + "/elsewhere/ab/precious.jpg")
            try Fixtures.write(Array("passwords".utf8), to: root + "/secret.txt")

            try Fixtures.makeDirectory(root + "/out1")
            try FileManager.default.createSymbolicLink(atPath: root + "/out1/thumbs", withDestinationPath: root + "/elsewhere")
            let throughThumbs = try await Self.build(source, root + "/out1")
            #expect(throughThumbs.status == 73 && throughThumbs.stderr.contains("symbolic link"), "\(throughThumbs.stderr)")

            try Fixtures.makeDirectory(root + "/out2")
            try FileManager.default.createSymbolicLink(atPath: root + "/out2/.thumbframe.lock", withDestinationPath: root + "/secret.txt")
            await #expect(try Self.build(source, root + "/out2").status == 73)

            try Fixtures.makeDirectory(root + "/out3")
            #expect(link(root + "/secret.txt", root + "/out3/.thumbframe.lock") == 0)
            await #expect(try Self.build(source, root + "/out3").status == 73)

            #expect(try Self.read(root + "/secret.txt") == Data("passwords".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/elsewhere").sorted() == ["ab"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/elsewhere/ab") == ["precious.jpg"])

            try Fixtures.makeDirectory(root + "/real-out")
            try FileManager.default.createSymbolicLink(atPath: root + "/linked-out", withDestinationPath: "real-out")
            await #expect(try Self.build(source, root + "/linked-out").status == 0)
            await #expect(try Self.build(source, root + "/linked-out").status == 0)
            #expect(FileManager.default.fileExists(atPath: root + "/real-out/manifest.json"))
        }
    }

    // MARK: 4. A manifest.json that is not thumbframe's

    @Test("exit 73 naming a manifest.json that is not thumbframe's; it stays as it was, and nothing is left beside it")
    func foreignManifest() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            let pwa = Data(#"{"name":"My App","start_url":"/","icons":[]}"#.utf8)
            for (name, bytes) in [
                ("pwa", pwa), ("garbage", Data([0x00, 0xFF, 0x10])), ("other", Data(#"{"format":"other","version":1}"#.utf8)),
            ] {
                let out = root + "/" + name
                try Fixtures.write(Array(bytes), to: out + "/manifest.json")
                for extra in [[], ["--check"]] {
                    let run = try await Self.build(source, out, extra)
                    #expect(run.status == 73, "\(name) \(extra): \(run.stderr)")
                    #expect(run.stderr.contains(out + "/manifest.json") && run.stderr.contains("not a thumbframe manifest"))
                }
                #expect(try Self.read(out + "/manifest.json") == bytes)
                #expect(!FileManager.default.fileExists(atPath: out + "/thumbs/"), "no thumbnail written")
                // Nothing written at all: the lock file it made to look is gone again.
                #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["manifest.json"], "\(name)")
                // Not a thumbframe manifest: kept out of the suite's schema check.
                try FileManager.default.removeItem(atPath: out + "/manifest.json")
            }
        }
    }

    // MARK: 5. A source that vanished

    @Test("exit 69 when a build would drop most of the previous items; --allow-shrink accepts it")
    func shrinkGuard() async throws {
        try await Self.withBuiltLibrary(20) { root, source, out in
            let before = Self.snapshot(out)
            let manifest = try Self.read(out + "/manifest.json")
            // The NAS is unmounted: an empty mount point.
            try FileManager.default.removeItem(atPath: source + "/album")
            let refused = try await Self.build(source, out)
            #expect(refused.status == 69, "\(refused.stderr)")
            #expect(refused.stderr.contains("drop 20 of the previous manifest's 20 items"))
            #expect(try Self.read(out + "/manifest.json") == manifest)
            #expect(Self.snapshot(out).filter { !$0.key.hasPrefix(".thumbframe") } == before.filter { !$0.key.hasPrefix(".thumbframe") })
            // 9 of 20 back is still too little (11 dropped); 11 back is fine (fewer than 10 dropped).
            try Fixtures.makeLibrary(source, Fixtures.photos(9, width: 40, height: 30))
            await #expect(try Self.build(source, out).status == 69)
            try Fixtures.makeLibrary(source, Fixtures.photos(11, width: 40, height: 30))
            await #expect(try Self.build(source, out).status == 0)
            try FileManager.default.removeItem(atPath: source + "/album")
            let allowed = try await Self.build(source, out, ["--allow-shrink"])
            #expect(allowed.status == 0)
            #expect(try ManifestFile.load(out + "/manifest.json").items.isEmpty)
        }
    }

    // MARK: 6. Paths swapped for links

    @Test("a directory swapped for a link after the walk is never read through")
    func swappedDirectory() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            try Fixtures.makeDirectory(root + "/outside")
            try Fixtures.writeImage(to: root + "/outside/IMG_0.jpg", width: 99, height: 77)
            let sourceRoot = try SourceRoot.open(source)
            let walk = try SourceWalker(root: sourceRoot, excluded: []).walk()
            try FileManager.default.moveItem(atPath: source + "/album", toPath: root + "/moved")
            try FileManager.default.createSymbolicLink(atPath: source + "/album", withDestinationPath: root + "/outside")
            try Fixtures.makeDirectory(root + "/out")
            let context = ProcessingContext(
                recipes: ThumbnailRecipe.defaults, source: sourceRoot, output: try OutputDirectory(root + "/out", create: true),
                limits: ResourceLimits())
            let file = try #require(walk.files.first { $0.relativePath == "album/IMG_0.jpg" })
            let outcome = ItemProcessor.process(file, context: context)
            guard case .failed(let failure) = outcome else {
                Issue.record("read through a link: \(outcome)")
                return
            }
            #expect(failure.stage == "read" && failure.reason.contains("symbolic link"), "\(failure)")
        }
    }

    @Test("while the walk runs, swapping a directory for a link never indexes a file from outside")
    func swapRace() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source + "/a/b")
            for index in 0..<20 { try Fixtures.writeImage(to: "\(source)/a/b/\(index).jpg", width: 20, height: 20 + index) }
            try Fixtures.makeDirectory(root + "/outside/b")
            for index in 0..<20 { try Fixtures.writeImage(to: "\(root)/outside/b/\(index).jpg", width: 77, height: 20 + index) }
            let stop = ManagedAtomicFlag()
            let swapper = Thread {
                // Swap `a` for a link to `outside` and back, as fast as possible.
                while !stop.isSet {
                    rename(source + "/a", root + "/a-real")
                    symlink(root + "/outside", source + "/a")
                    unlink(source + "/a")
                    rename(root + "/a-real", source + "/a")
                }
            }
            swapper.start()
            defer { stop.set() }
            for round in 0..<40 {
                var options = BuildOptions(source: source, output: root + "/out-\(round % 2)", jobs: 2)
                options.allowShrink = true
                let (_, manifest) = try await Fixtures.build(options)
                #expect(manifest.items.allSatisfy { $0.image.width == 20 }, "round \(round): a file from outside was indexed")
            }
        }
    }

    // MARK: 7, 11. Size, memory and scans checked before decoding

    @Test("a 100 GB sparse file and a file that changes while read are read failures; the rest is built")
    func hugeAndGrowingFiles() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            let fd = open(source + "/album/big.jpg", O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0 && ftruncate(fd, 100 << 30) == 0)
            close(fd)
            let run = try await Self.build(source, out, ["--log-format", "json"])
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.count == 2)
            #expect(manifest.failures.map(\.reason) == ["file is 107374182400 bytes, over --max-file-bytes 536870912"])
            // A file whose size is not what fstat said (/proc reports 0) is never read past it.
            let status = open("/proc/self/status", O_RDONLY)
            #expect(throws: FileSystemError.changedWhileReading) { try OpenFile(fd: status).read(limit: 1 << 20) }
        }
    }

    @Test("decoder memory is budgeted from the header: a large GIF fails, a small one is built")
    func decoderBudget() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeDirectory(source)
            for (name, side) in [("small", 200), ("large", 1200)] {
                try Fixtures.writeImage(to: source + "/\(name).png", width: side, height: side, format: TF_FORMAT_PNG)
                try Fixtures.reencode(source + "/\(name).png", to: source + "/\(name).gif", options: "")
                try FileManager.default.removeItem(atPath: source + "/\(name).png")
            }
            let run = try await Self.build(source, out, ["--max-decode-bytes", "\(2 << 20)"])
            #expect(run.status == 1)
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.map(\.path) == ["small.gif"])
            #expect(
                manifest.failures.map(\.reason) == [
                    "decoding 1200×1200 pixels would hold about 21 MiB (GIF canvas and frame buffers), over --max-decode-bytes 2 MiB"
                ])
        }
    }

    @Test("a progressive JPEG with thousands of scans fails from its markers")
    func scanBomb() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: root + "/plain.jpg", width: 64, height: 48)
            try Fixtures.reencode(root + "/plain.jpg", to: root + "/progressive.jpg", options: "[interlace]")
            let bytes = Array(try Self.read(root + "/progressive.jpg"))
            // Repeat the last scan 10 000 times before EOI.
            let lastScan = try #require((0..<bytes.count - 1).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA })
            let scan = bytes[lastScan..<(bytes.count - 2)]
            var bomb = Array(bytes[..<(bytes.count - 2)])
            for _ in 0..<10_000 { bomb += scan }
            try Fixtures.write(bomb + [0xFF, 0xD9], to: source + "/bomb.jpg")
            try FileManager.default.copyItem(atPath: root + "/progressive.jpg", toPath: source + "/fine.jpg")
            let run = try await Self.build(source, out)
            #expect(run.status == 1)
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.map(\.path) == ["fine.jpg"])
            #expect(
                manifest.failures.map { "\($0.stage): \($0.reason)" } == [
                    "probe: progressive JPEG with more than 500 scans (each is decoded over the whole image)"
                ])
        }
    }

    // MARK: 8. Deadlines and cancellation reach decodes in flight

    @Test("a decode past its deadline, or cancelled while in flight, is killed inside libvips")
    func decodeGuard() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/src")
            try Fixtures.writeImage(to: root + "/src/wide.png", width: 6000, height: 3000, format: TF_FORMAT_PNG)
            try Fixtures.makeDirectory(root + "/out")
            let source = try SourceRoot.open(root + "/src")
            let file = try #require(try SourceWalker(root: source, excluded: []).walk().files.first)
            var limits = ResourceLimits()
            limits.decodeTimeout = 1e-6
            let output = try OutputDirectory(root + "/out", create: true)
            let late = ItemProcessor.process(
                file,
                context: ProcessingContext(
                    recipes: ThumbnailRecipe.defaults, source: source, output: output, limits: limits))
            #expect(
                late
                    == .failed(
                        .init(
                            path: "wide.png", stage: "decode", reason: "decoding took longer than 1e-06 s (--decode-timeout)",
                            cause: "time", bytes: file.stat.size, modified: file.stat.modifiedRFC3339)))
            let flag = CancellationFlag()
            flag.cancel(signal: SIGTERM)
            let stopped = ItemProcessor.process(
                file,
                context: ProcessingContext(
                    recipes: ThumbnailRecipe.defaults, source: source, output: output, limits: ResourceLimits(), cancellation: flag))
            guard case .failed(let failure) = stopped else {
                Issue.record("not stopped: \(stopped)")
                return
            }
            #expect(failure.reason == "stopped by a signal")
            #expect(IncrementalThumbnails.list(root + "/out").isEmpty, "no thumbnail written")
        }
    }

    // MARK: 9. Diagnostics that cannot be written

    @Test("closed, full or broken stderr and stdout never stop the build")
    func deadOutputs() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Fixtures.photos(2, width: 40, height: 30))
            try Fixtures.write(Array("broken".utf8), to: source + "/album/broken.jpg")  // something to report
            let shells = [
                "exec 2>&- 1>&-; \"$0\" build \"$1\" --out \"$2\"/closed",
                "\"$0\" build \"$1\" --out \"$2\"/full 2>/dev/full 1>/dev/full",
                "\"$0\" build \"$1\" --out \"$2\"/pipe 2>&1 | true",
                "exec 2>&-; \"$0\" build \"$1\" --out \"$2\"/closed-err --log-format json",
            ]
            for (index, script) in shells.enumerated() {
                let run = try await Processes.run(
                    "/bin/sh", ["-c", script + "; echo $? > \"$2\"/status-\(index)", CLITests.executable, source, root])
                let status = try String(decoding: Self.read(root + "/status-\(index)"), as: UTF8.self)
                // With a pipe, $? is `true`'s; the manifest says the build finished.
                if index != 2 { #expect(status == "1\n", "\(script): \(status) \(run.stderr)") }
                let name = ["closed", "full", "pipe", "closed-err"][index]
                let manifest = try ManifestFile.load(root + "/\(name)/manifest.json")
                #expect(manifest.items.count == 2 && manifest.failures.count == 1, "\(script)")
            }
            // Nothing meant for stderr (the failure line, the summary) lands in a file the build
            // opened. (A property, not a reproduction: here the descriptor that would take fd 2 is
            // opened read-only by the runtime, so reopening closed ones on /dev/null is defence.)
            let enumerator = FileManager.default.enumerator(atPath: root + "/closed")
            var looked = 0
            while let file = enumerator?.nextObject() as? String {
                guard let bytes = FileManager.default.contents(atPath: root + "/closed/" + file) else { continue }
                looked += 1
                #expect(
                    bytes.range(of: Data("broken.jpg: probe".utf8)) == nil && bytes.range(of: Data("items in".utf8)) == nil,
                    "\(file) holds log lines")
            }
            #expect(looked >= 6, "lock, state index, ledger, manifest, page, thumbnails")
            #expect(try String(decoding: Self.read(root + "/closed/.thumbframe.lock"), as: UTF8.self).hasPrefix("pid "))
        }
    }

    // MARK: 10. Temporary names

    @Test("temporary names are random: as PID 1 on every run, leftovers never collide; ours are cleaned, others kept")
    func temporaryNames() async throws {
        let unshare = try await Processes.run("/usr/bin/unshare", ["--pid", "--fork", "/bin/true"])
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, Fixtures.photos(3, width: 40, height: 30))
            try Fixtures.makeDirectory(out + "/thumbs/ab")
            // What a crashed PID-1 run of the old naming left: the next run's first names.
            for counter in 1...50 { try Fixtures.write([1], to: "\(out)/.tf-tmp-1-\(counter)") }
            try Fixtures.write([1], to: out + "/.tf-tmp-0123456789abcdef")
            try Fixtures.write([1], to: out + "/thumbs/ab/.tf-tmp-fedcba9876543210")
            let run =
                await unshare.status == 0
                ? try await Processes.run("/usr/bin/unshare", ["--pid", "--fork", CLITests.executable, "build", source, "--out", out])
                : try Self.build(source, out)
            if unshare.status != 0 { print("temporaryNames: unshare unavailable here, built as an ordinary process") }
            #expect(run.status == 0, "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/.tf-tmp-0123456789abcdef"), "a leftover of ours is removed")
            #expect(!FileManager.default.fileExists(atPath: out + "/thumbs/ab/.tf-tmp-fedcba9876543210"))
            #expect(FileManager.default.fileExists(atPath: out + "/.tf-tmp-1-7"), "a name of another shape is not ours")
            var second = Set<String>()
            for _ in 0..<1000 { second.insert(TemporaryName.make()) }
            #expect(second.count == 1000 && second.allSatisfy { TemporaryName.matches(Array($0.utf8)) })
        }
    }

    // MARK: 12, 13. Every name is an item, with a lossless unique path

    @Test("a path longer than PATH_MAX is an item")
    func deepPath() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeDirectory(source)
            try Fixtures.writeImage(to: root + "/deep.jpg", width: 30, height: 20)
            var fd = open(source, O_RDONLY | O_DIRECTORY)
            let component = String(repeating: "d", count: 200)
            for _ in 0..<25 {
                #expect(mkdirat(fd, component, 0o755) == 0)
                let next = openat(fd, component, O_RDONLY | O_DIRECTORY)
                close(fd)
                fd = next
            }
            let topFD = open(root, O_RDONLY | O_DIRECTORY)
            #expect(renameat(topFD, "deep.jpg", fd, "deep.jpg") == 0)
            close(topFD)
            close(fd)
            let report = try await Builder(options: BuildOptions(source: source, output: root + "/out")).run()
            #expect(report.items == 1 && report.failures.isEmpty, "\(report.failures)")
            let item = try #require(try ManifestFile.load(report.manifestPath).items.first)
            #expect(item.path.utf8.count > Int(PATH_MAX) && item.path.hasSuffix("/deep.jpg"))
            // FileManager cannot remove a tree deeper than PATH_MAX; rm(1) walks it with openat.
            _ = try await Processes.run("/bin/rm", ["-rf", source])
        }
    }

    @Test("NFC and NFD names are two items; reruns reuse both, --check and validate agree")
    func unicodeNormalization() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeDirectory(source)
            let nfc = "\u{E9}t\u{E9}.jpg"
            let nfd = "e\u{301}te\u{301}.jpg"
            #expect(nfc == nfd && Array(nfc.utf8) != Array(nfd.utf8), "Swift equates them; the disk does not")
            try Fixtures.writeImage(to: root + "/a.jpg", width: 30, height: 20)
            try Fixtures.writeImage(to: root + "/b.jpg", width: 20, height: 30)
            #expect(rename(root + "/a.jpg", source + "/" + nfc) == 0)
            #expect(rename(root + "/b.jpg", source + "/" + nfd) == 0)
            await #expect(try Self.build(source, out).status == 0)
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(Set(manifest.items.map { $0.pathBytes }) == [Array(nfc.utf8), Array(nfd.utf8)])
            let rerun = try await Self.build(source, out)
            #expect(rerun.stderr.contains("2 reused") && rerun.stderr.contains("manifest unchanged"), "\(rerun.stderr)")
            await #expect(try Self.build(source, out, ["--check"]).status == 0)
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).status == 0)
        }
    }

    // MARK: 14. Thumbnails changed behind thumbframe's back

    @Test("a truncated or replaced thumbnail is noticed by build, --verify, --check and validate")
    func tamperedThumbnails() async throws {
        try await Self.withBuiltLibrary(2) { root, source, out in
            let manifest = try ManifestFile.load(out + "/manifest.json")
            let grid = try #require(manifest.items.first?.thumbnails["grid"])
            let target = out + "/" + grid.path
            let original = try Self.read(target)

            // Truncated: the size says so, without --verify.
            try original.prefix(original.count / 2).write(to: URL(fileURLWithPath: target))
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).stdout.contains("truncated or replaced"))
            let check = try await Self.build(source, out, ["--check"])
            #expect(check.status == 1 && check.stdout.contains("thumbnails missing or changed for album/IMG_0.jpg"))
            await #expect(try Self.build(source, out).status == 0)
            #expect(try Self.read(target) == original)

            // Replaced by other bytes of the same size: the hash says so.
            var replaced = Array(original)
            replaced[replaced.count / 2] ^= 0xFF
            try Data(replaced).write(to: URL(fileURLWithPath: target))
            let invalid = try await CLITests.run(["validate", out + "/manifest.json"])
            #expect(invalid.status == 65 && invalid.stdout.contains("recorded sha256"))
            await #expect(try Self.build(source, out, ["--check", "--verify"]).stdout.contains("thumbnails changed for album/IMG_0.jpg"))
            await #expect(try Self.build(source, out, ["--verify"]).status == 0)
            #expect(try Self.read(target) == original)
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).status == 0)
        }
    }

    // MARK: 15. Orphans of a run killed after its manifest

    @Test("thumbnails left by a run killed after its manifest rename are removed by the next, no-op run")
    func orphansAfterKill() async throws {
        try await Self.withBuiltLibrary(3) { root, source, out in
            let old = try ManifestFile.load(out + "/manifest.json")
            let oldPaths = try #require(old.items.last?.thumbnails.values.map(\.path))
            let saved = try oldPaths.map { try Self.read(out + "/" + $0) }
            try Fixtures.writeImage(to: source + "/album/IMG_2.jpg", width: 90, height: 60)
            await #expect(try Self.build(source, out).status == 0)
            // As if that run had died right after the rename: old thumbnails still there, the
            // journal unsettled.
            for (path, bytes) in zip(oldPaths, saved) { try Fixtures.write(Array(bytes), to: out + "/" + path) }
            try Fixtures.write(Array(oldPaths.map { $0 + "\n" }.joined().utf8), to: out + "/.thumbframe-journal")
            let run = try await Self.build(source, out)
            #expect(
                run.status == 0 && run.stderr.contains("manifest unchanged")
                    && run.stderr.contains("\(ThumbnailRecipe.defaults.count) pruned"), "\(run.stderr)")
            for path in oldPaths { #expect(!FileManager.default.fileExists(atPath: out + "/" + path)) }
            #expect(!FileManager.default.fileExists(atPath: out + "/.thumbframe-journal"))
        }
    }

    // MARK: 16. Control characters in names

    @Test("ESC and newlines in file names are escaped on the terminal and in --check output")
    func controlCharacters() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, Fixtures.photos(1, width: 40, height: 30))
            try Fixtures.write(Array("broken".utf8), to: source + "/album/evil\u{1B}[2J\nrm -rf.jpg")
            let run = try await Self.build(source, out)
            #expect(run.status == 1)
            #expect(!run.stderr.contains("\u{1B}") && run.stderr.contains("evil\\x1B[2J\\nrm -rf.jpg"), "\(run.stderr)")
            try Fixtures.writeImage(to: source + "/album/new\u{1B}]0;title\u{7}.jpg", width: 20, height: 20)
            let check = try await Self.build(source, out, ["--check"])
            #expect(check.stdout == "added album/new\\x1B]0;title\\x07.jpg\n")
            let show = try await CLITests.run(["inspect", out + "/manifest.json"])
            #expect(!show.stdout.contains("\u{1B}"))
        }
    }

    // MARK: Also

    @Test("SOURCE_DIR that is a file says 'not a directory' (exit 66)")
    func sourceIsAFile() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.write([1], to: root + "/file.jpg")
            let run = try await Self.build(root + "/file.jpg", root + "/out")
            #expect(run.status == 66 && run.stderr.contains("not a directory"), "\(run.stderr)")
            let missing = try await Self.build(root + "/nowhere", root + "/out")
            #expect(missing.status == 66 && missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
        }
    }
}

/// A flag one thread sets and another polls.
final class ManagedAtomicFlag: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
