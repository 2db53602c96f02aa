public import Foundation

/// Reads a paged manifest on demand: the top document at once (a few KB), a page when an item
/// of it is asked for. An iOS app opens a library of a million photos by reading the top
/// document, then the one page it shows; `loadAll()` gives small libraries the whole `Manifest`.
/// Pages are checked against the top document as they are read (count, positions), so a page
/// that does not fit is an error, never a wrong item.
///
/// The pages last used stay decoded (`cachedPages`, least recently used out first): a grid asks
/// for neighbouring items, which share pages, so after its page is loaded an item costs a
/// lookup and a copy (microseconds: `scripts/bench --readers N`, through `thumbframe-reader-bench`), not a page's read and decode
/// (milliseconds). `prefetch(around:)` loads the pages near an index before they are shown;
/// `loadItem(at:)`, `loadItems(in:)` and `loadPrefetch(around:)` do the same work off the
/// caller's actor (an app calls them from the main actor without blocking it). Copies of a
/// reader share its cache, which is safe to use from any thread.
public struct ManifestReader: Sendable {
    /// The top document.
    public let document: ManifestDocument
    /// Flat index ↔ (section, item), from the document's sections.
    public let indexMap: IndexMap
    /// Loads a page's bytes by its path relative to the manifest (a file, a URL session, a bundle).
    private let load: @Sendable (String) throws -> Data
    /// Decoded pages, shared by copies of this reader.
    private let cache: PageCache<ManifestPage>
    /// Decoded grid pages, as many as `cache` holds pages.
    let gridCache: PageCache<ManifestGridPage>

    /// How many decoded pages a reader keeps by default: 8 pages of 256 items, about 2 000
    /// items, a few screens of a grid either way.
    public static let defaultCachedPages = 8

    /// The largest top document a reader accepts (32 MiB; a million photos take under 1 MB;
    /// decoding 32 MiB keeps `inspect` under 256 MiB):
    /// a bigger file is refused from its size before it is read.
    public static let maximumDocumentBytes = 32 << 20
    /// The largest page a reader accepts (16 MiB; a page of 256 items is about 400 KB).
    public static let maximumPageBytes = 16 << 20

    /// Reads `manifest.json` at `url` (which may be a link: it is resolved first); pages are
    /// read from beside it through `ContainedDirectory`, never through a link below its folder.
    /// A manifest that is not there is `.missing`, one that cannot be read `.unreadable`, one that
    /// is not a thumbframe manifest `.malformed` or `.unsupported`.
    public init(contentsOf url: URL, cachedPages: Int = defaultCachedPages) throws(ManifestError) {
        let directory: ContainedDirectory
        let data: Data
        do {
            let (folder, name) = try ContainedDirectory.locate(url.path)
            directory = folder
            data = try folder.read(name, limit: Self.maximumDocumentBytes)
        } catch .posix(ENOENT) {
            throw .missing(path: url.path)
        } catch .tooLarge(let size, let limit) {
            throw .malformed("the top document is \(size) bytes, over the \(limit) a reader accepts")
        } catch {
            throw .unreadable(path: url.path, reason: error.localizedDescription)
        }
        try self.init(document: ManifestDocument.decode(from: data), cachedPages: cachedPages) { path in
            try directory.read(path, limit: Self.maximumPageBytes)
        }
    }

    /// Reads pages through `load` (paths relative to the manifest; only paths inside `pages/`
    /// are ever asked for). A document that names one page twice is refused: each page is read
    /// once per pass, so repeats would multiply the work of every reader.
    public init(
        document: ManifestDocument, cachedPages: Int = defaultCachedPages, load: @escaping @Sendable (String) throws -> Data
    ) throws(ManifestError) {
        self.document = document
        self.load = load
        cache = PageCache(capacity: max(0, cachedPages))
        gridCache = PageCache(capacity: max(0, cachedPages))
        do {
            indexMap = try IndexMap(counts: document.sections.map(\.count))
        } catch {
            throw .malformed(error.localizedDescription)
        }
        var seen = Set<String>()
        for section in document.sections {
            for reference in section.pages ?? [] {
                for path in [reference.path] + (reference.grid.map { [$0] } ?? []) where !seen.insert(path).inserted {
                    throw .malformed("page \(path) is named more than once")
                }
            }
        }
    }

