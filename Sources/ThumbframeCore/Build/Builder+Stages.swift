import Foundation
import ThumbframeImaging
import ThumbframeManifest

/// The stages of `Builder.run` that are a few lines each.
extension Builder {
    /// Starts the decoders with libvips' worker threads per image: files in flight × threads
    /// should not exceed the cores; scripts/bench --sweep measured one thread per image with one
    /// file per core fastest (thumbnails are mostly serial JPEG decoding).
    /// THUMBFRAME_VIPS_THREADS overrides it, for that measurement only.
    static func startDecoders(jobs: Int) throws(ThumbframeError) {
        do {
            try Decoders.start(threadsPerImage: threadsPerImage(jobs: jobs))
        } catch {
            throw .vipsStart(error.reason)
        }
    }

    /// libvips' threads for one image: the cores shared among the jobs (THUMBFRAME_VIPS_THREADS
    /// sets it, for benchmarks).
    static func threadsPerImage(jobs: Int) -> Int {
        if let text = ProcessInfo.processInfo.environment["THUMBFRAME_VIPS_THREADS"], let value = Int(text), value > 0 {
            return value
        }
        return max(1, ProcessInfo.processInfo.activeProcessorCount / jobs)
    }

    /// What makes every row of the index: this thumbframe and libvips, and the recipes.
    static func shape(_ options: BuildOptions) -> StateIndex.ItemShape {
        // With a zoom ladder or tiles, which rungs and which tiles a photo gets depends on the
        // viewports, the preset and whether originals are shown too: a change of them makes
        // every item again (the thumbnails that exist are found by their content address, not
        // encoded again).
        let settings = options.settings
        var recipes = options.thumbnails.map(\.canonicalRecipe).joined(separator: " ")
        if let ladder = settings.ladder { recipes += " ladder " + ladder.renditions.map(\.canonicalRecipe).joined(separator: " ") }
        if let tiles = settings.tiles { recipes += " \(tiles.canonical) from \(tiles.minPixels)" }
        // Which renditions carry an HDR photo's gain map: said only when none do (`--hdr sdr`), so
        // the default keeps the shape indexes had before gain maps (their HDR rows are probed
        // again by the upgrade, `StateIndex.migrateFrom8`, not every row).
        if settings.hdr == .sdr { recipes += " hdr sdr" }
        // Without stacks no photo's likeness is measured: turning them on measures every photo.
        if settings.stacks == Manifest.StackMode.none { recipes += " stacks none" }
        // A photo's place is read from its GPS position, which no row keeps: another precision
        // probes every photo again.
        if let locations = settings.locations { recipes += " locations \(locations)" }
        if settings.ladder != nil || settings.tiles != nil {
            recipes +=
                " \(settings.preset.rawValue) " + settings.viewports.map { "\($0.width)x\($0.height)@\($0.scale)" }.joined(separator: " ")
                + (settings.originalURL == nil ? "" : " originals " + (settings.browserFormats ?? []).joined(separator: ","))
        }
        // The release, not the build's version: a package built a commit later (0.5.0+1.g…)
        // makes nothing again for it; what changes a file's bytes changes its content address.
        return StateIndex.ItemShape(
            generator: "\(ThumbframeVersion.release) libvips \(Manifest.Generator.current.libvips)", recipes: recipes)
    }

    /// Every file below SOURCE_DIR the rules let in, never entering OUT_DIR.
    func walkSource(_ site: BuildSite) throws(ThumbframeError) -> SourceWalker.Result {
        var excluded: [FileIdentity] = []
        if let outputStat = FileStat.lstat(site.outputPath) { excluded.append(outputStat.identity) }
        return try SourceWalker(
            root: site.source, excluded: excluded, followSymlinks: options.followSymlinks, rules: options.exclude
        ).walk()
    }

    /// What the state index already describes, and what is work.
    func makePlan(_ files: [SourceFile], site: BuildSite, reusable: Bool) throws(ThumbframeError) -> ReusePlan {
        do {
            return try ReusePlan(
                index: site.index, reusable: reusable && !options.force, verify: options.verify, check: options.check,
                output: site.output, files: files)
        } catch {
            throw .cannotWrite(path: site.index?.path ?? site.outputPath, reason: error.description)
        }
    }

    /// Rows of other recipes or another thumbframe go; and once a row is to change, the index is
    /// dirty until a manifest is written from it (a run stopped in between leaves the next run
    /// something to write even when no file changed again). `--force` keeps the rows: each is
    /// replaced as its file is made again, so a forced run killed midway leaves the next one the
    /// files it had not reached as they were published, not to make again.
    func prepare(_ index: StateIndex, itemsMatch: Bool, changing: Bool) throws(ThumbframeError) {
        try index.stopping { () throws(SQLiteError) in
            if !itemsMatch { try index.removeAllRows() }
            if !itemsMatch { try index.setShape(Self.shape(options)) }
            if changing { try index.markDirty() }
        }
    }

    /// Directory sections: only the directories whose files changed are assembled again, when
    /// the settings that shape every page are those published. nil: every section.
    func changedSections(_ plan: ReusePlan, site: BuildSite, itemsMatch: Bool) -> Set<[UInt8]>? {
        guard options.sections == .directory, itemsMatch, !options.force, !options.verify, site.published.clean,
            site.published.settings == options.settings.canonicalKey
        else { return nil }
        return Set(plan.work.map { ManifestAssembler.directoryKey($0.file.directory) })
            .union(plan.missing.map { ManifestAssembler.directoryKey(SourceFile(path: $0.path).directory) })
    }

    /// Throws `.wouldShrink` when `dropped` is more than half of a non-empty previous
    /// manifest's items, and at least 10, unless `--allow-shrink`.
    func refuseShrink(_ previous: Int, dropped: Int) throws(ThumbframeError) {
        try Self.refuseShrink(previous, dropped: dropped, allowed: options.allowShrink)
    }

    static func refuseShrink(_ previous: Int, dropped: Int, allowed: Bool) throws(ThumbframeError) {
        if !allowed, dropped >= 10, dropped * 2 > previous {
            throw .wouldShrink(previous: previous, dropped: dropped)
        }
    }
}

extension Pruner {
    /// Prunes once a new manifest is in place (only then may the old one's thumbnails go), when
    /// an earlier prune was cut short, or `always` (a merge): keeps what the index and the shard
    /// indexes name, and the pages of the manifest on disk.
    func prune(
        after written: Publisher.Publication, by publisher: Publisher, published: StateIndex.Published, always: Bool = false
    ) throws(ThumbframeError) -> Outcome {
        guard always || written.manifestWritten || isUnsettled else { return Outcome() }
        HeapTrim.now()
        let pages = OwnedNames(paths: Set((written.pages ?? Set(published.pages.keys)).flatMap(Publisher.pageFiles)))
        let outcome = try prune(keeping: try publisher.keptThumbnails().union(pages))
        if let note = outcome.foreignNote { publisher.events(.warning(note)) }
        return outcome
    }
}
