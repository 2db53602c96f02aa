import Foundation
import Testing
import ThumbframeTestSupport

/// The shape of the sources, kept by tests: the stages of a build as folders of ThumbframeCore,
/// and the C image libraries behind ThumbframeImaging.
@Suite("Source structure")
struct StructureTests {
    static let sources = Fixtures.packageRoot + "/Sources"
    /// ThumbframeCore's folders, in the order a build runs through them (then the readers, and
    /// what all of them share).
    static let coreFolders = [
        "Build", "Walk", "Plan", "Process", "Assemble", "Publish", "Prune", "Read", "Store", "FileSystem", "Support",
    ]

    /// Every `.swift` file under `Sources/<target>`, relative to it, with the modules it imports.
    static func imports(of target: String) throws -> [(file: String, modules: [String])] {
        let root = sources + "/" + target
        let files = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        return try files.sorted().map { file in
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            let modules = text.split(separator: "\n").compactMap { line -> String? in
                // `import X`, `internal import X`, `@_implementationOnly import X`, `@testable import X`.
                guard let match = line.wholeMatch(of: /(?:@\w+\s+)?(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(\w+).*/)
                else { return nil }
                return String(match.output.1)
            }
            return (file, modules)
        }
    }

    @Test(
        "the compiler refuses libvips, libexif and the shim to every Swift target but ThumbframeImaging: the same call type-checks only with its define"
    )
    func cBehindImaging() async throws {
        let flags = try await Processes.run("/usr/bin/env", ["pkg-config", "--cflags", "vips", "libexif"])
        #expect(flags.status == 0)
        let includes = flags.stdout.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("-I") }.flatMap { ["-Xcc", String($0)] }
        try await Fixtures.withTemporaryDirectory { directory in
            let probes = [
                ("CVips", "_ = vips_version_string()"), ("CExif", "_ = exif_data_new()"),
                ("CThumbframeShim", "_ = tf_flag_get(nil)"),
            ]
            for (module, call) in probes {
                let file = directory + "/Probe\(module).swift"
                try "import \(module)\n\(call)\n".write(toFile: file, atomically: true, encoding: .utf8)
                let maps = ["CVips", "CExif"].map { "-fmodule-map-file=\(Self.sources)/\($0)/module.modulemap" }
                var arguments = ["swiftc", "-typecheck", "-module-cache-path", directory + "/cache", file]
                arguments += maps.flatMap { ["-Xcc", $0] } + includes + ["-I", Self.sources + "/CThumbframeShim/include"]
                arguments += ["-Xcc", "-I" + Self.sources + "/CThumbframeKernels/include"]
                if module == "CThumbframeShim" {
                    // The shim is a C target: SwiftPM makes its module map; here, one like it.
                    let map = directory + "/shim.modulemap"
                    try "module CThumbframeShim { header \"\(Self.sources)/CThumbframeShim/include/tf_shim.h\" export * }\n"
                        .write(toFile: map, atomically: true, encoding: .utf8)
                    arguments += ["-Xcc", "-fmodule-map-file=" + map]
                }
                let refused = try await Processes.run("/usr/bin/env", arguments)
                #expect(refused.status != 0 && refused.stderr.contains("cannot find"), "\(module): \(refused.stderr.prefix(400))")
                let allowed = try await Processes.run("/usr/bin/env", arguments + ["-Xcc", "-DTHUMBFRAME_IMAGING"])
                #expect(allowed.status == 0, "\(module) with THUMBFRAME_IMAGING: \(allowed.stderr.prefix(400))")
            }
        }
        let package = try String(contentsOfFile: Fixtures.packageRoot + "/Package.swift", encoding: .utf8)
        for product in ["ThumbframeCore", "thumbframe", "ThumbframeManifest"] {
            // No product target defines the switch for itself.
            let declaration = try #require(package.range(of: "name: \"\(product)\""))
            let rest = package[declaration.upperBound...]
            let end = rest.range(of: "\n        ),")?.lowerBound ?? rest.endIndex
            #expect(!rest[..<end].contains("THUMBFRAME_IMAGING"), "\(product) defines THUMBFRAME_IMAGING")
        }
    }

    @Test("the manifest library imports Foundation alone: an app links no C library through it")
    func manifestFoundationOnly() throws {
        for (file, modules) in try Self.imports(of: "ThumbframeManifest") {
            #expect(modules.allSatisfy { $0 == "Foundation" }, "ThumbframeManifest/\(file) imports \(modules): Foundation only")
        }
    }

