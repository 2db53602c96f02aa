import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

@Suite("Sections, order and layouts")
struct SectionTests {
    /// Three photos with EXIF capture times on two days, and one without EXIF whose file date
    /// is 2020-01-01 (UTC).
    static func makeLibrary(_ source: String) throws {
        let taken = "exif-ifd2-DateTimeOriginal"
        try Fixtures.makeLibrary(
            source,
            [
                .photo("a.jpg", width: 400, height: 300, exif: [taken: "2019:06:02 10:00:00"]),
                .photo("b.jpg", width: 300, height: 400, exif: [taken: "2019:06:01 18:00:00"]),
                .photo("sub/c.jpg", width: 1080, height: 7000, exif: [taken: "2019:06:01 09:00:00"]),
                .photo("d.jpg", width: 500, height: 500),
            ])
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_577_880_000)], ofItemAtPath: source + "/d.jpg")  // 2020-01-01T12:00Z
    }

    static func build(_ root: String, _ options: (inout BuildOptions) -> Void) async throws -> Manifest {
        var buildOptions = BuildOptions(source: root + "/lib", output: root + "/out-\(UUID().uuidString)")
        options(&buildOptions)
        return try ManifestFile.load(try await Builder(options: buildOptions).run().manifestPath)
    }

    static func expectConsistent(_ manifest: Manifest) throws {
        var start = 0
        for (index, section) in manifest.sections.enumerated() {
            #expect(section.count > 0 && section.start == start)
            for item in manifest.items[section.start..<section.start + section.count] {
                #expect(item.section == index && item.index == section.start + item.item)
            }
            start += section.count
        }
        #expect(start == manifest.items.count)
        let map = try IndexMap(manifest)
        for item in manifest.items {
            #expect(try map.position(of: item.index) == IndexMap.Position(section: item.section, item: item.item))
        }
    }

    @Test("by capture day, in capture order")
    func byDate() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Self.makeLibrary(root + "/lib")
            let manifest = try await Self.build(root) {
                $0.sections = .date
                $0.order = .date
            }
            #expect(manifest.sections.map(\.name) == ["2019-06-01", "2019-06-02", "2020-01-01"])
            #expect(manifest.items.map(\.path) == ["sub/c.jpg", "b.jpg", "a.jpg", "d.jpg"])
            #expect(manifest.settings.sections == .date && manifest.settings.order == .date)
            try Self.expectConsistent(manifest)
        }
    }

    @Test("one section; name order and date order")
    func single() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Self.makeLibrary(root + "/lib")
            let byName = try await Self.build(root) { $0.sections = .none }
            #expect(byName.sections.map(\.name) == ["."] && byName.sections.map(\.title) == ["lib"])
            #expect(byName.items.map(\.path) == ["a.jpg", "b.jpg", "d.jpg", "sub/c.jpg"])
            try Self.expectConsistent(byName)
            let byDate = try await Self.build(root) {
                $0.sections = .none
                $0.order = .date
            }
            #expect(byDate.items.map(\.path) == ["sub/c.jpg", "b.jpg", "a.jpg", "d.jpg"])
            let directories = try await Self.build(root) { $0.order = .date }
            #expect(directories.sections.map(\.name) == [".", "sub"])
            #expect(directories.items.map(\.path) == ["b.jpg", "a.jpg", "d.jpg", "sub/c.jpg"])
        }
    }

    @Test("every item is laid out in every viewport with the chosen preset")
    func layouts() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Self.makeLibrary(root + "/lib")
            let defaults = try await Self.build(root) { _ in }
            #expect(defaults.settings.preset == .jx3 && defaults.settings.viewports == Viewport.defaults)
            #expect(defaults.settings.frontend == FrontendConstants.of(.jx3))
            #expect(defaults.settings.frontend.pageSpacing == 30)
            for item in defaults.items {
                #expect(Set(item.layouts.keys) == Set(Viewport.defaults.map(\.name)))
                for viewport in Viewport.defaults {
                    var layout = item.layouts[viewport.name]
                    layout?.ladder = nil  // the item's renditions: LadderTests
                    #expect(
                        layout
                            == LayoutEngine.layout(
                                width: item.image.width, height: item.image.height, viewport: viewport, preset: .jx3))
                }
            }
            let long = try #require(defaults.items.first { $0.path == "sub/c.jpg" })
            #expect(long.layouts["phone"]?.long == true && long.layouts["phone-landscape"]?.long == false)

            let watch = try Viewport(parsing: "watch=198x242@2")
            let custom = try await Self.build(root) {
                $0.viewports = [watch]
                $0.preset = .photoswipe
            }
            #expect(custom.settings.viewports == [watch] && custom.settings.frontend.pageSpacing == 0.1)
            #expect(custom.items.allSatisfy { Array($0.layouts.keys) == ["watch"] })
        }
    }
}
