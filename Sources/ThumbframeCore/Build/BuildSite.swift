import Foundation
import ThumbframeManifest

/// Where a build runs, opened and guarded before anything changes: SOURCE_DIR; OUT_DIR (made
/// unless `--check`), refused when the two overlap; OUT_DIR's locks; a `manifest.json` that is
/// not thumbframe's refused; the state index opened (a damaged one rebuilt) and what it says was
/// published; thumbframe 0.1's thumbnails adopted once.
struct BuildSite {
    var source: SourceRoot
    /// OUT_DIR, open; nil only for `--check` of an OUT_DIR that does not exist yet.
    var output: OutputDirectory?
    /// OUT_DIR as given, resolved when it exists.
    var outputPath: String
    var manifestPath: String
    var index: StateIndex?
    /// Why the index was found unusable (then rebuilt, or under `--check` left alone).
    var problem: String?
    /// OUT_DIR holds a `manifest.json` of thumbframe's.
    var hasManifest: Bool
    var published: StateIndex.Published
    /// Held for the whole run: OUT_DIR's lock (shared between shards) and a shard's own.
    var locks: [BuildLock]

    static func open(_ options: BuildOptions, events: (BuildEvent) -> Void) throws(ThumbframeError) -> BuildSite {
        let source = try SourceRoot.open(options.source)
        if !options.check {
            do {
                try FileSystem.makeDirectories(options.output)
            } catch {
                throw .cannotWrite(path: options.output, reason: error.localizedDescription)
            }
        }
        let resolved = FileSystem.realPath(options.output)
        if let resolved { try refuseOverlap(source: source, output: resolved) }
        let outputPath = resolved ?? options.output
        let existing = try resolved.map { path throws(ThumbframeError) in try OutputDirectory(path, create: false) }
        let manifestPath = outputPath + "/" + OutputDirectory.manifestName
        var locks: [BuildLock] = []
        if let existing, !options.check {
            // A shard holds OUT_DIR's lock shared with the other shards, and its own alone.
            locks.append(try BuildLock.acquire(in: existing.root, shared: options.shard != nil))
        }
        if let existing, let shard = options.shard {
            locks.append(try BuildLock.acquire(in: existing.root, name: shard.lockName))
        }
        let hasManifest: Bool
        do {
            hasManifest = try refuseForeignManifest(existing, manifestPath: manifestPath)
        } catch {
            // Refused before anything is written: the lock file this run made goes too.
            for lock in locks { lock.withdraw() }
            throw error
        }
        // Only once OUT_DIR is known to be thumbframe's (or new) is anything made in it.
        let output =
            try resolved.map { path throws(ThumbframeError) in
                options.check ? existing : try OutputDirectory(path, create: true)
            } ?? nil
        var site = BuildSite(
            source: source, output: output, outputPath: outputPath, manifestPath: manifestPath, hasManifest: hasManifest,
            published: StateIndex.Published(), locks: locks)
        guard let output else { return site }
        (site.index, site.problem) = try StateIndex.open(
            output, readOnly: options.check, name: options.shard?.stateName ?? StateIndex.name)
        if let problem = site.problem { events(.warning(problem)) }
        if let index = site.index { site.published = try index.stopping { () throws(SQLiteError) in try index.published() } }
        if !options.check, options.shard == nil, hasManifest, site.published.shape == nil {
            do {
                try output.adoptVersion1Thumbnails()
            } catch {
                throw .cannotWrite(path: output.path + "/" + OutputDirectory.journalName, reason: error.localizedDescription)
            }
        }
        return site
    }

    /// OUT_DIR equal to SOURCE_DIR would index its own thumbnails and prune beside the
    /// originals; SOURCE_DIR inside `OUT_DIR/thumbs` would have its files taken for thumbnails.
    /// (OUT_DIR inside SOURCE_DIR is fine: the walk never enters it.)
    static func refuseOverlap(source: SourceRoot, output: String) throws(ThumbframeError) {
        let sourceIdentity = source.directory.stat(Array(".".utf8))?.identity
        if source.path == output || sourceIdentity == FileStat.lstat(output)?.identity {
            throw .overlappingDirectories(
                "OUT_DIR \(output) is SOURCE_DIR itself: thumbnails would be indexed as photos; choose another --out")
        }
        let thumbs = output + "/thumbs"
        var ancestor = source.path
        let thumbsIdentity = FileStat.lstat(thumbs)?.identity
        while ancestor.count > 1 {
            if ancestor == thumbs || (thumbsIdentity != nil && FileStat.lstat(ancestor)?.identity == thumbsIdentity) {
                throw .overlappingDirectories(
                    "SOURCE_DIR \(source.path) is inside OUT_DIR/thumbs, which thumbframe prunes; choose another --out")
            }
            ancestor = (ancestor as NSString).deletingLastPathComponent
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
