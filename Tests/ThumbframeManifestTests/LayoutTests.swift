import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@Suite("Layout engine")
struct LayoutTests {
    static let portrait = Viewport(name: "p", width: 390, height: 844, scale: 3)
    static let landscape = Viewport(name: "l", width: 844, height: 390, scale: 3)

    /// One row of the worked-example table of ../shared/SPEC.md §5 (the product specification beside the repository).
    struct Example: Sendable, CustomStringConvertible {
        var width: Int, height: Int, viewport: Viewport
        var jx3Frame: [Double], jx3MaxOffsetY: Double, native: Double
        var jx4Frame: [Double], jx4DoubleTap: Double
        var description: String { "\(width)×\(height) in \(viewport.width)×\(viewport.height)" }
    }

    static let examples: [Example] = [
        Example(
            width: 4000, height: 3000, viewport: portrait, jx3Frame: [0, 275.75, 390, 292.5], jx3MaxOffsetY: 0,
            native: 3.42, jx4Frame: [0, 275.75, 390, 292.5], jx4DoubleTap: 2.885),
        Example(
            width: 4000, height: 3000, viewport: landscape, jx3Frame: [162, 0, 520, 390], jx3MaxOffsetY: 0,
            native: 2.56, jx4Frame: [162, 0, 520, 390], jx4DoubleTap: 1.623),
        Example(
            width: 1080, height: 7000, viewport: portrait, jx3Frame: [0, 0, 390, 2527.78], jx3MaxOffsetY: 1683.78,
            native: 0.92, jx4Frame: [129.89, 0, 130.22, 844], jx4DoubleTap: 2.995),
        Example(
            width: 1080, height: 7000, viewport: landscape, jx3Frame: [391.91, 0, 60.17, 390], jx3MaxOffsetY: 0,
            native: 5.98, jx4Frame: [391.91, 0, 60.17, 390], jx4DoubleTap: 14.027),
        Example(
            width: 300, height: 200, viewport: portrait, jx3Frame: [0, 292, 390, 260], jx3MaxOffsetY: 0,
            native: 0.26, jx4Frame: [0, 292, 390, 260], jx4DoubleTap: 3.246),
        Example(
            width: 300, height: 200, viewport: landscape, jx3Frame: [129.5, 0, 585, 390], jx3MaxOffsetY: 0,
            native: 0.17, jx4Frame: [129.5, 0, 585, 390], jx4DoubleTap: 1.443),
    ]

    static func values(_ rect: Manifest.Rect) -> [Double] { [rect.x, rect.y, rect.width, rect.height] }

    static func expectClose(_ found: [Double], _ expected: [Double], _ label: String) {
        #expect(found.count == expected.count)
        for (a, b) in zip(found, expected) {
            #expect(abs(a - b) <= 0.01, "\(label): \(found) vs \(expected)")
        }
    }

    @Test("the specification's worked examples (../shared/SPEC.md §5), to 0.01", arguments: examples)
    func workedExample(_ example: Example) {
        let jx3 = LayoutEngine.layout(width: example.width, height: example.height, viewport: example.viewport, preset: .jx3)
        Self.expectClose(Self.values(jx3.frame), example.jx3Frame, "jx3 frame \(example)")
        Self.expectClose([jx3.maxOffset.y, jx3.zoom.native], [example.jx3MaxOffsetY, example.native], "jx3 \(example)")
        #expect(jx3.long == (example.jx3MaxOffsetY > 0))
        #expect([jx3.zoom.min, jx3.zoom.max, jx3.zoom.doubleTap] == [1, 2, 2])
        #expect([jx3.contentSize.width, jx3.contentSize.height] == [jx3.frame.width, jx3.frame.height])
        let jx4 = LayoutEngine.layout(width: example.width, height: example.height, viewport: example.viewport, preset: .jx4)
        Self.expectClose(Self.values(jx4.frame), example.jx4Frame, "jx4 frame \(example)")
        Self.expectClose([jx4.zoom.doubleTap], [example.jx4DoubleTap], "jx4 doubleTap \(example)")
        #expect(!jx4.long && jx4.maxOffset == Layout.Point(x: 0, y: 0) && jx4.zoom.max == 3)
    }

