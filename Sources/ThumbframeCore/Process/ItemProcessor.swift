import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// What the per-file work needs to know; shared read-only by every worker.
struct ProcessingContext: Sendable {
    var recipes: [ThumbnailRecipe]
    /// The manifest's settings: a photo's zoom ladder and tiles (`zoomExtras`) follow from them.
    var settings: Manifest.Settings?
    /// The source directory, open: files are read relative to it, never through a link (nil in a
    /// decode worker, which is handed each file open).
    var source: SourceRoot?
    /// OUT_DIR, open: thumbnails are written relative to it, never through a link.
    var output: OutputDirectory
    var limits: ResourceLimits
    /// Rewrite thumbnails even when their content-addressed file exists (`--force`).
    var overwrite = false
    /// Byte sizes of thumbnail files the state index recorded, by path: an existing file is
    /// reused only when it still has the recorded size.
    var recorded: [String: Int] = [:]
    /// Set by SIGINT/SIGTERM: decodes in flight are killed.
    var cancellation: CancellationFlag?
    /// Which videos get renditions, and how they are made (`--video-renditions`, `--video-max-side`).
    var renditions = RenditionSettings()
    /// Called as a rendition or scrub preview starts to be made (a decode worker tells the
    /// build, which gives it `--video-timeout` from then; each keeps its own deadline inside).
    var renditionStarts: (@Sendable () -> Void)?

    /// Content-addressed location of a thumbnail: it changes when the source bytes, the recipe
    /// or the pixel pipeline's version change, never otherwise, so renamed and copied files
    /// share their thumbnails.
    func thumbnailPath(sourceSHA256: String, recipe: ThumbnailRecipe, header: ImageHeader? = nil, gainMap: Bool = false) -> String {
        // v3: pixels from 0.4.0 on (each thumbnail reduced once from the decode by an exact
        // Lanczos3; v2, 0.3.0's, converted to sRGB from the ICC profile after a 2× shrink-on-load
        // margin). A new key makes an upgraded build write them instead of keeping the older
        // files under the same names; the pruner then removes those, which the ledger records. A
        // profile converted with another intent than relative colorimetric is part of the key:
        // earlier builds' thumbnails of such a file (made through libvips' default profile) are
        // never taken for the right ones. (An ignored profile's pixels are what they were.) So is
        // a format's pixels revision (`ImageHeader.pixelsRevision`), and an HDR photo's gain map
        // (the same SDR picture, another file).
        Self.thumbnailPath(
            sourceSHA256: sourceSHA256, recipe: recipe, profile: header?.profile, revision: header?.pixelsRevision, gainMap: gainMap)
    }

    /// `thumbnailPath` from the facts an item records (`image.profile`, and the format's pixels
    /// revision): how the build names what a worker made.
    static func thumbnailPath(
        sourceSHA256: String, recipe: ThumbnailRecipe, profile: Manifest.ImageInfo.ProfileUse?, revision: String?, gainMap: Bool
    ) -> String {
        contentPath(
            "thumbframe-thumbnail-v3", sourceSHA256, recipe.canonicalRecipe + (gainMap ? "\ngain map v1" : ""), profile, revision,
            extension: recipe.format.fileExtension)
    }

    /// Content-addressed location of a photo's deep-zoom pyramid (`.dzi`; its tiles in the
    /// `_files` folder beside it), keyed like a thumbnail's. v2: levels below the full size are
    /// Lanczos3 reductions (v1's were dzsave's box averages).
    func tilesPath(sourceSHA256: String, tiles: Manifest.TileSettings, header: ImageHeader) -> String {
        Self.tilesPath(sourceSHA256: sourceSHA256, tiles: tiles, profile: header.profile, revision: header.pixelsRevision)
    }

    /// `tilesPath` from an item's facts.
    static func tilesPath(
        sourceSHA256: String, tiles: Manifest.TileSettings, profile: Manifest.ImageInfo.ProfileUse?, revision: String?
    ) -> String {
        contentPath("thumbframe-tiles-v2", sourceSHA256, tiles.canonical, profile, revision, extension: "dzi")
    }

    /// Content-addressed location of a video's rendition: the source's bytes (a Motion Photo's
    /// MP4 alone) and what shapes the rendition (`RenditionSettings.recipe`).
    func renditionPath(sourceSHA256: String, delivery: Manifest.VideoInfo.Delivery) -> String {
        Self.renditionPath(sourceSHA256: sourceSHA256, delivery: delivery, renditions: renditions)
    }

    /// `renditionPath` with the build's rendition settings.
    static func renditionPath(sourceSHA256: String, delivery: Manifest.VideoInfo.Delivery, renditions: RenditionSettings) -> String {
        contentPath("thumbframe-rendition-v1", sourceSHA256, renditions.recipe(delivery), nil, nil, extension: "mp4")
    }

