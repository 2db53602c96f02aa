import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A video's scrub preview (`Manifest.ScrubPreview`): a sprite sheet of frames at even times and
/// the WebVTT file whose cues name its tiles.
enum ScrubOutput: ItemOutput {
    /// Content-addressed locations of the sprite sheet and the WebVTT file beside it (one hash,
    /// two extensions), from the source's bytes and the tiles' recipe. v2: each tile is the first
    /// frame at or past its cue's time (v1 took a keyframe within half a cue, and an MPEG-TS
    /// seek's next keyframe, seconds later).
    static func paths(sourceSHA256: String) -> (sprite: String, vtt: String) {
        let key = Digest.sha256("thumbframe-scrub-v2\n\(sourceSHA256)\n\(Manifest.ScrubPreview.recipe)")
        return (OutputName.path(area: "thumbs", hash: key, extension: "jpg"), OutputName.path(area: "thumbs", hash: key, extension: "vtt"))
    }

    /// The worker's half: both files found at their content address, else drawn and written now.
    static func make(
        fd: Int32, size: Int, sha256: String, video: Manifest.VideoInfo, image: Manifest.ImageInfo, context: ProcessingContext
    ) -> Result<Manifest.ScrubPreview, OutputFailure> {
        let (spritePath, vttPath) = paths(sourceSHA256: sha256)
        let geometry = Manifest.ScrubPreview.geometry(duration: video.duration, width: image.width, height: image.height)
        let columns = min(Manifest.ScrubPreview.columnsPerRow, geometry.count)
        func preview(_ sprite: (bytes: Int, sha256: String), _ vtt: (bytes: Int, sha256: String)) -> Manifest.ScrubPreview {
            Manifest.ScrubPreview(
                sprite: spritePath, spriteBytes: sprite.bytes, spriteSHA256: sprite.sha256, vtt: vttPath, vttBytes: vtt.bytes,
                vttSHA256: vtt.sha256, interval: geometry.interval, count: geometry.count, columns: columns,
                tileWidth: geometry.tileWidth, tileHeight: geometry.tileHeight)
        }
        if let sprite = ContentAddress.existing(spritePath, context: context), let vtt = ContentAddress.existing(vttPath, context: context)
        {
            return .success(preview(sprite, vtt))
        }
        // Its own deadline, as a rendition's: the poster may have used the decode's.
        context.renditionStarts?()
        let made: VideoDecoder.Sprite
        switch VideoDecoder().sprite(fd: fd, size: size, limits: context.limits, cancellation: context.cancellation) {
        case .success(let sprite): made = sprite
        case .failure(let problem): return .failure(OutputFailure(reason: "no scrub preview: " + problem.reason))
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
            return .failure(.cannotWrite("scrub preview", spritePath, error))
        }
        let hash = { (bytes: [UInt8]) in bytes.withUnsafeBytes(Digest.sha256) }
        return .success(preview((made.jpeg.count, hash(made.jpeg)), (vtt.count, hash(vtt))))
    }

    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem) {
        guard var scrub = item.media?.video?.scrub else { return }
        (scrub.sprite, scrub.vtt) = paths(sourceSHA256: outputs.sourceSHA256)
        (scrub.spriteBytes, scrub.spriteSHA256, _) = try outputs.file(scrub.sprite, limit: ScratchOutputs.maximumThumbnailBytes)
        (scrub.vttBytes, scrub.vttSHA256, _) = try outputs.file(scrub.vtt, limit: ScratchOutputs.maximumThumbnailBytes)
        item.media?.video?.scrub = scrub
    }
}
