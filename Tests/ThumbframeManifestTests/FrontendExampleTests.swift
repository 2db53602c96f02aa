import Foundation
import Testing
import ThumbframeManifest

/// The Swift frontend example of docs/frontends.md, compiled and run, so the page stays true.
@Test("docs/frontends.md's Swift example")
func readmeFrontendExample() async throws {
    let files = try ManifestCodingTests.sampleFiles()
    let fetch: @Sendable (String) throws -> Data = { path in
        guard let data = files[path] else { throw CocoaError(.fileNoSuchFile) }
        return data
    }
    let topDocument = try #require(files["manifest.json"])

    // frontends.md begin
    // The top document is a few KB whatever the library's size; a page is read when shown.
    let reader = try ManifestReader(document: ManifestDocument.decode(from: topDocument), load: fetch)
    let sections = reader.indexMap
    let numberOfSections = reader.document.sections.count
    let itemsInFirst = try sections.count(ofSection: 0)
    func cell(at position: IndexMap.Position) throws -> Manifest.Item {
        try reader.item(at: sections.index(of: position))
    }
    let numberOfItems = reader.document.itemCount
    func page(_ index: Int, viewport: String) throws -> Layout? {
        try reader.item(at: index).layouts[viewport]
    }
    let first = try reader.item(at: 0)
    let layout = LayoutEngine.layout(
        width: first.image.width, height: first.image.height,
        viewport: Viewport(name: "now", width: 430, height: 932, scale: 3), preset: reader.document.settings.preset)
    switch first.kind {
    case .video:
        _ = first.video?.rendition?.path ?? first.path
    case .animated: _ = first.animation?.frames
    case .photo: _ = first.motion?.original ?? first.motion?.path
    }
    let videoCount = reader.document.summary.kinds["video", default: 0]
    let videos = try reader.items(of: .video)
    let gridSections = reader.gridSections
    let cellItem = try reader.item(at: IndexMap.Position(section: 0, item: 0))
    let cellThumbnail = reader.thumbnail(of: cellItem, forCellWidth: 80, height: 80, scale: 3)
    let placeholder = cellItem.placeholder?.picture
    let start = cellItem.aspectFillCrop(cellWidth: 80, cellHeight: 80)
    let landing = reader.layout(of: cellItem, in: Viewport(name: "now", width: 430, height: 932, scale: 3)).frame
    // Zooming: the rendition of the photo's zoom ladder that is sharp at the zoom the user reached
    // (nil for a video or without a ladder: show settings.display), swapped in as the zoom grows.
    let zoomed = reader.layout(of: cellItem, in: Viewport(name: "now", width: 430, height: 932, scale: 3))
    let sharpAtTwo = zoomed.rendition(forZoom: 2).flatMap { cellItem.thumbnails[$0]?.path }
    // Past the largest rendition a photo with deep-zoom tiles names "tiles": the DeepZoom level to draw.
    let tileLevel = cellItem.thumbnails["tiles"].flatMap { zoomed.tileLevel(forZoom: 2, tiles: $0) }
    let cells = try await reader.loadCells(in: 0..<min(30, numberOfItems))
    let cellPicture = cells.first.flatMap { reader.thumbnail(of: $0, forCellWidth: 110 * $0.aspectRatio, height: 110, scale: 3) }
    try await reader.loadPrefetch(around: 0)
    let screen = try await reader.loadItems(in: 0..<min(30, numberOfItems))
    var outOfRange = false
    do {
        _ = try reader.item(at: numberOfItems)
    } catch .outOfRange {
        outOfRange = true
    } catch .missing(let path) {
        print("not downloaded yet: \(path)")
    } catch {
        print("not a thumbframe manifest: \(error)")
    }
    // frontends.md end

    #expect(numberOfSections == 1 && itemsInFirst == 1 && numberOfItems == 1)
    #expect(try cell(at: IndexMap.Position(section: 0, item: 0)).thumbnails["grid"]?.path == "thumbs/ab/ab.jpg")
    #expect(try page(0, viewport: "phone")?.frame == Manifest.Rect(x: 0, y: 162, width: 390, height: 520))
    #expect(layout.frame.width == 430)
    #expect(first.kind == .photo && videoCount == 0 && videos.indexes.isEmpty && videos.map.count == 0)
    #expect(try sections.position(of: 0) == IndexMap.Position(section: 0, item: 0))
    #expect(screen.map(\.path) == [first.path] && outOfRange)
    // A manifest without grid pages (this one): the cells made from its pages.
    #expect(cells.map(\.path) == [first.path] && cells.first?.width == first.image.width)
    // Its only thumbnail is a square cover crop: none for a 3:4 justified cell (a square one takes it).
    #expect(cellPicture == nil)
    #expect(cells.first.flatMap { reader.thumbnail(of: $0, forCellWidth: 80, height: 80, scale: 3) }?.path == "thumbs/ab/ab.jpg")
    #expect(gridSections.map(\.count) == [1] && cellThumbnail?.path == "thumbs/ab/ab.jpg" && placeholder == nil)
    #expect(start == cellItem.thumbnails["grid"]?.crop && landing == layout.frame)
    // The sample's only thumbnail is a cover crop: nothing to zoom into, no ladder.
    #expect(zoomed.ladder == nil && sharpAtTwo == nil && tileLevel == nil)
}

/// The code above between its frontends.md markers is docs/frontends.md's `swift` block, statement
/// for statement (comments, imports and line breaks aside): the example that runs is the one printed.
@Test("docs/frontends.md's Swift example is the one that runs")
func readmeFrontendExampleIsTheReadmes() throws {
    let here = URL(fileURLWithPath: #filePath)
    let readme = try String(
        contentsOf: here.deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/frontends.md"), encoding: .utf8)
    let source = try String(contentsOf: here, encoding: .utf8)
    func code(_ text: Substring) -> String {
        text.split(separator: "\n")
            .map { line in line.range(of: "//").map { line[..<$0.lowerBound] } ?? line }
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("import ") }
            .joined().filter { !$0.isWhitespace }
    }
    let block = try #require(
        readme.firstRange(of: "```swift\n").flatMap { start in
            readme[start.upperBound...].firstRange(of: "```").map { readme[start.upperBound..<$0.lowerBound] }
        })
    let begin = try #require(source.firstRange(of: "// frontends.md " + "begin\n"))
    let end = try #require(source.firstRange(of: "// frontends.md " + "end"))
    #expect(code(source[begin.upperBound..<end.lowerBound]) == code(block))
    #expect(code(block).contains("ManifestReader(document:"))
}
