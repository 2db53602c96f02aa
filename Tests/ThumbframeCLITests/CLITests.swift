import CThumbframeShim
import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

#if CommandLine
    import ArgumentParser
    @testable import thumbframe
#endif

/// The executable, run as a user runs it: one test per exit code.
@Suite("Command line")
struct CLITests {
    /// The built `thumbframe` next to the test bundle.
    /// The executable under test; THUMBFRAME_TEST_EXECUTABLE points the end-to-end tests at
    /// another build (an earlier release, to see a new test fail there).
    static let executable: String = {
        if let chosen = ProcessInfo.processInfo.environment["THUMBFRAME_TEST_EXECUTABLE"] { return chosen }
        let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [
            here.appendingPathComponent("thumbframe").path,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/thumbframe")
                .standardized.path,
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()

    typealias Run = Processes.Output

    static func run(executable: String = executable, _ arguments: [String]) async throws -> Run {
        try await Processes.run(executable, arguments)
    }

    static func makeLibrary(_ root: String, broken: Bool) throws -> String {
        let source = root + "/photos"
        let photos: [LibraryFile] = [.photo("a.jpg", width: 400, height: 300), .photo("2020/b.jpg", width: 300, height: 400)]
        try Fixtures.makeLibrary(source, photos + (broken ? [.bytes("2020/broken.jpg", Array("garbage".utf8))] : []))
        return source
    }

    // Parsed in-process: with the CommandLine trait only (the others run the built command).
    #if CommandLine
        @Test("parses build options in-process")
        func parsesBuildOptions() throws {
            let command = try #require(
                try Thumbframe.parseAsRoot([
                    "build", "src", "--out", "out", "--thumb", "g=64x64:cover:webp:q60", "--thumb", "p=512x512",
                    "--jobs", "3", "--max-pixels", "1000",
                ]) as? BuildCommand)
            let options = try command.options()
            #expect(options.source == "src" && options.output == "out")
            #expect(options.thumbnails.map(\.name) == ["g", "p"])
            #expect(options.thumbnails[0] == ThumbnailRecipe(name: "g", width: 64, height: 64, fit: .cover, format: .webp, quality: 60))
            #expect(options.jobs == 3 && options.maxPixels == 1000)
            let defaults = try #require(try Thumbframe.parseAsRoot(["build", "src", "--out", "out"]) as? BuildCommand)
            #expect(try defaults.options().thumbnails == ThumbnailRecipe.defaults)
            let sharded = try #require(try Thumbframe.parseAsRoot(["build", "src", "--out", "out", "--shard", "1/3"]) as? BuildCommand)
            #expect(try sharded.options().shard == Shard(index: 1, count: 3))
            #expect(throws: (any Error).self) { try Thumbframe.parseAsRoot(["build", "src", "--out", "o", "--shard", "3/3"]) }
            #expect(throws: (any Error).self) {
                try Thumbframe.parseAsRoot(["build", "src", "--out", "o", "--thumb", "g=1x1", "--thumb", "g=2x2"])
            }
            #expect(throws: (any Error).self) { try Thumbframe.parseAsRoot(["build", "src", "--out", "o", "--jobs", "0"]) }
        }
    #endif

