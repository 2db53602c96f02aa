import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What a decode worker made for one item, taken into OUT_DIR by the build. A worker writes only
/// into its scratch folder (`thumbs/.tf-tmp-…`, laid out as `thumbs/`), which nothing publishes;
/// the build names every file an item has itself — content addresses from the source's SHA-256
/// it computed and the item's facts, never a path the worker gave — and copies each from the
/// scratch folder (never renames it: a worker may still hold it open), hashing what it copied;
/// a file the worker did not make must already be in OUT_DIR, and is hashed there. The item's
/// paths, sizes and hashes are then the build's.
struct ScratchOutputs {
    /// Why an item's files could not be taken.
    enum Problem: Error {
        /// The worker broke its contract (a file it names it did not make, of no possible size).
        case breach(String)
        /// OUT_DIR did not take a copy.
        case write(String, unwritable: Bool)
    }

    /// The worker's scratch subfolder for this job (nil: it made nothing).
    let scratch: Directory?
    let output: OutputDirectory
    let setup: WorkerProtocol.Setup
    /// The job's source file, open, and its SHA-256 as this process computed it.
    let source: OpenFile
    let sourceSHA256: String
    /// Thumbnails (a pyramid counts one) copied into OUT_DIR: the build's `thumbnailsWritten`.
    private(set) var written = 0

    /// The largest thumbnail, sprite sheet or WebVTT file a worker may hand over.
    static let maximumThumbnailBytes = 256 << 20

    init(scratch: Directory?, output: OutputDirectory, setup: WorkerProtocol.Setup, source: OpenFile, sourceSHA256: String) {
        (self.scratch, self.output, self.setup, self.source, self.sourceSHA256) = (scratch, output, setup, source, sourceSHA256)
    }

    /// Names, takes and hashes every file `item` has; `motion` is where the worker says a Motion
    /// Photo's MP4 lies in the source (its files are named from those bytes).
    mutating func settle(_ item: inout StateIndex.StoredItem, motion: Range<Int>?) throws(Problem) {
        let profile = item.image.profile
        let revision = ImageHeader.pixelsRevision(format: item.image.format)
        let recipes = setup.recipes + (setup.settings?.ladder?.renditions ?? [])
        let gainMaps = item.image.hdr == nil ? [] : setup.settings?.gainMapNames ?? []
        for name in item.thumbnails.keys.sorted() {
            var thumbnail = item.thumbnails[name]!
            if name == Manifest.tilesName {
                guard let tiles = setup.settings?.tiles else { throw .breach("tiles this build does not make") }
                let path = ProcessingContext.tilesPath(sourceSHA256: sourceSHA256, tiles: tiles, profile: profile, revision: revision)
                let (dzi, count) = try pyramid(path, width: item.image.width, height: item.image.height, settings: tiles)
                thumbnail.path = path
                (thumbnail.bytes, thumbnail.sha256) = (dzi.count, dzi.withUnsafeBytes(Digest.sha256))
                thumbnail.tiles = Manifest.Tiles(
                    tileSize: tiles.tileSize, overlap: tiles.overlap, format: tiles.tileExtension, levels: count.levels, files: count.files,
                    bytes: count.bytes)
            } else {
                guard let recipe = recipes.first(where: { $0.name == name }) else { throw .breach("a thumbnail named \(name)") }
                let path = ProcessingContext.thumbnailPath(
                    sourceSHA256: sourceSHA256, recipe: recipe, profile: profile, revision: revision, gainMap: gainMaps.contains(name))
                let (bytes, sha256, copied) = try file(path, limit: Self.maximumThumbnailBytes)
                (thumbnail.path, thumbnail.bytes, thumbnail.sha256) = (path, bytes, sha256)
                if copied { written += 1 }
            }
            item.thumbnails[name] = thumbnail
        }
        // A rendition is at most a few times its source (an H.264 of an HEVC video).
        let videoLimit = item.file.bytes.multipliedReportingOverflow(by: 4).partialValue + (64 << 20)
        if var video = item.media?.video {
            if var rendition = video.rendition {
                rendition.path = ProcessingContext.renditionPath(
                    sourceSHA256: sourceSHA256, delivery: rendition.delivery, renditions: setup.renditions)
                (rendition.bytes, rendition.sha256, _) = try file(rendition.path, limit: videoLimit)
                video.rendition = rendition
            }
            if var scrub = video.scrub {
                (scrub.sprite, scrub.vtt) = ProcessingContext.scrubPaths(sourceSHA256: sourceSHA256)
                (scrub.spriteBytes, scrub.spriteSHA256, _) = try file(scrub.sprite, limit: Self.maximumThumbnailBytes)
                (scrub.vttBytes, scrub.vttSHA256, _) = try file(scrub.vtt, limit: Self.maximumThumbnailBytes)
                video.scrub = scrub
            }
            item.media?.video = video
        }
        if var part = item.media?.motion {
            guard part.source == .embedded, part.video.scrub == nil, let motion, motion.upperBound <= item.file.bytes,
                let sha256 = Digest.sha256(fd: source.fd, offset: motion.lowerBound, size: motion.count)
            else { throw .breach("a motion part that is not the file's") }
            part.path = ProcessingContext.motionPath(sha256: sha256)
            (part.bytes, part.sha256, _) = try file(part.path!, limit: videoLimit)
            if var rendition = part.video.rendition {
                rendition.path = ProcessingContext.renditionPath(
                    sourceSHA256: sha256, delivery: rendition.delivery, renditions: setup.renditions)
                (rendition.bytes, rendition.sha256, _) = try file(rendition.path, limit: videoLimit)
                part.video.rendition = rendition
            }
            item.media?.motion = part
        }
    }

