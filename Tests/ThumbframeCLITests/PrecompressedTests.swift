import Foundation
import Testing
import ThumbframeCore
import ThumbframeTestSupport

/// The manifest and its pages beside their pre-compressed siblings (`.gz`, `.br`), which static
/// hosts send as they are (issue 40): gzip and brotli (the programs) as the oracles.
@Suite(
    "Pre-compressed siblings",
    .enabled(if: Processes.tool("gzip") != nil && Processes.tool("brotli") != nil, "needs the gzip and brotli programs"))
struct PrecompressedTests {
    /// Every JSON file of OUT_DIR (the manifest and the pages) with its two siblings' bytes
    /// decompressed by the programs, and every sibling's own bytes.
    static func siblings(_ out: String) async throws -> (json: [String: Data], decompressed: [String: Data], raw: [String: Data]) {
        var json: [String: Data] = [:]
        var decompressed: [String: Data] = [:]
        var raw: [String: Data] = [:]
        let files = (FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? []).filter {
            $0.hasPrefix("manifest.json") || ($0.hasPrefix("pages/") && $0.contains(".json"))
        }
        for file in files.sorted() {
            let data = try Data(contentsOf: URL(fileURLWithPath: out + "/" + file))
            if file.hasSuffix(".json") {
                json[file] = data
                continue
            }
            raw[file] = data
            let program = file.hasSuffix(".gz") ? "gzip" : "brotli"
            let run = try await Processes.run("/bin/sh", ["-c", "\(program) -dc \"$1\" | base64 -w0", "sh", out + "/" + file])
            #expect(run.status == 0, "\(file): \(run.stderr)")
            decompressed[file] = Data(base64Encoded: run.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (json, decompressed, raw)
    }

    @Test(
        "the manifest, every page and the viewer's files have .gz and .br siblings of the same bytes, the same whatever --jobs; pruned with their page; made again when missing; validate checks them"
    )
    func siblings() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try Fixtures.makeLibrary(lib, Fixtures.photos(6, in: ["a", "b"], width: 120, height: 90))
            let (one, two) = (root + "/one", root + "/two")
            #expect(try await CLITests.run(["build", lib, "--out", one, "--jobs", "1"]).status == 0)
            #expect(try await CLITests.run(["build", lib, "--out", two, "--jobs", "2"]).status == 0)
            let first = try await Self.siblings(one)
            // The manifest, and a page and its grid page a folder.
            #expect(first.json.count == 5, "\(first.json.keys.sorted())")
            for (file, bytes) in first.json {
                #expect(first.decompressed[file + ".gz"] == bytes && first.decompressed[file + ".br"] == bytes, "\(file)")
                // Brotli's is the smaller; both smaller than the JSON.
                #expect((first.raw[file + ".br"]?.count ?? .max) < bytes.count, "\(file)")
            }
            #expect(first.raw.count == 2 * first.json.count)
            // The same bytes from another build (gzip's header names no time and no system).
            #expect(try await Self.siblings(two).raw == first.raw)
            // A folder changes: its old page goes with both siblings, the new one comes with its own.
            try Fixtures.writeImage(to: lib + "/b/new.jpg", width: 100, height: 80)
            #expect(try await CLITests.run(["build", lib, "--out", one]).status == 0)
            let second = try await Self.siblings(one)
            #expect(second.json.count == 5 && second.raw.count == 10, "\(second.raw.keys.sorted())")
            for (file, bytes) in second.json {
                #expect(second.decompressed[file + ".gz"] == bytes && second.decompressed[file + ".br"] == bytes, "\(file)")
            }
            // An OUT_DIR from before them (or one a sibling was deleted from): a run with nothing
            // new writes them.
            let page = try #require(second.json.keys.first { $0.hasPrefix("pages/") })
            for file in [page + ".br", "manifest.json.gz"] { try FileManager.default.removeItem(atPath: one + "/" + file) }
            #expect(try await CLITests.run(["build", lib, "--out", one]).status == 0)
            #expect(try await Self.siblings(one).raw == second.raw)
            // The viewer's files have theirs too; a file in the way that is not the viewer's is left alone
            // and stops the build (73), naming it.
            #expect(try await CLITests.run(["build", lib, "--out", two, "--viewer"]).status == 0)
            for name in ["index.html"] {
                for program in ["gzip", "brotli"] {
                    let same = try await Processes.run(
                        "/bin/sh",
                        ["-c", "\(program) -dc \"$1.\(program == "gzip" ? "gz" : "br")\" | cmp -s - \"$1\"", "sh", two + "/" + name])
                    #expect(same.status == 0, "\(name) \(program)")
                }
            }
            let viewer = root + "/viewer"
            try Fixtures.write(Array("my own gzip".utf8), to: viewer + "/index.html.gz")
            let refused = try await CLITests.run(["build", lib, "--out", viewer, "--viewer"])
            #expect(
                refused.status == 73 && refused.stderr.contains("index.html.gz: not thumbframe's viewer"), "\(refused.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: viewer + "/index.html.gz")) == Data("my own gzip".utf8))
            // validate: a sibling that is not its file compressed is named.
            try Data("{}".utf8).write(to: URL(fileURLWithPath: one + "/" + page + ".gz"))
            let validate = try await CLITests.run(["validate", one + "/manifest.json"])
            #expect(validate.status != 0 && validate.stdout.contains("\(page).gz is not \(page) compressed"), "\(validate.stdout)")
        }
    }
}
