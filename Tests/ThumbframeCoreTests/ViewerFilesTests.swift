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

    @Test("the embedded viewer is viewer/'s files (run scripts/embed-viewer after editing them)")
    func embeddedCopyIsCurrent() throws {
        #expect(ViewerAssets.indexHTML + "\n" == (try Self.file("index.html")))
        #expect(ViewerAssets.script + "\n" == (try Self.file("thumbframe-viewer.js")))
        #expect(ViewerAssets.styleSheet + "\n" == (try Self.file("thumbframe-viewer.css")))
    }

    @Test("the viewer's fallback layout is the LayoutEngine's at window sizes no viewport has, for every preset (node --test)")
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
        try await Fixtures.withTemporaryDirectory { root in
            let path = root + "/cases.json"
            try JSONSerialization.data(withJSONObject: cases).write(to: URL(fileURLWithPath: path))
            let run = try await Processes.run(
                "/usr/bin/env", ["THUMBFRAME_LAYOUT_CASES=" + path, node, "--test", ViewerTests.packageRoot + "/viewer/test/"])
            #expect(run.status == 0, "\(run.stdout.suffix(2000)) \(run.stderr.suffix(500))")
            #expect(run.stdout.contains("# pass 1"), "\(run.stdout.suffix(300))")
        }
    }
}