    @Test("PhotoSwipe zoom levels")
    func photoswipe() {
        // 4000×3000 on 390×844@3: fit = 390/4000; secondary = 3 × fit; max = max(1, 4 × fit) = 1.
        let big = LayoutEngine.layout(width: 4000, height: 3000, viewport: Self.portrait, preset: .photoswipe)
        Self.expectClose([big.zoom.min, big.zoom.doubleTap, big.zoom.max, big.zoom.native], [0.0975, 0.2925, 1, 0.3333], "big")
        Self.expectClose(Self.values(big.frame), [0, 276, 390, 292.5], "big frame")
        // A small image is never enlarged: fit 1, secondary 1, max 4.
        let small = LayoutEngine.layout(width: 300, height: 200, viewport: Self.portrait, preset: .photoswipe)
        #expect([small.zoom.min, small.zoom.doubleTap, small.zoom.max] == [1, 1, 4])
        #expect(Self.values(small.frame) == [45, 322, 300, 200])
        // Secondary is lowered so that it shows at most 4000 image pixels across.
        let wide = LayoutEngine.layout(
            width: 20000, height: 1000, viewport: Viewport(name: "d", width: 1440, height: 900, scale: 2), preset: .photoswipe)
        Self.expectClose([wide.zoom.doubleTap], [0.2], "wide secondary")
    }

    @Test("pixel preset zooms to device pixels")
    func pixelPreset() {
        let layout = LayoutEngine.layout(width: 4000, height: 3000, viewport: Self.portrait, preset: .pixel)
        Self.expectClose([layout.zoom.max, layout.zoom.doubleTap, layout.zoom.native], [3.4188, 2.8855, 3.4188], "pixel")
        let small = LayoutEngine.layout(width: 300, height: 200, viewport: Self.portrait, preset: .pixel)
        #expect(small.zoom.max == 2 && small.zoom.doubleTap == 2)
    }

