import CThumbframeShim
import Foundation
import Testing
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeManifest

@Suite("Zoom ladder")
struct LadderTests {
    static func image(_ width: Int, _ height: Int) -> Manifest.ImageInfo {
        Manifest.ImageInfo(
            format: "jpeg", width: width, height: height, storedWidth: width, storedHeight: height, orientation: 1, pages: 1,
            hasAlpha: false, interlaced: false)
    }

    @Test("a photo gets the rungs its viewports need at the maximum zoom and its original has the pixels for, never larger")
    func rungs() throws {
        let settings = Manifest.Settings.zoomed()
        #expect(settings.ladder?.renditions.map(\.name) == ["zoom-2560", "zoom-4096"])
        func names(_ width: Int, _ height: Int, kind: Manifest.Kind = .photo, _ settings: Manifest.Settings = settings)
            -> [String]
        {
            settings.ladderRecipes(image: Self.image(width, height), kind: kind).map(\.name)
        }
        // The desktop at jx3's zoom 2 needs 5 400 px across a 3:2 photo: both rungs.
        #expect(names(6000, 4000) == ["zoom-2560", "zoom-4096"])
        // The original has fewer pixels than the second box: it is the last rung, at its own size.
        #expect(names(3000, 2000) == ["zoom-2560", "zoom-4096"])
        // No more pixels than the preview: nothing past it.
        #expect(names(1200, 800) == [])
        #expect(names(1400, 900) == ["zoom-2560"])
        #expect(names(6000, 4000, kind: .video) == [] && names(6000, 4000, kind: .animated) == [])
        // Only the phone: 390 pt at @3, zoom 2 needs 2 340 px, which the 2560 rung covers.
        let phone = Manifest.Settings.zoomed(viewports: [Viewport(name: "phone", width: 390, height: 844, scale: 3)])
        #expect(names(6000, 4000, phone) == ["zoom-2560"])
        // Where a frontend shows the original (browsers decode JPEG), it is the picture at every zoom;
        // a HEIC's original is not shown, so it keeps its rungs.
        let originals = Manifest.Settings.zoomed(originalURL: "originals/")
        #expect(names(6000, 4000, originals).isEmpty)
        var heic = Self.image(6000, 4000)
        heic.format = "heic"
        #expect(originals.ladderRecipes(image: heic, kind: .photo).map(\.name) == ["zoom-2560", "zoom-4096"])
        #expect(Manifest.Settings.zoomed(ladderMaxSide: 0).ladder == nil && Manifest.Settings.zoomed(ladderMaxSide: 1280).ladder == nil)
        #expect(Manifest.Settings.zoomed(ladderMaxSide: 3000).ladder?.renditions.map(\.name) == ["zoom-2560", "zoom-3000"])
    }