    @Test("exit 0: everything built; stdout is the manifest path only")
    func exitSuccess() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.makeLibrary(root, broken: false)
            let run = try await Self.run(["build", source, "--out", root + "/out"])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == root + "/out/manifest.json\n")
            #expect(run.stderr.contains("2 items in 2 sections, 0 failed"))
            let inspect = try await Self.run(["inspect", root + "/out/manifest.json"])
            #expect(inspect.status == 0)
            #expect(inspect.stdout.contains("items         2 in 2 sections"))
            #expect(inspect.stdout.contains("formats       jpeg=2"))
            let json = try await Self.run(["inspect", "--json", root + "/out/manifest.json"])
            let summary = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(summary?["items"] as? Int == 2)
            let quiet = try await Self.run(["build", source, "--out", root + "/out", "--quiet"])
            #expect(quiet.status == 0 && quiet.stderr.isEmpty && quiet.stdout.isEmpty, "\(quiet.stdout)")
        }
    }

    @Test("exit 1: manifest written, failures listed")
    func exitWithFailures() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.makeLibrary(root, broken: true)
            let run = try await Self.run(["build", source, "--out", root + "/out"])
            #expect(run.status == 1)
            #expect(run.stderr.contains("2020/broken.jpg: probe: not a readable image"))
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count == 2 && manifest.failures.map(\.path) == ["2020/broken.jpg"])
            let inspect = try await Self.run(["inspect", root + "/out/manifest.json"])
            #expect(inspect.stdout.contains("2020/broken.jpg  [probe]"))
        }
    }

    @Test("exit 64: usage errors")
    func exitUsage() async throws {
        for arguments in [["build", "x"], ["build", "x", "--out", "y", "--thumb", "nonsense"], ["frobnicate"]] {
            let run = try await Self.run(arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(!run.stderr.isEmpty && run.stdout.isEmpty)
        }
    }

    @Test("exit 64: --out an s3:// address is refused, and no folder named 's3:' is made")
    func outURL() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.makeLibrary(root, broken: false)
            for out in ["s3://bucket/prefix", "gs://b", "https://example.org/site"] {
                let run = try await Processes.run(
                    "/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" build \"$3\" --out \"$4\"", "sh", root, Self.executable, source, out])
                #expect(run.status == 64 && run.stderr.contains("not a folder"), "\(out): \(run.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: root) == ["photos"])
            #expect(BuildOptions.urlScheme("s3://b/p") == "s3" && BuildOptions.urlScheme("photos/s3://x") == nil)
            #expect(BuildOptions.urlScheme("./out") == nil && BuildOptions.urlScheme("a b://c") == nil)
        }
    }

    @Test("exit 65: an input manifest that is not a valid manifest")
    func exitInvalidManifest() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let cases = ["{\"format\": \"thumbframe-manifest\", \"vers", "{\"format\":\"other\",\"version\":1}", "[]"]
            for (index, text) in cases.enumerated() {
                let path = "\(root)/m\(index).json"
                try Fixtures.write(Array(text.utf8), to: path)
                let run = try await Self.run(["inspect", path])
                #expect(run.status == 65, "\(text): \(run.stderr)")
                #expect(run.stderr.hasPrefix("thumbframe: error: \(path): "))
                #expect(run.stderr.split(separator: "\n").count == 1)
            }
        }
    }

    @Test("exit 66: missing input")
    func exitMissingInput() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let build = try await Self.run(["build", root + "/nowhere", "--out", root + "/out"])
            #expect(build.status == 66)
            #expect(build.stderr.contains("cannot read source directory \(root)/nowhere"))
            #expect(!FileManager.default.fileExists(atPath: root + "/out"))
            let inspect = try await Self.run(["inspect", root + "/missing.json"])
            #expect(inspect.status == 66)
        }
    }

    @Test("exit 73: output cannot be written")
    func exitCannotWrite() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.makeLibrary(root, broken: false)
            try Fixtures.write(Array("a file".utf8), to: root + "/occupied")
            let run = try await Self.run(["build", source, "--out", root + "/occupied/out"])
            #expect(run.status == 73)
            #expect(run.stderr.contains("cannot write \(root)/occupied/out"))
        }
    }
}

