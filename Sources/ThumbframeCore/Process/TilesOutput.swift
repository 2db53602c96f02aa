import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A photo's deep-zoom pyramid (`--zoom tiles`): a `.dzi` and its `_files` folder of tiles, made
/// from libvips' full-resolution decode after the thumbnails. Its entry is the item's
/// `Manifest.tilesName` thumbnail.
enum TilesOutput: ItemOutput {
    /// Content-addressed location of the pyramid's `.dzi`, keyed like a thumbnail's. v2: levels
    /// below the full size are Lanczos3 reductions (v1's were dzsave's box averages).
    static func path(
        sourceSHA256: String, tiles: Manifest.TileSettings, profile: Manifest.ImageInfo.ProfileUse?, revision: String?
    ) -> String {
        ContentAddress.path("thumbframe-tiles-v2", sourceSHA256, tiles.canonical, profile: profile, revision: revision, extension: "dzi")
    }

    /// Writes a photo's deep-zoom pyramid to a path prefix (`VipsDecoder.writeTiles`).
    /// The last argument is what is left of the file's `--decode-timeout` (0: none).
    typealias Writer = (ImageHeader, String, Manifest.TileSettings, Double) -> Result<Void, DecodeFailure>

    /// The worker's half: the `tiles` entry of a photo, its pyramid found at `path` (with its
    /// `_files` folder), or made now through `write` into a temporary folder and renamed into
    /// place (the `.dzi` goes into the journal first). `made` when this run wrote it.
    static func make(
        _ path: String, settings: Manifest.TileSettings, header: ImageHeader, context: ProcessingContext, remaining: Double,
        write: Writer
    ) -> Result<(entry: Manifest.Thumbnail, made: Bool), OutputFailure> {
        let image = header.imageInfo
        func entry(_ dzi: [UInt8], _ count: OutputDirectory.PyramidCount) -> Result<Manifest.Thumbnail, OutputFailure> {
            // The pyramid is the picture as shown: the .dzi's size is the display size, every level there.
            let expected = Manifest.Tiles.levels(width: image.width, height: image.height)
            let described = Manifest.Tiles.parseDZI(dzi)
            guard count.levels == expected, let described, (described.width, described.height) == (image.width, image.height) else {
                let size = described.map { "\($0.width)×\($0.height)" } ?? "no DeepZoom size"
                return .failure(
                    OutputFailure(
                        stage: .encode,
                        reason: "deep-zoom tiles of \(path) came out \(size) in \(count.levels) levels, "
                            + "not \(image.width)×\(image.height) in \(expected)"))
            }
            let tiles = Manifest.Tiles(
                tileSize: settings.tileSize, overlap: settings.overlap, format: settings.tileExtension, levels: count.levels,
                files: count.files, bytes: count.bytes)
            return .success(
                Manifest.Thumbnail(
                    path: path, width: image.width, height: image.height, crop: nil, bytes: dzi.count,
                    sha256: dzi.withUnsafeBytes(Digest.sha256), tiles: tiles))
        }
        // The reuse check: the whole pyramid, its `.dzi` of the size the index recorded.
        let existing = context.output.existingPyramid(dzi: path)
        if !context.overwrite, let existing, context.recorded[path].map({ $0 == existing.dzi.count }) ?? true,
            existing.count.files == Manifest.Tiles.fileCount(width: image.width, height: image.height, tileSize: settings.tileSize),
            case .success(let found) = entry(existing.dzi, existing.count)
        {
            return .success((found, false))
        }
        do {
            // Made again into a temporary folder. A tiles folder already under this name that is
            // not this pyramid whole (a tile or level gone, a user's file) is never emptied here
            // (an item of the same bytes may be writing it): the item fails, and the pruner
            // removes its dzsave-shaped entries at the end of the run, so the next run makes it.
            try context.output.journal([path])
            let made = try context.output.writePyramid(dzi: path, rewrite: metadataStripper(settings)) { prefix in
                write(header, prefix, settings, remaining)
            }
            switch made {
            case .success(let (dzi, count)): return entry(dzi, count).map { ($0, true) }
            case .failure(let problem):
                return .failure(OutputFailure(stage: FailureStage(problem.stage), reason: problem.reason, cause: problem.cause))
            }
        } catch {
            return .failure(.cannotWrite("deep-zoom tiles", path, error))
        }
    }

