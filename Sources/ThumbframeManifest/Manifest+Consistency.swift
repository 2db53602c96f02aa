import Foundation

extension Manifest {
    /// Structural problems of a decoded manifest, one sentence each (empty when consistent):
    /// numbering, sections, paths that must stay relative and inside their roots, duplicates.
    public func consistencyProblems(limit: Int = 100) -> [String] {
        var problems: [String] = []
        func report(_ problem: String) {
            if problems.count < limit { problems.append(problem) }
        }
        if format != Self.formatName || version != Self.currentVersion {
            report("format '\(format)' version \(version) is not \(Self.formatName) version \(Self.currentVersion)")
        }
        // Every number here comes from a file that may be hostile: arithmetic must not trap.
        var start = 0
        for (index, section) in sections.enumerated() {
            if section.count <= 0 { report("sections[\(index)] is empty (count \(section.count))") }
            if section.start != start { report("sections[\(index)].start is \(section.start), expected \(start)") }
            start = start.addingReportingOverflow(max(0, section.count)).partialValue
        }
        if start != items.count { report("sections count \(start) items, but there are \(items.count)") }
        var paths = Set<[UInt8]>()  // bytes: NFC and NFD spellings are different files
        for (index, item) in items.enumerated() {
            if item.index != index { report("items[\(index)].index is \(item.index)") }
            if sections.indices.contains(item.section) {
                let section = sections[item.section]
                if item.item < 0 || item.item >= section.count
                    || section.start.addingReportingOverflow(item.item) != (index, false)
                {
                    report("items[\(index)] is section \(item.section) item \(item.item), which is not index \(index)")
                }
            } else {
                report("items[\(index)].section \(item.section) does not exist")
            }
            if !Self.isContainedRelativePath(item.path) { report("items[\(index)].path '\(item.path)' leaves the source directory") }
            if !paths.insert(item.pathBytes).inserted { report("items[\(index)].path '\(item.path)' appears twice") }
            if item.image.width <= 0 || item.image.height <= 0 || item.image.storedWidth <= 0 || item.image.storedHeight <= 0 {
                report("items[\(index)] has a size that is not positive")
            }
            if !(1...8).contains(item.image.orientation) { report("items[\(index)].image.orientation \(item.image.orientation) is not 1–8") }
            for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key }) {
                if !thumbnail.path.hasPrefix("thumbs/") || !Self.isContainedRelativePath(thumbnail.path) {
                    report("items[\(index)].thumbnails.\(name).path '\(thumbnail.path)' is not inside thumbs/")
                }
                if thumbnail.width <= 0 || thumbnail.height <= 0 { report("items[\(index)].thumbnails.\(name) has no size") }
            }
        }
        for (index, failure) in failures.enumerated() where !Self.isContainedRelativePath(failure.path) {
            report("failures[\(index)].path '\(failure.path)' leaves the source directory")
        }
        return problems
    }

    /// A `/`-separated relative path with no empty, `.` or `..` component.
    public static func isContainedRelativePath(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.contains("\0")
            && path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }
}
