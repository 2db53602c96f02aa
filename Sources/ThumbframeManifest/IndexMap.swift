public import Foundation

/// Maps a flat item index (a pager's page) to its (section, item) position (a sectioned grid's
/// index path) and back, in O(log sections). Empty sections are allowed and simply hold no index.
public struct IndexMap: Hashable, Sendable {
    /// A position in a sectioned list.
    public struct Position: Hashable, Sendable, CustomStringConvertible {
        /// Section index.
        public var section: Int
        /// Item index inside the section.
        public var item: Int

        /// Creates a position.
        public init(section: Int, item: Int) {
            self.section = section
            self.item = item
        }

        /// `section S item I`.
        public var description: String { "section \(section) item \(item)" }
    }

    /// Flat index of each section's first item; `starts[k + 1] - starts[k]` is section k's count,
    /// and the last element is the total.
    private let starts: [Int]

    /// Creates a map from the number of items in each section.
    public init(counts: [Int]) throws(IndexMapError) {
        var starts = [0]
        starts.reserveCapacity(counts.count + 1)
        for (section, count) in counts.enumerated() {
            guard count >= 0 else { throw .negativeCount(section: section, count: count) }
            let (sum, overflow) = starts[starts.count - 1].addingReportingOverflow(count)
            guard !overflow else { throw .tooManyItems }
            starts.append(sum)
        }
        self.starts = starts
    }

    /// Creates the map of a manifest's sections.
    public init(_ manifest: Manifest) throws(IndexMapError) {
        try self.init(counts: manifest.sections.map(\.count))
    }

    /// Total number of items.
    public var count: Int { starts[starts.count - 1] }

    /// Number of sections.
    public var sectionCount: Int { starts.count - 1 }

    /// Number of items in `section`.
    public func count(ofSection section: Int) throws(IndexMapError) -> Int {
        guard section >= 0, section < sectionCount else {
            throw .sectionOutOfRange(section: section, sectionCount: sectionCount)
        }
        return starts[section + 1] - starts[section]
    }

    /// The (section, item) of a flat index.
    public func position(of index: Int) throws(IndexMapError) -> Position {
        guard index >= 0, index < count else { throw .indexOutOfRange(index: index, count: count) }
        // The last section whose start is ≤ index. It is never empty: an empty section k has
        // starts[k + 1] == starts[k] ≤ index, so k + 1 would be chosen instead.
        var low = 0
        var high = sectionCount - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return Position(section: low, item: index - starts[low])
    }

    /// The flat index of (section, item).
    public func index(of position: Position) throws(IndexMapError) -> Int {
        let count = try count(ofSection: position.section)
        guard position.item >= 0, position.item < count else {
            throw .itemOutOfRange(section: position.section, item: position.item, count: count)
        }
        return starts[position.section] + position.item
    }
}

/// Out-of-range input to an `IndexMap`.
public enum IndexMapError: LocalizedError, Equatable, Sendable {
    /// A flat index outside 0..<count.
    case indexOutOfRange(index: Int, count: Int)
    /// A section outside 0..<sectionCount.
    case sectionOutOfRange(section: Int, sectionCount: Int)
    /// An item outside its section.
    case itemOutOfRange(section: Int, item: Int, count: Int)
    /// A section with a negative item count.
    case negativeCount(section: Int, count: Int)
    /// More items than an Int can count.
    case tooManyItems

    /// The one-line sentence shown to the user.
    public var errorDescription: String? {
        switch self {
        case .indexOutOfRange(let index, let count):
            count == 0 ? "index \(index) is out of range: there are no items" : "index \(index) is out of range 0..<\(count)"
        case .sectionOutOfRange(let section, let sectionCount):
            sectionCount == 0
                ? "section \(section) is out of range: there are no sections"
                : "section \(section) is out of range 0..<\(sectionCount)"
        case .itemOutOfRange(let section, let item, let count):
            count == 0
                ? "item \(item) is out of range: section \(section) is empty"
                : "item \(item) is out of range 0..<\(count) of section \(section)"
        case .negativeCount(let section, let count):
            "section \(section) has a negative count \(count)"
        case .tooManyItems:
            "the sections hold more items than can be counted"
        }
    }
}
