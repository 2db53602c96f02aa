import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Failure messages that do not depend on --jobs, without decoding every broken file twice. Run
/// as separate processes: builds in one process share libvips' error buffer.
@Suite("Failure messages")
struct FailureMessageTests {
    @Test("one file at a time nothing is decoded twice; in parallel the messages are those of one file at a time")
    func rediagnosis() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            for index in 0..<12 {
                let good = root + "/lib/good-\(index).jpg"
                try Fixtures.writeImage(to: good, width: 300, height: 200)
                let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: good)))
                try Fixtures.write(Array(bytes.prefix(bytes.count / 2)), to: root + "/lib/broken-\(index).jpg")
            }
            func build(_ out: String, jobs: Int) async throws -> (Manifest, Int) {
                let run = try await CLITests.run([
                    "build", root + "/lib", "--out", root + "/" + out, "--jobs", "\(jobs)", "--log-format", "json",
                ])
                #expect(run.status == 1, "\(run.stderr)")
                let summary = ConventionTests.lines(run.stderr).first { $0["event"] as? String == "summary" }
                return (try ManifestFile.load(root + "/\(out)/manifest.json"), summary?["rediagnosed"] as? Int ?? -1)
            }
            let (one, twice) = try await build("one", jobs: 1)
            #expect(one.failures.count == 12 && twice == 0, "\(twice) decoded twice one file at a time")
            #expect(one.failures.allSatisfy { $0.reason == "VipsJpeg: Premature end of input file" }, "\(one.failures.map(\.reason))")
            let (four, again) = try await build("four", jobs: 4)
            #expect(four.failures == one.failures && again >= 0, "rediagnosed \(again) (-1: not in the summary)")
        }
    }
}
