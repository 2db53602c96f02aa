// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation
    import ThumbframeCore

    /// The `thumbframe` command: subcommands turn options into one Core call and an outcome into an
    /// exit code.
    @main
    struct Thumbframe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Prepare photo libraries for image browsers: thumbnails and one JSON manifest.",
            discussion: """
                Exit codes: 0 success (with build --check: up to date); 1 manifest written but some files \
                failed (with --check: the manifest is stale); 64 usage error; 65 input manifest invalid; \
                66 input missing or unreadable (merge: a shard missing); 65 also: merge found shards that disagree; 69 the build would drop more than half of the previous \
                manifest's items (an unmounted source?) and --allow-shrink was not given; 70 internal error (also: \
                no decode worker can start); 73 cannot write output (also: OUT_DIR/manifest.json or a viewer file \
                is not thumbframe's, or thumbs/ or the lock is a link); 75 another build holds the lock on OUT_DIR; 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM.
                """,
            version: ThumbframeVersion.withLibraries,
            subcommands: [
                BuildCommand.self, MergeCommand.self, InspectCommand.self, ShowCommand.self, LookupCommand.self, LayoutCommand.self,
                ValidateCommand.self, DiffCommand.self,
            ]
        )

        /// ArgumentParser's entry point, after the process is made safe to run unattended.
        static func main() async {
            // A build's decode worker (`thumbframe __decode-worker`, started by the build itself from
            // this executable, whatever its name).
            DecodeWorker.servesWorkers = true
            if DecodeWorker.isRequested(CommandLine.arguments) { DecodeWorker.main() }
            ProcessHygiene.prepare()
            let arguments = Array(CommandLine.arguments.dropFirst())
            // No subcommand is a usage error (64), not a request for help: a script that lost its
            // arguments fails.
            if arguments.isEmpty {
                StandardError.write(
                    "thumbframe: error: no subcommand\nUsage: " + usageString() + "\n  See 'thumbframe --help' for more information.\n")
                Foundation.exit(64)
            }
            do {
                var command = try parseAsRoot(try ConfigFile.expand(try UsageCheck.check(arguments)))
                if var asyncCommand = command as? any AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            } catch {
                // A usage error is an error like any other: one line in thumbframe's style (then
                // ArgumentParser's usage hint), or with --log-format json one JSON line.
                let code = exitCode(for: error)
                guard code != .success, !(error is ExitCode) else { exit(withError: error) }
                // A mistake found before the parse (an unknown option, a --config file) is the
                // subcommand's: its usage, not the top level's.
                var message = fullMessage(for: error)
                if let subcommand = configuration.subcommands.first(where: { $0._commandName == arguments.first }),
                    message.contains("See 'thumbframe --help'")
                {
                    message =
                        [Self.firstLine(of: message), "Usage: " + usageString(for: subcommand)].joined(separator: "\n")
                        + "\n  See 'thumbframe \(subcommand._commandName) --help' for more information."
                }
                let json = Self.wantsJSON(arguments)
                Reporter(format: json ? .json : .text, quiet: false, progress: false).error(
                    Self.firstLine(of: message), exitCode: code.rawValue)
                let hint = message.split(separator: "\n").dropFirst().joined(separator: "\n")
                if !json, !hint.isEmpty { StandardError.write(hint + "\n") }
                Foundation.exit(code.rawValue)
            }
        }

        /// The first line of ArgumentParser's message, without its "Error: ".
        static func firstLine(of message: String) -> String {
            let line = message.split(separator: "\n").first.map(String.init) ?? "usage error"
            return line.hasPrefix("Error: ") ? String(line.dropFirst("Error: ".count)) : line
        }

        /// Whether the arguments ask for JSON diagnostics (read before they are parsed, since a
        /// usage error stops the parse).
        static func wantsJSON(_ arguments: [String]) -> Bool {
            zip(arguments, arguments.dropFirst()).contains { $0 == "--log-format" && $1 == "json" }
                || arguments.contains("--log-format=json")
        }
    }

    /// Prints a one-line error on stderr (as the reporter's format says) and turns a Core error into
    /// its exit code.
    func cliExitCode(for error: ThumbframeError, reporter: Reporter? = nil) -> ExitCode {
        let code: Int32
        switch error {
        case .invalidOptions, .overlappingDirectories: code = 64
        case .invalidManifest: code = 65
        case .sourceUnreadable, .manifestUnreadable: code = 66
        case .vipsStart, .decodeWorkers: code = 70
        case .cannotWrite: code = 73
        case .locked: code = 75
        case .wouldShrink: code = 69
        case .shardsMissing: code = 66
        case .shardsDisagree: code = 65
        case .interrupted(let signal): code = 128 + signal
        }
        (reporter ?? Reporter(format: .text, quiet: false, progress: false)).error(error.localizedDescription, exitCode: code)
        return ExitCode(code)
    }
#endif
