import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A video's rendition (`--video-renditions`): an MP4 every browser plays, remuxed or
/// transcoded from the source (a video file, or a Motion Photo's MP4).
enum RenditionOutput: ItemOutput {
    /// Content-addressed location of a video's rendition: the source's bytes (a Motion Photo's
    /// MP4 alone) and what shapes the rendition (`RenditionSettings.recipe`); a display matrix
    /// left out (`matrixIgnored`, which earlier versions copied) is part of it.
    static func path(
        sourceSHA256: String, delivery: Manifest.VideoInfo.Delivery, renditions: RenditionSettings, matrixIgnored: Bool = false
    ) -> String {
        let recipe = renditions.recipe(delivery) + (matrixIgnored ? "\nmatrix ignored" : "")
        return ContentAddress.path("thumbframe-rendition-v1", sourceSHA256, recipe, extension: "mp4")
    }

    /// The worker's half: the rendition `delivery` of the video `size` bytes at `offset` in `fd`
    /// (`sha256` its bytes), found at its content address (its facts read from it), else written
    /// now. A failure that is not OUT_DIR's leaves the item without a rendition.
    static func make(
        fd: Int32, offset: Int, size: Int, sha256: String, delivery: Manifest.VideoInfo.Delivery, matrixIgnored: Bool = false,
        context: ProcessingContext
    ) -> Result<Manifest.VideoRendition, OutputFailure> {
        let path = path(sourceSHA256: sha256, delivery: delivery, renditions: context.renditions, matrixIgnored: matrixIgnored)
        let decoder = VideoDecoder()
        if let found = ContentAddress.existing(path, context: context), let opened = context.output.open(file: path),
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
                return .failure(.cannotWrite("rendition", path, FileSystemError.posix(code)))
            }
            return .failure(OutputFailure(reason: "no rendition: " + (failure?.reason ?? "it could not be read back")))
        } catch {
            return .failure(.cannotWrite("rendition", path, error))
        }
    }

    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem) {
        guard var rendition = item.media?.video?.rendition else { return }
        try take(
            &rendition, sourceSHA256: outputs.sourceSHA256, matrixIgnored: item.media?.video?.matrixIgnored == true,
            limit: outputs.videoLimit(item), into: &outputs)
        item.media?.video?.rendition = rendition
    }

    /// The build's half for one rendition of the video whose bytes hash to `sourceSHA256` (a
    /// video item's, or its Motion Photo part's).
    static func take(
        _ rendition: inout Manifest.VideoRendition, sourceSHA256: String, matrixIgnored: Bool = false, limit: Int,
        into outputs: inout ScratchOutputs
    ) throws(ScratchOutputs.Problem) {
        rendition.path = path(
            sourceSHA256: sourceSHA256, delivery: rendition.delivery, renditions: outputs.setup.renditions, matrixIgnored: matrixIgnored)
        (rendition.bytes, rendition.sha256, _) = try outputs.file(rendition.path, limit: limit)
    }
}
