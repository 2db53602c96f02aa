import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

/// An app depends on the ThumbframeManifest library alone: a package that names this one with
/// `traits: []` (the command line off) resolves nothing else — no swift-argument-parser, no
/// checkout — builds only the library, and runs.
@Suite("Consumer package")
struct ConsumerPackageTests {
    @Test("a package depending on ThumbframeManifest with traits: [] resolves and builds nothing but the library")
    func libraryAlone() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let consumer = root + "/Consumer"
            try FileManager.default.createDirectory(atPath: consumer + "/Sources/Consumer", withIntermediateDirectories: true)
            let identity = URL(fileURLWithPath: Fixtures.packageRoot).lastPathComponent.lowercased()
            let manifest = """
                // swift-tools-version:6.1
                import PackageDescription

                let package = Package(
                    name: "Consumer",
                    platforms: [.macOS(.v13), .iOS(.v16)],
                    dependencies: [.package(path: "\(Fixtures.packageRoot)", traits: [])],
                    targets: [
                        .executableTarget(name: "Consumer", dependencies: [.product(name: "ThumbframeManifest", package: "\(identity)")])
                    ]
                )

                """
            try Data(manifest.utf8).write(to: URL(fileURLWithPath: consumer + "/Package.swift"))
            let program = """
                import ThumbframeManifest

                let map = try IndexMap(counts: [2, 3])
                let layout = LayoutEngine.layout(
                    width: 4000, height: 3000, viewport: Viewport(name: "phone", width: 390, height: 844, scale: 3), preset: .jx3)
                print(map.count, try map.position(of: 3).section, layout.frame.height)

                """
            try Data(program.utf8).write(to: URL(fileURLWithPath: consumer + "/Sources/Consumer/main.swift"))
            let build = try await Processes.run("/usr/bin/env", ["swift", "build", "--package-path", consumer])
            #expect(build.status == 0, "\(build.stdout)\n\(build.stderr)")
            let resolved = (try? String(contentsOfFile: consumer + "/Package.resolved", encoding: .utf8)) ?? ""
            #expect(!resolved.contains("swift-argument-parser"), "\(resolved)")
            let checkouts = (try? FileManager.default.contentsOfDirectory(atPath: consumer + "/.build/checkouts")) ?? []
            #expect(checkouts.isEmpty, "nothing was fetched: \(checkouts)")
            #expect(!build.stdout.contains("Compiling ArgumentParser"), "\(build.stdout)")
            let run = try await Processes.run(consumer + "/.build/debug/Consumer", [])
            #expect(run.stdout == "5 1 292.5\n", "\(run.stdout)\(run.stderr)")
        }
    }
}