@Suite("Command line: lookup, show, layout")
struct QueryCLITests {
    @Test("lookup both ways, show by index and path, errors exit 64")
    func lookupAndShow() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: false)
            _ = try await CLITests.run(["build", source, "--out", root + "/out", "--zoom", "ladder"])
            let manifest = root + "/out/manifest.json"
            let forward = try await CLITests.run(["lookup", manifest, "--index", "1"])
            #expect(forward.status == 0)
            #expect(forward.stdout == "index 1 = section 1 item 0 (2020): 2020/b.jpg\n")
            let back = try await CLITests.run(["lookup", manifest, "--section", "1", "--item", "0", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(back.stdout.utf8)) as? [String: Any]
            #expect(object?["index"] as? Int == 1 && object?["path"] as? String == "2020/b.jpg")
            let outside = try await CLITests.run(["lookup", manifest, "--index", "2"])
            #expect(outside.status == 64 && outside.stderr.contains("index 2 is out of range 0..<2"))
            let half = try await CLITests.run(["lookup", manifest, "--section", "1"])
            #expect(half.status == 64)

            let show = try await CLITests.run(["show", manifest, "--path", "2020/b.jpg", "--viewport", "phone"])
            #expect(show.status == 0)
            #expect(show.stdout.contains("#1  2020/b.jpg  (section 1 2020, item 0)"))
            #expect(show.stdout.contains("layout      phone 390x844@3: frame (0, 162, 390, 520)"))
            #expect(!show.stdout.contains("desktop"))
            // The layout line ends with its ladder: each fit rendition and the zoom it is sharp to.
            let phone = try #require(ManifestFile.load(manifest).items.first { $0.path == "2020/b.jpg" }?.layouts["phone"])
            let ladder = try #require(phone.ladder).map { rung in
                "\(rung.name) ≤\(rung.native == rung.native.rounded() ? String(Int(rung.native)) : String(rung.native))"
            }
            #expect(show.stdout.contains(" ladder " + ladder.joined(separator: " ") + "\n"), "\(show.stdout)")
            let json = try await CLITests.run(["show", manifest, "--index", "0", "--json"])
            let item = try JSONDecoder().decode(Manifest.Item.self, from: Data(json.stdout.utf8))
            #expect(item.path == "a.jpg" && item.layouts.count == 4)
            #expect(try await CLITests.run(["show", manifest, "--path", "nope.jpg"]).status == 64)
            #expect(try await CLITests.run(["show", manifest, "--index", "0", "--viewport", "watch"]).status == 64)
        }
    }

    @Test("layout needs no files and matches the engine")
    func layout() async throws {
        let text = try await CLITests.run(["layout", "--size", "7000x1080", "--orientation", "6", "--viewport", "390x844@3"])
        #expect(text.status == 0)
        #expect(text.stdout.hasPrefix("jx3: 1080×7000 in 390x844@3: frame (0, 0, 390, 2527.7778)"))
        #expect(text.stdout.contains("maxOffset (0, 1683.7778) long"))
        let json = try await CLITests.run(["layout", "--size", "4000x3000", "--viewport", "844x390@3", "--preset", "jx4", "--json"])
        let layout = try JSONDecoder().decode(Layout.self, from: Data(json.stdout.utf8))
        #expect(
            layout
                == LayoutEngine.layout(
                    width: 4000, height: 3000, viewport: Viewport(name: "x", width: 844, height: 390, scale: 3), preset: .jx4))
        for bad in [
            ["layout", "--size", "0x10", "--viewport", "1x1@1"], ["layout", "--size", "10x10", "--viewport", "1x1"],
            ["layout", "--size", "10x10", "--viewport", "1x1@1", "--orientation", "9"],
            ["layout", "--size", "10x10", "--viewport", "1x1@1", "--preset", "nope"],
        ] {
            #expect(try await CLITests.run(bad).status == 64, "\(bad)")
        }
    }
}

