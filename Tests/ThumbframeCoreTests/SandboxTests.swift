import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// A decode worker's sandbox, seen from inside: what a decoder gone wrong could reach.
@Suite("Worker sandbox")
struct SandboxTests {
    @Test("a sandboxed worker cannot open a socket nor read a file outside its trees; without the sandbox it can")
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
                    #expect(outside.socket == String(cString: strerror(EPERM)))
                    #expect(outside.read == String(cString: strerror(EACCES)))
                    #expect(inside.read == nil, "the source tree stays readable: \(inside)")
                } else {
                    #expect(outside.socket == nil && outside.read == nil, "\(outside)")
                }
            }
        }
    }
}
