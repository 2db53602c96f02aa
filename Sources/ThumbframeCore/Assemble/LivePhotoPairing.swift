import ThumbframeManifest

/// Makes each Apple Live Photo one item: the photo (HEIC or JPEG) with its MOV as the `motion`
/// part. The halves are matched by Apple's content identifier — the photo's MakerNote tag
/// 0x0011 (exiftool's MediaGroupUUID), the MOV's `com.apple.quicktime.content.identifier` (its
/// ContentIdentifier) — in the same folder,
/// never by file name (`IMG_1.HEIC` and `IMG_1.MOV` from different shoots stay apart; an
/// unpaired MOV is a video). When several MOVs carry a photo's identifier, the first in byte
/// order of names is its motion and the others stay videos; every photo with the identifier
/// (an edited copy beside the original) gets that motion.
enum LivePhotoPairing {
    /// The keys without the MOVs that became motion parts, each photo's `motion` set.
    static func pair(_ keys: [ManifestAssembler.Key]) -> [ManifestAssembler.Key] {
        struct Half: Hashable {
            var directory: ArraySlice<UInt8>
            var identifier: Substring
        }
        var movs: [Half: Int] = [:]
        var photos: Set<Half> = []
        for (index, key) in keys.enumerated() {
            guard let pair = key.pair, let space = pair.firstIndex(of: " ") else { continue }
            let half = Half(directory: key.directory, identifier: pair[pair.index(after: space)...])
            switch pair[..<space] {
            case "video":
                if let other = movs[half], keys[other].name.lexicographicallyPrecedes(key.name) { continue }
                movs[half] = index
            case "photo": photos.insert(half)
            default: continue
            }
        }
        guard !movs.isEmpty, !photos.isEmpty else { return keys }
        var paired: Set<Int> = []
        var result: [ManifestAssembler.Key] = []
        result.reserveCapacity(keys.count)
        for var key in keys {
            if let pair = key.pair, pair.hasPrefix("photo "), let space = pair.firstIndex(of: " "),
                let mov = movs[Half(directory: key.directory, identifier: pair[pair.index(after: space)...])]
            {
                key.motion = keys[mov].source
                paired.insert(mov)
            }
            result.append(key)
        }
        guard !paired.isEmpty else { return keys }
        let movPaths = Set(paired.map { keys[$0].path })
        return result.filter { !movPaths.contains($0.path) }
    }
}
