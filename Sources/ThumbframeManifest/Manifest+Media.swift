import Foundation

extension Manifest {
    /// What a frontend shows for an item, and so which cell it builds (JXPhotoBrowser 3 picks
    /// its cell class per index: an image cell, a video cell). Every kind has `image` (the
    /// display size), thumbnails, a placeholder and layouts; the kind adds its own facts.
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        /// A still image; with `motion`, a Live Photo or Motion Photo.
        case photo
        /// A video: `video` says what it is; thumbnails are of its poster frame.
        case video
        /// An animated GIF or WebP: `animation` says how it moves; thumbnails are of its first frame.
        case animated
    }

    /// What a video is, read from its container without decoding more than the poster frame.
    public struct VideoInfo: Codable, Hashable, Sendable {
        /// The container: `mp4`, `mov`, `webm`, `matroska`, `avi`, `mpegts`, ...
        public var container: String
        /// The video codec as FFmpeg names it: `h264`, `hevc`, `vp9`, `av1`, `mpeg4`, ...
        public var codec: String
        /// Length in seconds (4 decimals).
        public var duration: Double
        /// Average frames per second (4 decimals); 0 when the container does not say.
        public var frameRate: Double
        /// The first audio stream's codec (`aac`, `opus`, ...); nil when the video is silent.
        public var audio: String?
        /// Degrees clockwise the player turns the coded picture (the container's display
        /// matrix): 0, 90, 180 or 270. `image.width`/`height` are after it, `storedWidth` and
        /// `storedHeight` before; the poster and thumbnails are upright already.
        public var rotation: Int
        /// `pq` or `hlg` for HDR video (SMPTE ST 2084, ARIB STD-B67), whose poster was tone-mapped
        /// to SDR; nil for SDR.
        public var hdr: String?
        /// Whether current Chrome, Firefox and Safari all play the file as it is in `<video>`:
        /// MP4/MOV with H.264, AV1 or VP9 (audio AAC, MP3, Opus or none), or WebM with VP8, VP9
        /// or AV1 (audio Opus, Vorbis or none). HEVC is false (Firefox cannot play it).
        public var playable: Bool
        /// The time in seconds of the poster frame every thumbnail was made from (4 decimals).
        public var poster: Double
        /// For an MP4 or QuickTime file: whether its index (`moov`) comes before its media data,
        /// so a browser starts playing before it has the whole file; a camera that writes it at
        /// the end makes a browser download all of it first. nil for other containers (and in
        /// manifests written before it).
        public var indexFirst: Bool?
        /// How every browser gets to play it (`Delivery.decide`); nil in manifests written before it.
        public var delivery: Delivery?
        /// True when the container's display matrix was not a turn by quarters (a shear, a scale,
        /// a garbage value): it is ignored, `rotation` is 0, and no rendition carries it. nil
        /// otherwise.
        public var matrixIgnored: Bool?
        /// RFC 6381 codecs of the file as it is, for a `<source type>` (`hvc1.2.4.L153.B0,mp4a.40.2`):
        /// a browser that can play them takes the original. nil where they have no such name here
        /// (MPEG-4 Part 2, MPEG-2, VC-1, PCM sound, ...) and in manifests written before it.
        public var codecs: String?
        /// The fast-start MP4 every browser plays, made when `delivery` is not `original`
        /// (`--video-renditions`); nil otherwise. A frontend lists it after the original (by
        /// `codecs`) so a browser that plays the original takes that.
        public var rendition: VideoRendition?
        /// Scrub previews: a sprite sheet of frames across the video and the WebVTT file that
        /// maps times to its tiles (videos only; nil for motion parts and in older manifests).
        public var scrub: ScrubPreview?

        /// How a video reaches every browser: as it is, remuxed, or transcoded.
        public enum Delivery: String, Codable, Hashable, Sendable, CaseIterable {
            /// It plays as it is: H.264, VP9 or AV1 in MP4 (its index first) or WebM.
            case original
            /// Its codecs play everywhere but its container does not (Matroska, MPEG-TS, …) or
            /// its index comes last: the same streams in a fast-start MP4, no re-encode.
            case remux
            /// Its codec plays nowhere or not everywhere (HEVC, MPEG-4 Part 2, MPEG-2, VC-1, …):
            /// H.264 and AAC.
            case transcode

            /// Video codecs every current browser decodes.
            package static let browserVideoCodecs: Set<String> = ["h264", "vp9", "av1"]
            /// Audio codecs every current browser decodes in MP4.
            package static let browserAudioCodecs: Set<String> = ["aac", "mp3", "opus"]

            /// Containers whose packets cannot be copied into an MP4 that starts at the first
            /// frame: AVI keeps no presentation times, so a stream with reordered frames (every
            /// H.264 with B-frames) has none to copy.
            package static let transcodedContainers: Set<String> = ["avi"]

            /// The delivery of a video in `container` (as `VideoInfo.container` names it) with
            /// `codec`, `audio`, whether its pictures are of a kind every browser decodes
            /// (`picturePlays`: 8-bit 4:2:0 H.264; 8- or 10-bit 4:2:0 VP9 and AV1) and, for MP4
            /// and QuickTime, `indexFirst`.
            package static func decide(
                container: String, codec: String, audio: String?, indexFirst: Bool?, picturePlays: Bool = true
            ) -> Delivery {
                guard picturePlays, !transcodedContainers.contains(container) else { return .transcode }
                if VideoInfo.playsAsItIs(container: container, codec: codec, audio: audio) {
                    return indexFirst == false ? .remux : .original
                }
                let streamsPlay = browserVideoCodecs.contains(codec) && (audio.map { browserAudioCodecs.contains($0) } ?? true)
                return streamsPlay ? .remux : .transcode
            }
        }

        /// Whether Chrome, Firefox and Safari all play a file of this container, codec and audio
        /// in `<video>` (see `playable`).
        package static func playsAsItIs(container: String, codec: String, audio: String?) -> Bool {
            switch container {
            case "mp4", "mov":
                Delivery.browserVideoCodecs.contains(codec) && (audio.map { Delivery.browserAudioCodecs.contains($0) } ?? true)
            case "webm":
                ["vp8", "vp9", "av1"].contains(codec) && (audio == nil || ["opus", "vorbis"].contains(audio!))
            default: false
            }
        }

        /// Creates video facts; `playable` and `delivery` follow from the container, the codecs
        /// and `indexFirst`.
        public init(
            container: String, codec: String, duration: Double, frameRate: Double, audio: String?, rotation: Int,
            hdr: String?, poster: Double, indexFirst: Bool? = nil, codecs: String? = nil, picturePlays: Bool = true,
            matrixIgnored: Bool = false
        ) {
            self.container = container
            self.codec = codec
            self.duration = duration.roundedForManifest
            self.frameRate = frameRate.roundedForManifest
            self.audio = audio
            self.rotation = rotation
            self.hdr = hdr
            self.playable = picturePlays && Self.playsAsItIs(container: container, codec: codec, audio: audio)
            self.poster = poster.roundedForManifest
            self.indexFirst = indexFirst
            self.delivery = Delivery.decide(
                container: container, codec: codec, audio: audio, indexFirst: indexFirst, picturePlays: picturePlays)
            self.codecs = codecs
            self.matrixIgnored = matrixIgnored ? true : nil
        }
    }

    /// The files beside the thumbnails these facts name (`key` below `prefix`).
    public static func files(of video: VideoInfo?, prefix: String) -> [VideoFile] {
        guard let video else { return [] }
        var files: [VideoFile] = []
        if let rendition = video.rendition {
            files.append(VideoFile(key: prefix + ".rendition", path: rendition.path, bytes: rendition.bytes, sha256: rendition.sha256))
        }
        if let scrub = video.scrub {
            files.append(VideoFile(key: prefix + ".scrub.sprite", path: scrub.sprite, bytes: scrub.spriteBytes, sha256: scrub.spriteSHA256))
            files.append(VideoFile(key: prefix + ".scrub.vtt", path: scrub.vtt, bytes: scrub.vttBytes, sha256: scrub.vttSHA256))
        }
        return files
    }

    /// A video made for browsers from one that does not play everywhere as it is: the same
    /// streams in a fast-start MP4 (`remux`), or H.264 High and AAC (`transcode`). No metadata
    /// of the source is in it; its display matrix is the source's.
    public struct VideoRendition: Codable, Hashable, Sendable {
        /// The MP4, relative to the manifest (`thumbs/XX/<hash>.mp4`, content-addressed).
        public var path: String
        /// How it was made: `remux` or `transcode`.
        public var delivery: VideoInfo.Delivery
        /// RFC 6381 codecs of its streams (`avc1.640028,mp4a.40.2`).
        public var codecs: String
        /// Display width and height (after the display matrix turns it).
        public var width: Int
        public var height: Int
        /// Length in seconds of its video stream (4 decimals).
        public var duration: Double
        /// Size in bytes.
        public var bytes: Int
        /// SHA-256 of the file, lowercase hex.
        public var sha256: String

        /// The `type` of a `<source>` element for it: `video/mp4; codecs="avc1.640028,mp4a.40.2"`.
        public var mimeType: String { "video/mp4; codecs=\"\(codecs)\"" }

        /// Creates a rendition's facts.
        public init(
            path: String, delivery: VideoInfo.Delivery, codecs: String, width: Int, height: Int, duration: Double, bytes: Int,
            sha256: String
        ) {
            self.path = path
            self.delivery = delivery
            self.codecs = codecs
            self.width = width
            self.height = height
            self.duration = duration.roundedForManifest
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    /// What a player shows while the user scrubs a video: one JPEG of tiles (the keyframe at or
    /// before each `index × interval` seconds, in rows of `columns`), and a WebVTT file whose
    /// cues are `<sprite>#xywh=x,y,w,h` (the convention Video.js, Plyr, JW Player and Jellyfin's
    /// trickplay read), both beside the thumbnails.
    public struct ScrubPreview: Codable, Hashable, Sendable {
        /// The sprite sheet (`thumbs/XX/<hash>.jpg`) and its size in bytes and SHA-256.
        public var sprite: String
        public var spriteBytes: Int
        public var spriteSHA256: String
        /// The WebVTT file (`thumbs/XX/<hash>.vtt`, beside the sprite it names) and its size and SHA-256.
        public var vtt: String
        public var vttBytes: Int
        public var vttSHA256: String
        /// Seconds between tiles, and how many there are.
        public var interval: Double
        public var count: Int
        /// Tiles per row of the sheet, and one tile's display size.
        public var columns: Int
        public var tileWidth: Int
        public var tileHeight: Int

        /// What shapes the sheet and its cues, canonically (part of their content address).
        package static var recipe: String {
            "tiles \(tileLongSide) columns \(columnsPerRow) max \(maximumTiles) jpeg q\(quality) keyframes"
        }

        /// The longest side of a tile, tiles per row, the most tiles, and the sheet's JPEG quality.
        package static let tileLongSide = 160
        package static let columnsPerRow = 10
        package static let maximumTiles = 100
        package static let quality = 70

        /// The tiles of a video `duration` seconds long shown at `width` × `height`: a tile
        /// every second, or every `ceil(duration / 100)` seconds past 100 s; the long side of
        /// a tile `tileLongSide`, its aspect the video's.
        package static func geometry(duration: Double, width: Int, height: Int)
            -> (count: Int, interval: Double, tileWidth: Int, tileHeight: Int)
        {
            let interval = max(1, (duration / Double(maximumTiles)).rounded(.up))
            let count = min(maximumTiles, max(1, Int((duration / interval).rounded(.up))))
            let (w, h) = (max(1, width), max(1, height))
            let side = Double(tileLongSide)
            let tile =
                w >= h
                ? (tileLongSide, max(2, Int((side * Double(h) / Double(w)).rounded())))
                : (max(2, Int((side * Double(w) / Double(h)).rounded())), tileLongSide)
            return (count, interval, tile.0, tile.1)
        }

        /// The WebVTT text for a sheet named `sprite` (as the `.vtt` beside it refers to it): one
        /// cue a tile, the last ending at `duration`.
        package static func webVTT(
            sprite: String, count: Int, interval: Double, columns: Int, tileWidth: Int, tileHeight: Int, duration: Double
        )
            -> String
        {
            func time(_ seconds: Double) -> String {
                let milliseconds = Int((seconds * 1000).rounded())
                let (hours, minutes) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60)
                let (whole, fraction) = (milliseconds / 1000 % 60, milliseconds % 1000)
                return String(format: "%02d:%02d:%02d.%03d", hours, minutes, whole, fraction)
            }
            var text = "WEBVTT\n"
            for index in 0..<count {
                let start = Double(index) * interval
                let end = index == count - 1 ? max(duration, start + 0.001) : Double(index + 1) * interval
                let (x, y) = (index % columns * tileWidth, index / columns * tileHeight)
                text += "\n\(time(start)) --> \(time(end))\n\(sprite)#xywh=\(x),\(y),\(tileWidth),\(tileHeight)\n"
            }
            return text
        }

        /// Creates scrub preview facts.
        public init(
            sprite: String, spriteBytes: Int, spriteSHA256: String, vtt: String, vttBytes: Int, vttSHA256: String,
            interval: Double, count: Int, columns: Int, tileWidth: Int, tileHeight: Int
        ) {
            self.sprite = sprite
            self.spriteBytes = spriteBytes
            self.spriteSHA256 = spriteSHA256
            self.vtt = vtt
            self.vttBytes = vttBytes
            self.vttSHA256 = vttSHA256
            self.interval = interval
            self.count = count
            self.columns = columns
            self.tileWidth = tileWidth
            self.tileHeight = tileHeight
        }
    }

    /// Which videos get a rendition (`--video-renditions`).
    public enum VideoRenditions: String, Codable, Hashable, Sendable, CaseIterable {
        /// None: a frontend shows the poster and says when a video does not play.
        case none
        /// Remuxes only (seconds each): containers browsers do not play, index at the end.
        case remux
        /// Remuxes, and transcodes for codecs not every browser plays (HEVC, MPEG-4 Part 2, ...).
        case auto

        /// What a build does without `--video-renditions`.
        public static let `default` = Self.auto

        /// Whether a video of this delivery gets a rendition.
        public func makes(_ delivery: VideoInfo.Delivery?) -> Bool {
            switch (self, delivery) {
            case (.auto, .remux), (.auto, .transcode), (.remux, .remux): true
            default: false
            }
        }
    }

    /// A file beside the thumbnails that a video's facts name: a Motion Photo's MP4, a rendition,
    /// a scrub sprite sheet or its WebVTT file. `key` says where (`motion`, `video.rendition`,
    /// `motion.video.scrub.vtt`, ...).
    public struct VideoFile: Hashable, Sendable {
        public var key: String
        public var path: String
        public var bytes: Int
        public var sha256: String
    }

    /// How an animated image moves.
    public struct AnimationInfo: Codable, Hashable, Sendable {
        /// Number of frames (at least 2).
        public var frames: Int
        /// One pass through every frame, in seconds (4 decimals): the sum of the frame delays.
        public var duration: Double
        /// How many times the animation plays; 0 for forever.
        public var loop: Int

        /// Creates animation facts.
        public init(frames: Int, duration: Double, loop: Int) {
            self.frames = frames
            self.duration = duration.roundedForManifest
            self.loop = loop
        }
    }

    /// The moving part of a photo: an Apple Live Photo's MOV, or the MP4 inside a Google or
    /// Samsung Motion Photo. A frontend plays it on press or hover and shows the photo otherwise.
    public struct MotionPart: Codable, Hashable, Sendable {
        /// Where the motion comes from.
        public enum Source: String, Codable, Hashable, Sendable {
            /// A Live Photo's MOV beside the photo, paired by Apple's content identifier.
            case live
            /// The MP4 embedded in a Motion Photo's JPEG, extracted into OUT_DIR.
            case embedded
        }

        /// Where the motion comes from.
        public var source: Source
        /// `embedded`: the extracted MP4, relative to the manifest (`thumbs/XX/<hash>.mp4`,
        /// content-addressed, beside the thumbnails). nil for `live`.
        public var path: String?
        /// `live`: the MOV's path relative to the source directory (served like an original,
        /// from `settings.originalURL`). nil for `embedded`.
        public var original: String?
        /// Base64 of `original`'s bytes when they are not valid UTF-8 (see `RawPath`).
        public var rawOriginal: String?
        /// Size of the motion file in bytes.
        public var bytes: Int
        /// SHA-256 of the motion file, lowercase hex.
        public var sha256: String
        /// The motion's video facts.
        public var video: VideoInfo
        /// Display width of the motion video (after rotation).
        public var width: Int
        /// Display height of the motion video (after rotation).
        public var height: Int

        /// Creates a motion part.
        public init(
            source: Source, path: String? = nil, original: String? = nil, rawOriginal: String? = nil, bytes: Int,
            sha256: String, video: VideoInfo, width: Int, height: Int
        ) {
            self.source = source
            self.path = path
            self.original = original
            self.rawOriginal = rawOriginal
            self.bytes = bytes
            self.sha256 = sha256
            self.video = video
            self.width = width
            self.height = height
        }
    }

    /// How a RAW file's thumbnails were made (its `image` is the sensor's picture as LibRaw
    /// renders it, oriented).
    public struct RawInfo: Codable, Hashable, Sendable {
        /// Where the thumbnails' pixels come from.
        public enum Rendering: String, Codable, Hashable, Sendable {
            /// The largest JPEG (or bitmap) preview the camera embedded, turned by the RAW's orientation.
            case preview
            /// The sensor's data demosaiced by LibRaw (half size when that covers the thumbnails).
            case demosaic
        }

        /// Where the thumbnails' pixels come from.
        public var rendering: Rendering
        /// The embedded preview's width and height, oriented; absent when the file has none of
        /// the sensor's aspect ratio (within 2 %).
        public var previewWidth: Int?
        public var previewHeight: Int?

        /// Creates RAW facts.
        public init(rendering: Rendering, previewWidth: Int? = nil, previewHeight: Int? = nil) {
            self.rendering = rendering
            self.previewWidth = previewWidth
            self.previewHeight = previewHeight
        }
    }

    /// The RAW file shot together with a JPEG or HEIF (same folder, same name but the
    /// extension), when `settings.rawPairs` is `merge`: the item shows the camera's JPEG, and a
    /// frontend offers this RAW as the original to download or edit.
    public struct RawFile: Codable, Hashable, Sendable {
        /// The RAW's path relative to the source directory (served like an original, from
        /// `settings.originalURL`).
        public var original: String
        /// Base64 of `original`'s bytes when they are not valid UTF-8 (see `RawPath`).
        public var rawOriginal: String?
        /// The RAW's format (`dng`, `cr2`, `nef`, ...), as its own item's `image.format` would be.
        public var format: String
        /// Size of the RAW file in bytes.
        public var bytes: Int
        /// SHA-256 of the RAW file, lowercase hex.
        public var sha256: String
        /// The sensor's picture, oriented (LibRaw's output size).
        public var width: Int
        public var height: Int

        /// Creates the facts of a paired RAW file.
        public init(
            original: String, rawOriginal: String? = nil, format: String, bytes: Int, sha256: String, width: Int, height: Int
        ) {
            self.original = original
            self.rawOriginal = rawOriginal
            self.format = format
            self.bytes = bytes
            self.sha256 = sha256
            self.width = width
            self.height = height
        }
    }

    /// What sets one item apart by kind: the kind and the facts that go with it. Kept together
    /// so the build, the state index and pages carry one value.
    public struct Media: Codable, Hashable, Sendable {
        /// The item's kind.
        public var kind: Kind
        /// Set for `video`.
        public var video: VideoInfo?
        /// Set for `animated`.
        public var animation: AnimationInfo?
        /// Set for a photo with a moving part.
        public var motion: MotionPart?
        /// Set for a RAW photo.
        public var raw: RawInfo?
        /// Set for a JPEG or HEIF photo shown in place of the RAW shot with it.
        public var rawFile: RawFile?

        /// A still photo.
        public static let photo = Media(kind: .photo)

        /// The files beside the thumbnails its kind adds: a Motion Photo's extracted MP4, and the
        /// renditions, sprite sheets and WebVTT files of its video and its motion.
        public var videoFiles: [VideoFile] {
            let extracted = motion.flatMap { motion in
                motion.path.map { VideoFile(key: "motion", path: $0, bytes: motion.bytes, sha256: motion.sha256) }
            }
            return (extracted.map { [$0] } ?? []) + Manifest.files(of: video, prefix: "video")
                + Manifest.files(of: motion?.video, prefix: "motion.video")
        }

        /// Creates media facts.
        public init(
            kind: Kind, video: VideoInfo? = nil, animation: AnimationInfo? = nil, motion: MotionPart? = nil, raw: RawInfo? = nil,
            rawFile: RawFile? = nil
        ) {
            self.kind = kind
            self.video = video
            self.animation = animation
            self.motion = motion
            self.raw = raw
            self.rawFile = rawFile
        }
    }
}
