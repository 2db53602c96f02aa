import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// RAW files obey the rules images do (LibRaw has a history of CVEs): run out of process, so a
/// crash in LibRaw would show as the run's signal.
@Suite(
    "Hostile RAW files",
    .enabled(
        if: (try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import tifffile, numpy, imagecodecs, PIL"]).status) == 0,
        "needs python3 with tifffile, numpy, imagecodecs and Pillow (scripts/bootstrap --test)"))
struct HostileRawTests {
    @Test("truncated and byte-flipped RAW files: every one an item or a one-line failure, the run goes on, no crash")
    func hostile() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let fixtures = try await Processes.run(
                "/usr/bin/env", ["python3", Fixtures.packageRoot + "/scripts/test-helpers/raw-fixtures.py", root + "/seeds"])
            #expect(fixtures.status == 0, "\(fixtures.stderr)")
            let lib = root + "/lib"
            var random = SplitMix64(state: 2200)
            var count = 0
            for name in ["preview-6.dng", "mosaic.dng", "small-preview.dng", "nikon-6.nef"] {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/seeds/" + name)))
                // The header and directories are where a parser is led astray.
                count += try Fixtures.writeDamagedCopies(
                    of: bytes, named: name, into: lib, fractions: [0.001, 0.05, 0.3, 0.7, 0.99], flips: 15, maxFlips: 16,
                    random: &random
                ) { _, random in 4 + Int(random.next() % UInt64(min(bytes.count, 4096) - 4)) }
            }
            let run = try await CLITests.run(["build", lib, "--out", root + "/out", "--decode-timeout", "20"])
            #expect(run.status == 0 || run.status == 1, "\(run.status): \(run.stderr.suffix(1500))")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count + manifest.failures.count == count)
            #expect(manifest.failures.allSatisfy { !$0.reason.isEmpty && !$0.reason.contains("\n") })
            #expect(manifest.items.allSatisfy { $0.raw != nil && $0.placeholder != nil }, "every item is LibRaw's, none a stray IFD's")
        }
    }
}
