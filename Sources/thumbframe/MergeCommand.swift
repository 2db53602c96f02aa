// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation
    import ThumbframeCore

    /// `thumbframe merge`: the manifest of a library built as `--shard K/N` runs into one OUT_DIR.
    struct MergeCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Write the manifest of a library built in shards (build --shard K/N) into OUT_DIR.",
            discussion: """
                Reads the N shards' results in OUT_DIR and writes manifest.json and its pages exactly as one \
                build of the whole library would, then prunes what no item names. Refuses (nothing written) \
                when a shard is missing (66), still running (75), or was built by another version, with \
                other settings, or from another state of the source (65: rerun that shard).
                """)

        @Option(help: "The output directory the shards wrote into.")
        var out: String

        @Option(help: "How many shards the library was built in (N of --shard K/N).")
        var shards: Int

        @Flag(
            name: .customLong("allow-shrink"),
            help: "Write the manifest even if it drops more than half of the previous one's items (exit 69 otherwise).")
        var allowShrink = false

        @Flag(name: [.short, .long], help: "Print nothing on stderr but errors.")
        var quiet = false

        @Option(name: .customLong("log-format"), help: "Diagnostics on stderr as text or JSON lines.")
        var logFormat: LogFormat = .text

        func run() async throws {
            let reporter = Reporter(format: logFormat, quiet: quiet, progress: false)
            let report: BuildReport
            do {
                report = try await ShardMerge(output: out, count: shards, allowShrink: allowShrink, events: reporter.handle).run()
            } catch {
                reporter.finish()
                throw cliExitCode(for: error, reporter: reporter)
            }
            reporter.finish()
            print(report.manifestPath)
            reporter.summary(report)
            if !report.failures.isEmpty { throw ExitCode(1) }
        }
    }
#endif