@Suite("Command line: progress and log format")
struct ReportingCLITests {
    @Test("JSON lines on stderr for machines, errors included")
    func jsonLines() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: true)
            let run = try await CLITests.run(["build", source, "--out", root + "/out", "--log-format", "json", "--progress"])
            #expect(run.status == 1)
            let events = try run.stderr.split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(events.compactMap { $0["event"] as? String }.contains("failure"))
            let failure = try #require(events.first { $0["event"] as? String == "failure" })
            #expect(failure["path"] as? String == "2020/broken.jpg" && failure["stage"] as? String == "probe")
            let last = try #require(events.last { $0["event"] as? String == "progress" })
            #expect(last["done"] as? Int == 3 && last["total"] as? Int == 3)
            let summary = try #require(events.last)
            #expect(summary["event"] as? String == "summary" && summary["items"] as? Int == 2 && summary["failures"] as? Int == 1)

            let missing = try await CLITests.run(["build", root + "/nowhere", "--out", root + "/x", "--log-format", "json"])
            #expect(missing.status == 66)
            let error = try JSONSerialization.jsonObject(with: Data(missing.stderr.utf8)) as? [String: Any]
            #expect(error?["event"] as? String == "error" && error?["exitCode"] as? Int == 66)
        }
    }

    @Test("a progress line only on a terminal or when asked, never with --quiet")
    func progressLine() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: false)
            let piped = try await CLITests.run(["build", source, "--out", root + "/a"])
            #expect(!piped.stderr.contains("\r") && !piped.stderr.contains("files/s"))
            // Asked into a pipe (a log file): plain lines, no terminal escape codes.
            let asked = try await CLITests.run(["build", source, "--out", root + "/b", "--progress"])
            #expect(asked.stderr.contains("[2/2] ") && asked.stderr.contains("files/s, ETA"))
            #expect(!asked.stderr.contains("\u{1B}") && !asked.stderr.contains("\r"), "\(asked.stderr.debugDescription)")
            let quiet = try await CLITests.run(["build", source, "--out", root + "/c", "--progress", "--quiet"])
            #expect(quiet.stderr.isEmpty)
            // A real terminal, through script(1): progress without asking.
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
            let command = "\(CLITests.executable) build \(source) --out \(root)/d"
            let terminal = try await CLITests.run(executable: "/usr/bin/script", ["-qec", command, "/dev/null"])
            #expect(terminal.status == 0)
            #expect(terminal.stdout.contains("\r\u{1B}[K[2/2] ") && terminal.stdout.contains("files/s"))
        }
    }

    @Test("no subcommand is a usage error (64); sizes take K, M, G and a bad one names the form; -j's default is said once")
    func usageDetails() async throws {
        let bare = try await CLITests.run([])
        #expect(bare.status == 64 && bare.stderr.contains("no subcommand"), "\(bare.stderr)")
        #expect(bare.stderr.contains("Usage: thumbframe <subcommand>"), "\(bare.stderr)")
        #expect(try await CLITests.run(["--help"]).status == 0)
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: false)
            let sized = try await CLITests.run([
                "build", source, "--out", root + "/a", "--max-decode-bytes", "1G", "--max-file-bytes", "1.5M",
            ])
            #expect(sized.status == 0, "\(sized.stderr)")
            // A file over 1 KiB fails unread.
            let small = try await CLITests.run(["build", source, "--out", root + "/b", "--max-file-bytes", "1K"])
            #expect(small.status == 1 && small.stderr.contains("over --max-file-bytes 1024"), "\(small.stderr)")
            let bad = try await CLITests.run(["build", source, "--out", root + "/c", "--max-decode-bytes", "lots"])
            #expect(bad.status == 64 && bad.stderr.contains("K, M, G"), "\(bad.stderr)")
            // A mistake found before the parse is the subcommand's: its usage.
            let unknown = try await CLITests.run(["build", source, "--out", root + "/c", "--bogus"])
            #expect(unknown.status == 64 && unknown.stderr.contains("See 'thumbframe build --help'"), "\(unknown.stderr)")
            // OUT_DIR where its manifest is meant, and a path as a shell completes it: a hint each.
            let folder = try await CLITests.run(["inspect", root + "/a"])
            #expect(folder.status == 66 && folder.stderr.contains("give its manifest: \(root)/a/manifest.json"), "\(folder.stderr)")
            let item = try #require(try ManifestFile.load(root + "/a/manifest.json").items.first?.path)
            let dotted = try await CLITests.run(["show", root + "/a/manifest.json", "--path", "./" + item])
            #expect(dotted.status == 64 && dotted.stderr.contains("try '\(item)'"), "\(dotted.stderr)")
        }
        let help = try await CLITests.run(["build", "--help"])
        let jobs = help.stdout.components(separatedBy: "-j, --jobs").dropFirst().first?.components(separatedBy: "\n  -").first ?? ""
        #expect(jobs.components(separatedBy: "default").count == 2, "\(jobs)")
    }
}

