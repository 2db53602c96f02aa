// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    public import ArgumentParser
    import Foundation
    import ThumbframeCore
    public import ThumbframeManifest

    /// Options every command that reads a manifest shares.
    struct ManifestOptions: ParsableArguments {
        @Argument(help: "Path of a manifest.json.")
        var manifest: String

        @Flag(help: "Print JSON instead of text.")
        var json = false

        init() {}

        init(manifest: String) {
            self.manifest = manifest
        }

        /// The top document, with pages read on demand.
        func open() throws(ExitCode) -> ManifestReader {
            do {
                return try ManifestFile.open(manifest)
            } catch {
                throw cliExitCode(for: error)
            }
        }
    }

    /// Prints a value as JSON (sorted keys, like the manifest) or as text, whose file names may not
    /// write control characters to the terminal.
    func emit<Value: Encodable>(_ value: Value, json: Bool, text: () -> String) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(value), as: UTF8.self))
        } else {
            print(TerminalText.safeLines(text()), terminator: "")
        }
    }

    /// `thumbframe lookup MANIFEST (--index N | --section S --item I)`.
    struct LookupCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lookup",
            abstract: "Map a flat index to its section and item, or back, through the manifest's sections."
        )

        @OptionGroup var input: ManifestOptions

        @Option(help: "A flat item index.")
        var index: Int?

        @Option(help: "A section index (with --item).")
        var section: Int?

        @Option(help: "An item index inside the section (with --section).")
        var item: Int?

        func validate() throws {
            switch (index, section, item) {
            case (.some, nil, nil), (nil, .some, .some): break
            default: throw ValidationError("give either --index N, or --section S with --item I")
            }
        }

        func run() throws {
            let manifest = try input.open()
            let lookup: ManifestQuery.Lookup
            do {
                if let index {
                    lookup = try ManifestQuery.lookup(manifest, index: index)
                } else {
                    lookup = try ManifestQuery.lookup(manifest, section: section!, item: item!)
                }
            } catch {
                throw cliExitCode(for: error)
            }
            try emit(lookup, json: input.json) { lookup.rendered }
        }
    }

    /// `thumbframe show MANIFEST (--index N | --path P) [--viewport NAME]`.
    struct ShowCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Print one item: image and file facts, EXIF, thumbnails and layouts."
        )

        @OptionGroup var input: ManifestOptions

        @Option(help: "The item's flat index.")
        var index: Int?

        @Option(help: "The item's path relative to the source directory.")
        var path: String?

        @Option(help: "Show only this viewport's layout.")
        var viewport: String?

        func validate() throws {
            guard (index == nil) != (path == nil) else { throw ValidationError("give either --index N or --path P") }
        }

        func run() throws {
            let manifest = try input.open()
            var item: Manifest.Item
            do {
                item = try ManifestQuery.item(manifest, index: index, path: path)
            } catch {
                throw cliExitCode(for: error)
            }
            if let viewport {
                guard let layout = item.layouts[viewport] else {
                    let known = manifest.document.settings.viewports.map(\.name).joined(separator: ", ")
                    throw cliExitCode(for: .invalidOptions("no viewport '\(viewport)' (the manifest has \(known))"))
                }
                item.layouts = [viewport: layout]
            }
            try emit(item, json: input.json) { ManifestQuery.rendered(item, in: manifest.document, viewport: viewport) }
        }
    }

    /// `thumbframe layout --size WxH [--orientation N] --viewport WxH@S [--preset P]`: the layout
    /// engine on its own, for frontend developers checking numbers.
    struct LayoutCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "layout",
            abstract: "Compute one image's layout in one viewport, without any file."
        )

        @Option(help: ArgumentHelp("The image's stored pixel size.", valueName: "WxH"))
        var size: String

        @Option(help: "EXIF orientation 1-8; 5-8 swap width and height for display.")
        var orientation: Int = 1

        @Option(help: ArgumentHelp("The viewport in points and its scale, e.g. 390x844@3.", valueName: "WxH@S"))
        var viewport: String

        @Option(help: "Layout rules: jx3, jx4, photoswipe or pixel.")
        var preset: LayoutPreset = .jx3

        @Flag(help: "Print JSON instead of text.")
        var json = false

        func validate() throws {
            _ = try parsedSize()
            guard (1...8).contains(orientation) else { throw ValidationError("--orientation must be 1 to 8") }
            do {
                _ = try Viewport(parsing: viewport, requireName: false)
            } catch {
                throw ValidationError(error.localizedDescription)
            }
        }

        func parsedSize() throws -> (Int, Int) {
            let parts = size.split(separator: "x", omittingEmptySubsequences: false)
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0,
                width <= 1_000_000, height <= 1_000_000
            else { throw ValidationError("--size must be WxH in pixels, each 1 to 1000000") }
            return (width, height)
        }

        func run() throws {
            let (stored, target) = (try parsedSize(), try Viewport(parsing: viewport, requireName: false))
            let (width, height) = Orientation.display(width: stored.0, height: stored.1, orientation: orientation)
            let layout = LayoutEngine.layout(width: width, height: height, viewport: target, preset: preset)
            try emit(layout, json: json) {
                "\(preset.rawValue): \(width)×\(height) in \(target.name): " + ManifestQuery.oneLine(layout) + "\n"
            }
        }
    }

    extension LayoutPreset: ExpressibleByArgument {}
    extension Manifest.SectionMode: ExpressibleByArgument {}
    extension Manifest.ItemOrder: ExpressibleByArgument {}
    extension Manifest.RawPairs: ExpressibleByArgument {}
    extension Manifest.HDRRenditions: ExpressibleByArgument {}
    extension Manifest.StackMode: ExpressibleByArgument {}
    extension Manifest.Locations: ExpressibleByArgument {
        public init?(argument: String) { self.init(argument) }
        public static var allValueStrings: [String] { ["none", "city", "region", "cell:KM"] }
    }
    extension ZoomRenditions: ExpressibleByArgument {}
    extension Manifest.VideoRenditions: ExpressibleByArgument {}

    extension Viewport: ExpressibleByArgument {
        public init?(argument: String) {
            guard let viewport = try? Viewport(parsing: argument) else { return nil }
            self = viewport
        }

        /// For `@Option(transform:)`: a value that does not parse says why.
        static func argument(_ text: String) throws -> Viewport {
            do { return try Viewport(parsing: text) } catch { throw ValidationError(error.localizedDescription) }
        }
    }
#endif
