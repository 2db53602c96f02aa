import Foundation
import Testing
import ThumbframeTestSupport

/// The shape of the sources, kept by tests: the stages of a build as folders of ThumbframeCore,
/// and C behind one of them.
@Suite("Source structure")
struct StructureTests {
    static let sources = Fixtures.packageRoot + "/Sources"
    static let cModules = ["CVips", "CExif", "CCrypto", "CSQLite", "CThumbframeShim"]
    /// ThumbframeCore's folders, in the order a build runs through them (then the readers, and
    /// what all of them share).
    static let coreFolders = ["Build", "Walk", "Plan", "Process", "Native", "Assemble", "Publish", "Prune", "Read", "Support"]

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

    @Test("only ThumbframeCore/Native imports the C modules; the CLI and the manifest library import none")
    func cBehindOneFolder() throws {
        let core = try Self.imports(of: "ThumbframeCore")
        #expect(core.count > 30)
        for (file, modules) in core where !file.hasPrefix("Native/") {
            #expect(Set(modules).isDisjoint(with: Self.cModules), "ThumbframeCore/\(file) imports \(modules)")
        }
        #expect(core.contains { $0.file.hasPrefix("Native/") && $0.modules.contains("CVips") })
        for (file, modules) in try Self.imports(of: "thumbframe") {
            #expect(Set(modules).isDisjoint(with: Self.cModules), "thumbframe/\(file) imports \(modules)")
        }
        for (file, modules) in try Self.imports(of: "ThumbframeManifest") {
            #expect(modules.allSatisfy { $0 == "Foundation" }, "ThumbframeManifest/\(file) imports \(modules): Foundation only")
        }
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