    @Test("no two folders of ThumbframeCore depend on each other (scripts/shape), and its orchestrator stays short")
    func oneWayStages() async throws {
        let shape = try await Processes.run(
            "/usr/bin/env", ["python3", Fixtures.packageRoot + "/scripts/shape", Self.sources + "/ThumbframeCore"])
        #expect(shape.status == 0, "\(shape.stderr)")
        #expect(shape.stdout.contains("two-way pairs: 0"), "\(shape.stdout.split(separator: "\n").filter { $0.contains("<->") })")
        #expect(shape.stdout.contains(" -> "), "the script found no dependencies at all")
        let builder = try String(contentsOfFile: Self.sources + "/ThumbframeCore/Build/Builder.swift", encoding: .utf8)
        let lines = builder.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("package func run()") })
        let end = try #require(lines[start...].firstIndex { $0.hasPrefix("    }") })
        #expect(end - start <= 80, "Builder.run is \(end - start) lines")
    }

    @Test("swift-argument-parser is used only under the CommandLine trait, so the tree builds with it off")
    func argumentParserBehindTrait() throws {
        // The package resolves swift-argument-parser only with the trait (Package.swift): a file that
        // imports it, or parses in-process, outside `#if CommandLine` breaks
        // `swift build --disable-default-traits`.
        let root = Fixtures.packageRoot
        let files = ["Sources/thumbframe", "Tests/ThumbframeCLITests"].flatMap { folder in
            ((FileManager.default.enumerator(atPath: root + "/" + folder)?.allObjects as? [String]) ?? [])
                .filter { $0.hasSuffix(".swift") }.map { folder + "/" + $0 }
        }
        #expect(files.count > 20)
        // The command's own types (declared in Sources/thumbframe), which exist only with the trait.
        var commandTypes: Set<String> = []
        for file in files where file.hasPrefix("Sources/") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            for match in text.matches(of: /(?:struct|enum|class)\s+([A-Z]\w+)/) { commandTypes.insert(String(match.output.1)) }
        }
        commandTypes.remove("Thumbframe")  // also the stub's name
        #expect(commandTypes.isSuperset(of: ["BuildCommand", "ConfigFile", "ByteCount"]), "\(commandTypes)")
        var stubs = 0
        for file in files {
            var depth = 0
            var guarded = 0
            for line in try String(contentsOfFile: root + "/" + file, encoding: .utf8).split(separator: "\n") {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("#if") {
                    depth += 1
                    if code == "#if CommandLine" { guarded = depth }
                } else if code.hasPrefix("#endif") {
                    if guarded == depth { guarded = 0 }
                    depth -= 1
                } else if code.hasSuffix("import ArgumentParser") || code.contains(".parseAsRoot(")
                    || code.matches(of: /\b([A-Z]\w+)\b/).contains(where: { commandTypes.contains(String($0.output.1)) })
                {
                    #expect(guarded > 0, "\(file): \(code) outside #if CommandLine")
                }
                if code == "#if !CommandLine" { stubs += 1 }
            }
        }
        #expect(stubs == 1, "one stub entry point for a build without the trait")
    }

    @Test("the viewer's modules import one way, none over 300 lines, no function over 60 (scripts/shape viewer/src)")
    func viewerModules() async throws {
        let shape = try await Processes.run(
            "/usr/bin/env", ["python3", Fixtures.packageRoot + "/scripts/shape", Fixtures.packageRoot + "/viewer/src"])
        #expect(shape.status == 0, "\(shape.stderr)")
        #expect(shape.stdout.contains("modules in a cycle: 0"), "\(shape.stdout)")
        #expect(shape.stdout.contains("lightbox -> data"), "the script found no imports: \(shape.stdout)")
        let report = shape.stdout.components(separatedBy: "files over 300 lines:")
        #expect(report.count == 2 && report[1].hasPrefix("\n  longest functions:"), "\(shape.stdout)")
        let longest = report.last?.split(separator: "\n").dropFirst().compactMap { Int($0.split(separator: " ").first ?? "") } ?? []
        #expect(!longest.isEmpty && longest.allSatisfy { $0 <= 60 }, "\(shape.stdout)")
    }

    @Test("ThumbframeCore is no product: nothing in it is public (package access for the CLI and the tests)")
    func coreIsNotPublic() throws {
        let root = Self.sources + "/ThumbframeCore"
        for file in (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []) where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            let declarations = text.split(separator: "\n").filter { line in
                let code = line.trimmingCharacters(in: .whitespaces)
                return !code.hasPrefix("//") && code.contains(/(^|\s)public(\s|\()/)
            }
            #expect(declarations.isEmpty, "ThumbframeCore/\(file): \(declarations.prefix(3))")
        }
    }

    @Test("ThumbframeCore's files sit in the folders of the build's stages")
    func stageFolders() throws {
        for (file, _) in try Self.imports(of: "ThumbframeCore") {
            let folder = file.split(separator: "/").first.map(String.init) ?? ""
            #expect(file.contains("/") && Self.coreFolders.contains(folder), "ThumbframeCore/\(file) is outside the stage folders")
        }
    }
}
