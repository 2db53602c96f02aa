import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

/// The README and `docs/` say what the program does (issue 38): every subcommand and option of
/// `--help` documented in docs/cli.md with the same defaults, every subcommand in the README's
/// table, and every link between the pages leading to a file and a heading that exist.
@Suite("Documentation")
struct DocsTests {
    static func page(_ path: String) throws -> String {
        try String(contentsOfFile: Fixtures.packageRoot + "/" + path, encoding: .utf8)
    }

    /// The pages a reader is sent to: the README, the changelog and every page of docs/.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Fixtures.packageRoot + "/docs")
        return ["README.md", "CHANGELOG.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    /// A help text's options (`--name`, the first of a `--a/--no-a` pair), without `--help`.
    static func options(_ help: String) -> Set<String> {
        Set(
            help.split(separator: "\n").compactMap { line -> String? in
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                guard let option = words.first(where: { $0.hasPrefix("--") }) else { return nil }
                return String(option.split(separator: "/")[0]).trimmingCharacters(in: [","])
            }
        ).subtracting(["--help", "--version"])
    }

    /// The subcommands `thumbframe --help` lists (`help` aside).
    static func subcommands() async throws -> [String] {
        let help = try await CLITests.run(["--help"]).stdout
        let listed = help.components(separatedBy: "SUBCOMMANDS:")[1].split(separator: "\n")
        return listed.compactMap { line -> String? in
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first,
                name.allSatisfy(\.isLowercase)
            else { return nil }
            return name == "help" ? nil : String(name)
        }
    }

    /// GitHub's anchor for a heading: lowercased, punctuation but `-` and `_` dropped, spaces dashed.
    static func anchor(_ heading: String) -> String {
        String(
            heading.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_"
            }
        ).replacingOccurrences(of: " ", with: "-")
    }

