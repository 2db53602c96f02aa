import Foundation
import ThumbframeManifest

/// Publishes the manifest from the state index, for `build` and for `merge`: the pages of each
/// section (content-addressed, one in memory at a time; a section whose files did not change
/// keeps its pages), then the top document atomically once every page and thumbnail it names is
/// on disk, then what was published into the index. Every failure is reported once, in
/// manifest order, whether or not anything is written.
struct Publisher {
    var index: StateIndex
    var output: OutputDirectory
    var settings: Manifest.Settings
    /// The source directory's name: the root section's title.
    var sourceTitle: String
    /// `--verify`: the published manifest counts as intact only when its bytes hash as recorded.
    var verify = false
    /// Threads that assemble pages (`--jobs`): the manifest of a large library is written in parallel.
    var jobs = 1
    /// Which failures are new, for their report.
    var newFailures = NewFailures()
    var events: @Sendable (BuildEvent) -> Void

    /// What a run published (or found already published).
    struct Publication {
        var manifestWritten: Bool
        var items: Int
        var sections: Int
        var failures: [Manifest.Failure]
        /// The pages the top document names (nil when nothing was written: keep what the ledger has).
        var pages: Set<String>?
        /// Sections whose pages were assembled (the others were taken as they were).
        var sectionsAssembled = 0
        /// The manifest's counts: thumbnails and their bytes per recipe.
        var summary = ManifestDocument.Summary()

        /// Thumbnails and bytes per recipe, in the order `settings` makes them.
        func recipeBytes(_ settings: Manifest.Settings) -> [RecipeBytes] {
            RecipeBytes.rows(counts: summary.thumbnails, bytes: summary.thumbnailBytes, order: RecipeBytes.order(settings))
        }
    }

