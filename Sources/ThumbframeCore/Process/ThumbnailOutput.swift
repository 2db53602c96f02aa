import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A recipe's file: a grid thumbnail or a lightbox rendition of a photo or video poster, with an
/// HDR photo's gain map where `--hdr gain-map` asks for one. Made from the item's one decode.
enum ThumbnailOutput: ItemOutput {
    /// Content-addressed location of a thumbnail: it changes when the source bytes, the recipe
    /// or the pixel pipeline's version change, never otherwise, so renamed and copied files
    /// share their thumbnails. `profile` and `revision` are what the item records
    /// (`image.profile`, the format's pixels revision).
    static func path(
        sourceSHA256: String, recipe: ThumbnailRecipe, profile: Manifest.ImageInfo.ProfileUse?, revision: String?, gainMap: Bool
    ) -> String {
        // v3: pixels from 0.4.0 on (each thumbnail reduced once from the decode by an exact
        // Lanczos3; v2, 0.3.0's, converted to sRGB from the ICC profile after a 2× shrink-on-load
        // margin). A new key makes an upgraded build write them instead of keeping the older
        // files under the same names; the pruner then removes those, which the ledger records. A
        // profile converted with another intent than relative colorimetric is part of the key:
        // earlier builds' thumbnails of such a file (made through libvips' default profile) are
        // never taken for the right ones. (An ignored profile's pixels are what they were.) So is
        // a format's pixels revision (`ImageHeader.pixelsRevision`), and an HDR photo's gain map
        // (the same SDR picture, another file; v2: the map resized by a triangle, not Lanczos3,
        // and a PQ or HLG picture within 10 % of SDR white has none).
        ContentAddress.path(
            "thumbframe-thumbnail-v3", sourceSHA256, recipe.canonicalRecipe + (gainMap ? "\ngain map v2" : ""), profile: profile,
            revision: revision, extension: recipe.format.fileExtension)
    }

    /// What a decode is to make: every recipe's entry (those already at their content address
    /// with their size and hash), and the outputs still missing.
    struct Planned {
        var thumbnails: [String: Manifest.Thumbnail] = [:]
        var missing: [(output: ThumbnailPlan.Output, path: String)] = []
        /// The recipes whose files carry the photo's gain map.
        var gainMaps: Set<String> = []
    }

    /// The worker's reuse check: the plan's outputs named, those found taken as they are.
    static func planned(_ plan: ThumbnailPlan, header: ImageHeader, sha256: String, context: ProcessingContext) -> Planned {
        var planned = Planned()
        // An HDR photo's lightbox renditions carry its gain map (`--hdr gain-map`).
        planned.gainMaps = header.hdr == nil ? [] : context.settings?.gainMapNames ?? []
        for output in plan.outputs {
            let gainMapped = planned.gainMaps.contains(output.recipe.name)
            let path = path(
                sourceSHA256: sha256, recipe: output.recipe, profile: header.profile, revision: header.pixelsRevision, gainMap: gainMapped)
            var entry = Manifest.Thumbnail(path: path, width: output.width, height: output.height, crop: output.crop)
            if let existing = ContentAddress.existing(path, context: context) {
                (entry.bytes, entry.sha256) = (existing.bytes, existing.sha256)
                if gainMapped { entry.headroom = existingHeadroom(path, context: context) }
            } else {
                planned.missing.append((output, path))
            }
            planned.thumbnails[output.recipe.name] = entry
        }
        return planned
    }

    /// The worker's half: writes what the decode encoded for the missing outputs (their names
    /// into the journal in one write, before any of its files) and records their sizes, hashes
    /// and headrooms in `planned.thumbnails`.
    static func write(_ rendering: Rendering?, _ planned: inout Planned, context: ProcessingContext) -> OutputFailure? {
        let writes = Array(zip(rendering?.encoded ?? [], planned.missing))
        for (number, (encoded, (output, path))) in writes.enumerated() {
            do {
                if number == 0 { try context.output.journal(writes.map(\.1.1)) }
                try context.output.write(file: path, encoded, journaled: true)
            } catch {
                return .cannotWrite("thumbnail", path, error)
            }
            let name = output.recipe.name
            planned.thumbnails[name]?.bytes = encoded.count
            planned.thumbnails[name]?.sha256 = encoded.withUnsafeBytes(Digest.sha256)
            planned.thumbnails[name]?.headroom = rendering.flatMap { number < $0.headrooms.count ? $0.headrooms[number] : nil }
        }
        return nil
    }

    /// The headroom of a gain-map rendition already at its content address, read from its own
    /// metadata (nil: an SDR file, as an HDR photo's rendition is where its map was unusable).
    private static func existingHeadroom(_ path: String, context: ProcessingContext) -> Double? {
        guard let bytes = context.output.read(file: path) else { return nil }
        return bytes.withUnsafeBytes { GainMapJPEG.read($0)?.parameters?.headroom }
    }

    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem) {
        let setup = outputs.setup
        let revision = ImageHeader.pixelsRevision(format: item.image.format)
        let recipes = setup.recipes + (setup.settings?.ladder?.renditions ?? [])
        let gainMaps = item.image.hdr == nil ? [] : setup.settings?.gainMapNames ?? []
        for name in item.thumbnails.keys.sorted() where name != Manifest.tilesName {
            guard let recipe = recipes.first(where: { $0.name == name }) else { throw .breach("a thumbnail named \(name)") }
            let path = path(
                sourceSHA256: outputs.sourceSHA256, recipe: recipe, profile: item.image.profile, revision: revision,
                gainMap: gainMaps.contains(name))
            let (bytes, sha256, copied) = try outputs.file(path, limit: ScratchOutputs.maximumThumbnailBytes)
            (item.thumbnails[name]!.path, item.thumbnails[name]!.bytes, item.thumbnails[name]!.sha256) = (path, bytes, sha256)
            if copied { outputs.written += 1 }
        }
    }
}
