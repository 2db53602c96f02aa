import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// What a header says a decode will hold, checked against `--max-decode-bytes` before anything
/// is decoded, counts what the decoder really holds (measured in a worker under a memory cap;
/// docs/performance.md): a HEIF picture 10 bytes a pixel, not the 3 of its RGB picture alone.
@Suite("Decode estimates")
struct DecodeEstimateTests {
    @Test("a HEIF picture counts 10 bytes a pixel: refused one byte under, built at it, with memory as the cause")
    func heifPicture() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Fixtures.writeImage(to: root + "/lib/a.avif", width: 600, height: 400, format: TF_FORMAT_AVIF)
            var options = BuildOptions(source: root + "/lib", output: root + "/refused")
            options.limits.maxDecodeBytes = 600 * 400 * 10 - 1
            let (_, refused) = try await Fixtures.build(options)
            let failure = try #require(refused.failures.first, "built under its estimate")
            #expect(failure.stage == "probe" && failure.cause == "memory", "\(failure)")
            #expect(failure.reason.contains("HEIF planes, picture and copy"), "\(failure.reason)")
            options.output = root + "/built"
            options.limits.maxDecodeBytes = 600 * 400 * 10
            let (_, built) = try await Fixtures.build(options)
            #expect(built.failures.isEmpty && built.items.map(\.image.format) == ["avif"], "\(built.failures)")
        }
    }
}