    /// A page's bytes, by a reference that must point inside `pages/`.
    private func bytes(_ reference: Manifest.PageReference) throws(ManifestError) -> Data {
        try bytes(page: reference.path)
    }

    /// The bytes of the page (or grid page) at `path`, which must be inside `pages/`.
    func bytes(page path: String) throws(ManifestError) -> Data {
        guard Manifest.isContainedRelativePath(path), path.hasPrefix("pages/") else {
            throw .badPage(path: path, reason: "not a path inside pages/")
        }
        do {
            return try load(path)
        } catch ContainedFileError.posix(ENOENT) {
            throw .missing(path: path)
        } catch {
            throw .badPage(path: path, reason: "cannot read it: \(error.localizedDescription)")
        }
    }

    /// One page, checked against its reference: from the cache when it was read lately.
    public func page(_ reference: Manifest.PageReference) throws(ManifestError) -> ManifestPage {
        if let page = cache[reference.path] { return page }
        let page = try readPage(reference)
        cache[reference.path] = page
        return page
    }

    /// One page read and decoded, checked against its reference.
    func readPage(_ reference: Manifest.PageReference) throws(ManifestError) -> ManifestPage {
        let page = try ManifestPage.decode(from: try bytes(reference))
        guard page.items.count == reference.count else {
            throw .badPage(path: reference.path, reason: "holds \(page.items.count) items, the manifest says \(reference.count)")
        }
        try Self.checkPositions(page.items.map(\.item), from: 0, of: reference, in: reference.path, noun: "item")
        return page
    }

    /// Checks the positions a page (or grid page) at `path` gives its entries from its `first`:
    /// entry k must be at the reference's `start + first + k`. Every number comes from files that
    /// may be hostile: arithmetic must not trap.
    static func checkPositions(
        _ positions: [Int], from first: Int, of reference: Manifest.PageReference, in path: String, noun: String
    ) throws(ManifestError) {
        for (k, position) in positions.enumerated() {
            let offset = first + k
            let expected = reference.start.addingReportingOverflow(offset)
            guard !expected.overflow, position == expected.partialValue else {
                throw .badPage(
                    path: path, reason: "\(noun) \(offset) is at position \(position), expected start \(reference.start) + \(offset)")
            }
        }
    }

    /// The items of section `section`, with their global index.
    public func items(inSection section: Int) throws(ManifestError) -> [Manifest.Item] {
        guard document.sections.indices.contains(section) else {
            throw .outOfRange(.sectionOutOfRange(section: section, sectionCount: document.sections.count))
        }
        var items: [Manifest.Item] = []
        for reference in document.sections[section].pages ?? [] {
            for item in try page(reference).items {
                items.append(item.item(index: try globalIndex(section, item.item), section: section))
            }
        }
        return items
    }

    /// The item at a flat index, reading only the page that holds it (none when it is cached).
    public func item(at index: Int) throws(ManifestError) -> Manifest.Item {
        let (reference, position) = try locate(index)
        let page = try page(reference)
        return page.items[position.item - reference.start].item(index: index, section: position.section)
    }

    /// The items at a range of flat indexes (a screen of cells), reading each page once.
    public func items(in range: Range<Int>) throws(ManifestError) -> [Manifest.Item] {
        guard range.lowerBound >= 0, range.upperBound <= indexMap.count else {
            throw .outOfRange(
                .indexOutOfRange(index: range.lowerBound < 0 ? range.lowerBound : range.upperBound - 1, count: indexMap.count))
        }
        var items: [Manifest.Item] = []
        items.reserveCapacity(range.count)
        for index in range { items.append(try item(at: index)) }
        return items
    }

