import Foundation
import Testing
import ThumbframeManifest

@Suite("Thumbnail recipes")
struct ThumbnailRecipeTests {
    @Test func parsesEveryPart() throws {
        let recipe = try ThumbnailRecipe(parsing: "grid=256x200:cover:webp:q75")
        #expect(recipe == ThumbnailRecipe(name: "grid", width: 256, height: 200, fit: .cover, format: .webp, quality: 75))
        #expect(recipe.canonicalRecipe == "256x200:cover:webp:q75")
        let defaults = try ThumbnailRecipe(parsing: "p=10x20")
        #expect((defaults.fit, defaults.format, defaults.quality) == (.fit, .jpeg, 80))
    }

    @Test(arguments: ["grid", "=10x10", "g=10", "g=0x10", "g=10x10:zoom", "g=10x10:q0", "g=10x10:q101", "g h=1x1", "g=axb"])
    func rejectsMalformed(text: String) {
        #expect(throws: ManifestError.self) { try ThumbnailRecipe(parsing: text) }
    }
}

@Suite("Manifest coding")
struct ManifestCodingTests {
    static func sample() -> Manifest {
        let item = Manifest.Item(
            index: 0, section: 0, item: 0, path: "2019/trip/IMG_0001.jpg",
            file: .init(bytes: 2_817_364, modified: "2019-06-01T10:00:00.123456789Z", sha256: String(repeating: "a", count: 64)),
            image: .init(
                format: "jpeg", width: 3024, height: 4032, storedWidth: 4032, storedHeight: 3024, orientation: 6,
                pages: 1, hasAlpha: false, interlaced: false),
            exif: .init(capturedAt: "2019-06-01T12:00:00", offset: "+02:00", make: "Apple", model: "iPhone X"),
            thumbnails: [
                "grid": .init(
                    path: "thumbs/ab/ab.jpg", width: 256, height: 256,
                    crop: .init(x: 0, y: 0.125, width: 1, height: 0.75))
            ],
            layouts: ["phone": LayoutEngine.layout(width: 3024, height: 4032, viewport: Viewport.defaults[0], preset: .jx3)])
        return Manifest(
            generator: .init(version: "0.1.0", libvips: "8.14.1"),
            settings: .init(),
            sections: [.init(name: "2019/trip", title: "trip", start: 0, count: 1)], items: [item],
            failures: [.init(path: "broken.jpg", stage: "decode", reason: "premature end")])
    }

    /// The sample as files: the top document and its one page, by path.
    static func sampleFiles() throws -> [String: Data] {
        let manifest = sample()
        let page = try ManifestPage(items: manifest.items.map(ManifestPage.Item.init)).encoded()
        let reference = Manifest.PageReference(path: "pages/cd/cd\(String(repeating: "0", count: 30)).json", start: 0, count: 1)
        var sections = manifest.sections
        sections[0].pages = [reference]
        var summary = ManifestDocument.Summary()
        for item in manifest.items { summary.add(item) }
        let document = ManifestDocument(
            generator: manifest.generator, settings: manifest.settings, sections: sections, itemCount: 1, summary: summary,
            failures: manifest.failures)
        return ["manifest.json": try document.encoded(), reference.path: page]
    }

