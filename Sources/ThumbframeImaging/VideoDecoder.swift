internal import CFFmpeg
internal import CThumbframeShim
internal import CVips
import Foundation
package import ThumbframeManifest

/// Videos through FFmpeg's C libraries: reads the container's facts (codec, duration, frame
/// rate, audio, display matrix, HDR transfer), decodes one poster frame from a representative
/// moment, converts it to upright sRGB at the decode box (tone-mapped when HDR), and hands it to
/// the photo pipeline for every thumbnail and the placeholder. The file is read through its
/// descriptor with `pread`, never whole into memory; every blocking call obeys the deadline and
/// the build's cancellation.
package struct VideoDecoder: Sendable {
    /// Bytes FFmpeg may read to find the streams (its own default is 5 MB).
    static let probeBytes: Int64 = 5 << 20
    /// Frames decoded past a dark keyframe looking for light, per candidate moment.
    static let framesPastDarkKeyframe = 90
    /// Packets read for one candidate moment before it gives up (a stream that never yields a frame).
    static let packetsPerCandidate = 2_000
    /// A frame whose mean luma is under this fraction of white is dark (a fade from black).
    static let darkLuma = 0.06

    package init() {}

    /// ISO media brands of sound alone (iTunes' audio files): FFmpeg reads them, and finds no video.
    static let audioBrands = ["M4A ", "M4B ", "M4P "]

    /// True when the first bytes are ISO media of an audio-only brand (`audioBrands`).
    package static func hasAudioBrand(_ head: [UInt8]) -> Bool {
        head.count >= 12 && Array(head[4..<8]) == Array("ftyp".utf8) && audioBrands.contains { Array(head[8..<12]) == Array($0.utf8) }
    }

    /// Probes the video in `fd` (`size` bytes), asks `request` which thumbnails to make, and makes
    /// them from the poster frame. Never throws: a video that cannot be made is a failure.
    package func decode(
        fd: Int32, size: Int, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Decoded {
        return Decoded(Self.make(fd: fd, size: size, limits: limits, cancellation: cancellation, request: request))
    }

    /// The facts and display size of the video `size` bytes long at `offset` in `fd` (a Motion
    /// Photo's embedded MP4), read from its container without decoding a frame.
    package func probe(fd: Int32, offset: Int, size: Int, limits: ResourceLimits, cancellation: CancellationFlag?)
        -> Result<(video: Manifest.VideoInfo, width: Int, height: Int), DecodeFailure>
    {
        Self.open(fd: fd, offset: offset, size: size, limits: limits, cancellation: cancellation) { _, probe in
            let header = ImageHeader(video: probe.info, width: probe.storedWidth, height: probe.storedHeight)
            return .success((probe.info, header.displayWidth, header.displayHeight))
        }
    }

    /// An MP4 or QuickTime file's index, read from its boxes before FFmpeg is given the file:
    /// why FFmpeg may not read it (its tracks claim more samples than `--max-decode-bytes` holds
    /// at `ISOMediaIndex.bytesPerSample` each) and whether it comes before the media data. Both
    /// nil when it is no ISO media or its `moov` cannot be found (FFmpeg then says what it finds).
    static func index(fd: Int32, offset: Int, size: Int, limits: ResourceLimits) -> (refusal: String?, first: Bool?) {
        let read = reader(fd: fd, offset: offset, size: size)
        let head = read(0, 12)
        guard head.count == 12, ["ftyp", "moov", "mdat", "wide", "free"].contains(String(decoding: head[4..<8], as: UTF8.self)),
            let (samples, first) = ISOMediaIndex.index(size: size, moovLimit: limits.maxDecodeBytes, read: read)
        else { return (nil, nil) }
        let bytes = samples.multipliedReportingOverflow(by: ISOMediaIndex.bytesPerSample)
        guard bytes.overflow || bytes.partialValue > limits.maxDecodeBytes else { return (nil, first) }
        let claimed = samples == Int.max ? "a moov box larger than that" : "\(samples) samples"
        return (
            "its index claims \(claimed) (about \(bytes.overflow ? "more than " + ResourceLimits.mebibytes(limits.maxDecodeBytes) : ResourceLimits.mebibytes(bytes.partialValue)) for FFmpeg to hold), over --max-decode-bytes \(ResourceLimits.mebibytes(limits.maxDecodeBytes))",
            first
        )
    }

    /// Reads `length` bytes at `at` of the `size` bytes at `offset` in `fd` (fewer at the end).
    static func reader(fd: Int32, offset: Int, size: Int) -> (Int, Int) -> [UInt8] {
        { at, length in
            guard at >= 0, length > 0, at < size else { return [] }
            var bytes = [UInt8](repeating: 0, count: min(length, size - at))
            let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset + at)) }
            return got > 0 ? Array(bytes.prefix(got)) : []
        }
    }

    /// Opens the container, reads and checks its video stream's facts, and hands them to `body`
    /// while the container is open.
    /// `framesEnd`: the duration is read from the last frames (`Probe.read`) — the facts an item
    /// records; a scrub preview, drawn at the item's duration, has no use for another seek.
    static func open<T>(
        fd: Int32, offset: Int = 0, size: Int, limits: ResourceLimits, cancellation: CancellationFlag?, framesEnd: Bool = true,
        _ body: (OpaquePointer, Probe) -> Result<T, DecodeFailure>
    ) -> Result<T, DecodeFailure> {
        let index = index(fd: fd, offset: offset, size: size, limits: limits)
        if let refusal = index.refusal {
            return .failure(DecodeFailure(stage: .probe, reason: refusal, cause: .memory))
        }
        var stopped: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let opened = tf_video_open(
            fd, Int64(offset), Int64(size), probeBytes, limits.decodeTimeout, cancellation?.pointer, &stopped, &message,
            message.count)
        guard let video = opened else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .failure(
                DecodeFailure.stopped(stopped, limits: limits) ?? DecodeFailure(stage: .probe, reason: "not a readable video: " + reason))
        }
        defer { tf_video_close(video) }
        let docType = matroskaDocType(reader(fd: fd, offset: offset, size: size)(0, 64))
        return Probe.read(tf_video_format(video)!, indexFirst: index.first, docType: docType, framesEnd: framesEnd).flatMap { probe in
            if let refusal = probe.refusal(limits) { return .failure(DecodeFailure(stage: .probe, reason: refusal, cause: .memory)) }
            return body(video, probe)
        }
    }

    /// The header, the request, the poster, the render.
    private static func make(
        fd: Int32, size: Int, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure> {
        open(fd: fd, size: size, limits: limits, cancellation: cancellation) { video, probe in
            let container = tf_video_format(video)!
            var header = ImageHeader(
                video: probe.info, width: probe.storedWidth, height: probe.storedHeight,
                contentIdentifier: Probe.contentIdentifier(container))
            let wanted = request(header)
            let poster: PosterFrame
            switch PosterFrame.find(video, probe: probe, limits: limits, cancellation: cancellation) {
            case .success(let found): poster = found
            case .failure(let problem): return .failure(problem)
            }
            header.media.video?.poster = poster.time.roundedForManifest
            guard let wanted, wanted.render else { return .success((header, nil)) }
            return poster.render(wanted.plan, probe: probe).flatMap { VipsDecoder.finish($0, wanted) }.map { (header, $0) }
        }
    }

}