    @Test(
        "each layout names the item's renditions smallest first with the zoom up to which each is sharp; the last reaches the maximum zoom or the original's pixels or the cap",
        arguments: [LayoutPreset.jx3, .jx4, .photoswipe, .pixel])
    func layoutRungs(preset: LayoutPreset) throws {
        let settings = Manifest.Settings.zoomed(preset: preset)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let image = Self.image(Int.random(in: 200...12_000, using: &generator), Int.random(in: 200...12_000, using: &generator))
            var thumbnails: [String: Manifest.Thumbnail] = [:]
            for recipe in settings.thumbnails + settings.ladderRecipes(image: image, kind: .photo) where recipe.fit == .fit {
                let size = recipe.fittedSize(width: image.width, height: image.height)
                thumbnails[recipe.name] = Manifest.Thumbnail(path: "", width: size.width, height: size.height, crop: nil)
            }
            for viewport in settings.viewports {
                let layout = settings.layout(image: image, kind: .photo, thumbnails: thumbnails, in: viewport)
                let rungs = try #require(layout.ladder)
                #expect(rungs.map(\.name).first == "small" && Set(rungs.map(\.name)) == Set(thumbnails.keys))
                #expect(rungs.map(\.native) == rungs.map(\.native).sorted())
                for rung in rungs {
                    // One rendition pixel per device pixel at `native`, in the layout's zoom units.
                    let across = layout.frame.width / layout.zoom.min * rung.native * viewport.scale
                    #expect(abs(across - Double(thumbnails[rung.name]!.width)) <= 0.01 * across, "\(rung.name) \(across)")
                }
                // The rendition an app loads covers the device's pixels up to the last rung.
                for zoom in stride(from: layout.zoom.min, through: layout.zoom.max, by: (layout.zoom.max - layout.zoom.min) / 7) {
                    let name = try #require(layout.rendition(forZoom: zoom))
                    let chosen = try #require(rungs.first { $0.name == name })
                    #expect(chosen.native >= zoom - 0.0001 || chosen == rungs.last)
                    #expect(rungs.allSatisfy { $0.native >= zoom - 0.0001 ? $0.native >= chosen.native : true })
                }
                let last = try #require(rungs.last.flatMap { thumbnails[$0.name] })
                let atOriginal = last.width == image.width
                let atCap = max(last.width, last.height) == settings.ladder?.maxSide
                let sharp = rungs.last!.native >= layout.zoom.max - 0.001
                // photoswipe lays out the preview's pixels, so the original's are the bound.
                #expect(sharp || atOriginal || atCap, "\(image.width)×\(image.height) in \(viewport.name): \(rungs)")
            }
        }
    }

    @Test("a build writes the renditions a large photo needs and none for a small one; the cap rebuilds and prunes them")
    func build() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Pixels.zonePlate(size: 3000).save(root + "/lib/large.jpg[Q=95]")
            try Fixtures.writeImage(to: root + "/lib/small.jpg", width: 900, height: 600)
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out", zoom: .ladder)
            let large = try #require(manifest.items.first { $0.path == "large.jpg" })
            let small = try #require(manifest.items.first { $0.path == "small.jpg" })
            #expect(large.thumbnails["zoom-2560"]?.width == 2560 && large.thumbnails["zoom-4096"]?.width == 3000)
            #expect(Set(small.thumbnails.keys) == ["grid", "small", "preview"])
            #expect(large.layouts["desktop"]?.ladder?.last?.name == "zoom-4096")
            // The renditions are the original reduced once, like every thumbnail: as close to an
            // exact Lanczos3 of the decode as that reduction saved at the same quality is.
            let full = try Pixels.Image.from(file: root + "/lib/large.jpg")
            let exact = try full.apply { tf_resize_exact($0, $1, 2560, 2560, 0) }
            try exact.save(root + "/exact.jpg[Q=82]")
            let best = Pixels.psnr(try Fixtures.decode(root + "/exact.jpg"), try exact.decoded())
            let psnr = Pixels.psnr(try #require(decoded["large.jpg#zoom-2560"]), try exact.decoded())
            #expect(psnr >= best - 0.5, "zoom-2560: \(psnr) dB, the exact reduction at q82 \(best) dB")
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json") == [])
            let document = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(document.summary.thumbnails["zoom-2560"] == 1 && (document.summary.thumbnailBytes["zoom-4096"] ?? 0) > 0)
            let paths = ["zoom-2560", "zoom-4096"].compactMap { large.thumbnails[$0]?.path }
            #expect(paths.allSatisfy { FileManager.default.fileExists(atPath: root + "/out/" + $0) })

            // The placeholder is the recipes' (reduced from the preview), not a rendition's.
            var plain = BuildOptions(source: root + "/lib", output: root + "/plain")
            plain.ladderMaxSide = 0
            let (_, unladdered) = try await Fixtures.build(plain)
            #expect(unladdered.items.first { $0.path == "large.jpg" }?.placeholder == large.placeholder)

            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.ladderMaxSide = 0
            let report = try await Builder(options: options).run()
            #expect(report.thumbnailsWritten == 0 && report.pruned == 2)
            #expect(paths.allSatisfy { !FileManager.default.fileExists(atPath: root + "/out/" + $0) })
            let without = try ManifestFile.open(root + "/out/manifest.json").document
            #expect(without.settings.ladder == nil && without.summary.thumbnails["zoom-2560"] == nil)
        }
    }
}
