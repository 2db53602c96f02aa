internal import CFFmpeg
internal import CThumbframeKernels
internal import CThumbframeShim
internal import CVips
import Foundation
import ThumbframeManifest

extension VideoDecoder {
    /// The frame every thumbnail of a video is made from, and when it is shown.
    ///
    /// Which frame: the keyframe at or before a tenth of the way in (at least 1 s, at most half
    /// the length, so a short clip takes its middle): a representative moment that costs one
    /// frame's decode after a seek. A frame whose mean luma is under `darkLuma` (the black
    /// first frame, a fade-in) is passed over: up to `framesPastDarkKeyframe` frames after it are
    /// decoded looking for light, then the same from half way; the brightest frame seen wins.
    /// A class: the decoded frame is freed in `deinit`.
    final class PosterFrame {
        let frame: UnsafeMutablePointer<AVFrame>
        /// Seconds from the start of the stream.
        let time: Double

        private init(frame: UnsafeMutablePointer<AVFrame>, time: Double) {
            self.frame = frame
            self.time = time
        }

        deinit {
            var frame: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&frame)
        }

        static func find(
            _ video: OpaquePointer, probe: Probe, limits: ResourceLimits, cancellation: CancellationFlag?
        ) -> Result<PosterFrame, DecodeFailure> {
            let container = tf_video_format(video)!
            let stream = probe.stream
            guard let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
                return .failure(DecodeFailure(stage: .decode, reason: "no decoder for \(probe.info.codec) video"))
            }
            var context = avcodec_alloc_context3(codec)
            defer { avcodec_free_context(&context) }
            guard let context, avcodec_parameters_to_context(context, stream.pointee.codecpar) >= 0 else {
                return .failure(DecodeFailure(stage: .decode, reason: "cannot set up the \(probe.info.codec) decoder"))
            }
            // One thread: --jobs videos decode side by side, and a frame-threaded decoder would
            // hold a frame per thread before the first one came out.
            context.pointee.thread_count = 1
            context.pointee.pkt_timebase = stream.pointee.time_base
            // Every frame, not the header alone: a stream may change size midway.
            tf_video_limit_frames(context, Int64(probe.framePixels(limits)))
            let opened = avcodec_open2(context, codec, nil)
            guard opened >= 0 else {
                return .failure(
                    DecodeFailure(stage: .decode, reason: "cannot open the \(probe.info.codec) decoder: \(ffmpegErrorText(opened))"))
            }
            for index in 0..<Int(container.pointee.nb_streams) where index != Int(stream.pointee.index) {
                container.pointee.streams[index]?.pointee.discard = AVDISCARD_ALL
            }
            let search = Search(
                video: video, container: container, stream: stream, context: context, limits: limits, cancellation: cancellation)
            search.probe = probe
            let duration = probe.info.duration
            var candidates = [duration > 0 ? min(max(1, duration / 10), duration / 2) : 0]
            if duration > 0, duration / 2 > candidates[0] { candidates.append(duration / 2) }
            for (number, candidate) in candidates.enumerated() {
                switch search.look(at: candidate, seek: number > 0 || candidate > 0) {
                case .failure(let problem): return .failure(problem)
                case .success(true): break
                case .success(false): continue
                }
                break
            }
            // Nothing decoded after the seeks: a container that seeks by timestamp rather than to
            // a keyframe (MPEG-TS) lands inside a group of pictures with no keyframe after it.
            // The first byte always begins with one (and with a stream's parameter sets).
            if search.best == nil, case .failure(let problem) = search.look(at: 0, seek: true, fromFirstByte: true) {
                return .failure(problem)
            }
            guard let best = search.take() else {
                return .failure(DecodeFailure(stage: .decode, reason: search.lastError ?? "no frame of the video could be decoded"))
            }
            return .success(PosterFrame(frame: best.frame, time: best.time))
        }

        /// The frame as upright 8-bit sRGB at the decode box, in memory: scaled with Lanczos
        /// in its own colour matrix and range (BT.709 for unlabelled HD, BT.601 below 720 lines),
        /// tone-mapped from BT.2020 PQ/HLG when HDR, then turned by the display matrix.
        func render(_ plan: ThumbnailPlan, probe: Probe) -> Result<VipsImageHandle, DecodeFailure> {
            let quarter = probe.info.rotation % 180 == 90
            let (width, height) = quarter ? (plan.decodeHeight, plan.decodeWidth) : (plan.decodeWidth, plan.decodeHeight)
            let transfer: TFKTransfer? =
                switch probe.info.hdr {
                case "pq": TFK_TRANSFER_PQ
                case "hlg": TFK_TRANSFER_HLG
                default: nil
                }
            let target = transfer == nil ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGB48LE
            let flags = Int32(SWS_LANCZOS | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT)
            guard
                let scaler = sws_getContext(
                    frame.pointee.width, frame.pointee.height, AVPixelFormat(frame.pointee.format), Int32(width), Int32(height),
                    target, flags, nil, nil, nil)
            else {
                return .failure(DecodeFailure(stage: .decode, reason: "cannot convert the video's pixel format to RGB"))
            }
            defer { sws_freeContext(scaler) }
            var space = Int32(frame.pointee.colorspace.rawValue)
            if ![1, 4, 5, 6, 7, 9, 10].contains(space) {
                space = transfer != nil ? 9 : frame.pointee.height >= 720 ? 1 : 5
            }
            let fullRange: Int32 = frame.pointee.color_range == AVCOL_RANGE_JPEG ? 1 : 0
            sws_setColorspaceDetails(
                scaler, sws_getCoefficients(space), fullRange, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16)
            let bytesPerPixel = transfer == nil ? 3 : 6
            var scaled = [UInt8](repeating: 0, count: width * height * bytesPerPixel)
            let rows = scaled.withUnsafeMutableBytes { output -> Int32 in
                var planes: [UnsafeMutablePointer<UInt8>?] = [output.baseAddress!.assumingMemoryBound(to: UInt8.self), nil, nil, nil]
                var strides: [Int32] = [Int32(width * bytesPerPixel), 0, 0, 0]
                return withUnsafePointer(to: &frame.pointee.data) { data in
                    withUnsafePointer(to: &frame.pointee.linesize) { lines in
                        data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { source in
                            lines.withMemoryRebound(to: Int32.self, capacity: 8) { sourceStrides in
                                sws_scale(scaler, source, sourceStrides, 0, frame.pointee.height, &planes, &strides)
                            }
                        }
                    }
                }
            }
            guard rows == Int32(height) else {
                return .failure(DecodeFailure(stage: .decode, reason: "the video's poster frame could not be converted to RGB"))
            }
            if let transfer {
                var mapped = [UInt8](repeating: 0, count: width * height * 3)
                scaled.withUnsafeBytes { input in
                    mapped.withUnsafeMutableBytes { output in
                        tfk_tonemap_rgb48(
                            input.baseAddress!.assumingMemoryBound(to: UInt16.self), width * 6, Int32(width), Int32(height),
                            transfer, output.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
                scaled = mapped
            }
            let image = scaled.withUnsafeBytes { pixels in
                VipsDecoder.step(.decode) { tf_image_from_rgb(pixels.baseAddress, pixels.count, Int32(width), Int32(height), $0) }
            }
            guard probe.info.rotation != 0 else { return image }
            // The quarter turns as the EXIF orientations that make them: 90° clockwise is 6.
            let orientation: Int32 = probe.info.rotation == 90 ? 6 : probe.info.rotation == 180 ? 3 : 8
            return image.flatMap { upright in VipsDecoder.step(.decode) { tf_autorot(upright.pointer, $0, orientation) } }
                .flatMap(VipsDecoder.inMemory)
        }
    }

    /// The state of the poster search: the decoder, the deadline, the best frame so far. A
    /// class: the best frame is freed in `deinit` unless `take()` handed it on.
    final class Search {
        var video: OpaquePointer
        var container: UnsafeMutablePointer<AVFormatContext>
        var stream: UnsafeMutablePointer<AVStream>
        var context: UnsafeMutablePointer<AVCodecContext>
        var limits: ResourceLimits
        var cancellation: CancellationFlag?
        var started: UInt64
        /// What the header said, for the bound on each frame.
        var probe: Probe?
        private(set) var best: (frame: UnsafeMutablePointer<AVFrame>, time: Double, luma: Double)?
        var lastError: String?

        init(
            video: OpaquePointer, container: UnsafeMutablePointer<AVFormatContext>, stream: UnsafeMutablePointer<AVStream>,
            context: UnsafeMutablePointer<AVCodecContext>, limits: ResourceLimits, cancellation: CancellationFlag?
        ) {
            self.video = video
            self.container = container
            self.stream = stream
            self.context = context
            self.limits = limits
            self.cancellation = cancellation
            started = DispatchTime.now().uptimeNanoseconds
        }

        deinit {
            var frame = best?.frame
            av_frame_free(&frame)
        }

        /// The best frame and its time, now the caller's to free.
        func take() -> (frame: UnsafeMutablePointer<AVFrame>, time: Double)? {
            defer { best = nil }
            return best.map { ($0.frame, $0.time) }
        }

        /// Decodes from the keyframe at or before `time` until a frame that is not dark (true),
        /// or `framesPastDarkKeyframe` frames, the stream's end or `packetsPerCandidate` packets
        /// (false). Frames brighter than the best so far replace it. `fromFirstByte`: from the
        /// file's first byte instead of a seek by time.
        func look(at time: Double, seek: Bool, fromFirstByte: Bool = false) -> Result<Bool, DecodeFailure> {
            let base = av_q2d(stream.pointee.time_base)
            let start = stream.pointee.start_time == Int64.min ? 0 : stream.pointee.start_time
            if fromFirstByte {
                if av_seek_frame(container, -1, 0, AVSEEK_FLAG_BYTE) < 0 { lastError = "cannot seek in the video" }
            } else if seek, base > 0 {
                let timestamp = start &+ Int64((time / base).rounded(.down))
                if av_seek_frame(container, stream.pointee.index, timestamp, AVSEEK_FLAG_BACKWARD) < 0 {
                    // Not seekable: read on from where the stream is.
                    lastError = "cannot seek in the video"
                }
            }
            avcodec_flush_buffers(context)
            var packet = av_packet_alloc()
            var frame = av_frame_alloc()
            defer {
                av_packet_free(&packet)
                av_frame_free(&frame)
            }
            guard let packet, let frame else { return .failure(DecodeFailure(stage: .decode, reason: "out of memory")) }
            var frames = 0
            var ended = false
            for _ in 0..<VideoDecoder.packetsPerCandidate {
                if let problem = stopped() { return .failure(problem) }
                if !ended {
                    let read = av_read_frame(container, packet)
                    if read < 0 {
                        if let problem = DecodeFailure.stopped(tf_video_stopped(video), limits: limits) { return .failure(problem) }
                        ended = true
                        avcodec_send_packet(context, nil)  // drain the frames the decoder holds
                    } else {
                        defer { av_packet_unref(packet) }
                        guard packet.pointee.stream_index == stream.pointee.index else { continue }
                        let sent = avcodec_send_packet(context, packet)
                        if let problem = oversized() { return .failure(problem) }
                        if sent < 0, sent != tf_averror_eagain() { lastError = "the video's data is damaged: \(ffmpegErrorText(sent))" }
                    }
                }
                while true {
                    let received = avcodec_receive_frame(context, frame)
                    if let problem = oversized(frame) { return .failure(problem) }
                    if received == tf_averror_eof() { return .success(false) }
                    guard received >= 0 else {
                        if received != tf_averror_eagain() { lastError = "the video's data is damaged: \(ffmpegErrorText(received))" }
                        break
                    }
                    frames += 1
                    let timestamp =
                        frame.pointee.best_effort_timestamp != Int64.min ? frame.pointee.best_effort_timestamp : frame.pointee.pts
                    let seconds = timestamp == Int64.min ? 0 : max(0, Double(timestamp &- start) * base)
                    let luma = Self.meanLuma(frame)
                    if best == nil || luma > best!.luma {
                        guard let copy = av_frame_clone(frame) else {
                            return .failure(DecodeFailure(stage: .decode, reason: "out of memory"))
                        }
                        if let previous = best?.frame {
                            var pointer: UnsafeMutablePointer<AVFrame>? = previous
                            av_frame_free(&pointer)
                        }
                        best = (copy, seconds, luma)
                    }
                    av_frame_unref(frame)
                    if luma >= VideoDecoder.darkLuma { return .success(true) }
                    if frames >= VideoDecoder.framesPastDarkKeyframe { return .success(false) }
                }
                if ended { return .success(false) }
            }
            return .success(false)
        }

        /// A frame (the one just decoded, or one the decoder refused to allocate) larger than
        /// the limits allow: the video fails whatever size its header gave.
        func oversized(_ frame: UnsafeMutablePointer<AVFrame>? = nil) -> DecodeFailure? {
            guard let probe else { return nil }
            var (width, height): (Int32, Int32) = (0, 0)
            if tf_video_refused_size(&width, &height) == 0 {
                guard let frame, Int(frame.pointee.width) * Int(frame.pointee.height) > probe.framePixels(limits) else { return nil }
                (width, height) = (frame.pointee.width, frame.pointee.height)
            }
            return DecodeFailure(
                stage: .decode,
                reason: "a frame of \(width)×\(height) pixels in a video of \(probe.codedWidth)×\(probe.codedHeight) is over "
                    + "--max-decode-bytes \(ResourceLimits.mebibytes(limits.maxDecodeBytes)) or --max-pixels \(limits.maxPixels)")
        }

        /// The deadline passed or the build was cancelled.
        private func stopped() -> DecodeFailure? {
            if cancellation?.signal != nil { return DecodeFailure.stopped(Int32(TF_STOP_REQUESTED.rawValue), limits: limits) }
            if limits.decodeTimeout > 0, Double(DispatchTime.now().uptimeNanoseconds &- started) / 1e9 > limits.decodeTimeout {
                return DecodeFailure.stopped(Int32(TF_STOP_DEADLINE.rawValue), limits: limits)
            }
            return nil
        }

        /// Mean luma of a YUV frame as a fraction of white (every 8th sample of every 8th row);
        /// 1 for pixel formats without a luma plane (they are never taken for dark).
        static func meanLuma(_ frame: UnsafeMutablePointer<AVFrame>) -> Double {
            guard let descriptor = av_pix_fmt_desc_get(AVPixelFormat(frame.pointee.format)),
                descriptor.pointee.flags & UInt64(AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_HWACCEL) == 0,
                let plane = frame.pointee.data.0
            else { return 1 }
            let depth = Int(descriptor.pointee.comp.0.depth)
            let wide = descriptor.pointee.comp.0.step > 1 || depth > 8
            let lineBytes = Int(frame.pointee.linesize.0)
            let (width, height) = (Int(frame.pointee.width), Int(frame.pointee.height))
            var sum = 0.0
            var count = 0
            for y in stride(from: 0, to: height, by: 8) {
                let row = plane + y * lineBytes
                for x in stride(from: 0, to: width, by: 8) {
                    let value = wide ? Int(UnsafeRawPointer(row + 2 * x).loadUnaligned(as: UInt16.self)) : Int(row[x])
                    sum += Double(value >> Int(descriptor.pointee.comp.0.shift))
                    count += 1
                }
            }
            guard count > 0 else { return 1 }
            let full = frame.pointee.color_range == AVCOL_RANGE_JPEG
            let scale = Double(1 << max(0, depth - 8))
            let (black, white) = full ? (0.0, Double((1 << depth) - 1)) : (16 * scale, 235 * scale)
            return (sum / Double(count) - black) / (white - black)
        }
    }
}

/// av_strerror's text for an FFmpeg error code.
func ffmpegErrorText(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    tf_av_error_text(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