@Suite("Command line: validate, diff, hostile manifests")
struct ManifestToolsCLITests {
    @Test("validate: 0 valid, 65 listing every problem; diff: 0 same, 1 different")
    func validateAndDiff() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: false)
            _ = try await CLITests.run(["build", source, "--out", root + "/out"])
            let manifest = root + "/out/manifest.json"
            let valid = try await CLITests.run(["validate", manifest])
            #expect(valid.status == 0 && valid.stdout == "valid\n")

            let same = try await CLITests.run(["diff", manifest, manifest])
            #expect(same.status == 0 && same.stdout.isEmpty)
            try Fixtures.writeImage(to: source + "/2020/c.jpg", width: 20, height: 20)
            _ = try await CLITests.run(["build", source, "--out", root + "/out2"])
            let different = try await CLITests.run(["diff", manifest, root + "/out2/manifest.json", "--json"])
            #expect(different.status == 1)
            let diff = try JSONSerialization.jsonObject(with: Data(different.stdout.utf8)) as? [String: Any]
            #expect(diff?["added"] as? [String] == ["2020/c.jpg"])

            // Remove a thumbnail and break the count: both problems listed, exit 65.
            let first = try #require(try ManifestFile.load(manifest).items.first?.thumbnails["grid"]?.path)
            let text = try String(contentsOfFile: manifest, encoding: .utf8)
                .replacingOccurrences(of: #""itemCount" : [0-9]+"#, with: "\"itemCount\" : 7", options: .regularExpression)
                .replacingOccurrences(of: #""longImages" : [0-9]+"#, with: "\"longImages\" : 9", options: .regularExpression)
            try text.write(toFile: manifest, atomically: true, encoding: .utf8)
            try FileManager.default.removeItem(atPath: root + "/out/" + first)
            let invalid = try await CLITests.run(["validate", manifest])
            #expect(invalid.status == 65)
            let lines = invalid.stdout.split(separator: "\n")
            #expect(lines.contains { $0.contains("itemCount is 7") }, "\(lines)")
            #expect(lines.contains { $0.contains("summary does not match") }, "\(lines)")
            #expect(lines.contains { $0.contains(first) && $0.hasSuffix("missing") })
            let json = try await CLITests.run(["validate", manifest, "--json"])
            let verdict = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(verdict?["valid"] as? Bool == false && (verdict?["problems"] as? [String])?.count == lines.count)
        }
    }

    @Test("truncated, foreign, mistyped, huge and 100 MB manifests: exit 65 with one line, quickly")
    func hostileManifests() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: false)
            _ = try await CLITests.run(["build", source, "--out", root + "/out"])
            let good = try String(contentsOfFile: root + "/out/manifest.json", encoding: .utf8)
            let nested = String(repeating: "[", count: 50_000_000) + String(repeating: "]", count: 50_000_000)
            let longString = "{\"format\":\"" + String(repeating: "x", count: 100_000_000) + "\",\"version\":1}"
            let cases: [(String, String)] = [
                ("truncated", String(good.prefix(good.count / 3))),
                ("foreign", "{\"format\":\"photos\",\"version\":1}"),
                ("version 4", good.replacingOccurrences(of: "\"version\" : 3\n}", with: "\"version\" : 4\n}")),
                (
                    "huge number",
                    good.replacingOccurrences(of: #""itemCount" : [0-9]+"#, with: "\"itemCount\" : 1e999", options: .regularExpression)
                ),
                (
                    "huge integer",
                    good.replacingOccurrences(
                        of: #""count" : [0-9]+"#, with: "\"count\" : 99999999999999999999999", options: .regularExpression)
                ),
                ("wrong type", good.replacingOccurrences(of: "\"scale\" : 3", with: "\"scale\" : \"no\"")),
                ("100 MB nested", nested),
                ("100 MB string", longString),
                ("empty", ""),
            ]
            for (name, text) in cases {
                #expect(text != good, "\(name) changes the manifest")
                let path = root + "/\(name.replacingOccurrences(of: " ", with: "-")).json"
                try text.write(toFile: path, atomically: false, encoding: .utf8)
                for command in ["inspect", "validate", "show"] {
                    let arguments = command == "show" ? [command, path, "--index", "0"] : [command, path]
                    let run = try await CLITests.run(arguments)
                    #expect(run.status == 65, "\(name) \(command): \(run.status) \(run.stderr.prefix(300))")
                    let output = command == "validate" ? run.stdout : run.stderr
                    #expect(output.split(separator: "\n").count == 1, "\(name) \(command): \(output.prefix(300))")
                }
            }
        }
    }
}

@Suite("Example manifest")
struct ExampleManifestTests {
    static let repository = Fixtures.packageRoot

