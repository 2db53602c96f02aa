// What an app pays for `ManifestReader` lookups (scripts/benchmarks/bench-readers runs it on a synthetic
// manifest): opening the top document, the first item of a page (the page read and decoded), an
// item once its page is cached, a screen of cells, and the same lookups without the cache.
//   thumbframe-reader-bench MANIFEST
import Foundation
import ThumbframeManifest

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func report(_ name: String, _ value: Double) {
    let text = value >= 1e-3 ? String(format: "%8.2f ms", value * 1e3) : String(format: "%8.2f µs", value * 1e6)
    print(name.padding(toLength: 48, withPad: " ", startingAt: 0) + text)
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: thumbframe-reader-bench MANIFEST\n".utf8))
    exit(64)
}
let url = URL(fileURLWithPath: CommandLine.arguments[1])
var reader: ManifestReader?
let open = try seconds { reader = try ManifestReader(contentsOf: url) }
guard let reader, let section = reader.document.sections.dropFirst(reader.document.sections.count / 2).first,
    section.count >= 30
else {
    FileHandle.standardError.write(Data("thumbframe-reader-bench: no section of 30 items\n".utf8))
    exit(65)
}
// A screen of a grid: 30 cells from the start of a section in the middle (one page).
let screen = section.start..<section.start + 30
let first = try seconds { _ = try reader.item(at: screen.lowerBound) }
let rounds = 20_000
let cached = try seconds { for round in 0..<rounds { _ = try reader.item(at: screen.lowerBound + round % 30) } } / Double(rounds)
let cells = try seconds { for _ in 0..<100 { _ = try reader.items(in: screen) } } / 100
let uncachedReader = try ManifestReader(contentsOf: url, cachedPages: 0)
// The same screen from the grid pages, cold: every round reads and decodes its grid page.
let coldCells = try seconds { for _ in 0..<100 { _ = try uncachedReader.cells(in: screen) } } / 100
// Once its grid page is decoded whole and cached (`gridPage(_:)`, as a prefetch off the main actor would).
if let first = section.pages?.first { _ = try reader.gridPage(first) }
let cachedCells = try seconds { for _ in 0..<100 { _ = try reader.cells(in: screen) } } / 100
let uncached = try seconds { for round in 0..<20 { _ = try uncachedReader.item(at: screen.lowerBound + round % 30) } } / 20

print("Swift reader (ManifestReader): \(reader.indexMap.count) items, pages of \(ManifestPage.size)")
report("open (the top document)", open)
report("first item of a page (page read and decoded)", first)
report("an item once its page is cached", cached)
report("a screen of 30 cells, page cached", cells)
report("an item without the cache (cachedPages: 0)", uncached)
report("a screen of 30 grid cells, cold (lines decoded)", coldCells)
report("a screen of 30 grid cells, grid page cached", cachedCells)
print(String(format: "cached ÷ uncached = %.5f", cached / uncached))
