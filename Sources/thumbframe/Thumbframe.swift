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
            66 input missing or unreadable; 70 internal error; 73 cannot write output; 75 another build \
            holds the lock on OUT_DIR; 130/143 stopped by SIGINT/SIGTERM.
            """,
        version: ThumbframeVersion.current,
        subcommands: [
            BuildCommand.self, InspectCommand.self, ShowCommand.self, LookupCommand.self, LayoutCommand.self,
        ]
    )
}

/// Prints a one-line error on stderr and turns a Core error into its exit code.
func cliExitCode(for error: ThumbframeError) -> ExitCode {
    Diagnostics.error(error.localizedDescription)
    switch error {
    case .invalidOptions: return ExitCode(64)
    case .invalidManifest: return ExitCode(65)
    case .sourceUnreadable, .manifestUnreadable: return ExitCode(66)
    case .vipsStart: return ExitCode(70)
    case .cannotWrite: return ExitCode(73)
    case .locked: return ExitCode(75)
    case .interrupted(let signal): return ExitCode(128 + signal)
    }
}

/// stderr is for people; stdout carries data only.
enum Diagnostics {
    static func line(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        line("thumbframe: error: \(text)")
    }
}
