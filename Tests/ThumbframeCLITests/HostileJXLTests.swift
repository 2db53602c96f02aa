import CThumbframeShim
import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// JPEG XL goes through libjxl, whose libvips loader thumbframe unblocks: damaged files obey the
/// rules every image does. Out of process, so a crash in libjxl would show as the run's signal.
@Suite("Hostile JPEG XL files", .enabled(if: Processes.tool("vips") != nil, "needs the vips program (scripts/bootstrap --test)"))
struct HostileJXLTests {
    @Test("truncated and byte-flipped JPEG XL files: every one an item or a one-line failure, the run goes on, no crash")
    func hostile() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let vips = try #require(Processes.tool("vips"))
            try Fixtures.makeDirectory(root + "/lib")
            try Fixtures.writeImage(to: root + "/seed.png", width: 320, height: 240, format: TF_FORMAT_PNG)
            var count = 0
            var random = SplitMix64(state: 2204)
            for (name, options) in [("lossy.jxl", "[Q=80]"), ("lossless.jxl", "[lossless]")] {
                let made = try await Processes.run(vips, ["copy", root + "/seed.png", root + "/" + name + options])
                #expect(made.status == 0, "\(made.stderr)")
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + name)))
                try Fixtures.write(bytes, to: root + "/lib/whole-" + name)
                count += 1
                // Half in the headers (size, colour encoding, TOC), half anywhere.
                count += try Fixtures.writeDamagedCopies(
                    of: bytes, named: name, into: root + "/lib", fractions: [0.01, 0.2, 0.5, 0.9, 0.999], flips: 30, maxFlips: 12,
                    random: &random
                ) { copy, random in Int(random.next() % UInt64(copy % 2 == 0 ? min(bytes.count, 512) : bytes.count)) }
            }
            let run = try await CLITests.run(["build", root + "/lib", "--out", root + "/out", "--decode-timeout", "20"])
            #expect(run.status == 0 || run.status == 1, "\(run.status): \(run.stderr.suffix(1500))")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count + manifest.failures.count == count)
            #expect(Set(manifest.items.map(\.path)).isSuperset(of: ["whole-lossy.jxl", "whole-lossless.jxl"]))
            #expect(manifest.items.allSatisfy { $0.image.format == "jxl" && $0.placeholder != nil })
            #expect(manifest.failures.allSatisfy { !$0.reason.isEmpty && !$0.reason.contains("\n") })
        }
    }
}
