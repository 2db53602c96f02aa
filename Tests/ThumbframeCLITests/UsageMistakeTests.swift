import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Usage mistakes a cron or CI user makes, each named for what it is in one error line (issue 37,
/// item 5).
@Suite("Usage mistakes")
struct UsageMistakeTests {
    /// The `error:` lines of a run's stderr.
    static func errors(_ run: Processes.Output) -> [String] {
        run.stderr.split(separator: "\n").map(String.init).filter { $0.contains("error: ") }
    }

    @Test("mistyped or missing subcommands and options say what is wrong and what was meant, in one line, exit 64")
    func namedMistakes() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, [.photo("a.jpg", width: 64, height: 48)])
            let cases: [([String], String)] = [
                (["build", source, "-o", root + "/x"], "unknown option '-o'; did you mean '--out'?"),
                (["build", source, "--output", root + "/x"], "unknown option '--output'; did you mean '--out'?"),
                (["biuld", source, "--out", root + "/x"], "unknown subcommand 'biuld'; did you mean 'build'?"),
                ([source, "--out", root + "/x"], "'\(source)' is not a subcommand; to build it: thumbframe build \(source) --out OUT_DIR"),
                (
                    ["--out", root + "/x", source],
                    "no subcommand before '--out'; a build is: thumbframe build SOURCE_DIR --out OUT_DIR [options]"
                ),
                (
                    ["help", "nosuch"],
                    "unknown subcommand 'nosuch' (subcommands: build, merge, inspect, show, lookup, layout, validate, diff)"
                ),
                (["help", "biuld"], "unknown subcommand 'biuld'; did you mean 'build'?"),
            ]
            for (arguments, expected) in cases {
                let run = try await CLITests.run(arguments)
                #expect(run.status == 64 && Self.errors(run) == ["thumbframe: error: " + expected], "\(arguments): \(run.stderr)")
                #expect(!FileManager.default.fileExists(atPath: root + "/x"), "\(arguments) wrote nothing")
            }
            // -j1 is -j 1, as getopt reads it.
            let attached = try await CLITests.run(["build", source, "--out", root + "/out", "-j1", "-q"])
            #expect(attached.status == 0 && attached.stderr.isEmpty, "\(attached.stderr)")
            let help = try await CLITests.run(["help", "build"])
            #expect(help.status == 0 && help.stdout.contains("--out"))
        }
    }

    @Test("a config file: numbers are numbers, a key given twice and JSON that does not parse are named, paths are the file's")
    func configMistakes() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/site/photos", [.photo("a.jpg", width: 64, height: 48)])
            let config = root + "/site/thumbframe.json"
            for (body, expected) in [
                (#"{"source": "photos", "out": "public", "jobs": "2"}"#, #""jobs" must be a number"#),
                (#"{"source": "photos", "out": "public", "jobs": 1, "jobs": 2}"#, #""jobs" is given twice"#),
                (#"{"source": "photos", "out": "public","#, "not a JSON object of options (Unexpected end of file"),
            ] {
                try Fixtures.write(Array(body.utf8), to: config)
                let run = try await CLITests.run(["build", "--config", config])
                #expect(run.status == 64 && Self.errors(run).count == 1 && run.stderr.contains(expected), "\(body): \(run.stderr)")
            }
            // Relative paths are the file's directory's, wherever the job runs from (cron: $HOME).
            try Fixtures.write(Array(#"{"source": "photos", "out": "public", "jobs": 1}"#.utf8), to: config)
            let run = try await Processes.run(
                "/bin/sh", ["-c", "cd / && exec \"$0\" build --config \"$1\" -q", CLITests.executable, config])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try ManifestFile.load(root + "/site/public/manifest.json").items.map(\.path) == ["a.jpg"])
        }
    }
}

extension UsageMistakeTests {
    @Test("show --path of a failed file says why it failed; help build names every default recipe")
    func failedPathAndDefaults() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(
                root + "/src", [.photo("a.jpg", width: 64, height: 48), .bytes("broken.jpg", Array("not a JPEG".utf8))])
            _ = try await CLITests.run(["build", root + "/src", "--out", root + "/out"])
            let failed = try await CLITests.run(["show", root + "/out/manifest.json", "--path", "broken.jpg"])
            #expect(failed.status == 64)
            #expect(
                Self.errors(failed).first?.hasPrefix("thumbframe: error: 'broken.jpg' is no item: it failed (probe): ") == true,
                "\(failed.stderr)")
            let unknown = try await CLITests.run(["show", root + "/out/manifest.json", "--path", "nosuch.jpg"])
            #expect(
                unknown.status == 64 && Self.errors(unknown) == ["thumbframe: error: no item has the path 'nosuch.jpg'"],
                "\(unknown.stderr)")

            let help = try await CLITests.run(["help", "build"])
            let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for recipe in ThumbnailRecipe.defaults {
                #expect(text.contains("\(recipe.name)=\(recipe.canonicalRecipe)"), "\(recipe.name) in: \(text)")
            }
        }
    }
}
