internal import CFFmpeg
internal import CThumbframeShim
internal import CVips
import Foundation
package import ThumbframeManifest

/// How renditions are made (`--video-renditions`, `--video-max-side`): which videos get one, and
/// the transcode's encoder settings, fixed so that the same video makes the same bytes anywhere.
package struct RenditionSettings: Codable, Sendable, Equatable {
    /// Which videos get a rendition.
    package var mode: Manifest.VideoRenditions = .default
    /// A transcode's long side at most (never enlarged).
    package var maxSide = Self.defaultMaxSide

    /// `--video-max-side`'s default: 1080 lines, what a phone or laptop screen shows of a video.
    package static let defaultMaxSide = 1080
    /// x264's constant rate factor (its default, and FFmpeg's) and preset: `veryfast` encodes a
    /// 1080p minute in well under a minute on two cores at bytes close to `medium`'s.
    package static let crf = 23
    package static let preset = "veryfast"
    /// x264's threads, whatever `--jobs` and the machine: its bytes depend on the thread count.
    package static let encoderThreads = 2

    package init(mode: Manifest.VideoRenditions = .default, maxSide: Int = Self.defaultMaxSide) {
        self.mode = mode
        self.maxSide = maxSide
    }

    /// What shapes a rendition's bytes, canonically (part of its content address): a remux has
    /// nothing to set; a transcode its encoder, preset, rate factor and size.
    package func recipe(_ delivery: Manifest.VideoInfo.Delivery) -> String {
        delivery == .transcode
            ? "transcode libx264 high \(Self.preset) crf \(Self.crf) max \(maxSide) aac" : "remux faststart"
    }

    /// What shapes every rendition and scrub preview of a build (the state index re-makes its
    /// videos when it changes).
    package var canonical: String {
        (mode == .none ? "none" : "\(mode.rawValue) \(recipe(.transcode))") + "; scrub " + Manifest.ScrubPreview.recipe
    }
}

extension VideoDecoder {
    /// A rendition written: the source's facts and display size, and what was written.
    package struct Written: Sendable {
        package var source: Manifest.VideoInfo
        package var displayWidth: Int
        package var displayHeight: Int
        package var rendition: Manifest.VideoRendition
    }

    /// Writes the rendition of the video `size` bytes at `offset` in `fd` into `output` (a new,
    /// empty file open for reading and writing): `delivery` `.remux` copies its video and sound
    /// streams into a fast-start MP4 (at most `maxPacketBytes` of them, 0 none), `.transcode`
    /// encodes them as H.264 High and AAC (`settings`). No metadata is carried over. The time
    /// it may take is `limits.videoTimeout`. `rendition.path` and `sha256` are left for the
    /// caller, which knows where the file goes and hashes it.
    package func writeRendition(
        fd: Int32, offset: Int = 0, size: Int, into output: Int32, delivery: Manifest.VideoInfo.Delivery, settings: RenditionSettings,
        maxPacketBytes: Int = 0, limits: ResourceLimits, cancellation: CancellationFlag?
    ) -> Result<Written, DecodeFailure> {
        Self.open(fd: fd, offset: offset, size: size, limits: limits, cancellation: cancellation) { video, probe in
            var request = TFRenditionSettings()
            request.transcode = delivery == .transcode ? 1 : 0
            request.timeless = Manifest.VideoInfo.Delivery.transcodedContainers.contains(probe.info.container) ? 1 : 0
            request.video_stream = probe.stream.pointee.index
            request.max_side = Int32(settings.maxSide)
            request.crf = Int32(RenditionSettings.crf)
            request.threads = Int32(RenditionSettings.encoderThreads)
            request.transfer = probe.transferCode
            request.max_pixels = Int64(probe.framePixels(limits))
            request.max_packet_bytes = Int64(maxPacketBytes)
            request.timeout_seconds = limits.videoTimeout
            request.stop = UnsafePointer(cancellation?.pointer)
            var result = TFRenditionResult()
            var message = [CChar](repeating: 0, count: 256)
            let code = RenditionSettings.preset.withCString { preset in
                request.preset = preset
                return tf_video_write_rendition(video, output, &request, &result, &message, message.count)
            }
            guard code == 0 else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if result.write_errno != 0 {
                    var failure = DecodeFailure(stage: .encode, reason: String(cString: strerror(result.write_errno)))
                    failure.outputErrno = result.write_errno
                    return .failure(failure)
                }
                if result.stopped == Int32(TF_STOP_DEADLINE.rawValue) {
                    return .failure(
                        DecodeFailure(
                            stage: .encode,
                            reason: "its rendition timed out after \(ResourceLimits.seconds(limits.videoTimeout)) (--video-timeout)",
                            cause: .time))
                }
                return .failure(
                    DecodeFailure.stopped(result.stopped, limits: limits)
                        ?? DecodeFailure(stage: .encode, reason: "cannot \(delivery.rawValue) it: " + reason))
            }
            let codecs = withUnsafeBytes(of: result.codecs) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let quarter = probe.info.rotation % 180 == 90
            let (width, height) = (Int(result.width), Int(result.height))
            let header = ImageHeader(video: probe.info, width: probe.storedWidth, height: probe.storedHeight)
            return .success(
                Written(
                    source: probe.info, displayWidth: header.displayWidth, displayHeight: header.displayHeight,
                    rendition: Manifest.VideoRendition(
                        path: "", delivery: delivery, codecs: codecs, width: quarter ? height : width, height: quarter ? width : height,
                        duration: result.duration, bytes: Int(result.bytes), sha256: "")))
        }
    }
}