extension VideoDecoder {
    /// What the container says of its video stream, read without decoding.
    struct Probe {
        var stream: UnsafeMutablePointer<AVStream>
        var info: Manifest.VideoInfo
        /// The coded picture, widened by the sample aspect ratio.
        var storedWidth: Int
        var storedHeight: Int
        var codedWidth: Int
        var codedHeight: Int
        var bitsPerSample: Int

        /// `docType`: a Matroska file's EBML DocType (`webm` or `matroska`), read from its first bytes.
        static func read(
            _ container: UnsafeMutablePointer<AVFormatContext>, indexFirst: Bool?, docType: String? = nil, framesEnd: Bool = true
        ) -> Result<Probe, DecodeFailure> {
            let streams = (0..<Int(container.pointee.nb_streams)).compactMap { container.pointee.streams[$0] }
            func isPicture(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
                stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                    && stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
                    && stream.pointee.codecpar.pointee.width > 0 && stream.pointee.codecpar.pointee.height > 0
            }
            // The largest moving picture (a cover image attached to the file is not the video).
            guard
                let stream = streams.filter(isPicture).max(by: {
                    Int($0.pointee.codecpar.pointee.width) * Int($0.pointee.codecpar.pointee.height)
                        < Int($1.pointee.codecpar.pointee.width) * Int($1.pointee.codecpar.pointee.height)
                })
            else {
                let audio = streams.contains { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }
                return .failure(DecodeFailure(stage: .probe, reason: audio ? "no video stream (audio only)" : "no video stream"))
            }
            let parameters = stream.pointee.codecpar.pointee
            let codec = String(cString: avcodec_get_name(parameters.codec_id))
            let audio = streams.first { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }
                .map { String(cString: avcodec_get_name($0.pointee.codecpar.pointee.codec_id)) }
            var duration = 0.0
            if stream.pointee.duration != Int64.min, stream.pointee.duration > 0 {
                duration = Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base)
            } else if container.pointee.duration != Int64.min, container.pointee.duration > 0 {
                duration = Double(container.pointee.duration) / Double(AV_TIME_BASE)
            }
            let rate =
                stream.pointee.avg_frame_rate.num > 0 && stream.pointee.avg_frame_rate.den > 0
                ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
            let frameRate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0
            // The duration is what the frames say: a header that claims another (a variable frame
            // rate whose frames run past it, a length written wrong) gives way to the last frame's
            // end, read from the packets. Within a second (and two frames) of it, the header's stands.
            let frameSeconds = frameRate > 0 ? 1 / frameRate : 1.0 / 30
            let end = framesEnd ? tf_video_frames_end(container, stream.pointee.index, frameSeconds) : -1
            if end > 0, end.isFinite, abs(end - duration) > max(1, 2 * frameSeconds) { duration = end }
            var (mirrored, ignored): (Int32, Int32) = (0, 0)
            let counterClockwise = tf_video_rotation(stream, &mirrored, &ignored)
            // The display matrix turns counter-clockwise; players turn the picture the other way
            // round to show it (ffmpeg's autorotate), in quarter turns.
            let quarters = Int((-counterClockwise / 90).rounded())
            let rotation = ((quarters % 4 + 4) % 4) * 90
            let hdr: String? =
                switch parameters.color_trc {
                case AVCOL_TRC_SMPTE2084: "pq"
                case AVCOL_TRC_ARIB_STD_B67: "hlg"
                default: nil
                }
            var width = Int(parameters.width)
            let aspect = parameters.sample_aspect_ratio
            if aspect.num > 0, aspect.den > 0, aspect.num != aspect.den {
                width = max(1, Int((Double(width) * Double(aspect.num) / Double(aspect.den)).rounded()))
            }
            let name = containerName(container, codec: codec, audio: audio, docType: docType)
            let sound = streams.first { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO }?.pointee.codecpar
            var text = [CChar](repeating: 0, count: 96)
            let named = tf_video_codecs(stream.pointee.codecpar, sound, &text, text.count) != 0
            let codecs = named ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
            let depth = av_pix_fmt_desc_get(AVPixelFormat(parameters.format))?.pointee.comp.0.depth ?? 8
            // A browser codec whose pictures browsers do not decode (H.264 High 10 or 4:2:2) is
            // transcoded; other codecs' delivery follows from the codec alone.
            let picturePlays =
                !Manifest.VideoInfo.Delivery.browserVideoCodecs.contains(codec) || tf_video_browser_picture(stream.pointee.codecpar) != 0
            let info = Manifest.VideoInfo(
                container: name, codec: codec, duration: max(0, duration.isFinite ? duration : 0),
                frameRate: frameRate.isFinite ? max(0, frameRate) : 0, audio: audio, rotation: rotation, hdr: hdr, poster: 0,
                indexFirst: ["mp4", "mov", "3gp"].contains(name) ? indexFirst : nil,
                codecs: ["mp4", "mov", "3gp"].contains(name) ? codecs : nil,
                picturePlays: picturePlays, matrixIgnored: ignored != 0)
            return .success(
                Probe(
                    stream: stream, info: info, storedWidth: width, storedHeight: Int(parameters.height),
                    codedWidth: Int(parameters.width), codedHeight: Int(parameters.height), bitsPerSample: Int(depth)))
        }