    /// libvips 8.14's webpsave writes an EXIF block into every tile (as into thumbnails).
    private static func metadataStripper(_ settings: Manifest.TileSettings) -> (([UInt8]) -> [UInt8])? {
        settings.format == .webp ? { MetadataBounds.webpWithoutMetadata($0) } : nil
    }

    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem) {
        guard var thumbnail = item.thumbnails[Manifest.tilesName] else { return }
        guard let tiles = outputs.setup.settings?.tiles else { throw .breach("tiles this build does not make") }
        let path = path(
            sourceSHA256: outputs.sourceSHA256, tiles: tiles, profile: item.image.profile,
            revision: ImageHeader.pixelsRevision(format: item.image.format))
        let (dzi, count) = try pyramid(path, width: item.image.width, height: item.image.height, settings: tiles, outputs: &outputs)
        thumbnail.path = path
        (thumbnail.bytes, thumbnail.sha256) = (dzi.count, dzi.withUnsafeBytes(Digest.sha256))
        thumbnail.tiles = Manifest.Tiles(
            tileSize: tiles.tileSize, overlap: tiles.overlap, format: tiles.tileExtension, levels: count.levels, files: count.files,
            bytes: count.bytes)
        item.thumbnails[Manifest.tilesName] = thumbnail
    }

    /// A pyramid: copied tile by tile from the scratch folder when the worker made it (only
    /// names of a DeepZoom pyramid, no more files than the picture's size has), else found in
    /// OUT_DIR; either way it must describe a picture of the item's size.
    private static func pyramid(
        _ path: String, width: Int, height: Int, settings: Manifest.TileSettings, outputs: inout ScratchOutputs
    ) throws(ScratchOutputs.Problem) -> (dzi: [UInt8], count: OutputDirectory.PyramidCount) {
        guard let name = OutputName(path), let folder = OutputDirectory.tileFolder(of: name) else { throw .breach("no pyramid path") }
        let expected = Manifest.Tiles.fileCount(width: width, height: height, tileSize: settings.tileSize)
        let found: (dzi: [UInt8], count: OutputDirectory.PyramidCount)
        if let fanout = try? outputs.scratch?.subdirectory(Array(name.fanout.utf8)), fanout.stat(name.fileBytes) != nil {
            guard let dzi = try? fanout.readFile(name.fileBytes, limit: 1 << 16), let tiles = try? fanout.subdirectory(Array(folder.utf8))
            else { throw .breach("a pyramid without its .dzi or tiles") }
            let made: Result<(dzi: [UInt8], count: OutputDirectory.PyramidCount), ScratchOutputs.Problem>
            do {
                made = try outputs.output.writePyramid(dzi: path, rewrite: metadataStripper(settings)) { prefix in
                    copyTiles(from: tiles, dzi: dzi, to: prefix, limit: expected)
                }
            } catch {
                throw .write("cannot write deep-zoom tiles \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            switch made {
            case .success(let pyramid): found = pyramid
            case .failure(let problem): throw problem
            }
            outputs.written += 1
        } else {
            guard let existing = outputs.output.existingPyramid(dzi: path) else { throw .breach("it names \(path), which it did not make") }
            found = existing
        }
        let described = Manifest.Tiles.parseDZI(found.dzi)
        guard found.count.files == expected, found.count.levels == Manifest.Tiles.levels(width: width, height: height),
            let described, described.width == width, described.height == height
        else { throw .breach("a pyramid that is not of a \(width)×\(height) picture") }
        return found
    }

    /// Copies a pyramid's tiles (names of dzsave's shape only, at most `limit` files) and its
    /// `.dzi` to `prefix` (`<prefix>_files`, `<prefix>.dzi`).
    private static func copyTiles(
        from tiles: Directory, dzi: [UInt8], to prefix: String, limit: Int
    ) -> Result<Void, ScratchOutputs.Problem> {
        var copied = 0
        do throws(FileSystemError) {
            let target = try Directory.open((prefix as NSString).deletingLastPathComponent)
            let base = (prefix as NSString).lastPathComponent
            try target.writeAtomically(dzi, to: base + ".dzi", durable: false)
            let files = try target.makeSubdirectory(base + "_files")
            for level in try tiles.entries() where OutputDirectory.pyramidShape(level, depth: 0, isDirectory: true) {
                guard tiles.stat(level)?.isDirectory == true else { continue }
                let from = try tiles.subdirectory(level)
                let to = try files.makeSubdirectory(String(decoding: level, as: UTF8.self))
                for tile in try from.entries() where OutputDirectory.pyramidShape(tile, depth: 1, isDirectory: false) {
                    guard from.stat(tile)?.isRegularFile == true else { continue }
                    copied += 1
                    guard copied <= limit else { return .failure(.breach("more tiles than a pyramid of its size has")) }
                    try to.writeAtomically(
                        try from.readFile(tile, limit: 16 << 20), to: String(decoding: tile, as: UTF8.self), durable: false)
                }
            }
        } catch {
            return .failure(.write("cannot copy deep-zoom tiles: \(error.localizedDescription)", unwritable: error.isOutputUnwritable))
        }
        return .success(())
    }
}
