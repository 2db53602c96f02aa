import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Manifests (top documents and pages) checked against manifests/thumbframe-manifest.v3.schema.json
/// by an independent validator (Python's jsonschema, installed by scripts/bootstrap --test).
@Suite("JSON Schema")
struct SchemaTests {
    static let repository = Fixtures.packageRoot
    static let schema = repository + "/manifests/thumbframe-manifest.v3.schema.json"

    static var jsonschemaAvailable: Bool {
        (try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import jsonschema"]).status) == 0
    }

    /// Validates files with jsonschema; returns the error lines (empty when all are valid).
    static func validate(_ paths: [String]) async throws -> [String] {
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            for path in sys.argv[2:]:
                for error in validator.iter_errors(json.load(open(path))):
                    print(path, "/".join(map(str, error.absolute_path)), error.message[:200])
            """
        let result = try await Processes.run("/usr/bin/env", ["python3", "-c", script, schema] + paths)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        return result.status == 0 ? lines : lines + ["python exited with \(result.status): \(result.stderr.prefix(500))"]
    }

    @Test(
        "every kind of manifest the tool writes is valid",
        .enabled(if: jsonschemaAvailable, "needs python3 jsonschema (scripts/bootstrap --test)"))
    func builtManifests() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            _ = try await ValidateTests.build(root)
            var paths = [root + "/out/manifest.json"]
            let variants: [(String, (inout BuildOptions) -> Void)] = [
                (
                    "jx4-date",
                    {
                        $0.preset = .jx4
                        $0.sections = .date
                        $0.order = .date
                    }
                ),
                (
                    "photoswipe-none",
                    {
                        $0.preset = .photoswipe
                        $0.sections = .none
                    }
                ),
                (
                    "pixel-recipes",
                    {
                        $0.preset = .pixel
                        $0.thumbnails = [
                            try! ThumbnailRecipe(parsing: "s=64x64:cover:webp:q50"), try! ThumbnailRecipe(parsing: "l=300x300:fit:avif"),
                        ]
                        $0.viewports = [try! Viewport(parsing: "w=1280.5x720@1.5")]
                    }
                ),
            ]
            for (name, configure) in variants {
                var options = BuildOptions(source: root + "/src", output: root + "/" + name)
                configure(&options)
                paths.append(try await Builder(options: options).run().manifestPath)
            }
            let empty = root + "/empty"
            try Fixtures.makeDirectory(empty)
            paths.append(try await Builder(options: BuildOptions(source: empty, output: root + "/empty-out")).run().manifestPath)
            // Every page of every manifest, too.
            var all = paths
            for path in paths {
                let document = try ManifestFile.open(path).document
                all += document.sections.flatMap { $0.pages ?? [] }.map { (path as NSString).deletingLastPathComponent + "/" + $0.path }
            }
            #expect(all.count > paths.count + 3)
            await #expect(try Self.validate(all) == [])
        }
    }

    @Test("the schema rejects what the contract forbids", .enabled(if: jsonschemaAvailable, "needs python3 jsonschema"))
    func rejects() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let path = try await ValidateTests.build(root)
            let top = try String(contentsOfFile: path, encoding: .utf8)
            let pagePath = try #require(ManifestFile.open(path).document.sections.first?.pages?.first?.path)
            let page = try String(contentsOfFile: root + "/out/" + pagePath, encoding: .utf8)
            let mutations = [
                (top, "\"version\" : 3", "\"version\" : 1"), (top, "\"preset\" : \"jx3\"", "\"preset\" : \"jx5\""),
                (top, "\"count\" : 2", "\"count\" : 0"), (top, "\"path\" : \"pages/", "\"path\" : \"../pages/"),
                (page, "\"path\":\"a.jpg\"", "\"path\":\"../a.jpg\""), (page, "\"orientation\":1", "\"orientation\":0"),
                (page, "\"hasAlpha\":false", "\"hasAlpha\":0"), (page, "\"item\":0", "\"index\":0"),
                (page, "\"kind\":\"photo\"", "\"kind\":\"movie\""), (page, "\"kind\":\"photo\"", "\"kind\":\"video\""),
                (top, "\"kinds\" : {", "\"kindz\" : {"),
            ]
            for (index, (text, from, to)) in mutations.enumerated() {
                #expect(text.contains(from), "\(from)")
                let mutated = root + "/m\(index).json"
                try text.replacingOccurrences(of: from, with: to).write(toFile: mutated, atomically: true, encoding: .utf8)
                await #expect(try !Self.validate([mutated]).isEmpty, "\(to) passed the schema")
            }
        }
    }
}
