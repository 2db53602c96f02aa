import Foundation
package import ThumbframeImaging
package import ThumbframeManifest

/// Everything `thumbframe build` is asked to do.
package struct BuildOptions: Sendable, Equatable {
    /// The directory of originals.
    package var source: String
    /// Where `manifest.json` and `thumbs/` go.
    package var output: String
    /// Thumbnail recipes; names must be unique.
    package var thumbnails: [ThumbnailRecipe]
    /// Viewports to lay every item out for; names must be unique.
    package var viewports: [Viewport]
    /// Layout and zoom rules.
    package var preset: LayoutPreset
    /// `--original-url`: where the originals are served, for a lightbox's full zoom.
    package var originalURL: String?
    /// `--raw-pairs`: a RAW and the JPEG or HEIF beside it of the same name, one item or two.
    package var rawPairs = Manifest.RawPairs.merge
    /// `--ladder-max-side` (or `--zoom`'s): renditions past the display thumbnail up to this
    /// many pixels a side, for zooming (0: none).
    package var ladderMaxSide = ZoomRenditions.default.ladderMaxSide
    /// `--tile-pixels` (or `--zoom`'s): deep-zoom tiles for photos of at least this many pixels
    /// that the ladder cannot keep sharp (0: none).
    package var tilePixels = ZoomRenditions.default.tilePixels
    /// `--hdr`: an HDR photo's lightbox renditions with its gain map, or SDR.
    package var hdr = Manifest.HDRRenditions.gainMap
    /// `--stacks`: which photos are gathered into stacks.
    package var stacks = Manifest.StackMode.all
    /// `--locations`: how coarsely photos' places are published (none: not at all).
    package var locations = Manifest.Locations.none
    /// Sectioning.
    package var sections: Manifest.SectionMode
    /// Order inside sections.
    package var order: Manifest.ItemOrder
    /// Files processed at once.
    package var jobs: Int
    /// What one file may cost (bytes, pixels, decoder memory, scans, time) before it fails.
    package var limits = ResourceLimits()
    /// `--video-renditions`, `--video-max-side`: which videos get an MP4 every browser plays.
    package var renditions = RenditionSettings()
    /// Images with more pixels than this fail from their header, before any decode.
    package var maxPixels: Int {
        get { limits.maxPixels }
        set { limits.maxPixels = newValue }
    }
    /// Write the manifest even when it drops more than half of the previous one's items.
    package var allowShrink = false
    /// `--shard K/N`: process only this part of the library, for a later `merge`.
    package var shard: Shard?
    /// `--viewer`: also write the web viewer (index.html, one script, one style sheet).
    package var viewer = false
    /// Follow symbolic links (never out of the source directory).
    package var followSymlinks = false
    /// `--exclude GLOB`: names and paths below the source directory that are not photos.
    package var exclude = ExcludeRules()
    /// Ignore the previous manifest and rewrite every thumbnail.
    package var force = false
    /// Re-hash files whose size and modification time are unchanged before reusing them.
    package var verify = false
    /// Write nothing; report what a build would change.
    package var check = false

    /// Files processed at once: at least one, at most 1 024 (each holds its decode in memory).
    package static let jobsRange = 1...1024
    /// The longest `--decode-timeout`: a day.
    package static let maximumDecodeTimeout = 86_400.0

    /// The default ceiling: 16383², the largest WebP.
    package static let defaultMaxPixels = 268_402_689

    /// Creates options with the defaults of the specification.
    package init(
        source: String, output: String, thumbnails: [ThumbnailRecipe] = ThumbnailRecipe.defaults,
        viewports: [Viewport] = Viewport.defaults, preset: LayoutPreset = .jx3,
        sections: Manifest.SectionMode = .directory, order: Manifest.ItemOrder = .name,
        jobs: Int = ProcessInfo.processInfo.activeProcessorCount, maxPixels: Int = defaultMaxPixels
    ) {
        self.source = source
        self.output = output
        self.thumbnails = thumbnails
        self.viewports = viewports
        self.preset = preset
        self.sections = sections
        self.order = order
        self.jobs = jobs
        self.limits.maxPixels = maxPixels
    }

    /// The manifest's `settings` for these options.
    /// The source directory's name: the root section's title.
    var sourceTitle: String { (source as NSString).lastPathComponent }

    package var settings: Manifest.Settings {
        Manifest.Settings(
            preset: preset, sections: sections, order: order, viewports: viewports, thumbnails: thumbnails,
            originalURL: originalURL, rawPairs: rawPairs, ladderMaxSide: ladderMaxSide,
            tilePixels: tilePixels, hdr: hdr, stacks: stacks, locations: locations)
    }

    /// The scheme of a path written as a URL (`s3://…`, `gs://…`, `https://…`), or nil.
    package static func urlScheme(_ path: String) -> String? {
        guard let range = path.range(of: "://") else { return nil }
        let scheme = path[..<range.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        return String(scheme)
    }

    /// Rejects impossible combinations with a sentence for the user.
    package func validate() throws(ThumbframeError) {
        guard !thumbnails.isEmpty else { throw .invalidOptions("at least one --thumb is needed") }
        // An object store's address is not a folder: `s3://b/p` would be made as ./s3:/b/p.
        if let scheme = Self.urlScheme(output) {
            throw .invalidOptions(
                "--out '\(output)' is a \(scheme):// address, not a folder: this version writes to a local folder only "
                    + "(it makes no folder named '\(scheme):'); build into a folder and copy it to the store")
        }
        if let originalURL, originalURL.isEmpty { throw .invalidOptions("--original-url needs a URL prefix") }
        if check, force {
            // --force is not a change of the library or the settings: a check under it would
            // call every unchanged file "changed".
            throw .invalidOptions("--check tells what an incremental build would change; --force rebuilds everything regardless: use one")
        }
        if shard != nil, check || viewer {
            throw .invalidOptions("--shard writes no manifest: --check and --viewer belong to the build or merge of the whole library")
        }
        var seen = Set<String>()
        for recipe in thumbnails where !seen.insert(recipe.name).inserted {
            throw .invalidOptions("thumbnail name '\(recipe.name)' is given twice")
        }
        // Names the zoom ladder and the deep-zoom tiles take in every item's thumbnails.
        for recipe in thumbnails where recipe.name == Manifest.tilesName || recipe.name.hasPrefix("zoom-") {
            throw .invalidOptions("thumbnail name '\(recipe.name)' is reserved ('tiles' and 'zoom-…' name the zoom renditions)")
        }
        var viewportNames = Set<String>()
        for viewport in viewports where !viewportNames.insert(viewport.name).inserted {
            throw .invalidOptions("viewport name '\(viewport.name)' is given twice")
        }
        // Every number has a sane range, checked before anything is opened or created: a value
        // past it is a one-line usage error, never an overflow deeper in.
        func within(_ value: Int, _ range: ClosedRange<Int>, _ option: String) throws(ThumbframeError) {
            guard range.contains(value) else {
                throw .invalidOptions("\(option) must be from \(range.lowerBound) to \(range.upperBound), not \(value)")
            }
        }
        try within(jobs, Self.jobsRange, "--jobs")
        try within(maxPixels, 1...(1 << 40), "--max-pixels")
        try within(ladderMaxSide, 0...ZoomLadder.largestMaxSide, "--ladder-max-side")
        try within(tilePixels, 0...(1 << 40), "--tile-pixels")
        try within(limits.maxFileBytes, 1...(1 << 50), "--max-file-bytes")
        try within(limits.maxDecodeBytes, 1...(1 << 50), "--max-decode-bytes")
        try within(renditions.maxSide, 16...8192, "--video-max-side")
        for (timeout, option) in [(limits.decodeTimeout, "--decode-timeout"), (limits.videoTimeout, "--video-timeout")] {
            guard timeout >= 0, timeout <= Self.maximumDecodeTimeout else {
                throw .invalidOptions("\(option) must be 0 (none) or a number of seconds up to \(Int(Self.maximumDecodeTimeout)) (a day)")
            }
        }
    }
}

/// What a build did, for the exit code and the closing line on stderr.
package struct BuildReport: Sendable, Equatable {
    /// Absolute path of the manifest.
    package var manifestPath: String
    /// Items in the manifest.
    package var items: Int
    /// Sections in the manifest.
    package var sections: Int
    /// Files that failed.
    package var failures: [Manifest.Failure]
    /// Thumbnails encoded by this run.
    package var thumbnailsWritten: Int
    /// Whether manifest.json was (re)written; false when its bytes would not change.
    package var manifestWritten: Bool
    /// Items taken from the previous manifest without opening their files.
    package var reused: Int = 0
    /// Thumbnail files removed because no item names them any more.
    package var pruned: Int = 0
    /// Files under `thumbs/` that thumbframe did not write and so left alone.
    package var foreign: Int = 0
    /// Sections whose pages were assembled this run (unchanged sections keep theirs).
    package var sectionsAssembled: Int = 0
    /// Failures of files that had not failed in the previous build (new or changed files, items
    /// that fail now), and walk failures when they are not the previous build's: what
    /// `--fail-on new` exits 1 for.
    package var newFailures: Int = 0
    /// Always 0, kept in the JSON summary for its readers: failures were decoded a second time
    /// when decodes shared a process and their libvips messages could mix; each worker decodes
    /// one file at a time now.
    package var rediagnosed: Int = 0
    /// With `check`: what a build would change, one line each (empty when up to date).
    package var stale: [String] = []
    /// With `check`: the same by kind, for `--check --json`.
    package var staleness = Staleness()
    /// Files the walk met that are neither items nor failures, by kind (video, audio, sidecar, other).
    package var skipped: [String: Int] = [:]
    /// The manifest's thumbnails and bytes per recipe (empty for `--check` and a shard).
    package var recipeBytes: [RecipeBytes] = []
}

extension BuildReport {
    /// What `--check` found a build would change, by kind; paths as the manifest gives them.
    package struct Staleness: Sendable, Encodable, Equatable {
        /// Why the manifest as a whole would be written again (none yet, other settings or
        /// another thumbframe, a manifest changed outside it), or nil.
        package var manifest: String?
        package var added: [String] = []
        package var changed: [String] = []
        package var removed: [String] = []
        /// Items whose thumbnails are missing or no longer hold their recorded bytes.
        package var thumbnails: [String] = []
    }
}