    /// manifests/sample/ (manifest.json and its pages) is what `thumbframe build` writes for the library
    /// scripts/sample-library generates (built by the executable, as a user would).
    /// RECORD_SNAPSHOTS=1 rewrites it and fails the run, so a regeneration is never silent.
    @Test(
        "the example manifest is current",
        .enabled(if: Processes.tool("vips") != nil && Processes.tool("exiftool") != nil, "needs vips and exiftool"))
    func exampleIsCurrent() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let generate = try await CLITests.run(executable: Self.repository + "/scripts/sample-library", [root + "/sample"])
            #expect(generate.status == 0, "\(generate.stderr)")
            let build = try await CLITests.run(["build", root + "/sample", "--out", root + "/out"])
            #expect(build.status == 1, "the sample holds one broken file: \(build.stderr)")
            // Valid: among the rest, every item has a layout for every viewport, as the engine computes it.
            let validate = try await CLITests.run(["validate", root + "/out/manifest.json"])
            #expect(validate.status == 0 && validate.stdout == "valid\n", "\(validate.stdout)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count == 7 && manifest.settings.viewports.count == 4)
            #expect(manifest.items.allSatisfy { $0.layouts.count == 4 })
            // The top document and every page it names, as files under manifests/sample/.
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            let files = ["manifest.json"] + document.sections.flatMap { $0.pages ?? [] }.flatMap { [$0.path, $0.grid ?? ""] }
            let example = Self.repository + "/manifests/sample"
            if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil {
                try? FileManager.default.removeItem(atPath: example)
                for file in files {
                    try Fixtures.write(Array(try Data(contentsOf: URL(fileURLWithPath: root + "/out/" + file))), to: example + "/" + file)
                }
                Issue.record("recorded \(example); run again without RECORD_SNAPSHOTS")
                return
            }
            // Compared as what it says, not as bytes: another libvips renders other thumbnail
            // bytes (so other hashes and page addresses) and slightly other placeholders, and
            // words its errors its own way; everything else must be the same.
            let committed = try ManifestFile.load(example + "/manifest.json")
            #expect(
                Self.pixelFree(committed) == Self.pixelFree(manifest),
                "manifests/sample says something else than this build; rerun with RECORD_SNAPSHOTS=1")
            for (old, new) in zip(committed.items, manifest.items) {
                let (before, now) = (try #require(old.placeholder), try #require(new.placeholder))
                #expect(Self.placeholdersAgree(before, now), "\(new.path): \(before) vs \(now)")
            }
            #expect(committed.failures.map { [$0.path, $0.stage] } == manifest.failures.map { [$0.path, $0.stage] })
            if committed.generator.libvips == manifest.generator.libvips {
                // The same libvips: the same bytes, page files included.
                let committedFiles = (FileManager.default.enumerator(atPath: example)?.allObjects as? [String] ?? []).filter {
                    $0.hasSuffix(".json")
                }
                #expect(committedFiles.sorted() == files.sorted())
                #expect(committed == manifest, "manifests/sample is stale; rerun with RECORD_SNAPSHOTS=1")
            }
        }
    }

    /// A manifest without what depends on libvips' pixels and wording: thumbnail bytes and
    /// hashes, placeholders, page addresses, failure reasons and the libvips version.
    static func pixelFree(_ manifest: Manifest) -> Manifest {
        var manifest = manifest
        manifest.generator.libvips = ""
        for index in manifest.sections.indices { manifest.sections[index].pages = nil }
        for index in manifest.items.indices {
            for name in manifest.items[index].thumbnails.keys {
                manifest.items[index].thumbnails[name]?.bytes = nil
                manifest.items[index].thumbnails[name]?.sha256 = nil
            }
            manifest.items[index].placeholder = Manifest.Placeholder(thumbhash: "", color: "")
        }
        for index in manifest.failures.indices { manifest.failures[index].reason = "" }
        return manifest
    }

    /// Placeholders of the same picture: colours within 4 levels a channel, ThumbHashes that
    /// decode to the same size within 16 levels.
    static func placeholdersAgree(_ a: Manifest.Placeholder, _ b: Manifest.Placeholder) -> Bool {
        func channels(_ hex: String) -> [Int] {
            stride(from: 1, to: 7, by: 2).compactMap { Int(hex.dropFirst($0).prefix(2), radix: 16) }
        }
        guard zip(channels(a.color), channels(b.color)).allSatisfy({ abs($0 - $1) <= 4 }),
            let one = Data(base64Encoded: a.thumbhash).flatMap({ ThumbHash.decode(Array($0)) }),
            let two = Data(base64Encoded: b.thumbhash).flatMap({ ThumbHash.decode(Array($0)) }),
            one.width == two.width, one.height == two.height
        else { return false }
        return zip(one.rgba, two.rgba).allSatisfy { abs(Int($0) - Int($1)) <= 16 }
    }
}