    @Test("properties over 5000 random images and viewports", arguments: LayoutPreset.allCases)
    func properties(preset: LayoutPreset) {
        var random = SplitMix64(state: 0x7468_756D_6266_7261)
        for case_ in 0..<5000 {
            let width = Int.random(in: 1...30_000, using: &random)
            let height = Int.random(in: 1...30_000, using: &random)
            let viewport = Viewport(
                name: "v", width: Double(Int.random(in: 200...3000, using: &random)),
                height: Double(Int.random(in: 200...3000, using: &random)),
                scale: [1, 1.5, 2, 3][Int.random(in: 0...3, using: &random)])
            let layout = LayoutEngine.layout(width: width, height: height, viewport: viewport, preset: preset)
            let label = "case \(case_): \(width)×\(height) in \(viewport.width)×\(viewport.height)@\(viewport.scale) \(preset)"
            let frame = layout.frame
            // Aspect ratio kept (up to the 4-decimal rounding of a side that may be tiny).
            let expectedHeight = frame.width * Double(height) / Double(width)
            #expect(abs(frame.height - expectedHeight) <= 0.0001 * max(1, Double(height) / Double(width)) + 0.0001, "\(label)")
            // Inside the viewport, but for a long image's height.
            #expect(frame.x >= 0 && frame.y >= 0, "\(label)")
            #expect(frame.x + frame.width <= viewport.width + 0.001, "\(label)")
            if !layout.long { #expect(frame.y + frame.height <= viewport.height + 0.001, "\(label)") }
            // Long exactly when the preset says so.
            let shouldBeLong =
                (preset == .jx3 || preset == .pixel) && viewport.width < viewport.height
                && Double(height) / Double(width) > viewport.height / viewport.width
            #expect(layout.long == shouldBeLong, "\(label)")
            if layout.long {
                #expect(frame.y == 0 && abs(frame.width - viewport.width) < 0.001, "\(label)")
                #expect(abs(layout.maxOffset.y - (frame.height - viewport.height)) < 0.001, "\(label)")
            }
            #expect(layout.maxOffset.x >= 0 && layout.maxOffset.y >= 0, "\(label)")
            #expect(layout.contentSize.width == frame.width && layout.contentSize.height == frame.height, "\(label)")
            // Zoom limits are ordered, and a double tap stays within them, except jx4's: ../shared/SPEC.md §5
            // defines it as the fill ratio, which may exceed max 3 (its own worked example has
            // 14.027); UIScrollView clamps a zoom to maximumZoomScale.
            let zoom = layout.zoom
            #expect(zoom.min > 0 && zoom.min <= zoom.max && zoom.min <= zoom.doubleTap, "\(label)")
            if preset != .jx4 { #expect(zoom.doubleTap <= zoom.max, "\(label)") }
            #expect(zoom.native > 0, "\(label)")
            // Fitting touches the viewport on one side unless PhotoSwipe refuses to enlarge.
            if preset != .photoswipe && !layout.long {
                let touches = abs(frame.width - viewport.width) < 0.001 || abs(frame.height - viewport.height) < 0.001
                #expect(touches, "\(label)")
            }
        }
    }
}

@Suite("IndexMap")
struct IndexMapTests {
    @Test func roundTripsWithEmptySections() throws {
        let map = try IndexMap(counts: [0, 3, 0, 0, 1, 2, 0])
        #expect(map.count == 6 && map.sectionCount == 7)
        let expected = [(1, 0), (1, 1), (1, 2), (4, 0), (5, 0), (5, 1)]
        for (index, (section, item)) in expected.enumerated() {
            #expect(try map.position(of: index) == IndexMap.Position(section: section, item: item))
            #expect(try map.index(of: IndexMap.Position(section: section, item: item)) == index)
        }
    }

    @Test func randomRoundTrips() throws {
        var random = SplitMix64(state: 42)
        for _ in 0..<200 {
            let counts = (0..<Int.random(in: 0...40, using: &random)).map { _ in
                Int.random(in: 0...3, using: &random) == 0 ? 0 : Int.random(in: 1...50, using: &random)
            }
            let map = try IndexMap(counts: counts)
            #expect(map.count == counts.reduce(0, +))
            var index = 0
            for (section, count) in counts.enumerated() {
                for item in 0..<count {
                    let position = try map.position(of: index)
                    #expect(position == IndexMap.Position(section: section, item: item))
                    #expect(try map.index(of: position) == index)
                    index += 1
                }
            }
        }
    }

    @Test func hugeSections() throws {
        let map = try IndexMap(counts: [1_000_000_000, 0, 5, 2_000_000_000])
        #expect(try map.position(of: 999_999_999) == IndexMap.Position(section: 0, item: 999_999_999))
        #expect(try map.position(of: 1_000_000_000) == IndexMap.Position(section: 2, item: 0))
        #expect(try map.position(of: 3_000_000_004) == IndexMap.Position(section: 3, item: 1_999_999_999))
        #expect(try map.index(of: IndexMap.Position(section: 3, item: 7)) == 1_000_000_012)
        #expect(throws: IndexMapError.tooManyItems) { try IndexMap(counts: [Int.max, 1]) }
    }

    @Test func typedErrorsOutOfRange() throws {
        let map = try IndexMap(counts: [2, 0, 1])
        #expect(throws: IndexMapError.indexOutOfRange(index: 3, count: 3)) { try map.position(of: 3) }
        #expect(throws: IndexMapError.indexOutOfRange(index: -1, count: 3)) { try map.position(of: -1) }
        #expect(throws: IndexMapError.sectionOutOfRange(section: 3, sectionCount: 3)) {
            try map.index(of: IndexMap.Position(section: 3, item: 0))
        }
        #expect(throws: IndexMapError.itemOutOfRange(section: 1, item: 0, count: 0)) {
            try map.index(of: IndexMap.Position(section: 1, item: 0))
        }
        #expect(throws: IndexMapError.negativeCount(section: 0, count: -1)) { try IndexMap(counts: [-1]) }
        let empty = try IndexMap(counts: [])
        #expect(throws: IndexMapError.indexOutOfRange(index: 0, count: 0)) { try empty.position(of: 0) }
        #expect(
            IndexMapError.itemOutOfRange(section: 1, item: 0, count: 0).localizedDescription
                == "item 0 is out of range: section 1 is empty")
    }
}

@Suite("Viewports")
struct ViewportTests {
    @Test func parses() throws {
        #expect(try Viewport(parsing: "phone=390x844@3") == Viewport(name: "phone", width: 390, height: 844, scale: 3))
        #expect(try Viewport(parsing: "w=1280.5x720@1.5").width == 1280.5)
        #expect(try Viewport(parsing: "390x844@3", requireName: false).name == "390x844@3")
    }

    @Test(arguments: ["390x844@3", "p=390x844", "p=390@3", "p=0x844@3", "p=390x844@0", "p=390x844@x", "=390x844@3", "p q=1x1@1"])
    func rejects(text: String) {
        #expect(throws: ManifestError.self) { try Viewport(parsing: text) }
    }
}

/// The model library is for frontends (an iOS app imports it alone): it must need nothing but
/// Foundation. `swift build --target ThumbframeManifest` in scripts/test proves it builds alone;
/// this guards the sources.
@Test("ThumbframeManifest imports only Foundation")
func manifestLibraryIsPureSwift() throws {
    let sources = URL(fileURLWithPath: Fixtures.packageRoot + "/Sources/ThumbframeManifest")
    let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
    #expect(files.count >= 5)
    for file in files {
        let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
        let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") }
        #expect(imports.allSatisfy { $0 == "import Foundation" }, "\(file): \(imports)")
    }
}
