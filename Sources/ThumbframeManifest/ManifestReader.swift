public import Foundation

/// Reads a paged manifest on demand: the top document at once (a few KB), a page when an item
/// of it is asked for. An iOS app opens a library of a million photos by reading the top
/// document, then the one page it shows; `loadAll()` gives small libraries the whole `Manifest`.
/// Pages are checked against the top document as they are read (count, positions), so a page
/// that does not fit is an error, never a wrong item.
public struct ManifestReader: Sendable {
    /// The top document.
    public let document: ManifestDocument
    /// Flat index ↔ (section, item), from the document's sections.
    public let indexMap: IndexMap
    /// Loads a page's bytes by its path relative to the manifest (a file, a URL session, a bundle).
    private let load: @Sendable (String) throws -> Data

    /// The largest top document a reader accepts (32 MiB; a million photos take under 1 MB;
    /// decoding 32 MiB keeps `inspect` under the README's 256 MiB):
    /// a bigger file is refused from its size before it is read.
    public static let maximumDocumentBytes = 32 << 20
    /// The largest page a reader accepts (16 MiB; a page of 256 items is about 400 KB).
    public static let maximumPageBytes = 16 << 20

    /// Reads `manifest.json` at `url` (which may be a link: it is resolved first); pages are
    /// read from beside it through `ContainedDirectory`, never through a link below its folder.
    public init(contentsOf url: URL) throws(ManifestError) {
        let directory: ContainedDirectory
        let data: Data
        do {
            let (folder, name) = try ContainedDirectory.locate(url.path)
            directory = folder
            data = try folder.read(name, limit: Self.maximumDocumentBytes)
        } catch {
            throw .malformed("cannot read \(url.path): \(error.localizedDescription)")
        }
        try self.init(document: ManifestDocument.decode(from: data)) { path in
            try directory.read(path, limit: Self.maximumPageBytes)
        }
    }

    /// Reads pages through `load` (paths relative to the manifest; only paths inside `pages/`
    /// are ever asked for). A document that names one page twice is refused: each page is read
    /// once per pass, so repeats would multiply the work of every reader.
    public init(document: ManifestDocument, load: @escaping @Sendable (String) throws -> Data) throws(ManifestError) {
        self.document = document
        self.load = load
        do {
            indexMap = try IndexMap(counts: document.sections.map(\.count))
        } catch {
            throw .malformed(error.localizedDescription)
        }
        var seen = Set<String>()
        for section in document.sections {
            for reference in section.pages ?? [] where !seen.insert(reference.path).inserted {
                throw .malformed("page \(reference.path) is named more than once")
            }
        }
    }

    /// A page's bytes, by a reference that must point inside `pages/`.
    private func bytes(_ reference: Manifest.PageReference) throws(ManifestError) -> Data {
        guard Manifest.isContainedRelativePath(reference.path), reference.path.hasPrefix("pages/") else {
            throw .badPage(path: reference.path, reason: "not a path inside pages/")
        }
        do {
            return try load(reference.path)
        } catch {
            throw .badPage(path: reference.path, reason: "cannot read it: \(error.localizedDescription)")
        }
    }

    /// One page, checked against its reference.
    public func page(_ reference: Manifest.PageReference) throws(ManifestError) -> ManifestPage {
        let page = try ManifestPage.decode(from: try bytes(reference))
        guard page.items.count == reference.count else {
            throw .badPage(path: reference.path, reason: "holds \(page.items.count) items, the manifest says \(reference.count)")
        }
        // Every number comes from files that may be hostile: arithmetic must not trap.
        for (offset, item) in page.items.enumerated() {
            let expected = reference.start.addingReportingOverflow(offset)
            guard !expected.overflow, item.item == expected.partialValue else {
                throw .badPage(
                    path: reference.path,
                    reason: "item \(offset) is at position \(item.item), expected start \(reference.start) + \(offset)")
            }
        }
        return page
    }