        /// The QuickTime key `com.apple.quicktime.content.identifier` (a Live Photo's MOV), in
        /// the form `AppleMakerNote` reads from the photo.
        static func contentIdentifier(_ container: UnsafeMutablePointer<AVFormatContext>) -> String? {
            guard let entry = av_dict_get(container.pointee.metadata, "com.apple.quicktime.content.identifier", nil, 0),
                let value = entry.pointee.value
            else { return nil }
            return ImageHeader.contentIdentifier(Array(String(cString: value).utf8))
        }

        /// `mp4`, `mov` (QuickTime brand), `3gp`, `webm` (a WebM file: its DocType says so and it
        /// holds only WebM's codecs), `matroska` (every other Matroska file: Safari plays none), or
        /// FFmpeg's demuxer name (`avi`, `mpegts`, `flv`, ...).
        static func containerName(
            _ container: UnsafeMutablePointer<AVFormatContext>, codec: String, audio: String?, docType: String?
        ) -> String {
            let demuxer = String(cString: container.pointee.iformat.pointee.name)
            if demuxer.hasPrefix("mov,") {
                let brand = av_dict_get(container.pointee.metadata, "major_brand", nil, 0).map { String(cString: $0.pointee.value) }
                switch brand?.trimmingCharacters(in: .whitespaces) {
                case "qt": return "mov"
                case let brand? where brand.hasPrefix("3g"): return "3gp"
                default: return "mp4"
                }
            }
            if demuxer.hasPrefix("matroska") {
                let webm = ["vp8", "vp9", "av1"].contains(codec) && (audio == nil || ["opus", "vorbis"].contains(audio!))
                return webm && docType == "webm" ? "webm" : "matroska"
            }
            return demuxer.split(separator: ",").first.map(String.init) ?? demuxer
        }

