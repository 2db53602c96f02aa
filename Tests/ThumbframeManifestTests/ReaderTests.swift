import Foundation
import Testing
import ThumbframeManifest

/// The Swift reader as an app uses it: a cache of decoded pages, prefetch around an index, calls
/// off the caller's actor, and errors that say what went wrong.
@Suite("Swift reader")
struct ReaderTests {
    /// A library of `sections` sections of `perSection` items each, paged as the writer pages it,
    /// as files by path, and a reader over them that counts the page reads.
    final class Library: @unchecked Sendable {
        let files: [String: Data]
        let document: ManifestDocument
        private let lock = NSLock()
        private var reads: [String] = []

        init(sections: Int, perSection: Int) throws {
            let template = ManifestCodingTests.sample().items[0]
            var files: [String: Data] = [:]
            var documentSections: [Manifest.Section] = []
            var summary = ManifestDocument.Summary()
            var start = 0
            for section in 0..<sections {
                var references: [Manifest.PageReference] = []
                for first in stride(from: 0, to: perSection, by: ManifestPage.size) {
                    let count = min(ManifestPage.size, perSection - first)
                    let items = (first..<first + count).map { position in
                        var item = template
                        (item.index, item.section, item.item, item.path) = (
                            start + position, section, position, "s\(section)/IMG_\(position).jpg"
                        )
                        summary.add(item)
                        return ManifestPage.Item(item)
                    }
                    let path = String(format: "pages/%02d/%030d.json", section % 100, start + first)
                    files[path] = try ManifestPage(items: items).encoded()
                    references.append(Manifest.PageReference(path: path, start: first, count: count))
                }
                documentSections.append(
                    Manifest.Section(name: "s\(section)", title: "s\(section)", start: start, count: perSection, pages: references))
                start += perSection
            }
            let sample = ManifestCodingTests.sample()
            document = ManifestDocument(
                generator: sample.generator, settings: sample.settings, sections: documentSections, itemCount: start, summary: summary,
                failures: [])
            self.files = files
        }

        func reader(cachedPages: Int = ManifestReader.defaultCachedPages) throws -> ManifestReader {
            try ManifestReader(document: document, cachedPages: cachedPages) { [self] path in
                lock.lock()
                reads.append(path)
                lock.unlock()
                guard let data = files[path] else { throw ContainedFileError.posix(ENOENT) }
                return data
            }
        }

        var pageReads: [String] {
            lock.lock()
            defer { lock.unlock() }
            return reads
        }
    }

    @Test("an item after its page is loaded reads nothing; the least recently used page goes first")
    func cachesPages() throws {
        let library = try Library(sections: 2, perSection: 600)  // 3 pages a section
        let reader = try library.reader(cachedPages: 2)
        #expect(try reader.item(at: 5).path == "s0/IMG_5.jpg")
        #expect(try reader.items(in: 0..<30).map(\.index) == Array(0..<30), "a screen of cells")
        #expect(library.pageReads.count == 1, "one page for the whole screen")
        _ = try reader.item(at: 300)  // the second page
        _ = try reader.item(at: 10)  // the first, again: cached, and now the most recent
        #expect(library.pageReads.count == 2)
        _ = try reader.item(at: 600)  // section 1's first page: the second page goes
        _ = try reader.item(at: 20)
        #expect(library.pageReads.count == 3, "the first page stayed")
        _ = try reader.item(at: 300)
        #expect(library.pageReads.count == 4, "the least recently used page was dropped")
        let item = try reader.item(at: 1_199)
        #expect((item.section, item.item, item.path) == (1, 599, "s1/IMG_599.jpg"))
        // Copies share the cache.
        let copy = reader
        _ = try copy.item(at: 1_198)
        #expect(library.pageReads.count == 5)
    }

