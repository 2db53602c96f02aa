import ThumbframeManifest

/// Makes a RAW file and the JPEG or HEIF the camera wrote with it one item (`--raw-pairs
/// merge`): the two lie in the same folder under the same name but the extension
/// (`IMG_0042.CR3`, `IMG_0042.JPG`; names compared byte for byte, extensions without case). The
/// JPEG is shown — the camera's rendering, what the photographer saw on its screen — and the
/// RAW becomes its `rawFile`. Where several qualify, the first name in byte order pairs (a
/// `.JPG` before a `.jpeg`, a `.CR3` before a `.DNG` made from it) and the others stay items. A
/// RAW whose JPEG failed, or a JPEG whose RAW failed, stays an item alone.
enum RawPairing {
    /// What a camera writes beside its RAW files: a JPEG or a HEIF (not an AVIF, `.avif`).
    static let shownExtensions = MediaFormat.jpeg.extensions.union(MediaFormat.heic.extensions).union(MediaFormat.heif.extensions)

    /// The keys without the RAWs that were paired, each paired JPEG's `rawFile` set.
    static func pair(_ keys: [ManifestAssembler.Key]) -> [ManifestAssembler.Key] {
        struct Shot: Hashable {
            var directory: ArraySlice<UInt8>
            var stem: ArraySlice<UInt8>
        }
        // RAWs first (most libraries have none: then nothing more is looked at or held), then
        // the JPEGs of those shots alone.
        var raws: [Shot: Int] = [:]
        var shown: [Shot: Int] = [:]
        for rawPass in [true, false] {
            for (index, key) in keys.enumerated() {
                let name = key.name
                guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > name.startIndex else { continue }
                let shot = Shot(directory: key.directory, stem: name[..<dot])
                // The second pass looks only at the shots of RAWs (no text made for the others).
                guard rawPass || raws[shot] != nil else { continue }
                let text = String(decoding: name, as: UTF8.self)
                func keepFirst(_ table: inout [Shot: Int]) {
                    if let other = table[shot], keys[other].name.lexicographicallyPrecedes(name) { return }
                    table[shot] = index
                }
                if rawPass, FileSignature.hasRawExtension(text) {
                    keepFirst(&raws)
                } else if !rawPass, shownExtensions.contains(FileSignature.extension(text)) {
                    keepFirst(&shown)
                }
            }
            if raws.isEmpty { return keys }
        }
        var paired: Set<Int> = []
        var result = keys
        for (shot, jpeg) in shown {
            guard let raw = raws[shot] else { continue }
            result[jpeg].rawFile = keys[raw].source
            paired.insert(raw)
        }
        guard !paired.isEmpty else { return keys }
        return result.enumerated().filter { !paired.contains($0.offset) }.map(\.element)
    }
}
