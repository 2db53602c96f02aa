import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// The viewer is real files in viewer/ (HTML, JavaScript, CSS a frontend engineer can open, lint
/// and test); the binary carries them as generated Swift (scripts/embed-viewer).
@Suite("Viewer files")
struct ViewerFilesTests {
    static func file(_ name: String) throws -> String {
        try String(contentsOfFile: ViewerTests.packageRoot + "/viewer/" + name, encoding: .utf8)
    }

    @Test("the embedded viewer is viewer/'s files, its modules bundled (run scripts/embed-viewer after editing them)")
    func embeddedCopyIsCurrent() async throws {
        #expect(ViewerAssets.indexHTML + "\n" == (try Self.file("index.html")))
        #expect(ViewerAssets.styleSheet + "\n" == (try Self.file("thumbframe-viewer.css")))
        let bundle = try await Processes.run(ViewerTests.packageRoot + "/scripts/embed-viewer", ["--bundle"])
        #expect(bundle.status == 0, "\(bundle.stderr)")
        #expect(ViewerAssets.script + "\n" == bundle.stdout)
        // Every module is in it, each in its own scope, once.
        let modules = try FileManager.default.contentsOfDirectory(atPath: ViewerTests.packageRoot + "/viewer/src")
            .filter { $0.hasSuffix(".js") }
        #expect(modules.count >= 6)
        for module in modules {
            let name = String(module.dropLast(3))
            #expect(ViewerAssets.script.components(separatedBy: "const viewer_\(name) = (() => {").count == 2, "\(module)")
        }
    }

    @Test(
        "the viewer's modules pass their tests, its fallback layout the LayoutEngine's at every preset and window, its justified rows JustifiedRows' (node --test)"
    )
    func fallbackLayoutMatchesSwift() async throws {
        guard let node = Processes.tool("node") else {
            print("skipped: node is not installed (scripts/bootstrap --test installs nodejs)")
            return
        }
        var random = SplitMix64(state: 0x7417_F4A3)
        let defaults = Set(Viewport.defaults.map { "\($0.width)x\($0.height)" })
        var cases: [[String: Any]] = []
        for preset in LayoutPreset.allCases {
            while cases.count < 80 * (LayoutPreset.allCases.firstIndex(of: preset)! + 1) {
                let window = Viewport(
                    name: "window", width: Double(Int.random(in: 240...2560, using: &random)),
                    height: Double(Int.random(in: 240...1600, using: &random)), scale: [1, 1.5, 2, 3].randomElement(using: &random)!)
                guard !defaults.contains("\(window.width)x\(window.height)") else { continue }
                let long = Int.random(in: 0..<4, using: &random) == 0
                let width = Int.random(in: 1...9000, using: &random)
                let height = long ? width * Int.random(in: 3...12, using: &random) : Int.random(in: 1...9000, using: &random)
                let layout = LayoutEngine.layout(width: width, height: height, viewport: window, preset: preset)
                let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(layout))
                cases.append([
                    "preset": preset.rawValue, "width": width, "height": height,
                    "window": ["width": window.width, "height": window.height, "scale": window.scale], "layout": encoded,
                ])
            }
        }
        // Justified rows as the build lays out a phone's first screen (`JustifiedRows`): random
        // cells across random widths, at both row targets.
        var grids: [[String: Any]] = []
        for _ in 0..<200 {
            let aspects = (0..<Int.random(in: 0...60, using: &random)).map { _ in
                Double(Int.random(in: 1...9000, using: &random)) / Double(Int.random(in: 1...9000, using: &random))
            }
            let window = Double(Int.random(in: 240...2560, using: &random))
            let width = JustifiedRows.gridWidth(forWindowWidth: window)
            let target = JustifiedRows.target(forWindowWidth: window)
            let rows = JustifiedRows.rows(aspects: aspects, width: width, target: target)
            grids.append([
                "aspects": aspects, "width": width, "target": target,
                "rows": rows.map { ["count": $0.cells.count, "widths": $0.widths, "height": $0.height] as [String: Any] },
            ])
        }
        try await Fixtures.withTemporaryDirectory { root in
            let path = root + "/cases.json"
            let justified = root + "/rows.json"
            try JSONSerialization.data(withJSONObject: cases).write(to: URL(fileURLWithPath: path))
            try JSONSerialization.data(withJSONObject: grids).write(to: URL(fileURLWithPath: justified))
            // A build's pages (600 photos of six aspects: three pages), its viewports and every
            // code's aspect: the timeline module lays them out as the build did.
            try TimelineTests.library(root)
            _ = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/out")).run()
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/out/manifest.json")))
            let document = try #require(manifest as? [String: Any])
            let settings = try #require(document["settings"] as? [String: Any])
            let pages = (document["sections"] as? [[String: Any]] ?? []).flatMap { $0["pages"] as? [[String: Any]] ?? [] }
            let geometry: [String: Any] = [
                "aspects": (0..<(6 * 682)).map(GridGeometry.aspect(code:)), "pages": pages, "settings": settings,
                "viewports": settings["viewports"] ?? [],
            ]
            let shapes = root + "/geometry.json"
            try JSONSerialization.data(withJSONObject: geometry).write(to: URL(fileURLWithPath: shapes))
            let run = try await Processes.run(
                "/usr/bin/env",
                [
                    "THUMBFRAME_LAYOUT_CASES=" + path, "THUMBFRAME_JUSTIFY_CASES=" + justified, "THUMBFRAME_GEOMETRY_CASES=" + shapes,
                    node, "--test", ViewerTests.packageRoot + "/viewer/test/",
                ])
            #expect(run.status == 0, "\(run.stdout.suffix(2000)) \(run.stderr.suffix(500))")
            #expect(run.stdout.contains("\n# fail 0"), "\(run.stdout.suffix(300))")
            // Every module has its test file, and each ran (the layout engine's cases among them).
            let tests = try FileManager.default.contentsOfDirectory(atPath: ViewerTests.packageRoot + "/viewer/test")
            for module in try FileManager.default.contentsOfDirectory(atPath: ViewerTests.packageRoot + "/viewer/src")
            where module.hasSuffix(".js") && !["main.js", "thumbhash.js"].contains(module) {
                #expect(tests.contains(module.replacingOccurrences(of: ".js", with: ".test.js")), "\(module) has no tests")
            }
            #expect(run.stdout.contains("- the fallback layout is the LayoutEngine's for every case given\n"))
            #expect(run.stdout.contains("- justified rows are JustifiedRows' for every case given\n"))
            #expect(run.stdout.contains("- every code's aspect and every page's rows and heights are the build's\n"))
        }
    }
}