        /// The largest picture a frame of this video may have: `--max-pixels`, and no more than
        /// `--max-decode-bytes` holds in the frames a decoder keeps (`refusal`).
        func framePixels(_ limits: ResourceLimits) -> Int {
            min(limits.maxPixels, limits.maxDecodeBytes / Self.frameBytesPerPixel(bitsPerSample))
        }

        /// Up to 8 reference and output pictures of 4:2:0 samples.
        static func frameBytesPerPixel(_ bitsPerSample: Int) -> Int {
            3 * (bitsPerSample > 8 ? 2 : 1) * 8 / 2
        }

        /// Why this video may not be decoded: its picture is over `--max-pixels`, or the frames
        /// a decoder keeps (up to 8 reference and output pictures) are over `--max-decode-bytes`.
        func refusal(_ limits: ResourceLimits) -> String? {
            let pixels = codedWidth.multipliedReportingOverflow(by: codedHeight)
            if pixels.overflow || pixels.partialValue > limits.maxPixels {
                return "\(codedWidth)×\(codedHeight) pixels is over --max-pixels \(limits.maxPixels)"
            }
            let frames = pixels.partialValue.multipliedReportingOverflow(by: Self.frameBytesPerPixel(bitsPerSample))
            if frames.overflow || frames.partialValue > limits.maxDecodeBytes {
                return "decoding \(codedWidth)×\(codedHeight) video would hold about "
                    + "\(ResourceLimits.mebibytes(frames.overflow ? Int.max : frames.partialValue)) (reference frames), "
                    + "over --max-decode-bytes \(ResourceLimits.mebibytes(limits.maxDecodeBytes))"
            }
            return nil
        }
    }
}

extension VideoDecoder {
    /// The DocType of an EBML header (`webm`, `matroska`) at the start of `bytes`; nil when they
    /// do not start with one or it names none there. FFmpeg reads both with one demuxer
    /// (`matroska,webm`) and does not say which the file is.
    package static func matroskaDocType(_ bytes: [UInt8]) -> String? {
        // A variable-length integer at `at`: its length, and its value with the length marker
        // kept (an element ID) or taken off (a size).
        func vint(_ at: Int, keepMarker: Bool) -> (length: Int, value: UInt64)? {
            guard at < bytes.count, bytes[at] != 0 else { return nil }
            let length = bytes[at].leadingZeroBitCount + 1
            guard length <= 8, at + length <= bytes.count else { return nil }
            var value = UInt64(keepMarker ? bytes[at] : bytes[at] & (0xFF >> length))
            for byte in bytes[(at + 1)..<(at + length)] { value = value << 8 | UInt64(byte) }
            return (length, value)
        }
        guard let header = vint(0, keepMarker: true), header.value == 0x1A45_DFA3, let size = vint(header.length, keepMarker: false)
        else { return nil }
        var at = header.length + size.length
        let end = min(bytes.count, at + Int(min(size.value, UInt64(bytes.count))))
        while at < end, let id = vint(at, keepMarker: true), let length = vint(at + id.length, keepMarker: false) {
            let body = at + id.length + length.length
            guard length.value <= UInt64(end - body) else { return nil }
            if id.value == 0x4282 {
                return String(decoding: bytes[body..<(body + Int(length.value))].prefix { $0 != 0 }, as: UTF8.self)
            }
            at = body + Int(length.value)
        }
        return nil
    }
}
