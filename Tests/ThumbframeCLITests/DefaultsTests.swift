import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// What a build makes without options, and what each recipe costs (issue 37, item 6): the
/// three recipes by default, the zoom ladder and tiles one option away, the bytes of each
/// recipe printed by `build` and `inspect` (docs/cli.md saying what `--help` says: DocsTests).
@Suite("Defaults")
struct DefaultsTests {
    /// A library of one 3000×2000 photo: large enough for both rungs of the ladder.
    static func library(_ root: String) throws -> String {
        let source = root + "/photos"
        try Fixtures.makeLibrary(source, [.photo("large.jpg", width: 3000, height: 2000)])
        return source
    }

    /// The thumbnail names of the library's one item, and the settings' ladder and tiles.
    static func made(_ out: String) throws -> (names: Set<String>, ladder: Bool, tiles: Bool) {
        let manifest = try ManifestFile.load(out + "/manifest.json")
        let item = try #require(manifest.items.first)
        return (Set(item.thumbnails.keys), manifest.settings.ladder != nil, manifest.settings.tiles != nil)
    }

    @Test("no zoom renditions by default; --zoom ladder and tiles make them; --ladder-max-side and --tile-pixels win over --zoom")
    func zoomIsOneOptionAway() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root)
            func build(_ out: String, _ options: [String]) async throws -> (names: Set<String>, ladder: Bool, tiles: Bool) {
                let run = try await CLITests.run(["build", source, "--out", root + "/" + out, "--no-progress"] + options)
                #expect(run.status == 0, "\(options): \(run.stderr)")
                return try Self.made(root + "/" + out)
            }
            let plain = try await build("plain", [])
            #expect(plain.names == ["grid", "small", "preview"] && !plain.ladder && !plain.tiles)
            let ladder = try await build("ladder", ["--zoom", "ladder"])
            #expect(ladder.names == ["grid", "small", "preview", "zoom-2560", "zoom-4096"] && ladder.ladder && !ladder.tiles)
            // (Tiles only past the ladder's last rung: below the original's 3000 px here.)
            let tiles = try await build("tiles", ["--zoom", "tiles", "--tile-pixels", "1000000", "--ladder-max-side", "2560"])
            #expect(tiles.names.isSuperset(of: ["zoom-2560", "tiles"]) && tiles.tiles)
            let capped = try await build("capped", ["--zoom", "ladder", "--ladder-max-side", "2560"])
            #expect(capped.names == ["grid", "small", "preview", "zoom-2560"])
            let alone = try await build("alone", ["--ladder-max-side", "2560"])
            #expect(alone.names.contains("zoom-2560") && !alone.tiles)
            // The config file knows it too.
            try Fixtures.write(Array(#"{"zoom": "ladder"}"#.utf8), to: root + "/config.json")
            let configured = try await build("configured", ["--config", root + "/config.json"])
            #expect(configured.names.contains("zoom-4096"))
            let wrong = try await CLITests.run(["build", source, "--out", root + "/wrong", "--zoom", "deep"])
            #expect(wrong.status == 64 && wrong.stderr.contains("deep"), "\(wrong.stderr)")
        }
    }

    @Test("build and inspect print the bytes each recipe adds, in the recipes' order, as the manifest records them; a no-op says the same")
    func bytesPerRecipe() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root)
            try Fixtures.writeImage(to: source + "/other.jpg", width: 800, height: 600)
            let out = root + "/out"
            let cold = try await CLITests.run(["build", source, "--out", out, "--no-progress", "--zoom", "ladder"])
            #expect(cold.status == 0, "\(cold.stderr)")
            let document = try ManifestFile.open(out + "/manifest.json").document
            let recorded = document.summary.thumbnailBytes
            let order = ["grid", "small", "preview", "zoom-2560", "zoom-4096"]
            #expect(Set(recorded.keys) == Set(order) && recorded.values.allSatisfy { $0 > 0 })
            // The closing lines end with every recipe's bytes and average, in the order they are made.
            let expected =
                "thumbframe: thumbnails " + ManifestSummary.size(recorded.values.reduce(0, +)) + ": "
                + order.map { name in
                    let count = document.summary.thumbnails[name] ?? 0
                    return "\(name) \(ManifestSummary.size(recorded[name]!)) (\(ManifestSummary.size(recorded[name]! / count)) each)"
                }.joined(separator: ", ")
            #expect(cold.stderr.hasSuffix(expected + "\n"), "\(cold.stderr)")
            let noop = try await CLITests.run(["build", source, "--out", out, "--no-progress", "--zoom", "ladder"])
            #expect(noop.stderr.contains("manifest unchanged") && noop.stderr.hasSuffix(expected + "\n"), "\(noop.stderr)")
            let json = try await CLITests.run(["build", source, "--out", out, "--zoom", "ladder", "--log-format", "json"])
            let summary = try #require(ConventionTests.lines(json.stderr).first { $0["event"] as? String == "summary" })
            let recipes = try #require(summary["recipes"] as? [[String: Any]])
            #expect(recipes.map { $0["name"] as? String } == order)
            #expect(recipes.allSatisfy { recorded[$0["name"] as! String] == $0["bytes"] as? Int })
            // inspect: the same figures on its `thumb bytes` line.
            let inspect = try await CLITests.run(["inspect", out + "/manifest.json"])
            let line = try #require(inspect.stdout.split(separator: "\n").first { $0.hasPrefix("thumb bytes") })
            #expect(line.hasSuffix(expected.dropFirst("thumbframe: thumbnails ".count)), "\(line)")
            // Quiet prints none of it.
            let quiet = try await CLITests.run(["build", source, "--out", out, "--zoom", "ladder", "-q"])
            #expect(quiet.stderr.isEmpty && quiet.stdout.isEmpty)
        }
    }
}
