import CVips
import Foundation
import ThumbframeManifest

/// Runs `thumbframe build`: walk, process every file in a bounded parallel window, assemble the
/// manifest in a deterministic order, and put it in place atomically after its thumbnails.
public struct Builder: Sendable {
    /// The options of this run.
    public var options: BuildOptions
    /// Receives human-readable diagnostics (one line each); the CLI sends them to stderr.
    public var log: @Sendable (String) -> Void

    /// Creates a builder.
    public init(options: BuildOptions, log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.options = options
        self.log = log
    }

    /// Builds the manifest and thumbnails. Throws only for problems of the whole run; files that
    /// fail are in the report's `failures`.
    public func run() async throws(ThumbframeError) -> BuildReport {
        try options.validate()
        try Vips.start()
        // libvips threads per image × files in flight should not exceed the cores.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        vips_concurrency_set(Int32(max(1, cores / options.jobs)))

        guard let source = Self.realPath(options.source), FileStat.lstat(source)?.isDirectory == true else {
            throw .sourceUnreadable(path: options.source, reason: FileStat.lastErrorDescription(default: "not a directory"))
        }
        do {
            try FileSystem.makeDirectories(options.output)
        } catch {
            throw .cannotWrite(path: options.output, reason: error.localizedDescription)
        }
        guard let output = Self.realPath(options.output), let outputStat = FileStat.lstat(output) else {
            throw .cannotWrite(path: options.output, reason: FileStat.lastErrorDescription(default: "unreachable"))
        }

        let walk = try SourceWalker(root: source, excluded: [outputStat.identity]).walk()
        let context = ProcessingContext(recipes: options.thumbnails, outputDirectory: output, maxPixels: options.maxPixels)
        let results = await Self.processAll(walk.files, context: context, jobs: options.jobs)

        var processed: [ProcessedItem] = []
        var failures = walk.failures
        for result in results {
            switch result {
            case .item(let item): processed.append(item)
            case .failed(let failure):
                failures.append(failure)
                log("\(failure.path): \(failure.stage): \(failure.reason)")
            }
        }
        failures.sort { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }

        let manifest = ManifestAssembler(sourceTitle: (source as NSString).lastPathComponent, settings: options.settings)
            .assemble(processed, failures: failures)
        let manifestPath = output + "/manifest.json"
        let written = try Self.writeManifest(manifest, to: manifestPath, outputDirectory: output)
        return BuildReport(
            manifestPath: manifestPath, items: manifest.items.count, sections: manifest.sections.count,
            failures: failures, thumbnailsWritten: processed.reduce(0) { $0 + $1.thumbnailsWritten },
            manifestWritten: written)
    }

    /// Processes files with at most `jobs` in flight. Each task returns its outcome rather than
    /// throwing (a throw would cancel its siblings); results come back in input order.
    static func processAll(_ files: [SourceFile], context: ProcessingContext, jobs: Int) async
        -> [FileOutcome]
    {
        var results = [FileOutcome?](repeating: nil, count: files.count)
        await withTaskGroup(of: (Int, FileOutcome).self) { group in
            var next = 0
            func submit() {
                let index = next
                let file = files[index]
                next += 1
                group.addTask { (index, ItemProcessor.process(file, context: context)) }
            }
            while next < min(jobs, files.count) { submit() }
            while let (index, result) = await group.next() {
                results[index] = result
                if next < files.count { submit() }
            }
        }
        return results.map { $0! }
    }

    /// Writes the manifest only when its bytes change: thumbnails are flushed to disk first, then
    /// the manifest goes through a temporary file, fsync and rename, so a reader (or a crash at
    /// any moment) sees the old manifest or the new one, and every thumbnail it names exists.
    static func writeManifest(_ manifest: Manifest, to path: String, outputDirectory: String)
        throws(ThumbframeError) -> Bool
    {
        let data: Data
        do {
            data = try manifest.encoded()
        } catch {
            throw .cannotWrite(path: path, reason: "cannot encode manifest: \(error)")
        }
        if let existing = try? FileSystem.readFile(path), existing.elementsEqual(data) { return false }
        do {
            try FileSystem.syncFileSystem(of: outputDirectory)
            try FileSystem.writeAtomically(Array(data), to: path, durable: true)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        return true
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
