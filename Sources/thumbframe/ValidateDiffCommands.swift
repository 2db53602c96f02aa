// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation
    import ThumbframeCore
    import ThumbframeManifest

    /// `thumbframe validate MANIFEST`: exit 0 when valid, 65 listing every problem.
    struct ValidateCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Check a manifest: version, numbering, sections, paths, duplicates, layouts, and every thumbnail file and its size.",
            discussion:
                "Prints one problem per line on stdout (--json: {\"valid\": …, \"problems\": […]}). Exit 0 valid, 65 invalid, 66 unreadable."
        )

        @Argument(help: "Path of a manifest.json.")
        var manifest: String

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func run() throws {
            var problems: [String]
            do {
                problems = try ManifestValidator.problems(at: manifest)
                // The viewer beside it, where there is one (none to check beside a manifest that does not read).
                if let viewer = try? ViewerCheck.problems(beside: manifest) { problems += viewer }
            } catch {
                throw cliExitCode(for: error)
            }
            struct Verdict: Encodable {
                var valid: Bool
                var problems: [String]
            }
            try emit(Verdict(valid: problems.isEmpty, problems: problems), json: json) {
                problems.isEmpty ? "valid\n" : problems.map { $0 + "\n" }.joined()
            }
            if !problems.isEmpty { throw ExitCode(65) }
        }
    }

    /// `thumbframe diff A B`: exit 0 when nothing differs, 1 when something does.
    struct DiffCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "diff",
            abstract: "List the items added, removed and changed from manifest A to manifest B.",
            discussion:
                "Lines: '+ path' added, '- path' removed, '~ path: fields' changed, '! path' failures. Exit 0 same, 1 different, 65 invalid input."
        )

        @Argument(help: "The older manifest.")
        var a: String

        @Argument(help: "The newer manifest.")
        var b: String

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func run() throws {
            let first = try ManifestOptions(manifest: a).open()
            let second = try ManifestOptions(manifest: b).open()
            let diff: ManifestDiff
            do {
                diff = try ManifestDiff(from: first, to: second)
            } catch {
                throw cliExitCode(for: error)
            }
            try emit(diff, json: json) { diff.rendered() }
            if !diff.isEmpty { throw ExitCode(1) }
        }
    }
#endif