    /// Where a Motion Photo's embedded MP4 (`sha256` its bytes) goes, as a fast-start MP4.
    static func motionPath(sha256: String) -> String {
        // v3: a fast-start MP4 (v2's index came last; v1 copied the camera's MP4 byte for byte).
        OutputName.path(area: "thumbs", hash: Digest.sha256("thumbframe-motion-v3\n\(sha256)"), extension: "mp4")
    }

    /// Content-addressed locations of a video's scrub preview: its sprite sheet and the WebVTT
    /// file beside it (one hash, two extensions), from the source's bytes and the tiles' recipe.
    static func scrubPaths(sourceSHA256: String) -> (sprite: String, vtt: String) {
        let key = Digest.sha256("thumbframe-scrub-v1\n\(sourceSHA256)\n\(Manifest.ScrubPreview.recipe)")
        return (OutputName.path(area: "thumbs", hash: key, extension: "jpg"), OutputName.path(area: "thumbs", hash: key, extension: "vtt"))
    }

    /// `thumbs/XX/<hash>.<extension>`, the hash of a kind (`version`), the source's bytes, what
    /// shapes the pixels (`recipe`), the profile's use and the format's pixels revision.
    private static func contentPath(
        _ version: String, _ sourceSHA256: String, _ recipe: String, _ profile: Manifest.ImageInfo.ProfileUse?, _ revision: String?,
        extension: String
    ) -> String {
        let used = profile.flatMap { $0 == .ignored ? nil : "\nprofile \($0.rawValue)" } ?? ""
        let revision = revision.map { "\nrevision \($0)" } ?? ""
        let key = Digest.sha256("\(version)\n\(sourceSHA256)\n\(recipe)\(used)\(revision)")
        return OutputName.path(area: "thumbs", hash: key, extension: `extension`)
    }
}

/// One processed image, before it is given its place in the manifest.
struct ProcessedItem: Sendable, Equatable {
    var source: SourceFile
    var file: Manifest.FileInfo
    var media: Manifest.Media = .photo
    var image: Manifest.ImageInfo
    var exif: Manifest.ExifInfo?
    var thumbnails: [String: Manifest.Thumbnail]
    var placeholder: Manifest.Placeholder?
    /// Apple's content identifier: a Live Photo's photo and MOV share it.
    var contentIdentifier: String?
    /// The burst the camera (or an Android burst's name) says the photo is a frame of.
    var burst: BurstMark?
    /// What the photo looks like (`--stacks` other than none).
    var likeness: Likeness?
    /// Where it was taken, as coarsely as `--locations` says.
    var place: Manifest.Place?
    /// Thumbnails encoded by this run (the others already existed under their content address).
    var thumbnailsWritten: Int
}

extension ProcessedItem {
    /// When the photo was taken, `YYYY-MM-DDTHH:MM:SS`: the EXIF local time, else the file's
    /// modification time in UTC (what a camera-less image has).
    var captureTime: String {
        exif?.capturedAt ?? String(file.modified.prefix(19))
    }

    /// What the state index keeps of it.
    var stored: StateIndex.StoredItem {
        StateIndex.StoredItem(
            file: file, image: image, exif: exif, thumbnails: thumbnails, placeholder: placeholder,
            media: media == .photo ? nil : media, contentIdentifier: contentIdentifier, burst: burst, likeness: likeness, place: place)
    }

    /// A previous manifest's entry for an unchanged file, taken without opening it, with what the
    /// index knew of it beside (`known`, when of the same bytes).
    init(reusing previous: Manifest.Item, source: SourceFile, contentIdentifier: String?, known: ReusePlan.KnownPlaceholder?) {
        let known = known?.sha256 == previous.file.sha256 ? known : nil
        self.init(
            source: source, file: previous.file, media: previous.media, image: previous.image, exif: previous.exif,
            thumbnails: previous.thumbnails, placeholder: previous.placeholder, contentIdentifier: contentIdentifier,
            burst: known?.burst, likeness: known?.likeness, place: previous.place, thumbnailsWritten: 0)
    }
}

/// What became of one file: an item, or a failure entry. (Not a `Result`: a failure is an
/// ordinary outcome of a batch, not a thrown error.)
enum FileOutcome: Sendable, Equatable {
    case item(ProcessedItem)
    /// An item a decode worker made, as the state index stores it.
    case encoded(StateIndex.EncodedItem, thumbnailsWritten: Int)
    case failed(Manifest.Failure)
}

extension FailureStage {
    init(_ stage: DecodeFailure.Stage) {
        self =
            switch stage {
            case .probe: .probe
            case .decode: .decode
            case .encode: .encode
            }
    }
}

