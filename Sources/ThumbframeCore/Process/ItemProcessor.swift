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
        /// The SHA-256 of the bytes the outcome is of, when the build hashed them (a failure is
        /// recorded with it).
        var sourceSHA256: String?
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
        do {
            return try file.withMapped(limit: context.limits.maxFileBytes) { raw in
                still(
                    source, file, raw, library: library, context: context, previous: previous, previousIdentifier: previousIdentifier,
                    known: known, sha256: given)
            }
        } catch {
            return Timed(outcome: .failed(failure(source, .read, error.localizedDescription)))
        }
    }

    /// A still (or a RAW, or an animation): hashed and decoded from its bytes, mapped.
    private static func still(
        _ source: SourceFile, _ file: OpenFile, _ raw: UnsafeRawBufferPointer, library: MediaFormat.Decoder, context: ProcessingContext,
        previous: Manifest.Item?, previousIdentifier: String?, known: ReusePlan.KnownPlaceholder?, sha256 given: String?
    ) -> Timed {
        guard raw.count > 0 else { return Timed(outcome: .failed(failure(source, .read, "empty file"))) }
        let sha256 = given ?? Digest.sha256(raw)
        guard let context = reuse(previous, sha256: sha256, context: context) else {
            return Timed(
                outcome: .item(ProcessedItem(reusing: previous!, source: source, contentIdentifier: previousIdentifier, known: known)))
        }
        let placeholder = known.flatMap { $0.sha256 == sha256 ? $0 : nil }
        let decoder = Decoders.decoder(for: library)
        // Tiles from the full-resolution decode: libvips', libjxl's for a JPEG XL (`tf_dzsave`);
        // not a RAW's (LibRaw renders those).
        let tiles: TilesOutput.Writer? =
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
        if case .item(var item) = timed.outcome, let range = MotionOutput.range(raw, format: item.image.format) {
            switch MotionOutput.make(raw, range, file: file, context: context) {
            case (.success(let motion), let note)?:
                item.media.motion = motion
                timed.outcome = .item(item)
                timed.note = note
                timed.motion = range
            case (.failure(let problem), _)?: timed = failed(source, problem)
            case nil: break
            }
        }
        return timed
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
        // A rendition or scrub preview that cannot be made leaves the item without it (a note);
        // one OUT_DIR cannot take fails the file and stops the run.
        if let delivery = video.delivery, context.renditions.mode.makes(delivery) {
            switch RenditionOutput.make(
                fd: file.fd, offset: 0, size: stat.size, sha256: sha256, delivery: delivery, matrixIgnored: video.matrixIgnored == true,
                context: context)
            {
            case .success(let made): item.media.video?.rendition = made
            case .failure(let problem) where problem.outputUnwritable != nil: return failed(source, problem)
            case .failure(let problem): notes.append(problem.reason)
            }
        }
        switch ScrubOutput.make(fd: file.fd, size: stat.size, sha256: sha256, video: video, image: item.image, context: context) {
        case .success(let made): item.media.video?.scrub = made
        case .failure(let problem) where problem.outputUnwritable != nil: return failed(source, problem)
        case .failure(let problem): notes.append(problem.reason)
        }
        timed.outcome = .item(item)
        timed.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return timed
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

    /// Probes and (for what is missing) decodes the file through `decode`, writes the thumbnails
    /// it lacked (and, through `tiles`, its deep-zoom pyramid when it gets one), and makes the item.
    private static func make(
        _ source: SourceFile, bytes: Int, sha256: String, context: ProcessingContext, placeholder known: ReusePlan.KnownPlaceholder?,
        tiles: TilesOutput.Writer? = nil, decode: ((ImageHeader) -> RenderRequest?) -> Decoded
    ) -> Timed {
        var planned = ThumbnailOutput.Planned()
        var pyramid: (path: String, settings: Manifest.TileSettings)?
        var likeness = false
        let started = DispatchTime.now().uptimeNanoseconds
        let decoded = decode { header in
            let extras = context.settings?.zoomExtras(image: header.imageInfo, kind: header.media.kind) ?? (rungs: [], tiles: false)
            if tiles != nil, extras.tiles, let tileSettings = context.settings?.tiles {
                let path = TilesOutput.path(
                    sourceSHA256: sha256, tiles: tileSettings, profile: header.profile, revision: header.pixelsRevision)
                pyramid = (path, tileSettings)
            }
            let plan = ThumbnailPlan(
                width: header.displayWidth, height: header.displayHeight, recipes: context.recipes, ladder: extras.rungs)
            planned = ThumbnailOutput.planned(plan, header: header, sha256: sha256, context: context)
            // One decode serves the missing thumbnails, the placeholder, which every item
            // carries, and a photo's likeness (`--stacks`): a file whose thumbnails all exist under
            // their content address is still decoded once, unless what it would measure of the
            // same bytes is known (a touched file).
            likeness = (context.settings?.stacks ?? .none) != .none && header.media.kind == .photo
            return RenderRequest(
                plan: plan, outputs: planned.missing.map(\.output),
                render: !planned.missing.isEmpty || known == nil || (likeness && known?.likeness == nil),
                gainMaps: planned.gainMaps, likeness: likeness)
        }
        switch decoded.result {
        case .failure(let problem):
            return Timed(outcome: .failed(failure(source, FailureStage(problem.stage), problem.reason, cause: problem.cause)))
        case .success(let (header, rendering)):
            if let problem = ThumbnailOutput.write(rendering, &planned, context: context) { return failed(source, problem) }
            var written = planned.missing.count
            if let (path, settings) = pyramid, let tiles {
                // One deadline for the file: the tiles get what the thumbnails left of it.
                var remaining = context.limits.decodeTimeout
                if remaining > 0 { remaining = max(0.001, remaining - Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9) }
                switch TilesOutput.make(path, settings: settings, header: header, context: context, remaining: remaining, write: tiles) {
                case .success(let (entry, made)):
                    planned.thumbnails[Manifest.tilesName] = entry
                    written += made ? 1 : 0
                case .failure(let problem): return failed(source, problem)
                }
            }
            let file = Manifest.FileInfo(bytes: bytes, modified: source.stat.modifiedRFC3339, sha256: sha256)
            return Timed(
                outcome: .item(
                    ProcessedItem(
                        source: source, file: file, media: header.media, image: header.imageInfo,
                        exif: header.exif.isEmpty ? nil : header.exif,
                        thumbnails: planned.thumbnails, placeholder: rendering?.placeholder ?? known?.placeholder,
                        contentIdentifier: header.contentIdentifier, burst: header.burst ?? BurstMark.fileName(source.name),
                        likeness: likeness ? rendering?.likeness ?? known?.likeness : nil,
                        place: Self.place(header, context.settings?.locations), thumbnailsWritten: written)))
        }
    }

    /// The place `--locations` publishes for a photo's GPS position (the position itself goes no
    /// further than this process's memory); nil without the option or a position.
    static func place(_ header: ImageHeader, _ locations: Manifest.Locations?) -> Manifest.Place? {
        guard let locations, locations != .none, header.media.kind == .photo, let point = header.location else { return nil }
        return PlaceTable.shared.place(latitude: point.latitude, longitude: point.longitude, locations)
    }

    /// The file failed for `problem` with one of its outputs.
    private static func failed(_ source: SourceFile, _ problem: OutputFailure) -> Timed {
        Timed(
            outcome: .failed(failure(source, problem.stage, problem.reason, cause: problem.cause)),
            outputUnwritable: problem.outputUnwritable)
    }

    static func failure(_ source: SourceFile, _ stage: FailureStage, _ reason: String, cause: FailureCause? = nil) -> Manifest.Failure {
        let line = reason.split(whereSeparator: \.isNewline).joined(separator: " ")
        return Manifest.Failure(
            path: source.relativePath, rawPath: source.manifestRawPath, stage: stage.rawValue,
            reason: String(line.prefix(300)), cause: cause?.rawValue, bytes: source.stat.size, modified: source.stat.modifiedRFC3339)
    }
}
