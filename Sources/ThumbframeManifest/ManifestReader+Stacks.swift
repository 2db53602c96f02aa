/// Stacks (`settings.stacks`) as a grid shows them: per section, each stack's cover, members and
/// reason, and the cells left when every stack is folded into its cover's, read from the grid
/// pages alone.
extension ManifestReader {
    /// One stack of a section, by positions in the section (an item's `item`).
    public struct SectionStack: Sendable, Hashable {
        /// The cover: the cell that stands for the stack.
        public var cover: Int
        /// Every member, ascending, the cover's included.
        public var members: [Int]
        /// Why they are one stack.
        public var reason: Manifest.Stack.Reason
    }

    /// The stacks of section `section`, in display order of their covers (none in a manifest
    /// written before stacks, or with `--stacks none`).
    public func stacks(inSection section: Int) throws(ManifestError) -> [SectionStack] {
        try sectionCells(section).compactMap { cell in
            guard let stack = cell.stack, let members = stack.members, stack.cover == cell.item else { return nil }
            return SectionStack(cover: cell.item, members: members, reason: stack.reason)
        }
    }

    /// The positions in section `section` a grid folding its stacks shows, in display order:
    /// every item in no stack, and each stack's cover.
    public func foldedPositions(inSection section: Int) throws(ManifestError) -> [Int] {
        try sectionCells(section).compactMap { cell in
            guard let stack = cell.stack else { return cell.item }
            return stack.cover == cell.item ? cell.item : nil
        }
    }

    private func sectionCells(_ section: Int) throws(ManifestError) -> [ManifestGridPage.Cell] {
        guard document.sections.indices.contains(section) else {
            throw .malformed("section \(section) does not exist (the manifest has \(document.sections.count))")
        }
        let start = document.sections[section].start
        return try cells(in: start..<start + document.sections[section].count)
    }
}
