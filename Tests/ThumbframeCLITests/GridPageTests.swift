import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Grid pages (issue 40): beside every page of the manifest, what a grid draws of its items, so a
/// first screen needs neither the layouts nor the EXIF of the photos it shows.
@Suite("Grid pages")
struct GridPageTests {
    @Test(
        "every page names a grid page of its cells, a fraction of its bytes, with siblings; pruned with it; read by the Swift reader; validate compares it with its page"
    )
    func gridPages() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lib = root + "/lib"
            try Fixtures.makeLibrary(lib, Fixtures.photos(4, in: ["a", "b"], width: 120, height: 90))
            // A turned photo (its cell is 90 × 120), a dated one and an animation (its badge's format).
            try Fixtures.writeImage(
                to: lib + "/a/turned.jpg", width: 120, height: 90,
                exif: ["exif-ifd2-DateTimeOriginal": "2024:06:01 10:20:30"], orientation: 6)
            try Fixtures.writeAnimation(to: lib + "/b/moving.gif", width: 40, height: 30, delays: [100, 100], loop: 0)
            let out = root + "/out"
            let build = try await CLITests.run(["build", lib, "--out", out])
            #expect(build.status == 0, "\(build.stderr)")
            let reader = try ManifestFile.open(out + "/manifest.json")
            let references = reader.document.sections.flatMap { $0.pages ?? [] }
            #expect(references.count == 2 && references.allSatisfy { $0.grid != nil })
            var cellsSeen: [ManifestGridPage.Cell] = []
            for reference in references {
                let grid = try #require(reference.grid)
                let bytes = try Data(contentsOf: URL(fileURLWithPath: out + "/" + grid))
                let page = try reader.page(reference)
                let cells = try ManifestGridPage.decode(from: bytes)
                #expect(cells == ManifestGridPage(page, settings: reader.document.settings))
                // What a cell holds: the item's shape (turned), kind, format, date, placeholder and
                // the cell recipes' thumbnails (path, size, crop; no bytes or hashes).
                for (cell, item) in zip(cells.items, page.items) {
                    #expect(cell.path == item.path && cell.width == item.image.width && cell.height == item.image.height)
                    #expect(cell.kind == item.kind && cell.format == item.image.format && cell.captured == item.exif?.capturedAt)
                    #expect(cell.placeholder == item.placeholder && cell.placeholder != nil)
                    #expect(Set(cell.thumbnails.keys) == Set(reader.document.settings.thumbnails.map(\.name)))
                    for (name, thumbnail) in cell.thumbnails {
                        #expect(thumbnail.path == item.thumbnails[name]?.path && thumbnail.width == item.thumbnails[name]?.width)
                        #expect(thumbnail.sha256 == nil && thumbnail.bytes == nil)
                    }
                }
                // A fraction of the page (no layouts, EXIF, hashes): under a third here.
                let pageBytes = try Data(contentsOf: URL(fileURLWithPath: out + "/" + reference.path)).count
                #expect(bytes.count * 3 < pageBytes, "grid \(bytes.count) bytes, page \(pageBytes)")
                for suffix in [".gz", ".br"] { #expect(FileManager.default.fileExists(atPath: out + "/" + grid + suffix)) }
                // A cell a line: a screen's cells decode alone; bytes not laid out so are refused.
                let count = cells.items.count
                #expect(ManifestGridPage.cells(at: 1..<count, from: bytes, expected: count) == Array(cells.items[1...]))
                #expect(ManifestGridPage.cells(at: 0..<1, from: bytes, expected: count + 1) == nil)
                let oneLine = try JSONEncoder().encode(cells)
                #expect(ManifestGridPage.cells(at: 0..<1, from: oneLine, expected: count) == nil)
                cellsSeen += cells.items
            }
            let turned = try #require(cellsSeen.first { $0.path == "a/turned.jpg" })
            #expect(turned.width == 90 && turned.height == 120 && turned.captured?.hasPrefix("2024-06-01") == true)
            #expect(cellsSeen.first { $0.path == "b/moving.gif" }?.kind == .animated)
            // The Swift reader: the cells of a range, from the grid pages alone, equal to them; a
            // manifest without grid pages (an older one) gives the same cells from its pages.
            #expect(try reader.cells(in: 0..<reader.indexMap.count) == cellsSeen)
            #expect(try reader.cell(at: 3) == cellsSeen[3])
            var document = reader.document
            for section in document.sections.indices {
                document.sections[section].pages = document.sections[section].pages?.map {
                    Manifest.PageReference(path: $0.path, start: $0.start, count: $0.count)
                }
            }
            let folder = try ManifestFile.folder(out + "/manifest.json")
            let older = try ManifestReader(document: document) { try folder.read($0, limit: 1 << 20) }
            #expect(try older.cells(in: 0..<older.indexMap.count) == cellsSeen)
            // Cold, `cells(in:)` reads the grid page each time (its lines decoded); `loadCells(in:)`
            // caches the grid pages it reads, so the same screen is then read from memory.
            let reads = Reads()
            let counted = try ManifestReader(document: reader.document) { path in
                reads.add(path)
                return try folder.read(path, limit: 1 << 20)
            }
            _ = try counted.cells(in: 0..<2)
            _ = try counted.cells(in: 0..<2)
            #expect(reads.paths == [references[0].grid, references[0].grid].compactMap { $0 })
            #expect(try await counted.loadCells(in: 0..<2) == Array(cellsSeen[0..<2]))
            #expect(try counted.cells(in: 0..<2) == Array(cellsSeen[0..<2]) && reads.paths.count == 3)
            // Built again with a photo more in b: b's old grid page goes with its page and siblings.
            let oldGrid = try #require(references.last?.grid)
            try Fixtures.writeImage(to: lib + "/b/new.jpg", width: 100, height: 80)
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            for suffix in ["", ".gz", ".br"] { #expect(!FileManager.default.fileExists(atPath: out + "/" + oldGrid + suffix)) }
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).stdout == "valid\n")
            // A grid page changed after it was written is named (its bytes no longer hash to its
            // name); one written under its own hash that says something else than its page, too.
            let now = try ManifestFile.open(out + "/manifest.json").document.sections[0].pages?[0]
            let grid = try #require(now?.grid)
            let text = try String(contentsOfFile: out + "/" + grid, encoding: .utf8)
            let wrong = text.replacingOccurrences(of: "\"width\":120", with: "\"width\":121")
            #expect(wrong != text)
            try wrong.write(toFile: out + "/" + grid, atomically: false, encoding: .utf8)
            let changed = try await CLITests.run(["validate", out + "/manifest.json"])
            #expect(changed.status != 0 && changed.stdout.contains(grid), "\(changed.stdout)")
            let hash = try await Processes.run("/bin/sh", ["-c", "sha256sum \"$1\" | cut -c1-32", "sh", out + "/" + grid])
            let name = hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let renamed = "pages/\(name.prefix(2))/\(name).json"
            try Fixtures.write(Array(wrong.utf8), to: out + "/" + renamed)
            let top = try String(contentsOfFile: out + "/manifest.json", encoding: .utf8)
            try top.replacingOccurrences(of: grid, with: renamed).write(toFile: out + "/manifest.json", atomically: false, encoding: .utf8)
            let validate = try await CLITests.run(["validate", out + "/manifest.json"])
            #expect(
                validate.status != 0 && validate.stdout.contains("grid page \(renamed) differs from page"), "\(validate.stdout)")
        }
    }
}

/// The paths a reader's loader was asked for, from any thread.
final class Reads: @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [String] = []
    func add(_ path: String) {
        lock.lock()
        asked.append(path)
        lock.unlock()
    }
    var paths: [String] {
        lock.lock()
        defer { lock.unlock() }
        return asked
    }
}
