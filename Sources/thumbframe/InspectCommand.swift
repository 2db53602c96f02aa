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
        let summary = ManifestSummary(try input.load())
        try emit(summary, json: input.json) { summary.rendered() }
    }
}
