import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

#if CommandLine
    import ArgumentParser
    @testable import thumbframe
#endif

/// The command line's conventions: short flags, --version, errors that say why (also as JSON),
/// --config, --exclude and --fail-on.
@Suite("Command-line conventions")
struct ConventionTests {
    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func paths(_ manifest: String) throws -> [String] {
        try ManifestFile.open(manifest).loadAll().items.map(\.path)
    }

    // Parsed in-process: with the CommandLine trait only (the others run the built command).
    #if CommandLine
        @Test("--version names libvips; -q and -j are --quiet and --jobs")
        func versionAndShortFlags() async throws {
            let version = try await CLITests.run(["--version"])
            #expect(
                version.status == 0 && version.stdout.contains(ThumbframeVersion.current) && version.stdout.contains("libvips 8."),
                "\(version.stdout)")
            let command = try #require(try Thumbframe.parseAsRoot(["build", "src", "--out", "o", "-j", "3", "-q"]) as? BuildCommand)
            #expect(try command.options().jobs == 3 && command.quiet)
            #expect(try (Thumbframe.parseAsRoot(["merge", "--out", "o", "--shards", "2", "-q"]) as? MergeCommand)?.quiet == true)
        }
    #endif

    @Test("a value that does not parse says why, in the style of every error; with --log-format json a usage error is one JSON line")
    func usageErrors() async throws {
        let text = try await CLITests.run(["build", "src", "--out", "o", "--thumb", "g=256x256:png"])
        #expect(text.status == 64 && text.stderr.contains("unknown part 'png'"), "\(text.stderr)")
        // One error style: a usage error begins as every other error does.
        #expect(text.stderr.hasPrefix("thumbframe: error: The value 'g=256x256:png' is invalid"), "\(text.stderr)")
        let missing = try await CLITests.run(["build", "/nonexistent/thumbframe-source", "--out", "o"])
        #expect(missing.status == 66 && missing.stderr.hasPrefix("thumbframe: error: "), "\(missing.stderr)")
        let viewport = try await CLITests.run(["build", "src", "--out", "o", "--viewport", "phone=390x844"])
        #expect(viewport.status == 64 && viewport.stderr.contains("phone=390x844"), "\(viewport.stderr)")
        let json = try await CLITests.run(["build", "src", "--out", "o", "--thumb", "g=256x256:png", "--log-format", "json"])
        let events = Self.lines(json.stderr)
        #expect(json.status == 64 && events.count == 1 && json.stderr.split(separator: "\n").count == 1, "\(json.stderr)")
        #expect(events.first?["event"] as? String == "error" && events.first?["level"] as? String == "error")
        #expect((events.first?["message"] as? String)?.contains("unknown part 'png'") == true)
        #expect(events.first?["exitCode"] as? Int == 64)
        let unknown = try await CLITests.run(["build", "src", "--out", "o", "--bogus", "--log-format=json"])
        #expect(unknown.status == 64 && (Self.lines(unknown.stderr).first?["message"] as? String)?.contains("--bogus") == true)
        let forced = try await CLITests.run(["build", "src", "--out", "o", "--check", "--force"])
        #expect(forced.status == 64 && forced.stderr.contains("--force"), "\(forced.stderr)")
    }

    @Test("JSON log lines carry the time and a level")
    func jsonLines() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: true)
            let run = try await CLITests.run([
                "build", source, "--out", root + "/out", "--log-format", "json", "--progress", "--jobs", "1",
            ])
            #expect(run.status == 1)
            let events = Self.lines(run.stderr)
            #expect(!events.isEmpty && events.count == run.stderr.split(separator: "\n").count, "\(run.stderr)")
            let levels = Dictionary(events.map { ($0["event"] as? String ?? "", $0["level"] as? String ?? "") }) { first, _ in first }
            #expect(levels["failure"] == "error" && levels["summary"] == "info" && levels["progress"] == "info", "\(levels)")
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            for event in events {
                let time = try #require(event["time"] as? String)
                let date = try #require(format.date(from: time), "\(time)")
                #expect(abs(date.timeIntervalSinceNow) < 600 && time.hasSuffix("Z"))
            }
        }
    }

    @Test("--config FILE: the same options as JSON, the command line wins, unknown keys and wrong types refused")
    func configFile() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: true)
            let config = root + "/thumbframe.json"
            try Fixtures.write(
                Array(
                    """
                    {"source": "\(source)", "out": "\(root)/out", "thumb": ["g=64x64:cover", "p=200x200"], "jobs": 1,
                     "preset": "photoswipe", "exclude": "2020", "fail-on": "never", "quiet": true, "progress": false}
                    """.utf8), to: config)
            let run = try await CLITests.run(["build", "--config", config])
            #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
            let manifest = try ManifestFile.open(root + "/out/manifest.json").loadAll()
            #expect(manifest.settings.preset == .photoswipe && manifest.settings.thumbnails.map(\.name) == ["g", "p"])
            #expect(manifest.items.map(\.path) == ["a.jpg"], "--exclude from the file")
            // The command line wins: one value, and a whole list.
            let again = try await CLITests.run([
                "build", "--config=\(config)", "--out", root + "/out2", "--thumb", "only=100x100",
                "--preset", "jx4",
            ])
            #expect(again.status == 0, "\(again.stderr)")
            let second = try ManifestFile.open(root + "/out2/manifest.json").loadAll()
            #expect(second.settings.preset == .jx4 && second.settings.thumbnails.map(\.name) == ["only"])
            // A source on the command line replaces the file's.
            let other = root + "/other"
            try Fixtures.makeDirectory(other)
            try Fixtures.writeImage(to: other + "/z.jpg", width: 50, height: 40)
            let third = try await CLITests.run(["build", other, "--config", config, "--out", root + "/out3"])
            #expect(third.status == 0, "\(third.stderr)")
            #expect(try Self.paths(root + "/out3/manifest.json") == ["z.jpg"])
            for (body, expected) in [
                ("{\"colour\": true}", "unknown option \"colour\""), ("{\"jobs\": true}", "\"jobs\" must be a number"),
                ("{\"viewer\": \"yes\"}", "\"viewer\" must be true or false"), ("[1, 2]", "not a JSON object"),
            ] {
                try Fixtures.write(Array(body.utf8), to: config)
                let bad = try await CLITests.run(["build", source, "--out", root + "/bad", "--config", config])
                #expect(bad.status == 64 && bad.stderr.contains(expected), "\(body): \(bad.stderr)")
            }
        }
    }

    #if CommandLine
        @Test("every option of build --help can be given in --config")
        func configKnowsEveryOption() throws {
            let help = BuildCommand.helpMessage(columns: 1000)
            let found = Set(help.matches(of: /--([a-z][a-z-]+)/).map { String($0.output.1) })
            // `--progress/--no-progress` is one option.
            let names = found.filter { !($0.hasPrefix("no-") && found.contains(String($0.dropFirst(3)))) }
            #expect(names.count > 20, "\(names)")
            for name in names.subtracting(["help", "config", "version"]) {
                #expect(ConfigFile.buildOptions[name] != nil, "--\(name) is missing from ConfigFile.buildOptions")
            }
            for name in ConfigFile.buildOptions.keys { #expect(names.contains(name), "--\(name) is not an option of build") }
        }
    #endif

    @Test("--exclude: names anywhere, paths from SOURCE_DIR; excluding more later drops those items")
    func exclude() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/photos"
            for directory in ["/trip/Thumbnails", "/private", "/trip/cache"] { try Fixtures.makeDirectory(source + directory) }
            for path in ["/a.jpg", "/trip/b.jpg", "/trip/Thumbnails/b.jpg", "/private/c.jpg", "/trip/cache/d.jpg", "/trip/e.tmp.jpg"] {
                try Fixtures.writeImage(to: source + path, width: 40, height: 30)
            }
            let run = try await CLITests.run([
                "build", source, "--out", root + "/out", "--exclude", "Thumbnails", "--exclude", "/private",
                "--exclude", "trip/cache", "--exclude", "*.tmp.jpg",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Self.paths(root + "/out/manifest.json") == ["a.jpg", "trip/b.jpg"])
            // `*` does not cross a `/`; a name pattern matches at any depth.
            let deeper = try await CLITests.run(["build", source, "--out", root + "/out2", "--exclude", "*/b.jpg", "--exclude", "private"])
            #expect(deeper.status == 0, "\(deeper.stderr)")
            #expect(
                try Self.paths(root + "/out2/manifest.json").sorted() == [
                    "a.jpg", "trip/Thumbnails/b.jpg", "trip/cache/d.jpg", "trip/e.tmp.jpg",
                ])
            // Excluding more later drops those items from the manifest.
            let narrower = try await CLITests.run(["build", source, "--out", root + "/out2", "--exclude", "trip", "--exclude", "private"])
            #expect(narrower.status == 0, "\(narrower.stderr)")
            #expect(try Self.paths(root + "/out2/manifest.json") == ["a.jpg"])
            let empty = try await CLITests.run(["build", source, "--out", root + "/out3", "--exclude", "/"])
            #expect(empty.status == 64 && empty.stderr.contains("empty pattern"), "\(empty.stderr)")
        }
    }

    @Test("--fail-on any|new|never: known old failures can be accepted, a new one still fails the run")
    func failOn() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try CLITests.makeLibrary(root, broken: true)
            let out = root + "/out"
            #expect(try await CLITests.run(["build", source, "--out", out, "--fail-on", "new"]).status == 1, "a first failure is new")
            #expect(
                try await CLITests.run(["build", source, "--out", out, "--fail-on", "new"]).status == 0, "the same failure again is known")
            #expect(try await CLITests.run(["build", source, "--out", out]).status == 1, "--fail-on any is the default")
            #expect(try await CLITests.run(["build", source, "--out", out, "--fail-on", "never"]).status == 0)
            // A second broken file is new; so is a good file that breaks.
            try Fixtures.write(Array("junk".utf8), to: source + "/new-broken.jpg")
            #expect(try await CLITests.run(["build", source, "--out", out, "--fail-on", "new"]).status == 1)
            #expect(try await CLITests.run(["build", source, "--out", out, "--fail-on", "new"]).status == 0)
            try Fixtures.write(Array("now broken".utf8), to: source + "/a.jpg")
            #expect(try await CLITests.run(["build", source, "--out", out, "--fail-on", "new"]).status == 1)
        }
    }
}
