import ArgumentParser
import Foundation
import ThumbframeCore

/// `thumbframe inspect MANIFEST`: a summary of a manifest.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Summarize a manifest: items, sections, formats, orientations, thumbnails, failures."
    )

    @Argument(help: "Path of a manifest.json.")
    var manifest: String

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func run() throws {
        let summary: ManifestSummary
        do {
            summary = ManifestSummary(try ManifestFile.load(manifest))
        } catch {
            throw cliExitCode(for: error)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        } else {
            print(summary.rendered(), terminator: "")
        }
    }
}
