import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// A Motion Photo's embedded MP4, published as a fast-start MP4 without the camera's metadata
/// (with a rendition of its own where its codec must change).
enum MotionOutput: ItemOutput {
    /// Where the MP4 (`sha256` its bytes) goes.
    static func path(sha256: String) -> String {
        // v3: a fast-start MP4 (v2's index came last; v1 copied the camera's MP4 byte for byte).
        OutputName.path(area: "thumbs", hash: Digest.sha256("thumbframe-motion-v3\n\(sha256)"), extension: "mp4")
    }

    /// Where a Motion Photo's MP4 lies in the photo's bytes, where its format keeps one
    /// (`MediaFormat.motion`): after a JPEG's data (its XMP says so), in a HEIC's or AVIF's
    /// `mpvd` box; nil for any other photo.
    static func range(_ raw: UnsafeRawBufferPointer, format: String) -> Range<Int>? {
        switch MediaFormat.named(format)?.motion {
        case .afterJPEG: MotionPhoto.locate(raw)
        case .heifBox: MotionPhoto.locateInHEIF(raw)
        case nil: nil
        }
    }

    /// The worker's half: the MP4 at `range` of the photo's bytes, probed for its facts and
    /// remuxed without any metadata (the camera writes the place it was taken, the device and
    /// dates into it) under its content address (kept while an item names it, like a
    /// thumbnail); with a rendition when its codec plays nowhere or not everywhere
    /// (`transcode`). nil when the MP4 is not a readable video: the photo is still a photo,
    /// without motion. `note`: why the part has no rendition.
    static func make(
        _ raw: UnsafeRawBufferPointer, _ range: Range<Int>, file: OpenFile, context: ProcessingContext
    ) -> (motion: Result<Manifest.MotionPart, OutputFailure>, note: String?)? {
        let sha256 = Digest.sha256(UnsafeRawBufferPointer(rebasing: raw[range]))
        let path = path(sha256: sha256)
        let decoder = VideoDecoder()
        let (offset, size) = (range.lowerBound, range.count)
        var facts: (video: Manifest.VideoInfo, width: Int, height: Int, bytes: Int, sha256: String)
        if let found = ContentAddress.existing(path, context: context),
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
                return (.failure(.cannotWrite("motion", path, error)), nil)
            }
            if let code = unwritable, FileSystemError.posix(code).isOutputUnwritable {
                return (.failure(.cannotWrite("motion", path, FileSystemError.posix(code))), nil)
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
            switch RenditionOutput.make(
                fd: file.fd, offset: offset, size: size, sha256: sha256, delivery: .transcode,
                matrixIgnored: facts.video.matrixIgnored == true, context: context)
            {
            case .success(let made): motion.video.rendition = made
            case .failure(let problem):
                if problem.outputUnwritable != nil { return (.failure(problem), nil) }
                note = "motion: " + problem.reason
            }
        }
        return (.success(motion), note)
    }

    static func take(_ item: inout StateIndex.StoredItem, into outputs: inout ScratchOutputs) throws(ScratchOutputs.Problem) {
        guard var part = item.media?.motion else { return }
        let source = outputs.source
        guard part.source == .embedded, part.video.scrub == nil, let motion = outputs.motion, motion.upperBound <= item.file.bytes,
            let sha256 = Digest.sha256(fd: source.fd, offset: motion.lowerBound, size: motion.count)
        else { throw .breach("a motion part that is not the file's") }
        let path = path(sha256: sha256)
        let limit = outputs.videoLimit(item)
        part.path = path
        (part.bytes, part.sha256, _) = try outputs.file(path, limit: limit)
        if var rendition = part.video.rendition {
            try RenditionOutput.take(
                &rendition, sourceSHA256: sha256, matrixIgnored: part.video.matrixIgnored == true, limit: limit, into: &outputs)
            part.video.rendition = rendition
        }
        item.media?.motion = part
    }
}
