import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("Frontend numbers")
struct FrontendTests {
    @Test("settings name the thumbnail a lightbox loads and the srcset family of fit recipes")
    func displayAndSrcset() throws {
        let recipes = try ["grid=256x256:cover", "preview=1280x1280:fit", "medium=640x640:fit:webp", "strip=2000x200:fit"]
            .map(ThumbnailRecipe.init(parsing:))
        let settings = Manifest.Settings(preset: .photoswipe, thumbnails: recipes)
        #expect(settings.srcset == ["strip", "medium", "preview"], "smallest box first; covers are not in it")
        #expect(settings.display == "preview")
        #expect(Manifest.Settings(thumbnails: [try ThumbnailRecipe(parsing: "grid=256x256:cover")]).display == nil)
        var options = BuildOptions(source: "/tmp/a", output: "/tmp/b", preset: .photoswipe)
        options.originalURL = ""
        #expect(throws: ThumbframeError.self) { try options.validate() }
    }

    @Test("photoswipe layouts are PhotoSwipe's numbers for the preview it loads; with --original-url, for the original")
    func photoswipeLoadsThePreview() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Fixtures.writeImage(to: root + "/lib/photo.jpg", width: 2000, height: 1500)
            for originalURL in [nil, "https://photos.example/originals/"] {
                let out = root + "/out-\(originalURL == nil ? "preview" : "original")"
                var options = BuildOptions(source: root + "/lib", output: out, preset: .photoswipe).zooming(.ladder)
                options.originalURL = originalURL
                let (report, manifest) = try await Fixtures.build(options)
                let item = try #require(manifest.items.first)
                let preview = try #require(item.thumbnails["preview"])
                #expect((preview.width, preview.height) == (1280, 960))
                #expect(manifest.settings.display == "preview" && manifest.settings.originalURL == originalURL)
                let loaded = originalURL == nil ? (1280, 960) : (2000, 1500)
                for viewport in Viewport.defaults {
                    var layout = try #require(item.layouts[viewport.name])
                    let expected = LayoutEngine.layout(width: loaded.0, height: loaded.1, viewport: viewport, preset: .photoswipe)
                    // The geometry is the engine's; the zoom ladder is the item's own (LadderTests),
                    // and there is none where the original is shown.
                    #expect((layout.ladder == nil) == (originalURL != nil))
                    layout.ladder = nil
                    #expect(layout == expected, "\(viewport.name)")
                }
                // PhotoSwipe's "max" zoom for the 1280 px file on the desktop viewport: 4 × fit.
                let desktop = try #require(item.layouts["desktop"])
                #expect(abs(desktop.zoom.max - (originalURL == nil ? 3.75 : 2.4)) < 1e-9)
                #expect(desktop.frame == Manifest.Rect(x: 120, y: 0, width: 1200, height: 900))
                #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            }
        }
    }
}
