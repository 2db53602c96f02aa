import ThumbframeManifest

/// Decides, from `lstat` alone, which files the previous manifest already describes: same path,
/// size and modification time, same thumbnail recipes and thumbframe/libvips versions, and
/// every thumbnail file still there with its recorded size. Those are reused without opening them; the rest is work.
struct ReusePlan {
    /// A file to open: processed in full, or with `previous` (`--verify`) only re-hashed.
    struct Work {
        var file: SourceFile
        var previous: Manifest.Item?
    }

    var reused: [ProcessedItem] = []
    /// Failures of unchanged files that failed to probe or decode before: not decoded again.
    var reusedFailures: [Manifest.Failure] = []
    var work: [Work] = []
    /// Whether the previous manifest was made with the settings that shape items.
    var settingsMatch = false
    /// Every path the previous manifest names (items and failures), as bytes.
    var knownPaths: Set<[UInt8]> = []
    /// Unchanged files whose thumbnails have gone missing or changed size.
    var missingThumbnails: [String] = []

    init(previous: Manifest?, options: BuildOptions, output: OutputDirectory?, files: [SourceFile]) {
        let generator = Manifest.Generator(version: ThumbframeVersion.current, libvips: Vips.version)
        guard let previous, !options.force else {
            work = files.map { Work(file: $0, previous: nil) }
            return
        }
        // Layouts and sections are recomputed every run; what a file's entry holds depends on
        // the recipes and on the code that probed and encoded it.
        settingsMatch = previous.generator == generator && previous.settings.thumbnails == options.thumbnails
        // Keyed by the paths' bytes: Swift strings equate NFC and NFD spellings, which are two
        // different files on disk (macOS SMB clients write NFD beside NFC).
        knownPaths = Set(previous.items.map(\.pathBytes)).union(previous.failures.map(\.pathBytes))
        guard settingsMatch else {
            work = files.map { Work(file: $0, previous: nil) }
            return
        }
        let items = Dictionary(previous.items.map { ($0.pathBytes, $0) }, uniquingKeysWith: { first, _ in first })
        let failures = Dictionary(previous.failures.map { ($0.pathBytes, $0) }, uniquingKeysWith: { first, _ in first })
        for file in files {
            let modified = file.stat.modifiedRFC3339
            if let item = items[file.rawPath], item.file.bytes == file.stat.size, item.file.modified == modified {
                // Each thumbnail is still there with the size it was written with; a truncated
                // or replaced one is rebuilt (`--verify` also compares its hash).
                let complete = item.thumbnails.values.allSatisfy { thumbnail in
                    guard let stat = output?.stat(thumbnail: thumbnail.path), stat.isRegularFile else { return false }
                    return thumbnail.bytes.map { $0 == stat.size } ?? false
                }
                if !complete {
                    missingThumbnails.append(file.relativePath)
                    work.append(Work(file: file, previous: nil))
                } else if options.verify {
                    work.append(Work(file: file, previous: item))
                } else {
                    reused.append(ProcessedItem(reusing: item, source: file))
                }
            } else if let failure = failures[file.rawPath], failure.bytes == file.stat.size,
                failure.modified == modified,
                failure.stage == "probe" || failure.stage == "decode" || options.check
            {
                // A broken file stays broken until it changes; a read or write failure (a
                // permission, a full disk) is worth another try every build, though `--check`
                // does not call it stale.
                reusedFailures.append(failure)
            } else {
                work.append(Work(file: file, previous: nil))
            }
        }
    }
}