    @Test("prefetch reads the pages around an index, nearest first, within the cache")
    func prefetches() throws {
        let library = try Library(sections: 3, perSection: 300)  // pages of 256 and 44
        let reader = try library.reader(cachedPages: 3)
        try reader.prefetch(around: 300, radius: 20)  // 280..<321: section 1's first page and section 0's second
        #expect(
            Set(library.pageReads)
                == Set(library.document.sections[0].pages!.suffix(1).map(\.path) + [library.document.sections[1].pages![0].path]))
        let before = library.pageReads.count
        _ = try reader.items(in: 280..<321)
        #expect(library.pageReads.count == before, "scrolling there reads nothing")
        // Every page is in the window; the cache holds 3: the nearest, section 1's two pages
        // (one cached already) and section 2's first (150 items away, section 0's second is 151).
        try reader.prefetch(around: 450, radius: 10_000)
        let sections = library.document.sections.map { $0.pages!.map(\.path) }
        #expect(library.pageReads.dropFirst(before) == [sections[1][1], sections[2][0]], "no more pages than the cache holds")
        try reader.prefetch(around: -5)
        try reader.prefetch(around: 1_000_000)
    }

    @Test("the async calls run off the main actor and give the same items")
    @MainActor
    func asyncOffTheMainActor() async throws {
        let library = try Library(sections: 1, perSection: 600)
        let reader = try library.reader()
        let item = try await reader.loadItem(at: 400)
        #expect(item == (try reader.item(at: 400)))
        try await reader.loadPrefetch(around: 0)
        #expect(try await reader.loadItems(in: 0..<3).map(\.path) == ["s0/IMG_0.jpg", "s0/IMG_1.jpg", "s0/IMG_2.jpg"])
        // The work itself runs elsewhere: a page loader that asserts it is not on the main thread.
        let files = library.files
        let checked = try ManifestReader(document: library.document) { path in
            guard !Thread.isMainThread else { throw ContainedFileError.notRegularFile }
            return files[path]!
        }
        #expect(try await checked.loadItem(at: 1).path == "s0/IMG_1.jpg")
    }

    @Test(
        "what a grid needs in one place: sections and counts, an item by position, its layout on any screen, the thumbnail that covers a cell, a transition's crop"
    )
    func gridNeeds() throws {
        let library = try Library(sections: 2, perSection: 300)
        let reader = try library.reader()
        #expect(reader.gridSections.map(\.count) == [300, 300] && reader.gridSections.map(\.start) == [0, 300])
        #expect(reader.gridSections.map(\.title) == ["s0", "s1"] && library.pageReads.isEmpty, "from the top document alone")
        let item = try reader.item(at: IndexMap.Position(section: 1, item: 5))
        #expect((item.index, item.path) == (305, "s1/IMG_5.jpg"))
        #expect(throws: ManifestError.outOfRange(.itemOutOfRange(section: 1, item: 300, count: 300))) {
            try reader.item(at: IndexMap.Position(section: 1, item: 300))
        }
        // A screen the manifest has (by size and scale, whatever its name) gives the manifest's
        // layout; another one the layout engine's, for the same pixels.
        let phone = Viewport.defaults[0]
        let same = Viewport(name: "mine", width: phone.width, height: phone.height, scale: phone.scale)
        #expect(reader.layout(of: item, in: same) == item.layouts["phone"])
        let larger = Viewport(name: "larger", width: 430, height: 932, scale: 3)
        let computed = reader.layout(of: item, in: larger)
        #expect(computed == LayoutEngine.layout(width: 3024, height: 4032, viewport: larger, preset: .jx3))
        #expect(computed != item.layouts["phone"])
        // The crop a square cell shows is the one the grid's cover thumbnail was cut to.
        #expect(item.aspectFillCrop(cellWidth: 100, cellHeight: 100) == item.thumbnails["grid"]?.crop)
        #expect(item.aspectFillCrop(cellWidth: 300, cellHeight: 100) == Manifest.Rect(x: 0, y: 0.375, width: 1, height: 0.25))
        #expect(item.aspectFillCrop(cellWidth: 50, cellHeight: 100) == Manifest.Rect(x: 1.0 / 6, y: 0, width: 2.0 / 3, height: 1))
        #expect(abs(item.aspectRatio - 0.75) < 1e-9)
        // The covering thumbnail: a square cell takes the square cover one; a cell of another shape
        // cannot use a crop (the sample has no fit thumbnail, so none).
        #expect(reader.thumbnail(of: item, forCellWidth: 80, height: 80, scale: 3)?.path == "thumbs/ab/ab.jpg")
        #expect(reader.thumbnail(of: item, forCellWidth: 120, height: 80, scale: 3) == nil)
        var wider = item
        wider.thumbnails["small"] = Manifest.Thumbnail(path: "thumbs/s.jpg", width: 300, height: 400, crop: nil)
        wider.thumbnails["preview"] = Manifest.Thumbnail(path: "thumbs/p.jpg", width: 960, height: 1280, crop: nil)
        #expect(reader.thumbnail(of: wider, forCellWidth: 120, height: 80, scale: 2)?.path == "thumbs/s.jpg", "240 × 320 px fill it")
        #expect(reader.thumbnail(of: wider, forCellWidth: 120, height: 80, scale: 3)?.path == "thumbs/p.jpg", "360 × 480 px")
        #expect(reader.thumbnail(of: wider, forCellWidth: 2000, height: 80, scale: 3)?.path == "thumbs/p.jpg", "none covers: the largest")
        // Deep-zoom tiles cover any cell, yet are no picture to load in one.
        wider.thumbnails["tiles"] = Manifest.Thumbnail(
            path: "thumbs/t.dzi", width: 3024, height: 4032, crop: nil,
            tiles: Manifest.Tiles(tileSize: 254, overlap: 1, format: "jpg", levels: 13, files: 300, bytes: 1))
        #expect(reader.thumbnail(of: wider, forCellWidth: 2000, height: 80, scale: 3)?.path == "thumbs/p.jpg", "never the tiles")
    }

    @Test("errors tell an index out of range from a missing file from a file that is no manifest")
    func errorsSayWhich() throws {
        let library = try Library(sections: 1, perSection: 10)
        let reader = try library.reader()
        #expect(throws: ManifestError.outOfRange(.indexOutOfRange(index: 10, count: 10))) { try reader.item(at: 10) }
        #expect(throws: ManifestError.outOfRange(.indexOutOfRange(index: -1, count: 10))) { try reader.item(at: -1) }
        #expect(throws: ManifestError.outOfRange(.indexOutOfRange(index: 10, count: 10))) { try reader.items(in: 5..<11) }
        #expect(throws: ManifestError.outOfRange(.sectionOutOfRange(section: 3, sectionCount: 1))) { try reader.items(inSection: 3) }
        let page = try #require(library.document.sections[0].pages?.first?.path)
        let gone = try ManifestReader(document: library.document) { _ in throw ContainedFileError.posix(ENOENT) }
        #expect(throws: ManifestError.missing(path: page)) { try gone.item(at: 0) }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("manifest.json")
        #expect(throws: ManifestError.missing(path: missing.path)) { try ManifestReader(contentsOf: missing) }
        try Data("{\"hello\": 1}".utf8).write(to: missing)
        #expect {
            try ManifestReader(contentsOf: missing)
        } throws: { error in
            switch error as? ManifestError {
            case .malformed, .unsupported: true
            default: false
            }
        }
        try library.document.encoded().write(to: missing)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("pages/00"), withIntermediateDirectories: true)
        for (path, data) in library.files { try data.write(to: directory.appendingPathComponent(path)) }
        #expect(try ManifestReader(contentsOf: missing).item(at: 9).path == "s0/IMG_9.jpg")
        try FileManager.default.removeItem(at: directory.appendingPathComponent(page))
        #expect(throws: ManifestError.missing(path: page)) { try ManifestReader(contentsOf: missing).item(at: 9) }
    }
}