    /// Reads the pages that hold the items within `radius` of `index` (clamped to the
    /// manifest) into the cache, so scrolling to them reads nothing. Keeps at most the cache's
    /// capacity: a radius wider than that loads only the pages nearest first.
    public func prefetch(around index: Int, radius: Int = ManifestPage.size) throws(ManifestError) {
        guard indexMap.count > 0 else { return }
        let centre = min(max(0, index), indexMap.count - 1)
        let low = max(0, centre - max(0, radius))
        let high = min(indexMap.count - 1, centre + max(0, radius))
        var seen = Set<String>()
        var references: [(distance: Int, reference: Manifest.PageReference)] = []
        // Every page the window touches: step a page at a time from each end inwards.
        var probe = low
        while probe <= high {
            let (reference, position) = try locate(probe)
            if seen.insert(reference.path).inserted {
                let first = probe
                let last = probe + (reference.start + reference.count - 1 - position.item)
                references.append((max(0, max(first - centre, centre - last)), reference))
            }
            probe += reference.start + reference.count - position.item
        }
        for (_, reference) in references.sorted(by: { $0.distance < $1.distance }).prefix(cache.capacity) {
            _ = try page(reference)
        }
    }

    /// `item(at:)` off the caller's actor (an app's main actor is never blocked by a page read).
    public func loadItem(at index: Int) async throws(ManifestError) -> Manifest.Item {
        try await Self.detached { () throws(ManifestError) in try self.item(at: index) }
    }

    /// `items(in:)` off the caller's actor.
    public func loadItems(in range: Range<Int>) async throws(ManifestError) -> [Manifest.Item] {
        try await Self.detached { () throws(ManifestError) in try self.items(in: range) }
    }

    /// `prefetch(around:radius:)` off the caller's actor.
    public func loadPrefetch(around index: Int, radius: Int = ManifestPage.size) async throws(ManifestError) {
        try await Self.detached { () throws(ManifestError) in try self.prefetch(around: index, radius: radius) }
    }

    /// Runs `work` on the global concurrent executor, whatever actor the caller is on.
    static func detached<T: Sendable>(
        _ work: @escaping @Sendable () throws(ManifestError) -> T
    ) async throws(ManifestError) -> T {
        let result = await Task.detached(priority: .userInitiated) { () -> Result<T, ManifestError> in
            do throws(ManifestError) {
                return .success(try work())
            } catch {
                return .failure(error)
            }
        }.value
        return try result.get()
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
    func locate(_ index: Int) throws(ManifestError) -> (Manifest.PageReference, IndexMap.Position) {
        let position: IndexMap.Position
        do {
            position = try indexMap.position(of: index)
        } catch {
            throw .outOfRange(error)
        }
        // Pages are in order of `start` (the writer's): the last that starts at or before the
        // item, found by bisection (a section of a million photos has 4 000 pages).
        let pages = document.sections[position.section].pages ?? []
        var low = 0
        var high = pages.count
        while low < high {
            let middle = (low + high) / 2
            if pages[middle].start <= position.item { low = middle + 1 } else { high = middle }
        }
        let holds = { (reference: Manifest.PageReference) -> Bool in
            let offset = position.item.subtractingReportingOverflow(reference.start)
            return !offset.overflow && offset.partialValue >= 0 && offset.partialValue < reference.count
        }
        // A hostile document's pages may be out of order: then the search by scanning.
        guard let reference = low > 0 && holds(pages[low - 1]) ? pages[low - 1] : pages.first(where: holds) else {
            throw .malformed("no page of section \(position.section) holds item \(position.item)")
        }
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

/// The decoded pages (or grid pages) a reader keeps, least recently used out first; thread-safe.
final class PageCache<Page: Sendable>: @unchecked Sendable {
    let capacity: Int
    private let lock = NSLock()
    private var pages: [String: Page] = [:]
    /// Paths by last use, oldest first (a few entries: a linear scan is cheapest).
    private var recency: [String] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    subscript(path: String) -> Page? {
        get {
            lock.lock()
            defer { lock.unlock() }
            guard let page = pages[path] else { return nil }
            if recency.last != path, let at = recency.firstIndex(of: path) {
                recency.remove(at: at)
                recency.append(path)
            }
            return page
        }
        set {
            guard capacity > 0, let newValue else { return }
            lock.lock()
            defer { lock.unlock() }
            if pages.updateValue(newValue, forKey: path) == nil {
                recency.append(path)
                while recency.count > capacity { pages[recency.removeFirst()] = nil }
            }
        }
    }
}
