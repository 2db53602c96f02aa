// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation
    import ThumbframeCore
    import ThumbframeManifest

    /// `thumbframe inspect MANIFEST`: a summary of a manifest.
    struct InspectCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Summarize a manifest: items, sections, formats, orientations, thumbnails, failures.",
            discussion:
                "Reads the top document only (its counts are kept there); --files also reads every page to look at the thumbnail files."
        )

        @OptionGroup var input: ManifestOptions

        @Flag(help: "Also look at every thumbnail file (bytes on disk, missing ones), reading every page.")
        var files = false

        func run() throws {
            let reader = try input.open()
            let summary: ManifestSummary
            do {
                // The folder the manifest really lies in (the named path may be a link to it).
                summary = try ManifestSummary(reader, thumbnailRoot: files ? try ManifestFile.folder(input.manifest).path : nil)
            } catch {
                throw cliExitCode(for: error)
            }
            try emit(summary, json: input.json) { summary.rendered() }
        }
    }
#endif
