import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("The timeline's geometry")
struct TimelineTests {
    @Test("aspect codes hold a picture's aspect within 0.08 %, 1:8 to 8:1; row lengths of any size round-trip")
    func codes() throws {
        var random = SplitMix64(state: 0x71AE_11E5)
        for _ in 0..<20_000 {
            let aspect = exp(Double.random(in: log(0.125)...log(7.99), using: &random))
            let code = GridGeometry.code(aspect: aspect)
            #expect(abs(GridGeometry.aspect(code: code) / aspect - 1) <= 0.0008, "\(aspect) → \(code)")
            #expect(GridGeometry.codes(GridGeometry.encode(codes: [code])) == [code])
        }
        #expect(GridGeometry.aspect(code: GridGeometry.code(aspect: 0.01)) == 0.125)
        #expect(GridGeometry.aspect(code: GridGeometry.code(aspect: 100)) < 8.0)
        #expect(GridGeometry.aspect(code: GridGeometry.code(aspect: .nan)) == 1)
        #expect(
            GridGeometry.aspect(code: GridGeometry.code(aspect: 4.0 / 3)) != GridGeometry.aspect(code: GridGeometry.code(aspect: 3.0 / 2)))
        let lengths = [1, 2, 62, 63, 64, 200, 4095, 3]
        #expect(GridGeometry.rowLengths(GridGeometry.encode(rowLengths: lengths)) == lengths)
        for bad in ["A", "_B", "*", "_AB"] { #expect(GridGeometry.rowLengths(bad) == nil, "\(bad)") }
        for bad in ["A", "!!", "__"] { #expect(GridGeometry.codes(bad) == nil, "\(bad)") }
    }

    /// 600 photos of six aspects over three months, ordered by date: three pages.
    static func library(_ root: String) throws {
        let shapes = [(400, 300), (300, 400), (640, 360), (300, 300), (900, 300), (200, 600)]
        try Fixtures.makeLibrary(
            root + "/lib",
            (0..<600).map { index in
                let (width, height) = shapes[index * 7 % shapes.count]
                let month = 3 + index / 200
                return .photo(
                    String(format: "IMG_%04d.jpg", index), width: width / 4 + index % 5, height: height / 4,
                    exif: ["exif-ifd2-DateTimeOriginal": String(format: "2024:%02d:%02d 10:%02d:00", month, 1 + index % 28, index % 60)])
            })
    }

    @Test(
        "a build's pages carry every viewport's rows and heights, the sections their sum, the timeline each month's offset; validate checks them all"
    )
    func geometry() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Self.library(root)
            var options = BuildOptions(source: root + "/lib", output: root + "/out", order: .date)
            options.stacks = .none
            _ = try await Builder(options: options).run()
            let reader = try ManifestFile.open(root + "/out/manifest.json")
            let document = reader.document
            let pages = try #require(document.sections.first?.pages)
            #expect(pages.count == 3)
            for page in pages {
                let grid = try reader.gridPage(page)
                let codes = try #require(page.aspects.flatMap(GridGeometry.codes))
                #expect(codes.count == grid.shownCells.count)
                for (code, cell) in zip(codes, grid.shownCells) {
                    #expect(abs(GridGeometry.aspect(code: code) / (Double(cell.width) / Double(cell.height)) - 1) <= 0.0008)
                }
                for viewport in document.settings.viewports {
                    let laid = JustifiedRows.page(aspects: codes.map(GridGeometry.aspect(code:)), windowWidth: viewport.width)
                    #expect(page.rows?[viewport.name].flatMap(GridGeometry.rowLengths) == laid.rows.map(\.cells.count))
                    #expect(page.heights?[viewport.name] == GridGeometry.rounded(laid.height))
                    // Every row but the page's last fills the grid's width.
                    for row in laid.rows.dropLast() {
                        let across = row.widths.reduce(0, +) + JustifiedRows.gap * Double(row.widths.count - 1)
                        #expect(abs(across - JustifiedRows.gridWidth(forWindowWidth: viewport.width)) < 1e-6)
                    }
                }
            }
            // The months, in order, each where its first photo is.
            let timeline = try #require(document.timeline)
            #expect(timeline.map(\.label) == ["2024-03", "2024-04", "2024-05"])
            let phone = try #require(document.settings.viewports.first { $0.name == "phone" })
            let grid = try #require(reader.timeline(windowWidth: phone.width))
            for entry in timeline {
                let shown = try reader.cell(GridTimeline.Cell(section: entry.section, page: entry.page, cell: entry.cell))
                #expect(shown.captured?.hasPrefix(entry.label) == true, "\(entry)")
                let offset = try #require(grid.offset(of: entry))
                #expect(abs(offset - (entry.offsets["phone"] ?? -1)) <= 0.02, "\(entry.label): \(offset)")
            }
            // The whole grid's height is known from the top document: the sections' heights.
            let total = document.sections.reduce(0) { $0 + ($1.heights?["phone"] ?? 0) }
            #expect(abs(grid.height - total) <= 0.01 * Double(pages.count) && total > 1000)
            // A band's cells: every one meets it, in order, and they are the rows there.
            let band = grid.cells(in: 3000...3844)
            #expect(!band.isEmpty && band.allSatisfy { $0.y <= 3844 && $0.y + $0.height >= 3000 })
            #expect(band.map { $0.page * 1000 + $0.cell } == band.map { $0.page * 1000 + $0.cell }.sorted())
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])

            // Tampered: a height, and the aspects of a page.
            var text = try String(contentsOfFile: root + "/out/manifest.json", encoding: .utf8)
            let height = String(describing: try #require(pages[0].heights?["phone"]))
            text = text.replacingOccurrences(of: "\"phone\" : \(height)", with: "\"phone\" : 1")
            let aspects = try #require(pages[2].aspects)
            text = text.replacingOccurrences(of: aspects, with: String(aspects.reversed()))
            try Fixtures.write(Array(text.utf8), to: root + "/out/manifest.json")
            for format in Precompressed.allCases {
                try? FileManager.default.removeItem(atPath: root + "/out/manifest.json" + format.suffix)
            }
            let problems = try ManifestValidator.problems(at: root + "/out/manifest.json")
            #expect(problems.contains { $0.contains("heights is not its grid page's geometry") }, "\(problems)")
            #expect(problems.contains { $0.contains("aspects is not its grid page's geometry") }, "\(problems)")
            // The section's heights and the offsets of the months after the first page follow from its height.
            #expect(problems.contains { $0.hasPrefix("section ") && $0.contains("heights") }, "\(problems)")
            #expect(problems.contains { $0.contains("timeline is not the pages'") }, "\(problems)")
        }
    }

    @Test("ordered by name, the timeline marks each section at its offset")
    func sections() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(
                root + "/lib", (0..<30).map { .photo("\(["a", "b", "c"][$0 % 3])/\($0).jpg", width: 40 + $0, height: 30) })
            _ = try await Builder(options: BuildOptions(source: root + "/lib", output: root + "/out")).run()
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            let timeline = try #require(document.timeline)
            #expect(timeline.map(\.label) == ["a", "b", "c"] && timeline.allSatisfy { $0.cell == 0 && $0.page == 0 })
            for (entry, section) in zip(timeline.dropFirst(), document.sections) {
                #expect(
                    entry.offsets["desktop"]
                        == GridGeometry.rounded(
                            timeline[entry.section - 1].offsets["desktop"]! + section.heights!["desktop"]!))
            }
        }
    }
}