    @Test func roundTripsAndIsStable() throws {
        let files = try Self.sampleFiles()
        let data = try #require(files["manifest.json"])
        let document = try ManifestDocument.decode(from: data)
        #expect(try document.encoded() == data)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"path\" : \"pages/cd/"))  // slashes not escaped
        #expect(text.hasSuffix("}\n") && !text.contains("IMG_0001"), "items live in pages")
        let reader = try ManifestReader(document: document) { path in try #require(files[path]) }
        #expect(try reader.loadAll().items == Self.sample().items)
        let page = try #require(files.first { $0.key.hasPrefix("pages/") }?.value)
        #expect(!String(decoding: page, as: UTF8.self).contains("\n "), "pages are compact")
        #expect(!String(decoding: page, as: UTF8.self).contains("\"index\""), "pages carry positions, not global indexes")
    }

    @Test func pagesThatDoNotFitAreErrors() throws {
        var files = try Self.sampleFiles()
        let path = try #require(files.keys.first { $0.hasPrefix("pages/") })
        let document = try ManifestDocument.decode(from: try #require(files["manifest.json"]))
        files[path] = try ManifestPage(items: []).encoded()
        let broken = files
        let reader = try ManifestReader(document: document) { try #require(broken[$0]) }
        #expect(throws: ManifestError.badPage(path: path, reason: "holds 0 items, the manifest says 1")) { try reader.item(at: 0) }
    }

    @Test func roundsToFourDecimals() {
        let rect = Manifest.Rect(x: 1.0 / 3, y: -0.00001, width: 2527.777777, height: 0.12345)
        #expect(rect == Manifest.Rect(x: 0.3333, y: 0, width: 2527.7778, height: 0.1235))
        #expect(rect.y.sign == .plus)
    }

    @Test("a version-2 manifest (before kinds) reads as photos; version 3 keeps each kind's facts")
    func readsVersion2AndKinds() throws {
        var files = try Self.sampleFiles()
        // Version 2 as 0.3 wrote it: no kind on items, no kinds in the summary.
        func downgrade(_ data: Data) throws -> Data {
            var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            json["version"] = 2
            if var summary = json["summary"] as? [String: Any] {
                summary["kinds"] = nil
                json["summary"] = summary
            }
            if let items = json["items"] as? [[String: Any]] {
                json["items"] = items.map { item in item.filter { $0.key != "kind" } }
            }
            return try JSONSerialization.data(withJSONObject: json)
        }
        for (path, data) in files { files[path] = try downgrade(data) }
        #expect(!String(decoding: files["manifest.json"]!, as: UTF8.self).contains("kind"))
        let version2 = files
        let old = try ManifestReader(document: ManifestDocument.decode(from: version2["manifest.json"]!)) { try #require(version2[$0]) }
        #expect(old.document.version == 2 && old.document.summary.kinds == ["photo": 1])
        let loaded = try old.loadAll()
        #expect(loaded.items[0].kind == .photo)
        // The sample has no placeholder; nothing else is wrong with a version-2 manifest.
        #expect(loaded.consistencyProblems() == ["items[0] has no placeholder"])

        var mixed = Self.sample()
        mixed.items[0].media = Manifest.Media(
            kind: .video,
            video: .init(
                container: "mov", codec: "hevc", duration: 3.33333, frameRate: 29.97002997, audio: "aac", rotation: 90,
                hdr: "hlg", poster: 0.5, indexFirst: false))
        let page = try ManifestPage(items: mixed.items.map(ManifestPage.Item.init)).encoded()
        let text = String(decoding: page, as: UTF8.self)
        #expect(text.contains(#""kind":"video""#) && text.contains(#""duration":3.3333"#) && text.contains(#""frameRate":29.97"#))
        #expect(text.contains(#""playable":false"#) && text.contains(#""delivery":"transcode""#) && text.contains(#""indexFirst":false"#))
        let back = try ManifestPage.decode(from: page).items[0].item(index: 0, section: 0)
        #expect(back == mixed.items[0])
        var summary = ManifestDocument.Summary()
        summary.add(back)
        #expect(summary.kinds == ["video": 1])

        // A videos-only browser: indexes and an IndexMap over the videos, sections as the manifest's.
        var items = [mixed.items[0], Self.sample().items[0], mixed.items[0], mixed.items[0]]
        for (index, _) in items.enumerated() {
            items[index].index = index
            items[index].section = index < 2 ? 0 : 2
            items[index].item = index < 2 ? index : index - 2
            items[index].path = "p\(index).mp4"
        }
        let pages = [
            try ManifestPage(items: items[0..<2].map(ManifestPage.Item.init)).encoded(),
            try ManifestPage(items: [Self.sample().items[0]].map(ManifestPage.Item.init)).encoded(),
            try ManifestPage(items: items[2...].map(ManifestPage.Item.init)).encoded(),
        ]
        let sections = (0..<3).map { k in
            Manifest.Section(
                name: "s\(k)", title: "s\(k)", start: [0, 2, 3][k], count: [2, 1, 2][k],
                pages: [Manifest.PageReference(path: "pages/0\(k)/x.json", start: 0, count: [2, 1, 2][k])])
        }
        let document = ManifestDocument(
            generator: mixed.generator, settings: mixed.settings, sections: sections, itemCount: 5, summary: summary, failures: [])
        let frozen = pages
        let reader = try ManifestReader(document: document) { path in frozen[Int(path.dropFirst(7).prefix(1))!] }
        let videos = try reader.items(of: .video)
        #expect(videos.indexes == [0, 3, 4])
        #expect(try videos.map.count == 3 && videos.map.count(ofSection: 1) == 0)
        #expect(try videos.map.position(of: 1) == IndexMap.Position(section: 2, item: 0))
    }

    @Test func rejectsOtherDocuments() {
        #expect(throws: ManifestError.unsupported(format: "something-else", version: 1)) {
            try ManifestDocument.decode(from: Data(#"{"format":"something-else","version":1}"#.utf8))
        }
        #expect(throws: ManifestError.unsupported(format: "thumbframe-manifest", version: 1)) {
            try ManifestDocument.decode(from: Data(#"{"format":"thumbframe-manifest","version":1}"#.utf8))
        }
        #expect(throws: ManifestError.self) { try ManifestDocument.decode(from: Data("{\"format\": \"thumb".utf8)) }
        #expect(throws: ManifestError.malformed("missing key 'generator' at top level")) {
            try ManifestDocument.decode(from: Data(#"{"format":"thumbframe-manifest","version":2}"#.utf8))
        }
        #expect(throws: ManifestError.unsupported(format: "thumbframe-manifest", version: 2)) {
            try ManifestPage.decode(from: Data(#"{"format":"thumbframe-manifest","version":2}"#.utf8))
        }
    }
}