/// The synchronous work for one file: read once, hash, probe the header, read EXIF, decode once
/// at the scale of the largest thumbnail, derive and write every thumbnail. Owns its libvips
/// handles from start to end; any problem becomes a failure for this file alone.
enum ItemProcessor {
    /// Processes one file. With `previous` (`--verify`), the file and its thumbnails are only
    /// re-hashed, and the previous entry is reused when all of them are the same bytes.
    static func process(_ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil) -> FileOutcome {
        timed(source, context: context, previous: previous).outcome
    }

    /// A file's outcome, and what the build is to know beside it. (A worker decodes one file at a
    /// time: libvips' process-wide error buffer holds that file's message alone.)
    struct Timed: Sendable {
        var outcome: FileOutcome
        /// OUT_DIR itself could not take the thumbnail (full disk, quota, read-only, I/O error):
        /// not this file's failure but the run's, which stops and keeps what it recorded.
        var outputUnwritable: String?
        /// What the build says of the file beside its item: its video's rendition could not be
        /// made (the item stands without it, as with `--video-renditions none`).
        var note: String?
        /// Where a Motion Photo's MP4 lies in the file's bytes, when the item has it (the build
        /// names the motion's files from those bytes).
        var motion: Range<Int>?
    }

    /// The test of an entry whose source bytes are unchanged (`--verify`, a touched file), for the
    /// build and for `--check`: every thumbnail still holds the bytes the entry recorded, and a
    /// deep-zoom pyramid still has every tile it was made with.
    static func thumbnailsIntact(_ item: Manifest.Item, output: OutputDirectory) -> Bool {
        let intact = item.media.videoFiles.allSatisfy { file in
            guard let opened = output.open(file: file.path), let stat = opened.stat(), stat.size == file.bytes else { return false }
            return Digest.sha256(fd: opened.fd, size: stat.size) == file.sha256
        }
        return intact
            && item.thumbnails.values.allSatisfy { thumbnail in
                guard let sha256 = thumbnail.sha256, let bytes = output.read(file: thumbnail.path),
                    bytes.withUnsafeBytes(Digest.sha256) == sha256
                else { return false }
                guard let tiles = thumbnail.tiles else { return true }
                return output.existingPyramid(dzi: thumbnail.path)?.count.files == tiles.files
            }
    }

    /// `known`: the placeholder recorded for a touched file, used when the bytes hash the same
    /// and its thumbnails exist (then the file is probed, not decoded). `opened`: the file, open
    /// (a worker's), else it is opened beneath `context.source`.
    static func timed(
        _ source: SourceFile, context: ProcessingContext, previous: Manifest.Item? = nil, previousIdentifier: String? = nil,
        known: ReusePlan.KnownPlaceholder? = nil, opened: OpenFile? = nil, sha256 given: String? = nil
    ) -> Timed {
        defer { Decoders.threadDone() }
        let file: OpenFile
        do {
            guard let found = try opened ?? context.source?.open(source) else { throw FileSystemError.posix(EBADF) }
            file = found
        } catch {
            return Timed(outcome: .failed(failure(source, .read, error.localizedDescription)))
        }
        let head = file.head(MediaFormat.headBytes)
        let library = MediaFormat.decoder(fileExtension: FileSignature.extension(String(decoding: source.name, as: UTF8.self)), head: head)
        if library == .ffmpeg {
            return video(
                source, file, context: context, previous: previous, previousIdentifier: previousIdentifier, known: known, sha256: given)
        }
        let bytes: [UInt8]
        do {
            bytes = try file.read(limit: context.limits.maxFileBytes)
        } catch {
            return Timed(outcome: .failed(failure(source, .read, error.localizedDescription)))
        }
        guard !bytes.isEmpty else { return Timed(outcome: .failed(failure(source, .read, "empty file"))) }
        return bytes.withUnsafeBytes { raw in
            let sha256 = given ?? Digest.sha256(raw)
            guard let context = reuse(previous, sha256: sha256, context: context) else {
                return Timed(
                    outcome: .item(ProcessedItem(reusing: previous!, source: source, contentIdentifier: previousIdentifier, known: known)))
            }
            let placeholder = known.flatMap { $0.sha256 == sha256 ? $0 : nil }
            let decoder = Decoders.decoder(for: library)
            // Tiles from libvips' full-resolution decode (not a RAW's: LibRaw renders those).
            let tiles: TileWriter? =
                library == .libvips
                ? { header, path, settings, remaining in
                    VipsDecoder.writeTiles(
                        raw, header: header, path: path, settings: settings, limits: context.limits, remaining: remaining,
                        cancellation: context.cancellation)
                } : nil
            var timed = make(source, bytes: raw.count, sha256: sha256, context: context, placeholder: placeholder, tiles: tiles) {
                request in
                decoder.decode(raw, limits: context.limits, cancellation: context.cancellation, request: request)
            }
            if case .item(var item) = timed.outcome, let range = motionRange(raw, format: item.image.format) {
                switch embeddedMotion(raw, range, file: file, context: context) {
                case (.success(let motion), let note)?:
                    item.media.motion = motion
                    timed.outcome = .item(item)
                    timed.note = note
                    timed.motion = range
                case (.failure(let problem), _)?:
                    timed.outcome = .failed(failure(source, .write, problem.reason))
                    timed.outputUnwritable = problem.outputUnwritable ? problem.reason : nil
                case nil: break
                }
            }
            return timed
        }
    }

