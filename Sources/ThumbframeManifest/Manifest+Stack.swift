extension Manifest {
    /// How photos are gathered into stacks a frontend collapses to one cell (`--stacks`).
    public enum StackMode: String, Codable, Hashable, Sendable, CaseIterable {
        /// Bursts the camera marked, byte- or pixel-identical copies, and frames of one camera
        /// taken seconds apart that look alike.
        case all
        /// Only bursts the camera marked (Apple's BurstUUID, Google Camera's BurstID, Android
        /// burst names).
        case bursts
        /// No stacks.
        case none
    }

    /// A photo's place in a stack: photos of one section a frontend may show as one cell (the
    /// cover's) and open as a strip.
    public struct Stack: Codable, Hashable, Sendable {
        /// Why the photos are one stack.
        public enum Reason: String, Codable, Hashable, Sendable, CaseIterable {
            /// The camera marked them frames of one burst.
            case burst
            /// The same camera took them seconds apart, and they look alike.
            case timeSimilar = "time+similar"
            /// The same bytes, or the same picture.
            case duplicate
        }

        /// The cover's position in the section (its `item`): the cell that stands for the stack.
        public var cover: Int
        /// The strongest evidence that joined them (see `Reason`).
        public var reason: Reason
        /// On the cover only: every member's position in the section, the cover's included,
        /// ascending.
        public var members: [Int]?

        /// Creates a stack entry.
        public init(cover: Int, reason: Reason, members: [Int]? = nil) {
            self.cover = cover
            self.reason = reason
            self.members = members
        }
    }
}
