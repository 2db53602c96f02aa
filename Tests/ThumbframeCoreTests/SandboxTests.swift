import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// A decode worker's sandbox, seen from inside: what a decoder gone wrong could reach.
@Suite("Worker sandbox")
struct SandboxTests {
    @Test(
        "a sandboxed worker reads no file of the source tree nor outside OUT_DIR (each job's file comes open); without the sandbox it can")
    func denies() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (src, out) = (root + "/src", root + "/out")
            try Fixtures.makeDirectory(src)
            try Fixtures.makeDirectory(out)
            try Fixtures.write(Array("inside".utf8), to: src + "/inside.txt")
            try Fixtures.write(Array("secret".utf8), to: root + "/secret.txt")
            let executable = try #require(DecodeWorkers.executable(), "the thumbframe executable beside the tests")
            for sandboxed in [true, false] {
                let setup = WorkerProtocol.Setup(
                    recipes: ThumbnailRecipe.defaults, settings: nil, limits: ResourceLimits(), overwrite: false, threadsPerImage: 1,
                    sourcePath: src, outputPath: out, memoryLimit: 1 << 30, sandbox: sandboxed)
                let workers = DecodeWorkers(
                    executable: executable, setup: setup, source: try SourceRoot.open(src), output: try OutputDirectory(out, create: true),
                    events: { _ in })
                let outside = try #require(workers.probe(path: root + "/secret.txt"))
                let inside = try #require(workers.probe(path: src + "/inside.txt"))
                workers.stop()
                if sandboxed {
                    #expect(outside == String(cString: strerror(EACCES)))
                    #expect(inside == String(cString: strerror(EACCES)), "the source tree is not the worker's to open")
                } else {
                    #expect(outside == nil && inside == nil, "\(String(describing: outside)) \(String(describing: inside))")
                }
            }
        }
    }
}