    /// Where a Motion Photo's MP4 lies in the photo's bytes, where its format keeps one
    /// (`MediaFormat.motion`): after a JPEG's data (its XMP says so), in a HEIC's or AVIF's
    /// `mpvd` box; nil for any other photo.
    static func motionRange(_ raw: UnsafeRawBufferPointer, format: String) -> Range<Int>? {
        switch MediaFormat.named(format)?.motion {
        case .afterJPEG: MotionPhoto.locate(raw)
        case .heifBox: MotionPhoto.locateInHEIF(raw)
        case nil: nil
        }
    }

    /// Why a Motion Photo's MP4 could not be put in OUT_DIR.
    struct MotionWriteFailure: Error {
        var reason: String
        var outputUnwritable: Bool
    }

    /// A Motion Photo's embedded MP4 (`range` of the JPEG's bytes), probed for its facts and
    /// remuxed without any metadata (the camera writes the place it was taken, the device and
    /// dates into it) into a fast-start MP4 in OUT_DIR under its content address
    /// (`thumbs/XX/<hash>.mp4`, kept while an item names it, like a thumbnail); with a rendition
    /// when its codec plays nowhere or not everywhere (`transcode`). nil when the MP4 is not a
    /// readable video: the photo is still a photo, without motion.
    static func embeddedMotion(
        _ raw: UnsafeRawBufferPointer, _ range: Range<Int>, file: OpenFile, context: ProcessingContext
    ) -> (motion: Result<Manifest.MotionPart, MotionWriteFailure>, note: String?)? {
        let sha256 = Digest.sha256(UnsafeRawBufferPointer(rebasing: raw[range]))
        let path = ProcessingContext.motionPath(sha256: sha256)
        let decoder = VideoDecoder()
        let (offset, size) = (range.lowerBound, range.count)
        var facts: (video: Manifest.VideoInfo, width: Int, height: Int, bytes: Int, sha256: String)
        if !context.overwrite, let found = existingOutput(path, context: context),
            case .success(let probed) = decoder.probe(
                fd: file.fd, offset: offset, size: size, limits: context.limits, cancellation: context.cancellation)
        {
            facts = (probed.video, probed.width, probed.height, found.bytes, found.sha256)
        } else {
            let made: (written: VideoDecoder.Written, sha256: String)?
            var unwritable: Int32?
            do {
                made = try context.output.write(file: path) { output -> (written: VideoDecoder.Written, sha256: String)? in
                    switch decoder.writeRendition(
                        fd: file.fd, offset: offset, size: size, into: output, delivery: .remux, settings: context.renditions,
                        maxPacketBytes: size, limits: context.limits, cancellation: context.cancellation)
                    {
                    case .success(let written): return Digest.sha256(fd: output, size: written.rendition.bytes).map { (written, $0) }
                    case .failure(let problem):
                        unwritable = problem.outputErrno
                        return nil
                    }
                }
            } catch {
                let reason = "cannot write motion \(path): \(error.localizedDescription)"
                return (.failure(MotionWriteFailure(reason: reason, outputUnwritable: error.isOutputUnwritable)), nil)
            }
            if let code = unwritable, FileSystemError.posix(code).isOutputUnwritable {
                let reason = "cannot write motion \(path): \(FileSystemError.posix(code).localizedDescription)"
                return (.failure(MotionWriteFailure(reason: reason, outputUnwritable: true)), nil)
            }
            guard let made else { return nil }
            let written = made.written
            facts = (written.source, written.displayWidth, written.displayHeight, written.rendition.bytes, made.sha256)
        }
        var motion = Manifest.MotionPart(
            source: .embedded, path: path, bytes: facts.bytes, sha256: facts.sha256, video: facts.video, width: facts.width,
            height: facts.height)
        var note: String?
        // The fast-start copy is the remux: a rendition only where the codec must change.
        if facts.video.delivery == .transcode, context.renditions.mode.makes(.transcode) {
            switch rendition(fd: file.fd, offset: offset, size: size, sha256: sha256, delivery: .transcode, context: context) {
            case .success(let made): motion.video.rendition = made
            case .failure(let problem):
                if let unwritable = problem.outputUnwritable {
                    return (.failure(MotionWriteFailure(reason: unwritable, outputUnwritable: true)), nil)
                }
                note = "motion: " + problem.reason
            }
        }
        return (.success(motion), note)
    }

