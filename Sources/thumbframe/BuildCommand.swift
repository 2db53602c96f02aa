// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    public import ArgumentParser
    import Foundation
    import ThumbframeCore
    import ThumbframeImaging
    public import ThumbframeManifest

    extension ThumbnailRecipe: ExpressibleByArgument {
        public init?(argument: String) {
            guard let recipe = try? ThumbnailRecipe(parsing: argument) else { return nil }
            self = recipe
        }

        /// For `@Option(transform:)`: a value that does not parse says why.
        static func argument(_ text: String) throws -> ThumbnailRecipe {
            do { return try ThumbnailRecipe(parsing: text) } catch { throw ValidationError(error.localizedDescription) }
        }
    }

    /// `thumbframe build SOURCE_DIR --out OUT_DIR`: the main job.
    struct BuildCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "build",
            abstract: "Write thumbnails and manifest.json for every image under SOURCE_DIR.",
            discussion:
                "Prints the manifest's path on stdout. Exit 0 when every file was processed, 1 when the manifest was written but some files failed."
        )

        @Argument(help: "The directory of originals.")
        var source: String

        @Option(name: .long, help: "Output directory for manifest.json and thumbs/.")
        var out: String

        @Option(
            help: ArgumentHelp(
                "Read options from a JSON object whose keys are these long option names (and \"source\"); the command line wins.",
                valueName: "file"))
        var config: String?

        @Option(
            name: .customLong("thumb"),
            help: ArgumentHelp(
                "A thumbnail recipe NAME=WxH[:cover|:fit][:jpeg|:webp|:avif][:qNN]; repeat for more. Replaces the defaults "
                    + ThumbnailRecipe.defaults.map { "\($0.name)=\($0.canonicalRecipe)" }.joined(separator: ", ") + ".",
                valueName: "recipe"),
            transform: ThumbnailRecipe.argument)
        var thumbs: [ThumbnailRecipe] = []

        @Option(
            name: .customLong("viewport"),
            help: ArgumentHelp(
                "A viewport NAME=WxH@S in points and screen scale; repeat for more. Replaces the defaults phone=390x844@3, phone-landscape=844x390@3, tablet=820x1180@2 and desktop=1440x900@2.",
                valueName: "viewport"),
            transform: Viewport.argument)
        var viewports: [Viewport] = []

        @Option(help: "Layout and zoom rules: jx3 (JXPhotoBrowser 3), jx4, photoswipe (PhotoSwipe 5) or pixel.")
        var preset: LayoutPreset = .jx3

        @Option(
            name: .customLong("original-url"),
            help: ArgumentHelp(
                "Where the originals are served (a URL prefix the item paths are appended to), for a lightbox's full zoom; photoswipe layouts are then the original's.",
                valueName: "prefix"))
        var originalURL: String?

        @Option(
            name: .customLong("raw-pairs"),
            help: ArgumentHelp(
                "A RAW file and the JPEG or HEIF beside it with the same name: merge (one item, the JPEG shown, the RAW as its rawFile) or separate (two items).",
                valueName: "merge|separate"))
        var rawPairs: Manifest.RawPairs = .merge

        @Option(
            help: ArgumentHelp(
                "Renditions past the preview for zooming: none (a lightbox zooms the preview), ladder (fit renditions doubling up to \(ZoomLadder.defaultMaxSide) px a side, where a viewport's maximum zoom needs them) or tiles (the ladder, and DeepZoom pyramids for photos of \(Manifest.TileSettings.defaultMinPixels / 1_000_000) MP and more). The ladder multiplies a photo library's thumbnail bytes by about 10 and its build time by 2.7.",
                valueName: "none|ladder|tiles"))
        var zoom: ZoomRenditions = .default

        @Option(
            name: .customLong("ladder-max-side"),
            help: ArgumentHelp(
                "The zoom ladder's largest side: photos get fit renditions doubling from the largest fit thumbnail up to this many pixels a side, where a viewport's maximum zoom needs them and the original has the pixels (0: none; default: \(ZoomLadder.defaultMaxSide) with --zoom ladder or tiles, else 0).",
                valueName: "PIXELS"))
        var ladderMaxSide: Int?

        @Option(
            name: .customLong("tile-pixels"),
            help: ArgumentHelp(
                "Deep-zoom tiles (DeepZoom .dzi pyramids) for photos of at least this many pixels whose zoom renditions fall short of a viewport's maximum zoom (0: no tiles; default: \(Manifest.TileSettings.defaultMinPixels) with --zoom tiles, else 0).",
                valueName: "PIXELS"))
        var tilePixels: Int?

        @Option(
            help: ArgumentHelp(
                "HDR photos (iPhone HEICs, Ultra HDR JPEGs, PQ and HLG stills): gain-map (the display thumbnail and zoom renditions are JPEGs with the SDR picture and a gain map, shown bright on HDR screens) or sdr (every file SDR).",
                valueName: "gain-map|sdr"))
        var hdr: Manifest.HDRRenditions = .gainMap

        @Option(
            help: ArgumentHelp(
                "Stacks a frontend shows as one cell: all (bursts the camera marked, identical copies, and frames of one camera seconds apart that look alike), bursts (only what the camera marked) or none.",
                valueName: "all|bursts|none"))
        var stacks: Manifest.StackMode = .all

        @Option(
            help: ArgumentHelp(
                "Publish where photos were taken, coarsely: none (the default: no location anywhere), city (the nearest city of 15 000 people or more, from an offline GeoNames table), region (its state or province) or cell:KM (a grid cell about KM km a side, 1-1000). Never the GPS position itself.",
                valueName: "none|city|region|cell:KM"))
        var locations: Manifest.Locations = .none

        @Option(
            help: ArgumentHelp(
                "Process only part K of N of the library (K from 0), for `thumbframe merge`; auto/N takes K from JOB_COMPLETION_INDEX (Kubernetes) or SLURM_ARRAY_TASK_ID (Slurm).",
                valueName: "K/N"))
        var shard: String?

        @Flag(
            help:
                "Also write a web viewer into OUT_DIR: index.html (its script, style sheet and first screen inline) with its .gz and .br, and for libraries up to 20 000 photos thumbframe-viewer-data.js (so it works from file://; any static server serves it). A viewer file there that thumbframe did not write stops the build (exit 73), even with -q."
        )
        var viewer = false

        @Option(help: "Sections: directory (one per folder), date (one per capture day) or none.")
        var sections: Manifest.SectionMode = .directory

        @Option(help: "Order inside a section: name (natural order of paths) or date (capture time).")
        var order: Manifest.ItemOrder = .name

        @Option(
            name: .customLong("exclude"),
            help: ArgumentHelp(
                "Leave out files and directories: a pattern without / matches any name (@eaDir, *.tmp), one with / the path below SOURCE_DIR (2019/private); repeat for more.",
                valueName: "glob"))
        var exclude: [String] = []

        @Option(name: [.short, .long], help: "Files processed at once (default: the number of cores).")
        var jobs: Int?

        @Option(name: .customLong("max-pixels"), help: "Fail images with more pixels than this, from their header.")
        var maxPixels: Int = BuildOptions.defaultMaxPixels

        @Option(
            name: .customLong("max-file-bytes"),
            help: ArgumentHelp("Fail files larger than this without reading them (bytes, or with K, M, G: 512M).", valueName: "size"))
        var maxFileBytes = ByteCount(bytes: ResourceLimits().maxFileBytes)

        @Option(
            name: .customLong("max-decode-bytes"),
            help: ArgumentHelp(
                "Fail images whose decoder would hold more than this (GIF frames, interlaced PNG, progressive JPEG, HEIF; bytes, or with K, M, G: 1G).",
                valueName: "size"))
        var maxDecodeBytes = ByteCount(bytes: ResourceLimits().maxDecodeBytes)

        @Option(name: .customLong("decode-timeout"), help: "Seconds one image's decode may take before it fails (0: no limit).")
        var decodeTimeout: Double = ResourceLimits().decodeTimeout

        @Option(
            name: .customLong("video-renditions"),
            help:
                "MP4s every browser plays, for videos that do not play everywhere as they are: none, remux (the same streams in a fast-start MP4: other containers, an index at the end) or auto (remux, and transcode HEVC, MPEG-4 Part 2, MPEG-2, ... to H.264 High + AAC)."
        )
        var videoRenditions: Manifest.VideoRenditions = .default

        @Option(name: .customLong("video-max-side"), help: "A transcoded video's long side at most this many pixels (never enlarged).")
        var videoMaxSide: Int = RenditionSettings.defaultMaxSide

        @Option(name: .customLong("video-timeout"), help: "Seconds one video's rendition may take before it is given up (0: no limit).")
        var videoTimeout: Double = ResourceLimits().videoTimeout

        @Flag(
            name: .customLong("allow-shrink"),
            help: "Write the manifest even if it drops more than half of the previous one's items (exit 69 otherwise).")
        var allowShrink = false

        @Flag(name: .customLong("follow-symlinks"), help: "Follow symbolic links (never out of SOURCE_DIR).")
        var followSymlinks = false

        @Flag(help: "Ignore the previous manifest: process every file and rewrite every thumbnail.")
        var force = false

        @Flag(help: "Re-hash files whose size and modification time are unchanged before reusing them.")
        var verify = false

        @Flag(help: "Write nothing: print what a build would change on stdout and exit 1, or exit 0 when up to date.")
        var check = false

        @Flag(
            help: """
                With --check: one JSON document on stdout (upToDate, manifest, added, changed, removed, \
                thumbnails, failing) instead of lines.
                """)
        var json = false

        @Option(
            name: .customLong("fail-on"),
            help:
                "Exit 1 when any file failed (any), only when a file failed that had not failed in the previous build (new: known old failures are accepted), or never."
        )
        var failOn: FailOn = .any

        @Flag(
            name: [.short, .long],
            help:
                "Print nothing on stdout (not the manifest's path), and on stderr only errors and the failures that decide the exit code (--fail-on; with new: only first-time failures), so cron mails exactly when the exit code is 1."
        )
        var quiet = false

        @Flag(
            inversion: .prefixedNo,
            help:
                "Show a progress line on stderr (files done/total, rate, ETA): redrawn in place on a terminal, a plain line every 5 s into a file or pipe; default: only when stderr is a terminal."
        )
        var progress: Bool?

        @Option(name: .customLong("log-format"), help: "Diagnostics on stderr as text or JSON lines.")
        var logFormat: LogFormat = .text

        func validate() throws {
            if json && !check { throw ValidationError("--json goes with --check (a build's own output is the manifest)") }
            do {
                try options().validate()
            } catch {
                throw ValidationError(error.localizedDescription)
            }
        }

        func options() throws(ThumbframeError) -> BuildOptions {
            var options = BuildOptions(
                source: source, output: out, thumbnails: thumbs.isEmpty ? ThumbnailRecipe.defaults : thumbs,
                viewports: viewports.isEmpty ? Viewport.defaults : viewports, preset: preset, sections: sections,
                order: order, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, maxPixels: maxPixels)
            options.limits.maxFileBytes = maxFileBytes.bytes
            options.limits.maxDecodeBytes = maxDecodeBytes.bytes
            options.limits.decodeTimeout = decodeTimeout
            options.limits.videoTimeout = videoTimeout
            options.renditions = RenditionSettings(mode: videoRenditions, maxSide: videoMaxSide)
            options.allowShrink = allowShrink
            options.originalURL = originalURL
            options.rawPairs = rawPairs
            options.hdr = hdr
            options.stacks = stacks
            options.locations = locations
            options.ladderMaxSide = ladderMaxSide ?? zoom.ladderMaxSide
            options.tilePixels = tilePixels ?? zoom.tilePixels
            options.viewer = viewer
            options.shard = try shard.map { text throws(ThumbframeError) in
                try Shard.parse(text, environment: ProcessInfo.processInfo.environment)
            }
            options.followSymlinks = followSymlinks
            options.exclude = try ExcludeRules(exclude)
            options.force = force
            options.verify = verify
            options.check = check
            return options
        }

        func run() async throws {
            let reporter = Reporter(format: logFormat, quiet: quiet, progress: progress, deciding: failOn)
            let cancellation = CancellationFlag()
            let signals = SignalTrap(cancellation: cancellation, reporter: reporter)
            let report: BuildReport
            let resolved: BuildOptions
            do {
                resolved = try options()
                let builder = Builder(options: resolved, cancellation: cancellation, events: reporter.handle)
                report = try await builder.run()
            } catch {
                reporter.finish()
                throw cliExitCode(for: error, reporter: reporter)
            }
            reporter.finish()
            withExtendedLifetime(signals) {}
            if check {
                if json {
                    try emit(CheckDocument(report), json: true) { "" }
                } else {
                    for line in report.stale { print(TerminalText.safe(line)) }
                }
                reporter.note(report.stale.isEmpty ? "up to date" : "stale")
                if !report.stale.isEmpty { throw ExitCode(1) }
                return
            }
            if let shard = resolved.shard {
                reporter.note(
                    "shard \(shard.index)/\(shard.count): \(report.items) items, \(report.failures.count) failed, "
                        + "\(report.reused) reused, \(report.thumbnailsWritten) thumbnails written; run `thumbframe merge --out \(out) "
                        + "--shards \(shard.count)` when every shard is done")
                if failOn.fails(report) { throw ExitCode(1) }
                return
            }
            // Quiet means silent on a night with nothing to say: cron mails stdout too.
            if !quiet { print(report.manifestPath) }
            reporter.summary(report)
            if failOn.fails(report) { throw ExitCode(1) }
        }
    }

    /// `--fail-on`: which failed files make a build exit 1 (the manifest is written either way).
    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        /// Any failure (the default).
        case any
        /// Only failures that are not the previous build's: a CI job accepts the known broken files
        /// of a library and still notices a new one.
        case new
        /// None: failures are listed in the manifest, the exit code is 0.
        case never

        /// Whether a failure (new to this run or not) is one that makes the build exit 1.
        func counts(new: Bool) -> Bool {
            switch self {
            case .any: true
            case .new: new
            case .never: false
            }
        }

        func fails(_ report: BuildReport) -> Bool {
            switch self {
            case .any: !report.failures.isEmpty
            case .new: report.newFailures > 0
            case .never: false
            }
        }
    }

    /// Turns SIGINT, SIGTERM and SIGHUP (the terminal or SSH session closed) into a cancellation of
    /// the build: no file starts, decodes in flight
    /// are killed within a tile, and the previous manifest stays. A decode libvips cannot interrupt
    /// (inside one libjpeg call) does not hold the signal: after `grace` the process exits anyway,
    /// which is as safe as SIGKILL at that moment (atomic writes, journal, kernel-held lock).
    final class SignalTrap {
        static let grace = DispatchTimeInterval.milliseconds(1500)

        private var sources: [any DispatchSourceSignal] = []

        init(cancellation: CancellationFlag, reporter: Reporter) {
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    reporter.note("stopping: no new file starts, decodes in progress are stopped")
                    cancellation.cancel(signal: signalNumber)
                    DispatchQueue.global().asyncAfter(deadline: .now() + Self.grace) {
                        reporter.error(
                            ThumbframeError.interrupted(signal: signalNumber).localizedDescription,
                            exitCode: 128 + signalNumber)
                        _exit(128 + signalNumber)
                    }
                }
                source.resume()
                sources.append(source)
            }
        }

        deinit {
            for source in sources { source.cancel() }
        }
    }

    /// `build --check --json`: what a build would change, one document for scripts.
    struct CheckDocument: Encodable {
        var upToDate: Bool
        /// Why the whole manifest would be written again; absent when it would not be.
        var manifest: String?
        var added: [String]
        var changed: [String]
        var removed: [String]
        var thumbnails: [String]
        /// The files that fail, as the manifest lists them (a failure alone does not make a build stale).
        var failing: [Manifest.Failure]

        init(_ report: BuildReport) {
            let staleness = report.staleness
            upToDate = report.stale.isEmpty
            (manifest, added, changed, removed, thumbnails) = (
                staleness.manifest, staleness.added, staleness.changed, staleness.removed, staleness.thumbnails
            )
            failing = report.failures
        }
    }
#endif