extension VideoDecoder {
    /// A scrub sprite sheet: the JPEG and its tiles.
    package struct Sprite: Sendable {
        package var jpeg: [UInt8]
        package var count: Int
        package var interval: Double
        package var columns: Int
        package var tileWidth: Int
        package var tileHeight: Int
    }

    /// The scrub sprite sheet of the video in `fd` (`size` bytes): `Manifest.ScrubPreview`'s
    /// tiles, upright, HDR tone-mapped as posters are, as a JPEG without metadata. Within
    /// `--decode-timeout` of its own.
    package func sprite(fd: Int32, size: Int, limits: ResourceLimits, cancellation: CancellationFlag?) -> Result<Sprite, DecodeFailure> {
        Self.open(fd: fd, size: size, limits: limits, cancellation: cancellation, framesEnd: false) { video, probe in
            let header = ImageHeader(video: probe.info, width: probe.storedWidth, height: probe.storedHeight)
            let geometry = Manifest.ScrubPreview.geometry(
                duration: probe.info.duration, width: header.displayWidth, height: header.displayHeight)
            let columns = min(Manifest.ScrubPreview.columnsPerRow, geometry.count)
            let rows = (geometry.count + columns - 1) / columns
            let (width, height) = (columns * geometry.tileWidth, rows * geometry.tileHeight)
            var settings = TFSpriteSettings()
            settings.video_stream = probe.stream.pointee.index
            settings.count = Int32(geometry.count)
            settings.interval = geometry.interval
            settings.tile_width = Int32(geometry.tileWidth)
            settings.tile_height = Int32(geometry.tileHeight)
            settings.columns = Int32(columns)
            settings.rotation = Int32(probe.info.rotation)
            settings.transfer = probe.transferCode
            settings.max_pixels = Int64(probe.framePixels(limits))
            settings.timeout_seconds = limits.decodeTimeout
            settings.stop = UnsafePointer(cancellation?.pointer)
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            var stopped: Int32 = 0
            var message = [CChar](repeating: 0, count: 256)
            let code = pixels.withUnsafeMutableBufferPointer {
                tf_video_sprite(video, &settings, $0.baseAddress, &stopped, &message, message.count)
            }
            guard code == 0 else {
                let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(
                    DecodeFailure.stopped(stopped, limits: limits) ?? DecodeFailure(stage: .decode, reason: "its scrub preview: " + reason))
            }
            let image = pixels.withUnsafeBytes { raw in
                VipsDecoder.step(.encode) { tf_image_from_rgb(raw.baseAddress, raw.count, Int32(width), Int32(height), $0) }
            }
            return image.flatMap { sheet in
                var buffer: UnsafeMutableRawPointer?
                var length = 0
                guard tf_save_buffer(sheet.pointer, TF_FORMAT_JPEG, Int32(Manifest.ScrubPreview.quality), 0, &buffer, &length) == 0,
                    let buffer
                else { return .failure(.vips(.encode)) }
                defer { g_free(buffer) }
                return .success(
                    Sprite(
                        jpeg: Array(UnsafeRawBufferPointer(start: buffer, count: length)), count: geometry.count,
                        interval: geometry.interval, columns: columns, tileWidth: geometry.tileWidth, tileHeight: geometry.tileHeight))
            }
        }
    }
}

extension VideoDecoder.Probe {
    /// The HDR transfer as the C side names it (TFKTransfer): 1 PQ, 2 HLG, 0 SDR.
    var transferCode: Int32 {
        switch info.hdr {
        case "pq": 1
        case "hlg": 2
        default: 0
        }
    }
}