    /// The items of section `section`, with their global index.
    public func items(inSection section: Int) throws(ManifestError) -> [Manifest.Item] {
        guard document.sections.indices.contains(section) else {
            throw .malformed("section \(section) does not exist")
        }
        var items: [Manifest.Item] = []
        for reference in document.sections[section].pages ?? [] {
            for item in try page(reference).items {
                items.append(item.item(index: try globalIndex(section, item.item), section: section))
            }
        }
        return items
    }

    /// The item at a flat index, reading only the page that holds it.
    public func item(at index: Int) throws(ManifestError) -> Manifest.Item {
        let (reference, position) = try locate(index)
        let page = try page(reference)
        return page.items[position.item - reference.start].item(index: index, section: position.section)
    }

    /// The path of the item at a flat index: reads its page but decodes only positions and paths
    /// (what `thumbframe lookup` needs, several times faster than whole items).
    public func path(at index: Int) throws(ManifestError) -> String {
        let (reference, position) = try locate(index)
        struct Paths: Decodable {
            struct Entry: Decodable {
                var item: Int
                var path: String
            }
            var items: [Entry]
        }
        let data = try bytes(reference)
        guard let paths = try? JSONDecoder().decode(Paths.self, from: data), paths.items.count == reference.count else {
            return try item(at: index).path  // the full check names what is wrong with the page
        }
        let entry = paths.items[position.item - reference.start]
        guard entry.item == position.item else { return try item(at: index).path }
        return entry.path
    }

    /// The page that holds a flat index, and the index's position.
    private func locate(_ index: Int) throws(ManifestError) -> (Manifest.PageReference, IndexMap.Position) {
        let position: IndexMap.Position
        do {
            position = try indexMap.position(of: index)
        } catch {
            throw .malformed(error.localizedDescription)
        }
        let section = document.sections[position.section]
        guard
            let reference = (section.pages ?? []).first(where: {
                let offset = position.item.subtractingReportingOverflow($0.start)
                return !offset.overflow && offset.partialValue >= 0 && offset.partialValue < $0.count
            })
        else { throw .malformed("no page of section \(position.section) holds item \(position.item)") }
        return (reference, position)
    }

    /// Calls `body` with every item in order, one page in memory at a time.
    public func forEachItem(_ body: (Manifest.Item) throws -> Void) throws {
        for (number, section) in document.sections.enumerated() {
            for reference in section.pages ?? [] {
                for item in try page(reference).items {
                    try body(item.item(index: try globalIndex(number, item.item), section: number))
                }
            }
        }
    }

    /// The flat indexes of the items of `kind` (a "Videos" album), in display order, with an
    /// `IndexMap` over them by section, numbered as the manifest's (a section without one counts
    /// 0): a browser that pages through videos alone maps its own index to (section, k-th video)
    /// with it, and to the item with `indexes[i]`. Reads every
    /// page once; the top document's `summary.kinds` says how many there are without reading any.
    public func items(of kind: Manifest.Kind) throws -> (indexes: [Int], map: IndexMap) {
        var indexes: [Int] = []
        var counts = [Int](repeating: 0, count: document.sections.count)
        try forEachItem { item in
            guard item.kind == kind else { return }
            indexes.append(item.index)
            counts[item.section] += 1
        }
        return (indexes, try IndexMap(counts: counts))
    }

    /// The flat index of a position, from the section's `start`.
    private func globalIndex(_ section: Int, _ item: Int) throws(ManifestError) -> Int {
        let index = document.sections[section].start.addingReportingOverflow(item)
        guard !index.overflow else { throw .malformed("sections[\(section)].start + \(item) overflows") }
        return index.partialValue
    }

    /// The whole manifest in memory (for small libraries and tests).
    public func loadAll() throws -> Manifest {
        var items: [Manifest.Item] = []
        items.reserveCapacity(min(max(0, document.itemCount), 1 << 16))  // a hostile count must not allocate
        try forEachItem { items.append($0) }
        let sections = document.sections.map {
            Manifest.Section(name: $0.name, rawName: $0.rawName, title: $0.title, start: $0.start, count: $0.count, pages: $0.pages)
        }
        var manifest = Manifest(
            generator: document.generator, settings: document.settings, sections: sections, items: items,
            failures: document.failures)
        manifest.version = document.version
        return manifest
    }
}
