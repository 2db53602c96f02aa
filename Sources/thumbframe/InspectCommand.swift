import ArgumentParser
import Foundation
import ThumbframeCore

/// `thumbframe inspect MANIFEST`: a summary of a manifest.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarize a manifest: items, sections, formats, orientations, thumbnails, failures."
    )

    @OptionGroup var input: ManifestOptions

    func run() throws {
        let directory = (input.manifest as NSString).deletingLastPathComponent
        let reader = try input.open()
        let summary: ManifestSummary
        do {
            summary = try ManifestSummary(reader, thumbnailRoot: directory.isEmpty ? "." : directory)
        } catch {
            throw cliExitCode(for: error)
        }
        try emit(summary, json: input.json) { summary.rendered() }
    }
}
