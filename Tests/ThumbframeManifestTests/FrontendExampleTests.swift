import Foundation
import Testing
import ThumbframeManifest

/// The README's Swift frontend example, compiled and run, so the README stays true.
@Test("README frontend example")
func readmeFrontendExample() throws {
    let manifestData = try ManifestCodingTests.sample().encoded()

    let manifest = try Manifest.decode(from: manifestData)
    let sections = try IndexMap(manifest)
    let numberOfSections = manifest.sections.count
    let itemsInFirst = try sections.count(ofSection: 0)
    func cell(at position: IndexMap.Position) throws -> Manifest.Item {
        manifest.items[try sections.index(of: position)]
    }
    let numberOfItems = manifest.items.count
    func page(_ index: Int, viewport: String) -> Layout? {
        manifest.items[index].layouts[viewport]
    }
    let layout = LayoutEngine.layout(
        width: manifest.items[0].image.width, height: manifest.items[0].image.height,
        viewport: Viewport(name: "now", width: 430, height: 932, scale: 3), preset: manifest.settings.preset)

    #expect(numberOfSections == 1 && itemsInFirst == 1 && numberOfItems == 1)
    #expect(try cell(at: IndexMap.Position(section: 0, item: 0)).thumbnails["grid"]?.path == "thumbs/ab/ab.jpg")
    #expect(page(0, viewport: "phone")?.frame == Manifest.Rect(x: 0, y: 162, width: 390, height: 520))
    #expect(layout.frame.width == 430)
    #expect(try sections.position(of: 0) == IndexMap.Position(section: 0, item: 0))
}