    /// Why a video's rendition could not be made.
    struct RenditionFailure: Error {
        var reason: String
        /// OUT_DIR could not take it: the run's failure, not the file's.
        var outputUnwritable: String?
    }

    /// The rendition `delivery` of the video `size` bytes at `offset` in `fd` (`sha256` its
    /// bytes): found at its content address (its facts read from it), else written now.
    static func rendition(
        fd: Int32, offset: Int, size: Int, sha256: String, delivery: Manifest.VideoInfo.Delivery, context: ProcessingContext
    ) -> Result<Manifest.VideoRendition, RenditionFailure> {
        let path = context.renditionPath(sourceSHA256: sha256, delivery: delivery)
        let decoder = VideoDecoder()
        if !context.overwrite, let found = existingOutput(path, context: context), let opened = context.output.open(file: path),
            case .success(let probed) = decoder.probe(
                fd: opened.fd, offset: 0, size: found.bytes, limits: context.limits, cancellation: context.cancellation),
            let codecs = probed.video.codecs
        {
            return .success(
                Manifest.VideoRendition(
                    path: path, delivery: delivery, codecs: codecs, width: probed.width, height: probed.height,
                    duration: probed.video.duration, bytes: found.bytes, sha256: found.sha256))
        }
        context.renditionStarts?()
        var failure: DecodeFailure?
        do {
            let made = try context.output.write(file: path) { output -> Manifest.VideoRendition? in
                switch decoder.writeRendition(
                    fd: fd, offset: offset, size: size, into: output, delivery: delivery, settings: context.renditions,
                    limits: context.limits, cancellation: context.cancellation)
                {
                case .success(let written):
                    var rendition = written.rendition
                    guard let hash = Digest.sha256(fd: output, size: rendition.bytes) else { return nil }
                    (rendition.path, rendition.sha256) = (path, hash)
                    return rendition
                case .failure(let problem):
                    failure = problem
                    return nil
                }
            }
            if let made { return .success(made) }
            if let code = failure?.outputErrno, FileSystemError.posix(code).isOutputUnwritable {
                let reason = "cannot write rendition \(path): \(FileSystemError.posix(code).localizedDescription)"
                return .failure(RenditionFailure(reason: reason, outputUnwritable: reason))
            }
            return .failure(RenditionFailure(reason: "no rendition: " + (failure?.reason ?? "it could not be read back")))
        } catch {
            let reason = "cannot write rendition \(path): \(error.localizedDescription)"
            return .failure(RenditionFailure(reason: reason, outputUnwritable: error.isOutputUnwritable ? reason : nil))
        }
    }

    /// A video: hashed and decoded through its descriptor, never read whole (its size is not
    /// bounded by `--max-file-bytes`; the memory it takes is the decoder's, bounded by its frame).
    private static func video(
        _ source: SourceFile, _ file: OpenFile, context: ProcessingContext, previous: Manifest.Item?,
        previousIdentifier: String?, known: ReusePlan.KnownPlaceholder?, sha256 given: String?
    ) -> Timed {
        guard let stat = file.stat(), stat.size > 0 else { return Timed(outcome: .failed(failure(source, .read, "empty file"))) }
        guard let sha256 = given ?? Digest.sha256(fd: file.fd, size: stat.size), file.stat() == stat else {
            return Timed(outcome: .failed(failure(source, .read, FileSystemError.changedWhileReading.localizedDescription)))
        }
        guard let context = reuse(previous, sha256: sha256, context: context) else {
            return Timed(
                outcome: .item(ProcessedItem(reusing: previous!, source: source, contentIdentifier: previousIdentifier, known: known)))
        }
        let placeholder = known.flatMap { $0.sha256 == sha256 ? $0 : nil }
        var timed = make(source, bytes: stat.size, sha256: sha256, context: context, placeholder: placeholder) { request in
            VideoDecoder().decode(
                fd: file.fd, size: stat.size, limits: context.limits, cancellation: context.cancellation, request: request)
        }
        guard case .item(var item) = timed.outcome, let video = item.media.video else { return timed }
        var notes: [String] = []
        func settle(_ problem: RenditionFailure) -> Bool {
            guard let unwritable = problem.outputUnwritable else {
                notes.append(problem.reason)
                return true
            }
            timed.outcome = .failed(failure(source, .write, unwritable))
            timed.outputUnwritable = unwritable
            return false
        }
        if let delivery = video.delivery, context.renditions.mode.makes(delivery) {
            switch rendition(fd: file.fd, offset: 0, size: stat.size, sha256: sha256, delivery: delivery, context: context) {
            case .success(let made): item.media.video?.rendition = made
            case .failure(let problem): guard settle(problem) else { return timed }
            }
        }
        switch scrub(fd: file.fd, size: stat.size, sha256: sha256, video: video, image: item.image, context: context) {
        case .success(let made): item.media.video?.scrub = made
        case .failure(let problem): guard settle(problem) else { return timed }
        }
        timed.outcome = .item(item)
        timed.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return timed
    }