    /// The file at `path`: copied from the scratch folder when the worker made it (`copied`),
    /// else found in OUT_DIR; its size and SHA-256 as this process read them.
    private func file(_ path: String, limit: Int) throws(Problem) -> (bytes: Int, sha256: String, copied: Bool) {
        guard let name = OutputName(path) else { throw .breach("a file of no content address") }
        if let fanout = try? scratch?.subdirectory(Array(name.fanout.utf8)), let stat = fanout.stat(name.fileBytes) {
            guard stat.isRegularFile, stat.size > 0, stat.size <= limit, let made = try? fanout.openFile(name.fileBytes) else {
                throw .breach("\(path) made of \(stat.size) bytes, or not a file")
            }
            let copied: (Int, String)?
            var failure: Int32 = 0
            do {
                // Hashed as it is copied: the bytes read are the bytes written.
                copied = try output.write(file: path) { target -> (Int, String)? in
                    let sha256 = Digest.sha256(fd: made.fd, size: stat.size) { block, offset in
                        Self.write(block, to: target, at: offset, failure: &failure)
                    }
                    return sha256.map { (stat.size, $0) }
                }
            } catch {
                throw .write("cannot write \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            guard let copied else {
                let error = FileSystemError.posix(failure == 0 ? EIO : failure)
                throw .write("cannot write \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            return (copied.0, copied.1, true)
        }
        guard let found = output.open(file: path), let stat = found.stat(), stat.isRegularFile, stat.size > 0,
            let sha256 = Digest.sha256(fd: found.fd, size: stat.size)
        else { throw .breach("it names \(path), which it did not make") }
        return (stat.size, sha256, false)
    }

    /// A pyramid: copied tile by tile from the scratch folder when the worker made it (only
    /// names of a DeepZoom pyramid, no more files than the picture's size has), else found in
    /// OUT_DIR; either way it must describe a picture of the item's size.
    private mutating func pyramid(
        _ path: String, width: Int, height: Int, settings: Manifest.TileSettings
    ) throws(Problem) -> (dzi: [UInt8], count: OutputDirectory.PyramidCount) {
        guard let name = OutputName(path), let folder = OutputDirectory.tileFolder(of: name) else { throw .breach("no pyramid path") }
        let expected = Manifest.Tiles.fileCount(width: width, height: height, tileSize: settings.tileSize)
        let found: (dzi: [UInt8], count: OutputDirectory.PyramidCount)
        if let fanout = try? scratch?.subdirectory(Array(name.fanout.utf8)), fanout.stat(name.fileBytes) != nil {
            guard let dzi = try? fanout.readFile(name.fileBytes, limit: 1 << 16), let tiles = try? fanout.subdirectory(Array(folder.utf8))
            else { throw .breach("a pyramid without its .dzi or tiles") }
            // libvips 8.14's webpsave writes an EXIF block into every tile (as into thumbnails).
            var rewrite: (([UInt8]) -> [UInt8])?
            if settings.format == .webp { rewrite = { MetadataBounds.webpWithoutMetadata($0) } }
            let made: Result<(dzi: [UInt8], count: OutputDirectory.PyramidCount), Problem>
            do {
                made = try output.writePyramid(dzi: path, rewrite: rewrite) { prefix in
                    Self.copyTiles(from: tiles, dzi: dzi, to: prefix, limit: expected)
                }
            } catch {
                throw .write("cannot write deep-zoom tiles \(path): \(error.localizedDescription)", unwritable: error.isOutputUnwritable)
            }
            switch made {
            case .success(let pyramid): found = pyramid
            case .failure(let problem): throw problem
            }
            written += 1
        } else {
            guard let existing = output.existingPyramid(dzi: path) else { throw .breach("it names \(path), which it did not make") }
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
    private static func copyTiles(from tiles: Directory, dzi: [UInt8], to prefix: String, limit: Int) -> Result<Void, Problem> {
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

    /// Writes all of `block` at `offset` of `fd`; false (`failure` the errno) when it cannot.
    private static func write(_ block: UnsafeRawBufferPointer, to fd: Int32, at offset: Int, failure: inout Int32) -> Bool {
        var done = 0
        while done < block.count {
            let put = pwrite(fd, block.baseAddress! + done, block.count - done, off_t(offset + done))
            if put < 0, errno == EINTR { continue }
            guard put > 0 else {
                failure = put < 0 ? errno : ENOSPC
                return false
            }
            done += put
        }
        return true
    }
}