    /// Text outside fenced code blocks.
    static func prose(_ text: String) -> [Substring] {
        var inFence = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") { inFence.toggle() }
            return !inFence && !line.hasPrefix("```")
        }
    }

    @Test("docs/cli.md documents every subcommand and option of --help, and the README's table lists every subcommand")
    func everyOptionDocumented() async throws {
        let cli = try Self.page("docs/cli.md")
        let readme = try Self.page("README.md")
        let commands = try await Self.subcommands()
        #expect(commands.count >= 8 && commands.contains("build"), "\(commands)")
        for command in commands {
            let sections = cli.components(separatedBy: "\n## `thumbframe \(command) ")
            #expect(sections.count == 2, "docs/cli.md has no section for \(command)")
            guard sections.count == 2 else { continue }
            let section = sections[1].components(separatedBy: "\n## ")[0]
            let help = try await CLITests.run(["help", command])
            // An option is documented where its name stands whole (`--out`, `[-q|--quiet]`).
            let missing = Self.options(help.stdout).filter { section.range(of: $0 + #"(?![\w-])"#, options: .regularExpression) == nil }
            #expect(missing.isEmpty, "docs/cli.md's \(command) lacks \(missing.sorted())")
            #expect(readme.contains("| `thumbframe \(command) "), "the README's table lacks \(command)")
        }
    }

    @Test("docs/cli.md's defaults are the code's: the recipes, the zoom")
    func defaultsAgree() async throws {
        let help = try await CLITests.run(["build", "--help"])
        let flat = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let cli = try Self.page("docs/cli.md")
        let rows = cli.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let defaults = ThumbnailRecipe.defaults.map { "\($0.name)=\($0.canonicalRecipe)" }
        let thumbRow = try #require(rows.first { $0.hasPrefix("| `--thumb ") })
        let cell = thumbRow.split(separator: "|").last.map(String.init) ?? ""
        #expect(cell.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) } == defaults, "\(cell)")
        #expect(flat.contains("Replaces the defaults " + defaults.joined(separator: ", ") + "."), "\(flat)")
        let zoomRow = try #require(rows.first { $0.hasPrefix("| `--zoom ") })
        #expect(zoomRow.hasSuffix("| `\(ZoomRenditions.default.rawValue)` |"), "\(zoomRow)")
        #expect(flat.contains("default: \(ZoomRenditions.default.rawValue))"))
    }

    @Test("every link of the README, the changelog and docs/ leads to a file and a heading that exist")
    func linksResolve() throws {
        var broken: [String] = []
        for page in try Self.pages() {
            let lines = Self.prose(try Self.page(page))
            let folder = (page as NSString).deletingLastPathComponent
            for line in lines {
                var rest = line[...]
                while let open = rest.range(of: "]("), let close = rest[open.upperBound...].firstIndex(of: ")") {
                    let link = String(rest[open.upperBound..<close])
                    rest = rest[close...]
                    guard !link.hasPrefix("http"), !link.contains(" ") else { continue }
                    let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                    let target =
                        parts[0].isEmpty
                        ? page : ((folder as NSString).appendingPathComponent(String(parts[0])) as NSString).standardizingPath
                    guard FileManager.default.fileExists(atPath: Fixtures.packageRoot + "/" + target) else {
                        broken.append("\(page): \(link) (no such file)")
                        continue
                    }
                    guard parts.count == 2, target.hasSuffix(".md") else { continue }
                    let headings = Self.prose(try Self.page(target)).filter { $0.hasPrefix("#") }
                        .map { Self.anchor(String($0.drop { $0 == "#" }).trimmingCharacters(in: .whitespaces)) }
                    if !headings.contains(String(parts[1])) { broken.append("\(page): \(link) (no such heading)") }
                }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test("the README is a front door: at most 300 lines, the two commands, a first build, the recipes, and where to read on")
    func readmeIsAFrontDoor() throws {
        let readme = try Self.page("README.md")
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 300)
        for needed in [
            "scripts/demo", "scripts/test", "scripts/package", "thumbframe build ~/Pictures --out ~/site --viewer",
            "examples/cron/crontab", "examples/systemd/thumbframe.service", "examples/ci/github-actions.yml", "](docs/cli.md)",
        ] {
            #expect(readme.contains(needed), "the README lacks \(needed)")
        }
    }

    @Test(
        "every script answers --help with its usage and nothing else: no network, no write to the checkout or anywhere, no package"
    )
    func scriptsHelp() async throws {
        let root = Fixtures.packageRoot
        let scripts = (FileManager.default.subpaths(atPath: root + "/scripts") ?? []).filter {
            FileManager.default.isExecutableFile(atPath: root + "/scripts/" + $0)
                && !FileManager.default.fileExists(atPath: root + "/scripts/" + $0 + "/.")
        }.sorted()
        #expect(scripts.contains("make-places") && scripts.contains("demo") && scripts.contains("test-helpers/viewer-test.py"))
        // In a mount namespace without a network, the checkout, /tmp and HOME read-only: anything
        // a script did but print would fail it (root, as CI runs; elsewhere only its answer).
        let isolated = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
        for script in scripts {
            let command = "cd \"$0\" && exec env -i PATH=/usr/bin:/bin HOME=/root \"$1\" --help"
            let run =
                isolated
                ? try await Processes.run(
                    "/usr/bin/unshare",
                    [
                        "--mount", "--net", "--propagation", "private", "/bin/sh", "-c",
                        "mount --bind -o ro \"$0\" \"$0\" && mount --bind -o ro /tmp /tmp && mount --bind -o ro /root /root && "
                            + command, root, "scripts/" + script,
                    ])
                : try await Processes.run("/bin/sh", ["-c", command, root, "scripts/" + script])
            #expect(run.status == 0, "scripts/\(script) --help: \(run.status) \(run.stderr)")
            #expect(run.stdout.count > 40 && run.stderr.isEmpty, "scripts/\(script) --help said: \(run.stdout)\(run.stderr)")
        }
    }
}