    /// A video's scrub preview (`Manifest.ScrubPreview`): its sprite sheet and WebVTT file found
    /// at their content address, else drawn and written now.
    static func scrub(
        fd: Int32, size: Int, sha256: String, video: Manifest.VideoInfo, image: Manifest.ImageInfo, context: ProcessingContext
    ) -> Result<Manifest.ScrubPreview, RenditionFailure> {
        let (spritePath, vttPath) = ProcessingContext.scrubPaths(sourceSHA256: sha256)
        let geometry = Manifest.ScrubPreview.geometry(duration: video.duration, width: image.width, height: image.height)
        let columns = min(Manifest.ScrubPreview.columnsPerRow, geometry.count)
        func preview(_ sprite: (bytes: Int, sha256: String), _ vtt: (bytes: Int, sha256: String)) -> Manifest.ScrubPreview {
            Manifest.ScrubPreview(
                sprite: spritePath, spriteBytes: sprite.bytes, spriteSHA256: sprite.sha256, vtt: vttPath, vttBytes: vtt.bytes,
                vttSHA256: vtt.sha256, interval: geometry.interval, count: geometry.count, columns: columns,
                tileWidth: geometry.tileWidth, tileHeight: geometry.tileHeight)
        }
        if !context.overwrite, let sprite = existingOutput(spritePath, context: context),
            let vtt = existingOutput(vttPath, context: context)
        {
            return .success(preview(sprite, vtt))
        }
        // Its own deadline, as a rendition's: the poster may have used the decode's.
        context.renditionStarts?()
        let made: VideoDecoder.Sprite
        switch VideoDecoder().sprite(fd: fd, size: size, limits: context.limits, cancellation: context.cancellation) {
        case .success(let sprite): made = sprite
        case .failure(let problem): return .failure(RenditionFailure(reason: "no scrub preview: " + problem.reason))
        }
        // The cues name the sheet beside them.
        let name = String(spritePath.split(separator: "/").last ?? "")
        let vtt = Array(
            Manifest.ScrubPreview.webVTT(
                sprite: name, count: made.count, interval: made.interval, columns: made.columns, tileWidth: made.tileWidth,
                tileHeight: made.tileHeight, duration: video.duration
            ).utf8)
        do {
            try context.output.journal([spritePath, vttPath])
            try context.output.write(file: spritePath, made.jpeg, journaled: true)
            try context.output.write(file: vttPath, vtt, journaled: true)
        } catch {
            let reason = "cannot write scrub preview \(spritePath): \(error.localizedDescription)"
            return .failure(RenditionFailure(reason: reason, outputUnwritable: error.isOutputUnwritable ? reason : nil))
        }
        let hash = { (bytes: [UInt8]) in bytes.withUnsafeBytes(Digest.sha256) }
        return .success(preview((made.jpeg.count, hash(made.jpeg)), (vtt.count, hash(vtt))))
    }

    /// `--verify`: nil when the previous entry is the same bytes with intact thumbnails (reuse
    /// it); else the context to make the item in (every thumbnail written again when one was
    /// replaced behind thumbframe's back).
    private static func reuse(_ previous: Manifest.Item?, sha256: String, context: ProcessingContext) -> ProcessingContext? {
        var context = context
        if let previous, previous.file.sha256 == sha256 {
            if thumbnailsIntact(previous, output: context.output) { return nil }
            context.overwrite = true
        }
        return context
    }

    /// Writes a photo's deep-zoom pyramid to a path prefix (`VipsDecoder.writeTiles`).
    /// The last argument is what is left of the file's `--decode-timeout` (0: none).
    typealias TileWriter = (ImageHeader, String, Manifest.TileSettings, Double) -> Result<Void, DecodeFailure>

