import ThumbframeImaging
import ThumbframeManifest

/// Gathers the photos of one section into stacks (`--stacks`), from their `StackEvidence`
/// alone, so the same rows give the same stacks whichever run, shard or order recorded them:
///
/// - `burst`: the camera says so (Apple's BurstUUID, Google Camera's BurstID, an Android
///   burst's names);
/// - `duplicate` (`all`): the same bytes (SHA-256), or the same picture at placeholder size and
///   the same display size;
/// - `time+similar` (`all`): taken by the same camera at most `window` apart, and alike
///   (`Likeness.distance` at most `threshold` of 128 bits; a flat picture, whose hashes say
///   nothing, is alike to none).
///
/// Links join stacks (a frame like an earlier one joins its stack), bursts first, then
/// duplicates, then likeness. A stack's reason is its strongest joining link: `burst` if any,
/// else `duplicate` if every one is, else `time+similar`.
/// Its cover is the frame the camera picked, else the sharpest (`Likeness.sharpness`), else the
/// first in display order.
enum Stacking {
    /// The most two frames of one camera may lie apart, in milliseconds, and be one scene.
    static let window: Int64 = 10_000
    /// The most hash bits (of 128) two frames may differ in and be one scene: measured on bursts
    /// made from real photos (shifted, re-exposed, re-encoded) against unrelated photos of the
    /// same minute (`StackingTests`, README "Stacks").
    static let threshold = 24
    /// The most earlier frames a frame is compared with: a burst of 10 frames a second for the
    /// whole window is 100; a camera whose clock stood still (thousands of photos at one time)
    /// stays linear.
    static let neighbours = 200

    /// Each position's stack, for a section's photos' evidence in display order (nil: not a
    /// photo, or no evidence).
    static func stacks(_ evidence: [StackEvidence?], mode: Manifest.StackMode) -> [Manifest.Stack?] {
        var stacks = [Manifest.Stack?](repeating: nil, count: evidence.count)
        guard mode != .none, evidence.count > 1 else { return stacks }
        var sets = DisjointSets(count: evidence.count)
        let photos = evidence.indices.filter { evidence[$0] != nil }
        // Bursts: equal identifiers.
        var bursts: [UInt64: Int] = [:]
        for position in photos where evidence[position]!.burst != 0 {
            if let first = bursts[evidence[position]!.burst] {
                sets.join(first, position, .burst)
            } else {
                bursts[evidence[position]!.burst] = position
            }
        }
        if mode == .all {
            // Duplicates: equal bytes, or equal pixels at the same size.
            var files: [UInt64: Int] = [:]
            struct Picture: Hashable {
                var pixels: UInt64
                var width: Int
                var height: Int
            }
            var pictures: [Picture: Int] = [:]
            for position in photos {
                let facts = evidence[position]!
                if let first = files[facts.file] { sets.join(first, position, .duplicate) } else { files[facts.file] = position }
                guard let likeness = facts.likeness else { continue }
                let picture = Picture(pixels: likeness.pixels, width: facts.width, height: facts.height)
                if let first = pictures[picture] { sets.join(first, position, .duplicate) } else { pictures[picture] = position }
            }
            // Same camera, close in time, alike: each frame against the earlier ones in its window.
            let timed = photos.filter {
                evidence[$0]!.captured != nil && evidence[$0]!.camera != 0 && evidence[$0]!.likeness?.comparable == true
            }
            .sorted {
                let (a, b) = (evidence[$0]!, evidence[$1]!)
                return (a.camera, a.captured!, $0) < (b.camera, b.captured!, $1)
            }
            for (offset, position) in timed.enumerated() {
                let facts = evidence[position]!
                for earlier in timed[max(0, offset - neighbours)..<offset].reversed() {
                    let other = evidence[earlier]!
                    let apart = facts.captured!.subtractingReportingOverflow(other.captured!)
                    guard other.camera == facts.camera, !apart.overflow, apart.partialValue <= window else { break }
                    if facts.likeness!.distance(to: other.likeness!) <= threshold { sets.join(earlier, position, .timeSimilar) }
                }
            }
        }
        var members: [Int: [Int]] = [:]
        for position in photos { members[sets.root(position), default: []].append(position) }
        for (root, group) in members where group.count > 1 {
            let cover =
                group.first { evidence[$0]!.pick }
                ?? group.max { a, b in
                    let (x, y) = (evidence[a]!.likeness?.sharpness ?? -1, evidence[b]!.likeness?.sharpness ?? -1)
                    return x != y ? x < y : a > b
                }!
            let reason = sets.reason(root)
            for position in group {
                stacks[position] = Manifest.Stack(cover: cover, reason: reason, members: position == cover ? group : nil)
            }
        }
        return stacks
    }

    /// Union-find over positions, remembering what kinds of links joined each set.
    private struct DisjointSets {
        private var parent: [Int]
        private var burst: [Bool]
        private var onlyDuplicates: [Bool]

        init(count: Int) {
            parent = Array(0..<count)
            burst = Array(repeating: false, count: count)
            onlyDuplicates = Array(repeating: true, count: count)
        }

        mutating func root(_ position: Int) -> Int {
            var position = position
            while parent[position] != position {
                parent[position] = parent[parent[position]]
                position = parent[position]
            }
            return position
        }

        /// Joins two positions' sets; the smaller root stays the root (deterministic). A link
        /// inside one set changes nothing: the links made first (bursts, then duplicates) say why.
        mutating func join(_ a: Int, _ b: Int, _ reason: Manifest.Stack.Reason) {
            let (x, y) = (root(a), root(b))
            guard x != y else { return }
            let (kept, gone) = (min(x, y), max(x, y))
            parent[gone] = kept
            burst[kept] = burst[kept] || burst[gone] || reason == .burst
            onlyDuplicates[kept] = onlyDuplicates[kept] && onlyDuplicates[gone] && reason == .duplicate
        }

        func reason(_ root: Int) -> Manifest.Stack.Reason {
            burst[root] ? .burst : onlyDuplicates[root] ? .duplicate : .timeSimilar
        }
    }
}
