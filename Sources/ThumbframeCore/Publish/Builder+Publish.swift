import Foundation
import ThumbframeManifest

extension Builder {
    /// What the state index says was last published, and with which settings.
    struct Published {
        var generator: String?
        var recipes: String?
        var settings: String?
        var walkFailures: String?
        /// Every page of the published top document, with its fingerprint when written.
        var pages: [String: String] = [:]
        /// `manifest.json` as written: what `stat` said of it (size, modification time, inode)
        /// and its SHA-256.
        var manifestStat: String?
        var manifestSHA256: String?
        var items: Int
        var sections: Int
        /// No row changed since the manifest was written (a build killed after recording rows
        /// leaves the index dirty: the next run writes the manifest even if no file changed).
        var clean: Bool

        /// Reads what the index recorded; an index that cannot be read stops the run (73) and is kept.
        init(_ index: StateIndex?) throws(ThumbframeError) {
            guard let index else {
                (items, sections, clean) = (0, 0, false)
                return
            }
            do {
                generator = try index.meta("generator")
                recipes = try index.meta("recipes")
                settings = try index.meta("settings")
                walkFailures = try index.meta("walkFailures")
                for line in (try index.meta("pages") ?? "").split(separator: "\n") {
                    let parts = line.split(separator: " ")
                    if parts.count == 2 { pages[String(parts[0])] = String(parts[1]) }
                }
                let manifest = try index.meta("manifest")?.split(separator: " ")
                manifestStat = manifest?.first.map(String.init)
                manifestSHA256 = manifest?.last.map(String.init)
                items = try index.meta("items").flatMap(Int.init) ?? 0
                sections = try index.meta("sections").flatMap(Int.init) ?? 0
                clean = try index.meta("dirty") == "0"
            } catch {
                throw .cannotWrite(path: StateIndex.name, reason: "cannot read the state index: \(error.description)")
            }
        }
    }

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
    }

    /// The code and libraries that shape every item.
    /// What made the rows of the state index: a different one rebuilds every item.
    static var generator: String { "\(Manifest.Generator.current.version) libvips \(Manifest.Generator.current.libvips)" }

    /// The recipes that shape every item, canonically.
    static func recipes(_ recipes: [ThumbnailRecipe]) -> String {
        recipes.map(\.canonicalRecipe).joined(separator: " ")
    }

    /// The manifest's settings, canonically (layouts and sections follow from them).
    func settingsKey() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(options.settings)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// The walk's failures (links, unlistable directories), canonically.
    static func walkFailuresKey(_ walk: SourceWalker.Result) -> String {
        let lines = walk.failures.map { "\($0.path)\t\($0.rawPath ?? "")\t\($0.reason)" }.sorted()
        return Digest.sha256(lines.joined(separator: "\n"))
    }

    /// `stat` facts that change whenever a file is rewritten: size, modification time, inode.
    static func fingerprint(_ stat: FileStat) -> String {
        "\(stat.size),\(stat.modifiedSeconds).\(stat.modifiedNanoseconds),\(stat.identity.inode)"
    }

    /// True when `manifest.json` is what the index says was published: the same size,
    /// modification time and inode (as cheap as a `stat`), and with `--verify` the same SHA-256.
    func manifestIntact(_ published: Published, output: OutputDirectory?) -> Bool {
        guard let output, let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)), stat.isRegularFile,
            published.manifestStat == Self.fingerprint(stat)
        else { return false }
        // Each page still is the file that was written.
        guard Self.intactPages(published, output: output).count == published.pages.count else { return false }
        guard options.verify else { return true }
        guard
            let bytes = try? output.root.readFile(
                Array(OutputDirectory.manifestName.utf8), limit: ManifestReader.maximumDocumentBytes)
        else { return false }
        return bytes.withUnsafeBytes(Digest.sha256) == published.manifestSHA256
    }

    /// Writes the manifest from the index unless nothing it depends on changed: no file, no
    /// setting, no failure of the walk, and the published file still intact. Every failure is
    /// reported once, in manifest order, whether or not anything is written.
    /// `changed` names the sections whose files changed (by `SectionPlan.key`); every other
    /// section whose stored pages are intact is taken as it was, not assembled again. nil: every
    /// section is assembled.
    func publish(
        index: StateIndex, output: OutputDirectory, walk: SourceWalker.Result, unchanged: Bool, changed: Set<[UInt8]>?
    ) throws(ThumbframeError) -> Publication {
        let published = try Published(index)
        let settings = settingsKey()
        let walkFailures = Self.walkFailuresKey(walk)
        let statePath = output.path + "/" + StateIndex.name
        if unchanged, published.settings == settings, published.walkFailures == walkFailures,
            manifestIntact(published, output: output)
        {
            let failures = try reportFailures(walk, index: index)
            return Publication(
                manifestWritten: false, items: published.items, sections: published.sections, failures: failures, pages: nil)
        }

        var keys: [ManifestAssembler.Key] = []
        do {
            try index.forEachItemKey { path, captured in keys.append(.init(source: SourceFile(path: path), captured: captured)) }
        } catch {
            throw .cannotWrite(path: statePath, reason: error.description)
        }
        let failures = try reportFailures(walk, index: index)
        if published.manifestStat != nil, !unchangedManifest(published, output: output) {
            events(.warning("manifest.json was changed outside thumbframe; writing it again"))
        }
        let assembler = ManifestAssembler(sourceTitle: (options.source as NSString).lastPathComponent, settings: options.settings)
        let plans = assembler.sections(keys)
        keys = []
        // Pages first, one in memory at a time; the top document names them once they are all on disk.
        var sections: [Manifest.Section] = []
        var pages: [String] = []
        var summary = ManifestDocument.Summary()
        var stored: [([UInt8], StateIndex.StoredSection)] = []
        var assembled = 0
        // Sections whose files did not change keep their pages (positions inside a section do
        // not depend on other sections) as long as every page is still the file written.
        let intactPages = Self.intactPages(published, output: output)
        var start = 0
        for (number, plan) in plans.enumerated() {
            if let changed, !changed.contains(plan.key), let previous = try? index.storedSection(plan.key),
                previous.count == plan.keys.count, previous.pages.allSatisfy({ intactPages.contains($0.path) })
            {
                sections.append(
                    Manifest.Section(
                        name: plan.name, rawName: plan.rawName, title: plan.title, start: start, count: plan.keys.count,
                        pages: previous.pages))
                pages += previous.pages.map(\.path)
                summary.merge(previous.summary)
                stored.append((plan.key, previous))
                start += plan.keys.count
                continue
            }
            var references: [Manifest.PageReference] = []
            var sectionSummary = ManifestDocument.Summary()
            assembled += 1
            for first in stride(from: 0, to: plan.keys.count, by: ManifestPage.size) {
                let chunk = plan.keys[first..<min(first + ManifestPage.size, plan.keys.count)]
                var items: [ManifestPage.Item] = []
                items.reserveCapacity(chunk.count)
                for (offset, key) in chunk.enumerated() {
                    let entry: StateIndex.StoredItem?
                    do {
                        entry = try index.entry(key.source.rawPath)?.item()
                    } catch {
                        throw .cannotWrite(path: statePath, reason: error.description)
                    }
                    guard let entry else {
                        throw .cannotWrite(path: statePath, reason: "the entry of \(key.source.relativePath) cannot be read")
                    }
                    let position = first + offset
                    let item = Manifest.Item(
                        index: start + position, section: number, item: position, path: key.source.relativePath,
                        rawPath: key.source.manifestRawPath, file: entry.file, image: entry.image, exif: entry.exif,
                        thumbnails: entry.thumbnails, placeholder: entry.placeholder,
                        layouts: assembler.layouts(entry.image, thumbnails: entry.thumbnails))
                    sectionSummary.add(item)
                    items.append(ManifestPage.Item(item))
                }
                let path = try Self.writePage(ManifestPage(items: items), to: output)
                references.append(Manifest.PageReference(path: path, start: first, count: chunk.count))
                pages.append(path)
            }
            sections.append(
                Manifest.Section(
                    name: plan.name, rawName: plan.rawName, title: plan.title, start: start, count: plan.keys.count,
                    pages: references))
            summary.merge(sectionSummary)
            stored.append((plan.key, StateIndex.StoredSection(count: plan.keys.count, pages: references, summary: sectionSummary)))
            start += plan.keys.count
        }
        let document = ManifestDocument(
            generator: .current, settings: options.settings,
            sections: sections, itemCount: start, summary: summary, failures: failures)
        let (written, sha256) = try Self.writeManifest(document, to: output)
        // A viewer left in OUT_DIR by an earlier --viewer build (or merge) shows this manifest,
        // never one that is gone.
        if written { try ViewerWriter(output: output).refreshData(manifest: document) }
        guard let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)) else {
            throw .cannotWrite(path: output.path + "/" + OutputDirectory.manifestName, reason: "vanished after it was written")
        }
        if stat.size > ManifestReader.maximumDocumentBytes {
            events(
                .warning(
                    "manifest.json is \(stat.size) bytes, over the \(ManifestReader.maximumDocumentBytes) that readers accept "
                        + "(\(sections.count) sections, \(failures.count) failures): inspect, show and the Swift library will refuse it"))
        }
        do {
            try index.replaceSections(stored)
            try index.setMeta("manifest", "\(Self.fingerprint(stat)) \(sha256)")
            try index.setMeta("pages", Self.pageFingerprints(pages, output: output))
            try index.setMeta("settings", settings)
            try index.setMeta("walkFailures", walkFailures)
            try index.setMeta("items", String(start))
            try index.setMeta("sections", String(sections.count))
            try index.setMeta("dirty", "0")
        } catch {
            throw .cannotWrite(path: statePath, reason: error.description)
        }
        return Publication(
            manifestWritten: written, items: start, sections: sections.count, failures: failures, pages: Set(pages),
            sectionsAssembled: assembled)
    }

    /// Every failure of the run (the walk's and the index's), in manifest order, each reported
    /// once: stderr says what the manifest says, whether or not it is written.
    func reportFailures(_ walk: SourceWalker.Result, index: StateIndex) throws(ThumbframeError) -> [Manifest.Failure] {
        var failures = walk.failures
        do {
            try index.forEachEntry(failed: true) { _, stored in
                if let failure = stored.failure() { failures.append(failure) }
            }
        } catch {
            throw .cannotWrite(path: StateIndex.name, reason: error.description)
        }
        failures = Self.ordered(failures)
        for failure in failures { events(.failure(failure)) }
        return failures
    }

    /// The pages of the published manifest that are still the files written.
    static func intactPages(_ published: Published, output: OutputDirectory) -> Set<String> {
        Set(published.pages.filter { output.stat(thumbnail: $0.key).map(fingerprint) == $0.value }.keys)
    }

    /// `path fingerprint` of each page, one a line: what a rerun compares with `stat`.
    static func pageFingerprints(_ pages: [String], output: OutputDirectory) -> String {
        pages.map { "\($0) \(output.stat(thumbnail: $0).map(fingerprint) ?? "missing")" }.joined(separator: "\n")
    }

    /// Writes a page under its content address unless a file of that name holds those bytes
    /// (its hash is its name: a page changed behind thumbframe's back is written again);
    /// returns its path.
    static func writePage(_ page: ManifestPage, to output: OutputDirectory) throws(ThumbframeError) -> String {
        let data: Data
        do {
            data = try page.encoded()
        } catch {
            throw .cannotWrite(path: output.path + "/pages", reason: "cannot encode a page: \(error)")
        }
        let sha256 = data.withUnsafeBytes(Digest.sha256)
        let path = OutputName.path(area: "pages", hash: sha256, extension: "json")
        if let stat = output.stat(thumbnail: path), stat.isRegularFile, stat.size == data.count,
            output.read(thumbnail: path).map({ $0.elementsEqual(data) }) == true
        {
            return path
        }
        do {
            try output.write(thumbnail: path, Array(data))
        } catch {
            throw .cannotWrite(path: output.path + "/" + path, reason: error.localizedDescription)
        }
        return path
    }

    /// The manifest on disk is the one published (a missing one is not "changed").
    private func unchangedManifest(_ published: Published, output: OutputDirectory) -> Bool {
        guard let stat = output.root.stat(Array(OutputDirectory.manifestName.utf8)) else { return true }
        if published.manifestStat == Self.fingerprint(stat) { return true }
        guard
            let bytes = try? output.root.readFile(
                Array(OutputDirectory.manifestName.utf8), limit: ManifestReader.maximumDocumentBytes)
        else { return false }
        return bytes.withUnsafeBytes(Digest.sha256) == published.manifestSHA256
    }

    /// Every failure of a run in byte order of paths.
    static func ordered(_ failures: [Manifest.Failure]) -> [Manifest.Failure] {
        failures.sorted { $0.pathBytes.lexicographicallyPrecedes($1.pathBytes) }
    }

    /// Writes the top document only when its bytes change: pages and thumbnails are flushed to
    /// disk first, then it goes through a temporary file, fsync and rename, so a reader (or a
    /// crash at any moment) sees the old top document or the new one, and every page and
    /// thumbnail it names exists.
    /// Returns whether it wrote, and the manifest's SHA-256.
    static func writeManifest(_ manifest: ManifestDocument, to output: OutputDirectory)
        throws(ThumbframeError) -> (written: Bool, sha256: String)
    {
        let path = output.path + "/" + OutputDirectory.manifestName
        let data: Data
        do {
            data = try manifest.encoded()
        } catch {
            throw .cannotWrite(path: path, reason: "cannot encode manifest: \(error)")
        }
        let sha256 = data.withUnsafeBytes(Digest.sha256)
        // Compared only when the sizes agree (a damaged manifest.json may be any size).
        let name = Array(OutputDirectory.manifestName.utf8)
        if output.root.stat(name)?.size == data.count, let existing = try? output.root.readFile(name, limit: data.count),
            existing.elementsEqual(data)
        {
            return (false, sha256)
        }
        do {
            try output.root.syncFileSystem()
            try output.root.writeAtomically(Array(data), to: OutputDirectory.manifestName, durable: true)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        return (true, sha256)
    }

    /// Every thumbnail the index's items name: what pruning keeps.
    func thumbnailPaths(_ index: StateIndex) throws(ThumbframeError) -> Set<String> {
        do {
            return try index.thumbnailPaths()
        } catch {
            throw .cannotWrite(path: StateIndex.name, reason: error.description)
        }
    }

    /// Every thumbnail the index's items name, and every one the shard indexes in OUT_DIR name:
    /// a plain build run between shards and their merge must not prune what the merge will
    /// publish. (Once a library is no longer built in shards, removing the
    /// `.thumbframe-shard-*` files lets a build prune what only they named.)
    func keptThumbnails(_ index: StateIndex, output: OutputDirectory) throws(ThumbframeError) -> Set<String> {
        var kept = try thumbnailPaths(index)
        for name in Shard.stateNames(in: output) {
            let (shard, problem) = try StateIndex.open(output, readOnly: false, name: name)
            if let problem { events(.warning(problem)) }
            guard let shard else { continue }
            do {
                kept.formUnion(try shard.thumbnailPaths())
            } catch {
                throw .cannotWrite(path: output.path + "/" + name, reason: error.description)
            }
        }
        return kept
    }

    /// Records one file's outcome in the index.
    static func record(_ outcome: FileOutcome, _ file: SourceFile, in index: StateIndex) throws(SQLiteError) {
        switch outcome {
        case .item(let item): try index.record(file, item: item, failure: nil)
        case .failed(let failure, _): try index.record(file, item: nil, failure: failure)
        }
    }

    static func markDirty(_ index: StateIndex) throws(ThumbframeError) {
        do {
            try index.setMeta("dirty", "1")
        } catch {
            throw .cannotWrite(path: StateIndex.name, reason: error.description)
        }
    }

    /// Throws `.wouldShrink` when `dropped` is more than half of a non-empty previous
    /// manifest's items, and at least 10, unless `--allow-shrink`.
    func refuseShrink(_ previous: Int, dropped: Int) throws(ThumbframeError) {
        guard !options.allowShrink else { return }
        if dropped >= 10, dropped * 2 > previous {
            throw .wouldShrink(previous: previous, dropped: dropped)
        }
    }

    /// Refuses to replace a `manifest.json` that is not thumbframe's; true when there is one.
    /// Reads only its beginning when it starts the way thumbframe writes manifests.
    static func refuseForeignManifest(_ output: OutputDirectory?, manifestPath: String) throws(ThumbframeError) -> Bool {
        let name = Array(OutputDirectory.manifestName.utf8)
        guard let output, let stat = output.root.stat(name) else { return false }
        let foreign = "not a thumbframe manifest; thumbframe will not replace it (move it away or choose another --out)"
        guard stat.isRegularFile else { throw .cannotWrite(path: manifestPath, reason: "not a regular file; " + foreign) }
        var bytes = output.root.head(name, count: 64)
        if !ManifestFile.isThumbframeOutput(bytes), stat.size <= 64 << 20 {
            bytes = (try? output.root.readFile(name, limit: 64 << 20)) ?? bytes
        }
        guard ManifestFile.isThumbframeOutput(bytes) else { throw .cannotWrite(path: manifestPath, reason: foreign) }
        return true
    }
}