    /// Probes and (for what is missing) decodes the file through `decode`, writes the thumbnails
    /// it lacked (and, through `tiles`, its deep-zoom pyramid when it gets one), and makes the item.
    private static func make(
        _ source: SourceFile, bytes: Int, sha256: String, context: ProcessingContext, placeholder known: ReusePlan.KnownPlaceholder?,
        tiles: TileWriter? = nil, decode: ((ImageHeader) -> RenderRequest?) -> Decoded
    ) -> Timed {
        var thumbnails: [String: Manifest.Thumbnail] = [:]
        var missing: [(output: ThumbnailPlan.Output, path: String)] = []
        var pyramid: (path: String, settings: Manifest.TileSettings)?
        var gainMaps: Set<String> = []
        var likeness = false
        let started = DispatchTime.now().uptimeNanoseconds
        let decoded = decode { header in
            let extras = context.settings?.zoomExtras(image: header.imageInfo, kind: header.media.kind) ?? (rungs: [], tiles: false)
            if tiles != nil, extras.tiles, let tileSettings = context.settings?.tiles {
                let path = context.tilesPath(sourceSHA256: sha256, tiles: tileSettings, header: header)
                pyramid = (path, tileSettings)
            }
            let plan = ThumbnailPlan(
                width: header.displayWidth, height: header.displayHeight, recipes: context.recipes, ladder: extras.rungs)
            // An HDR photo's lightbox renditions carry its gain map (`--hdr gain-map`).
            gainMaps = header.hdr == nil ? [] : context.settings?.gainMapNames ?? []
            for output in plan.outputs {
                let gainMapped = gainMaps.contains(output.recipe.name)
                let path = context.thumbnailPath(sourceSHA256: sha256, recipe: output.recipe, header: header, gainMap: gainMapped)
                var entry = Manifest.Thumbnail(path: path, width: output.width, height: output.height, crop: output.crop)
                if !context.overwrite, let existing = existingOutput(path, context: context) {
                    (entry.bytes, entry.sha256) = (existing.bytes, existing.sha256)
                    if gainMapped { entry.headroom = existingHeadroom(path, context: context) }
                } else {
                    missing.append((output, path))
                }
                thumbnails[output.recipe.name] = entry
            }
            // One decode serves the missing thumbnails, the placeholder, which every item
            // carries, and a photo's likeness (`--stacks`): a file whose thumbnails all exist under
            // their content address is still decoded once, unless what it would measure of the
            // same bytes is known (a touched file).
            likeness = (context.settings?.stacks ?? .none) != .none && header.media.kind == .photo
            return RenderRequest(
                plan: plan, outputs: missing.map(\.output),
                render: !missing.isEmpty || known == nil || (likeness && known?.likeness == nil),
                gainMaps: gainMaps, likeness: likeness)
        }
        var timed = Timed(outcome: .failed(failure(source, .probe, "")))
        switch decoded.result {
        case .failure(let problem):
            timed.outcome = .failed(failure(source, FailureStage(problem.stage), problem.reason, cause: problem.cause))
        case .success(let (header, rendering)):
            let writes = Array(zip(rendering?.encoded ?? [], missing))
            for (number, (encoded, (output, path))) in writes.enumerated() {
                do {
                    // The item's names go into the journal in one write, before any of its files.
                    if number == 0 { try context.output.journal(writes.map(\.1.1)) }
                    try context.output.write(file: path, encoded, journaled: true)
                } catch {
                    let reason = "cannot write thumbnail \(path): \(error.localizedDescription)"
                    timed.outcome = .failed(failure(source, .write, reason))
                    if error.isOutputUnwritable { timed.outputUnwritable = reason }
                    return timed
                }
                thumbnails[output.recipe.name]?.bytes = encoded.count
                thumbnails[output.recipe.name]?.sha256 = encoded.withUnsafeBytes(Digest.sha256)
                thumbnails[output.recipe.name]?.headroom = rendering.flatMap { number < $0.headrooms.count ? $0.headrooms[number] : nil }
            }
            var written = missing.count
            if let (path, settings) = pyramid, let tiles {
                // One deadline for the file: the tiles get what the thumbnails left of it.
                var remaining = context.limits.decodeTimeout
                if remaining > 0 { remaining = max(0.001, remaining - Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9) }
                let made = Self.pyramid(path, settings: settings, header: header, context: context, remaining: remaining, write: tiles)
                switch made {
                case .success(let (entry, made)):
                    thumbnails[Manifest.tilesName] = entry
                    written += made ? 1 : 0
                case .failure(let problem):
                    timed.outcome = .failed(failure(source, problem.stage, problem.reason, cause: problem.cause))
                    timed.outputUnwritable = problem.outputUnwritable
                    return timed
                }
            }
            let file = Manifest.FileInfo(bytes: bytes, modified: source.stat.modifiedRFC3339, sha256: sha256)
            timed.outcome = .item(
                ProcessedItem(
                    source: source, file: file, media: header.media, image: header.imageInfo, exif: header.exif.isEmpty ? nil : header.exif,
                    thumbnails: thumbnails, placeholder: rendering?.placeholder ?? known?.placeholder,
                    contentIdentifier: header.contentIdentifier, burst: header.burst ?? BurstMark.fileName(source.name),
                    likeness: likeness ? rendering?.likeness ?? known?.likeness : nil,
                    place: Self.place(header, context.settings?.locations), thumbnailsWritten: written))
        }
        return timed
    }