    /// Writes the manifest unless nothing it depends on changed (`unchanged`: no file; and no
    /// setting, no failure of the walk, and the published file still intact). `changed` names
    /// the sections whose files changed (by `SectionPlan.key`); every other section whose stored
    /// pages are intact is taken as it was. nil: every section is assembled. `published` is
    /// what the index recorded of the manifest on disk, as the run read it before it changed rows.
    func publish(
        walk: SourceWalker.Result, published: StateIndex.Published, unchanged: Bool, changed: Set<[UInt8]>?
    ) throws(ThumbframeError) -> Publication {
        let settingsKey = settings.canonicalKey
        if unchanged, published.settings == settingsKey, published.walkFailures == walk.failuresKey,
            published.skipped ?? [:] == walk.skipped, manifestIntact(published)
        {
            let failures = try reportFailures(walk)
            let summary = try index.stopping { () throws(SQLiteError) in try index.storedSummary() }
            return Publication(
                manifestWritten: false, items: published.items, sections: published.sections, failures: failures, pages: nil,
                summary: summary)
        }
        let assembler = ManifestAssembler(sourceTitle: sourceTitle, settings: settings)
        var keys: [ManifestAssembler.Key] = []
        try index.stopping { () throws(SQLiteError) in
            try index.forEachItemKey(captured: assembler.ordersByDate) { path, captured, pair in
                keys.append(.init(path: path, captured: captured, pair: pair))
            }
        }
        keys = LivePhotoPairing.pair(keys)
        if settings.rawPairs != .separate { keys = RawPairing.pair(keys) }
        let failures = try reportFailures(walk)
        if published.manifestFingerprint != nil, !unchangedManifest(published) {
            events(.warning("manifest.json was changed outside thumbframe; writing it again"))
        }
        let plans = assembler.sections(keys)
        keys = []
        // Pages first; the top document names them once they are all on disk. One read
        // transaction for every entry they are assembled from (each read outside one locks and
        // unlocks the index), ended by `replaceSections`' commit.
        try index.stopping { () throws(SQLiteError) in try index.beginIfNeeded() }
        var written = Written(intactPages: Self.intactPages(published, output: output))
        for (number, plan) in plans.enumerated() {
            try written.add(plan, number: number, changed: changed, publisher: self)
        }
        try written.finish(self)
        var document = ManifestDocument(
            generator: .current, settings: settings, sections: written.sections, itemCount: written.items,
            summary: written.summary, failures: failures, skipped: walk.skipped.isEmpty ? nil : walk.skipped)
        document.describeTimeline()
        let (manifestWritten, sha256) = try Self.writeManifest(document, to: output)
        // A viewer left in OUT_DIR by an earlier --viewer build (or merge) shows this manifest,
        // never one that is gone.
        if manifestWritten { try ViewerWriter(output: output).refreshData(manifest: document) }
        guard let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)) else {
            throw .cannotWrite(path: output.path + "/" + OutputDirectory.manifestName, reason: "vanished after it was written")
        }
        if stat.size > ManifestReader.maximumDocumentBytes {
            events(
                .warning(
                    "manifest.json is \(stat.size) bytes, over the \(ManifestReader.maximumDocumentBytes) that readers accept "
                        + "(\(written.sections.count) sections, \(failures.count) failures): inspect, show and the Swift library will refuse it"
                ))
        }
        var record = StateIndex.Published(
            settings: settingsKey, walkFailures: walk.failuresKey, skipped: walk.skipped.isEmpty ? nil : walk.skipped,
            manifestFingerprint: stat.fingerprint, manifestSHA256: sha256,
            items: written.items, sections: written.sections.count, clean: true)
        for page in written.pages { record.pages[page] = output.stat(file: page)?.fingerprint ?? "missing" }
        try index.stopping { () throws(SQLiteError) in
            try index.replaceSections(written.stored)
            try index.recordPublished(record)
        }
        return Publication(
            manifestWritten: manifestWritten, items: written.items, sections: written.sections.count, failures: failures,
            pages: Set(written.pages), sectionsAssembled: written.assembled, summary: document.summary)
    }

    /// The sections and pages of the manifest being written.
    private struct Written {
        var intactPages: Set<String>
        var sections: [Manifest.Section] = []
        var stored: [([UInt8], StateIndex.StoredSection)] = []
        var assembled = 0
        /// Items so far: where the next section starts.
        var items = 0
        /// Pages read from the index and not yet written: assembled `jobs` at a time.
        private var queue: [PageWork] = []

        init(intactPages: Set<String>) { self.intactPages = intactPages }

        /// Every page the sections name, each followed by its grid page, in order.
        var pages: [String] { sections.flatMap { ($0.pages ?? []).flatMap { [$0.path] + ($0.grid.map { [$0] } ?? []) } } }

        /// The sections' summaries together.
        var summary: ManifestDocument.Summary {
            stored.reduce(into: ManifestDocument.Summary()) { $0.merge($1.1.summary) }
        }

        /// Adds a section: its stored pages when its files did not change (positions inside a
        /// section do not depend on other sections) and every page and grid page is still the
        /// file written,
        /// else pages assembled from the index's entries (their references filled in as they
        /// are written; `finish` writes the last ones).
        mutating func add(
            _ plan: ManifestAssembler.SectionPlan, number: Int, changed: Set<[UInt8]>?, publisher: Publisher
        ) throws(ThumbframeError) {
            let slot = sections.count
            var section = StateIndex.StoredSection(count: plan.keys.count, pages: [], summary: .init())
            var reused = false
            if let changed, !changed.contains(plan.key), let previous = try? publisher.index.storedSection(plan.key),
                previous.count == plan.keys.count,
                previous.pages.allSatisfy({ intactPages.contains($0.path) && $0.grid.map(intactPages.contains) == true })
            {
                section = previous
                reused = true
            }
            sections.append(
                Manifest.Section(
                    name: plan.name, rawName: plan.rawName, title: plan.title, start: items, count: plan.keys.count,
                    pages: section.pages))
            stored.append((plan.key, section))
            if !reused {
                assembled += 1
                let stacks = try publisher.stacks(plan)
                for first in stride(from: 0, to: plan.keys.count, by: ManifestPage.size) {
                    let keys = plan.keys[first..<min(first + ManifestPage.size, plan.keys.count)]
                    queue.append(
                        try publisher.read(keys, slot: slot, section: number, sectionStart: items, first: first, stacks: stacks))
                    if queue.count >= publisher.pagesInFlight { try finish(publisher) }
                }
            }
            items += plan.keys.count
        }

        /// Writes the pages read so far, in parallel, and files their references in order.
        mutating func finish(_ publisher: Publisher) throws(ThumbframeError) {
            let results = publisher.write(queue)
            for (work, result) in zip(queue, results) {
                let (path, grid, summary, geometry) = try result.get()
                var reference = geometry
                (reference.path, reference.start, reference.count, reference.grid) = (path, work.first, work.rows.count, grid)
                sections[work.slot].pages?.append(reference)
                stored[work.slot].1.pages.append(reference)
                stored[work.slot].1.summary.merge(summary)
            }
            queue = []
        }
    }

    /// One page's entries as the index holds them, in the order of the page.
    private struct PageWork {
        struct Row {
            var key: ManifestAssembler.Key
            var entry: StateIndex.Stored
            /// A Live Photo's MOV and a RAW+JPEG pair's RAW.
            var motion: StateIndex.Stored?
            var raw: StateIndex.Stored?
            var stack: Manifest.Stack?
        }
        /// Where the page's section sits in `Written`.
        var slot: Int
        var section: Int
        var sectionStart: Int
        /// The page's first item within its section.
        var first: Int
        var rows: [Row]
    }

    /// Pages read ahead of their writing: two per job, so the threads stay busy while memory
    /// holds a bounded number of pages whatever the library's size.
    var pagesInFlight: Int { 2 * max(1, jobs) }

    /// The stacks of a section's photos by position, from their rows' evidence (`Stacking`):
    /// computed for the sections assembled, each from its own rows alone.
    private func stacks(_ plan: ManifestAssembler.SectionPlan) throws(ThumbframeError) -> [Int: Manifest.Stack] {
        let mode = settings.stacks ?? .none
        guard mode != .none, plan.keys.count > 1 else { return [:] }
        let texts = try index.stopping { () throws(SQLiteError) in try index.evidence(plan.keys.lazy.map(\.path)) }
        let found = Stacking.stacks(texts.map { $0.flatMap(StackEvidence.init(text:)) }, mode: mode)
        var stacks: [Int: Manifest.Stack] = [:]
        for (position, stack) in found.enumerated() { stacks[position] = stack }
        return stacks
    }

    /// Reads a page's entries from the index (one connection: on the calling thread).
    private func read(
        _ keys: ArraySlice<ManifestAssembler.Key>, slot: Int, section: Int, sectionStart: Int, first: Int,
        stacks: [Int: Manifest.Stack]
    ) throws(ThumbframeError) -> PageWork {
        var rows: [PageWork.Row] = []
        rows.reserveCapacity(keys.count)
        for (offset, key) in keys.enumerated() {
            rows.append(
                PageWork.Row(
                    key: key, entry: try stored(key.source),
                    motion: try key.motion.map { (mov) throws(ThumbframeError) in try stored(mov) },
                    raw: try key.rawFile.map { (raw) throws(ThumbframeError) in try stored(raw) }, stack: stacks[first + offset]))
        }
        return PageWork(slot: slot, section: section, sectionStart: sectionStart, first: first, rows: rows)
    }

    /// A written page: its path, its grid page's, and its counts.
    private typealias WrittenPage = (
        path: String, grid: String, summary: ManifestDocument.Summary, geometry: Manifest.PageReference
    )

    /// Assembles and writes pages on up to `jobs` threads (decoding entries, computing layouts,
    /// encoding and hashing are each page's own); the results in the pages' order.
    private func write(_ pages: [PageWork]) -> [Result<WrittenPage, ThumbframeError>] {
        var results = [Result<WrittenPage, ThumbframeError>](
            repeating: .failure(.cannotWrite(path: output.path + "/pages", reason: "not written")), count: pages.count)
        results.withUnsafeMutableBufferPointer { slots in
            let slots = slots
            WorkerPool.forEach(count: pages.count, threads: jobs) { number in
                slots[number] = Result { () throws(ThumbframeError) in try write(pages[number]) }
            }
        }
        return results
    }

    /// Assembles one page from the index's entries and writes it, and its grid page.
    private func write(_ page: PageWork) throws(ThumbframeError) -> WrittenPage {
        var summary = ManifestDocument.Summary()
        var items: [ManifestPage.Item] = []
        items.reserveCapacity(page.rows.count)
        for (offset, row) in page.rows.enumerated() {
            let key = row.key
            let entry = try decoded(row.entry, key.source)
            var media = entry.media ?? .photo
            if let mov = key.motion, let stored = row.motion {
                let video = try decoded(stored, mov)
                guard let facts = video.media?.video else {
                    throw .cannotWrite(path: index.path, reason: "the entry of \(mov.relativePath) is not a video's")
                }
                media.motion = Manifest.MotionPart(
                    source: .live, original: mov.relativePath, rawOriginal: mov.manifestRawPath, bytes: video.file.bytes,
                    sha256: video.file.sha256, video: facts, width: video.image.width, height: video.image.height)
            }
            if let rawSource = key.rawFile, let stored = row.raw {
                let raw = try decoded(stored, rawSource)
                media.rawFile = Manifest.RawFile(
                    original: rawSource.relativePath, rawOriginal: rawSource.manifestRawPath, format: raw.image.format,
                    bytes: raw.file.bytes, sha256: raw.file.sha256, width: raw.image.width, height: raw.image.height)
            }
            let position = page.first + offset
            var item = Manifest.Item(
                index: page.sectionStart + position, section: page.section, item: position, path: key.source.relativePath,
                rawPath: key.source.manifestRawPath, file: entry.file, media: media, image: entry.image,
                exif: entry.exif,
                thumbnails: entry.thumbnails, placeholder: entry.placeholder,
                layouts: settings.layouts(image: entry.image, kind: media.kind, thumbnails: entry.thumbnails))
            item.stack = row.stack
            item.place = entry.place
            summary.add(item)
            items.append(ManifestPage.Item(item))
        }
        let full = ManifestPage(items: items)
        let grid = ManifestGridPage(full, settings: settings)
        var geometry = Manifest.PageReference(path: "", start: page.first, count: items.count)
        geometry.describe(grid, viewports: settings.viewports, months: settings.order == .date)
        return (
            try Self.writePage(encoded: { try full.encoded() }, to: output),
            try Self.writePage(encoded: { try grid.encoded() }, to: output), summary, geometry
        )
    }

    /// The index's row of a file the assembler's keys name.
    private func stored(_ source: SourceFile) throws(ThumbframeError) -> StateIndex.Stored {
        let entry = try index.stopping { () throws(SQLiteError) in try index.entry(source.rawPath) }
        guard let entry else { throw unreadable(source) }
        return entry
    }

    /// A row's item, decoded.
    private func decoded(_ stored: StateIndex.Stored, _ source: SourceFile) throws(ThumbframeError) -> StateIndex.StoredItem {
        guard let item = stored.item() else { throw unreadable(source) }
        return item
    }

    private func unreadable(_ source: SourceFile) -> ThumbframeError {
        .cannotWrite(path: index.path, reason: "the entry of \(source.relativePath) cannot be read")
    }

    /// Every failure of the run (the walk's and the index's), in manifest order, each reported
    /// once: stderr says what the manifest says, whether or not it is written.
    func reportFailures(_ walk: SourceWalker.Result) throws(ThumbframeError) -> [Manifest.Failure] {
        var failures = walk.failures
        try index.stopping { () throws(SQLiteError) in
            try index.forEachEntry(failed: true) { _, stored in
                if let failure = stored.failure() { failures.append(failure) }
            }
        }
        failures = Manifest.Failure.ordered(failures)
        let fromWalk = Set(walk.failures.map(NewFailures.key))
        for failure in failures {
            let key = NewFailures.key(failure)
            events(.failure(failure, new: fromWalk.contains(key) ? newFailures.walk : newFailures.paths.contains(key)))
        }
        return failures
    }

    /// True when `manifest.json` is what the index says was published: the same size,
    /// modification time and inode (as cheap as a `stat`), every page still the file written,
    /// its and every page's pre-compressed siblings there, and with `--verify` the same SHA-256.
    func manifestIntact(_ published: StateIndex.Published) -> Bool {
        // With --verify, files of other stats (a restored cache) are intact by their bytes.
        guard let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)), stat.isRegularFile,
            verify || published.manifestFingerprint == stat.fingerprint
        else { return false }
        guard Self.intactPages(published, output: output, hashing: verify).count == published.pages.count,
            Self.manifestSiblingsPresent(output)
        else { return false }
        return !verify || manifestHashes(published)
    }

    /// The manifest on disk is the one published (a missing one is not "changed").
    private func unchangedManifest(_ published: StateIndex.Published) -> Bool {
        guard let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)) else { return true }
        return published.manifestFingerprint == stat.fingerprint || manifestHashes(published)
    }

    private func manifestHashes(_ published: StateIndex.Published) -> Bool {
        let name = Array(OutputDirectory.manifestName.utf8)
        guard let bytes = try? output.root.readFile(name, limit: ManifestReader.maximumDocumentBytes) else { return false }
        return bytes.withUnsafeBytes(Digest.sha256) == published.manifestSHA256
    }

    /// Every thumbnail the index's items name, and every one the shard indexes in OUT_DIR name:
    /// a plain build run between shards and their merge must not prune what the merge will
    /// publish. (Once a library is no longer built in shards, removing the
    /// `.thumbframe-shard-*` files lets a build prune what only they named.)
    func keptThumbnails() throws(ThumbframeError) -> OwnedNames {
        var kept = try index.stopping { () throws(SQLiteError) in try index.thumbnailNames() }
        for name in StateIndex.shardNames(in: output) {
            let (shard, problem) = try StateIndex.open(output, readOnly: false, name: name)
            if let problem { events(.warning(problem)) }
            guard let shard else { continue }
            kept = kept.union(try shard.stopping { () throws(SQLiteError) in try shard.thumbnailNames() })
        }
        return kept
    }

}

extension Manifest.Settings {
    /// The settings, canonically (layouts and sections follow from them): what a rerun compares.
    var canonicalKey: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // The manifest's version is part of it: an upgrade that changes the layout of pages
        // writes them all again (a version-2 manifest in OUT_DIR becomes version 3), and so is
        // what pages it writes (a manifest from before grid pages is published again with them).
        let settings = (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return "version \(Manifest.currentVersion) with grid pages and their geometry\n" + settings
    }
}

extension Manifest.Failure {
    /// Every failure of a run in byte order of paths.
    static func ordered(_ failures: [Manifest.Failure]) -> [Manifest.Failure] {
        failures.sorted { $0.pathBytes.lexicographicallyPrecedes($1.pathBytes) }
    }
}
