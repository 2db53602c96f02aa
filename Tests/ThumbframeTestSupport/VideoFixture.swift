import Foundation

/// A video for a fixture library, made by the `ffmpeg` program (the tests' oracle and fixture
/// maker; the product reads videos through FFmpeg's libraries only). Pictures come from one of
/// FFmpeg's test sources, so frames have known content.
public struct VideoFixture: Sendable {
    /// An FFmpeg lavfi source: `testsrc2` (moving colour bars), or `color=c=0x808080` (flat).
    public var source = "testsrc2"
    public var width = 320
    public var height = 240
    public var seconds = 2.0
    public var rate = 30
    /// `libx264`, `libx265`, `libvpx-vp9`, `mpeg4`, ...
    public var codec = "libx264"
    public var pixelFormat = "yuv420p"
    /// An AAC (or, for WebM, Opus) sine tone beside the picture.
    public var audio = false
    /// Seconds of black before the source (a fade from black at the start).
    public var black = 0.0
    /// The display matrix's `rotate` tag (degrees, as ffmpeg writes it), set on a stream copy.
    public var rotate: Int?
    /// An HDR transfer to tag, with BT.2020 primaries and matrix: `arib-std-b67` (HLG) or `smpte2084` (PQ).
    public var transfer: String?
    /// Extra output options (e.g. `-g 1` for a keyframe on every frame).
    public var options: [String] = []

    public init() {}

    /// A copy with changes.
    public func with(_ change: (inout VideoFixture) -> Void) -> VideoFixture {
        var copy = self
        change(&copy)
        return copy
    }
}

/// Why a video fixture could not be made.
public struct VideoFixtureError: Error, CustomStringConvertible {
    public var description: String
}

extension Fixtures {
    /// The `ffmpeg` program, or nil (scripts/bootstrap installs it).
    public static let ffmpeg = Processes.tool("ffmpeg")

    /// Writes each video below `source` (directories made as needed; a file already there is kept).
    public static func makeVideos(_ source: String, _ videos: [(String, VideoFixture)]) async throws {
        guard let ffmpeg else { throw VideoFixtureError(description: "needs the ffmpeg program (scripts/bootstrap installs it)") }
        for (relative, video) in videos {
            let path = source + "/" + relative
            guard !FileManager.default.fileExists(atPath: path) else { continue }
            try makeDirectory((path as NSString).deletingLastPathComponent)
            let picture =
                video.source + (video.source.contains("=") ? ":" : "=")
                + "size=\(video.width)x\(video.height):rate=\(video.rate):duration=\(video.seconds)"
            var arguments = ["-loglevel", "error", "-y", "-f", "lavfi", "-i", picture]
            var filters = "[0:v]format=\(video.pixelFormat)[v]"
            if video.black > 0 {
                arguments += [
                    "-f", "lavfi", "-i",
                    "color=c=black:size=\(video.width)x\(video.height):rate=\(video.rate):duration=\(video.black)",
                ]
                filters = "[1:v][0:v]concat=n=2:v=1,format=\(video.pixelFormat)[v]"
            }
            if video.audio {
                arguments += ["-f", "lavfi", "-i", "sine=frequency=440:duration=\(video.seconds + video.black)"]
            }
            arguments += ["-filter_complex", filters, "-map", "[v]"]
            if video.audio { arguments += ["-map", "\(video.black > 0 ? 2 : 1):a", "-c:a", path.hasSuffix(".webm") ? "libopus" : "aac"] }
            arguments += ["-c:v", video.codec]
            if video.codec == "libx265" { arguments += ["-tag:v", "hvc1", "-x265-params", "log-level=error"] }
            if let transfer = video.transfer {
                arguments += ["-color_trc", transfer, "-color_primaries", "bt2020", "-colorspace", "bt2020nc"]
            }
            arguments += video.options
            let made = video.rotate == nil ? path : path + ".unrotated." + (path as NSString).pathExtension
            let run = try await Processes.run(ffmpeg, arguments + [made])
            guard run.status == 0 else { throw VideoFixtureError(description: "ffmpeg could not make \(relative): \(run.stderr)") }
            if let rotate = video.rotate {
                // ffmpeg 5.1 writes the display matrix from the `rotate` tag on a stream copy only.
                let copied = try await Processes.run(
                    ffmpeg, ["-loglevel", "error", "-y", "-i", made, "-c", "copy", "-metadata:s:v:0", "rotate=\(rotate)", path])
                try? FileManager.default.removeItem(atPath: made)
                guard copied.status == 0 else {
                    throw VideoFixtureError(description: "ffmpeg could not rotate \(relative): \(copied.stderr)")
                }
            }
        }
    }

    /// The first frame of a video as ffmpeg's own player pipeline shows it (autorotated, RGB),
    /// written as a PNG: the oracle a poster is compared with.
    public static func ffmpegFrame(_ video: String, at seconds: Double, to png: String) async throws {
        guard let ffmpeg else { throw VideoFixtureError(description: "needs the ffmpeg program") }
        let run = try await Processes.run(
            ffmpeg, ["-loglevel", "error", "-y", "-ss", String(seconds), "-i", video, "-frames:v", "1", "-pix_fmt", "rgb24", png])
        guard run.status == 0 else { throw VideoFixtureError(description: "ffmpeg could not decode \(video): \(run.stderr)") }
    }
}