    /// The place `--locations` publishes for a photo's GPS position (the position itself goes no
    /// further than this process's memory); nil without the option or a position.
    static func place(_ header: ImageHeader, _ locations: Manifest.Locations?) -> Manifest.Place? {
        guard let locations, locations != .none, header.media.kind == .photo, let point = header.location else { return nil }
        return PlaceTable.shared.place(latitude: point.latitude, longitude: point.longitude, locations)
    }

    /// Why a photo's pyramid could not be made.
    struct TileFailure: Error {
        var stage: FailureStage
        var reason: String
        var cause: FailureCause?
        /// OUT_DIR could not take it (see `Timed.outputUnwritable`).
        var outputUnwritable: String?
    }

    /// The `tiles` entry of a photo: its pyramid found at `path` (with its `_files` folder), or
    /// made now through `write` into a temporary folder and renamed into place (the `.dzi` goes
    /// into the journal first). `made` when this run wrote it.
    private static func pyramid(
        _ path: String, settings: Manifest.TileSettings, header: ImageHeader, context: ProcessingContext, remaining: Double,
        write: TileWriter
    ) -> Result<(entry: Manifest.Thumbnail, made: Bool), TileFailure> {
        let image = header.imageInfo
        func entry(_ dzi: [UInt8], _ count: OutputDirectory.PyramidCount) -> Result<Manifest.Thumbnail, TileFailure> {
            // The pyramid is the picture as shown: the .dzi's size is the display size, every level there.
            let expected = Manifest.Tiles.levels(width: image.width, height: image.height)
            let described = Manifest.Tiles.parseDZI(dzi)
            guard count.levels == expected, let described, (described.width, described.height) == (image.width, image.height) else {
                let size = described.map { "\($0.width)×\($0.height)" } ?? "no DeepZoom size"
                return .failure(
                    TileFailure(
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
            // libvips 8.14's webpsave writes an EXIF block into every tile (as into thumbnails).
            var rewrite: (([UInt8]) -> [UInt8])?
            if settings.format == .webp { rewrite = { MetadataBounds.webpWithoutMetadata($0) } }
            let made = try context.output.writePyramid(dzi: path, rewrite: rewrite) { prefix in write(header, prefix, settings, remaining) }
            switch made {
            case .success(let (dzi, count)): return entry(dzi, count).map { ($0, true) }
            case .failure(let problem):
                return .failure(
                    TileFailure(
                        stage: FailureStage(problem.stage), reason: problem.reason, cause: problem.cause))
            }
        } catch {
            let reason = "cannot write deep-zoom tiles \(path): \(error.localizedDescription)"
            return .failure(TileFailure(stage: .write, reason: reason, outputUnwritable: error.isOutputUnwritable ? reason : nil))
        }
    }

    /// A thumbnail, rendition, sprite sheet or motion MP4 already at its content address: taken
    /// when it still has the size the state index recorded, or (written by a run killed before it
    /// recorded it) when it can be read now; its hash is taken from its bytes, a block at a time
    /// (a rendition is as long as its video). Anything else is written again.
    private static func existingOutput(_ path: String, context: ProcessingContext) -> (bytes: Int, sha256: String)? {
        guard let file = context.output.open(file: path), let stat = file.stat(), stat.isRegularFile, stat.size > 0 else { return nil }
        if let bytes = context.recorded[path], bytes != stat.size { return nil }
        return Digest.sha256(fd: file.fd, size: stat.size).map { (stat.size, $0) }
    }

    /// The headroom of a gain-map rendition already at its content address, read from its own
    /// metadata (nil: an SDR file, as an HDR photo's rendition is where its map was unusable).
    private static func existingHeadroom(_ path: String, context: ProcessingContext) -> Double? {
        guard let bytes = context.output.read(file: path) else { return nil }
        return bytes.withUnsafeBytes { GainMapJPEG.read($0)?.parameters?.headroom }
    }

    static func failure(_ source: SourceFile, _ stage: FailureStage, _ reason: String, cause: FailureCause? = nil) -> Manifest.Failure {
        let line = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Manifest.Failure(
            path: source.relativePath, rawPath: source.manifestRawPath, stage: stage.rawValue,
            reason: String(line.prefix(300)), cause: cause?.rawValue, bytes: source.stat.size, modified: source.stat.modifiedRFC3339)
    }
}
