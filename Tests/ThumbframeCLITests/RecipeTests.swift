import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// The cron, systemd and CI recipes of `examples/`, run as written (issue 37, item 7): the
/// program's and the library's paths put in, nothing else changed.
@Suite("Recipes")
struct RecipeTests {
    static func recipe(_ path: String) throws -> String {
        try String(contentsOfFile: Fixtures.packageRoot + "/examples/" + path, encoding: .utf8)
    }

    /// `text` with the recipe's library paths made the test's (the program's name left as written).
    static func localized(_ text: String, source: String, out: String) -> String {
        text.replacingOccurrences(of: "/srv/www/photos", with: out).replacingOccurrences(of: "/srv/photos", with: source)
    }

    /// Runs `command` with `/bin/sh` as an installed thumbframe would: in a mount namespace whose
    /// `/usr/local/bin` holds only `thumbframe` (this build's), with `environment` alone.
    /// Needs root (CI's); nil otherwise.
    static func installed(_ command: String, environment: [String], root: String) async throws -> Processes.Output? {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return nil }
        let bin = root + "/usr-local-bin"
        if !FileManager.default.fileExists(atPath: bin) {
            try Fixtures.makeDirectory(bin)
            try FileManager.default.createSymbolicLink(atPath: bin + "/thumbframe", withDestinationPath: CLITests.executable)
        }
        let inside = "mount --bind \"$0\" /usr/local/bin && exec /usr/bin/env -i \"$@\""
        return try await Processes.run(
            "/usr/bin/unshare",
            ["--mount", "--propagation", "private", "/bin/sh", "-c", inside, bin] + environment + ["/bin/sh", "-c", command])
    }

    /// Every published file's bytes by path (dot files aside).
    static func contents(_ out: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for path in try CronTests.published(out).keys { files[path] = FileManager.default.contents(atPath: out + "/" + path) }
        return files
    }

    /// A library with one photo and, when asked, one broken file.
    static func library(_ root: String, broken: Bool) throws -> String {
        let source = root + "/photos"
        try Fixtures.makeLibrary(
            source, [.photo("a.jpg", width: 64, height: 48)] + (broken ? [.bytes("broken.jpg", Array("not a JPEG".utf8))] : []))
        return source
    }

    @Test(
        "the crontab, as cron runs it (its own variables, from /) with thumbframe installed in /usr/local/bin: quiet on a night with nothing new, the new failure otherwise"
    )
    func crontab() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root, broken: true)
            let lines = try Self.recipe("cron/crontab").split(separator: "\n").filter { !$0.hasPrefix("#") }
            let line = try #require(lines.first { !$0.contains("=") })
            // cron's environment: PATH=/usr/bin:/bin unless the crontab sets one.
            let variables = lines.filter { $0.contains("=") && !$0.hasPrefix("MAILTO=") }.map(String.init)
            #expect(variables.contains { $0.hasPrefix("PATH=") && $0.contains("/usr/local/bin") && $0.contains("/usr/bin") })
            let command = Self.localized(
                line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)[5].trimmingCharacters(in: .whitespaces),
                source: source, out: root + "/site")
            #expect(command.hasPrefix("thumbframe "), "the program by its name, found on the crontab's PATH")
            guard try await Self.installed("true", environment: [], root: root) != nil else { return }
            func night() async throws -> Processes.Output {
                try #require(try await Self.installed("cd / && " + command, environment: ["PATH=/usr/bin:/bin"] + variables, root: root))
            }
            let first = try await night()
            #expect(first.status == 1)
            #expect(
                first.stdout.isEmpty && first.stderr.hasPrefix("new failure: broken.jpg: probe: "), "mailed: \(first.stdout)\(first.stderr)"
            )
            let second = try await night()
            #expect(second.status == 0 && second.stdout.isEmpty && second.stderr.isEmpty, "mailed: \(second.stdout)\(second.stderr)")
            #expect(try ManifestFile.load(root + "/site/manifest.json").items.map(\.path) == ["a.jpg"])
        }
    }

    @Test("the systemd service and timer, with thumbframe installed, pass systemd-analyze verify, and the service's command builds")
    func systemdUnits() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root, broken: false)
            let units = root + "/units"
            try Fixtures.makeDirectory(units)
            for name in ["thumbframe.service", "thumbframe.timer"] {
                let text = Self.localized(try Self.recipe("systemd/" + name), source: source, out: root + "/site")
                try Fixtures.write(Array(text.utf8), to: units + "/" + name)
            }
            let service = try String(contentsOfFile: units + "/thumbframe.service", encoding: .utf8)
            #expect(service.contains("\nNice=10\n") && service.contains("\nIOSchedulingClass=idle\n"))
            let exec = try #require(service.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
            #expect(exec.hasPrefix("ExecStart=thumbframe "), "a bare name: systemd finds it in /usr/local/bin or /usr/bin")
            // With thumbframe installed in /usr/local/bin, and systemd's own search path (where it
            // resolves a bare name): the units verify, and the service's command builds.
            let path = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
            let files = "\(units)/thumbframe.service \(units)/thumbframe.timer"
            guard
                let verify = try await Self.installed("/usr/bin/systemd-analyze verify --man=no " + files, environment: [path], root: root)
            else { return }
            #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify.stderr)")
            let run = try #require(try await Self.installed(String(exec.dropFirst("ExecStart=".count)), environment: [path], root: root))
            #expect(run.status == 0 && run.stdout.isEmpty && run.stderr.isEmpty, "\(run.stderr)")
        }
    }

    @Test("the CI step: a fresh checkout over a restored OUT_DIR publishes nothing new; a cache miss with a broken file exits 1")
    func ciStep() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let workflow = try Self.recipe("ci/github-actions.yml")
            let run = try #require(workflow.split(separator: "\n").first { $0.contains("run: thumbframe ") })
            let command = run.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "thumbframe ", with: CLITests.executable + " ")
            #expect(workflow.contains("path: public/photos") && command.contains(" --out public/photos"))
            func step(in checkout: String) async throws -> Processes.Output {
                try await Processes.run("/bin/sh", ["-c", "cd \"$0\" && " + command, checkout])
            }
            // The first run: a cache miss, a library with a broken file.
            let checkout = root + "/checkout"
            _ = try Self.library(checkout, broken: true)
            let miss = try await step(in: checkout)
            #expect(miss.status == 1 && miss.stderr.hasPrefix("new failure: broken.jpg"), "\(miss.stderr)")
            let published = try Self.contents(checkout + "/public/photos")
            // The next push: a fresh checkout (new file times), the cache restored (new inodes).
            let next = root + "/next"
            _ = try Self.library(next, broken: true)
            try FileManager.default.copyItem(atPath: checkout + "/public", toPath: next + "/public")
            // The docs' check of a restored cache: up to date, the known broken file included
            // (its bytes hash as recorded: it fails as it failed, undecoded).
            let verified = try await CLITests.run(["build", next + "/photos", "--out", next + "/public/photos", "--check", "--verify"])
            #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
            let hit = try await step(in: next)
            #expect(hit.status == 0 && hit.stderr.isEmpty, "\(hit.stderr)")
            #expect(try Self.contents(next + "/public/photos") == published, "the deploy finds the same files with the same bytes")
            // Other bytes of the same size where the broken file was: changed.
            try Fixtures.write(Array("NOT a JPEG".utf8), to: next + "/photos/broken.jpg")
            let other = try await CLITests.run(["build", next + "/photos", "--out", next + "/public/photos", "--check", "--verify"])
            #expect(other.status == 1 && other.stdout.contains("changed broken.jpg"), "\(other.stdout)")
        }
    }

    /// The workflow's job as a runner runs it: its steps in order, a step after a failed one only
    /// when its `if:` says so, the cache actions against `store` (a key saved once, restored by
    /// key or by the newest entry with a `restore-keys` prefix), the install step by `thumbframe`
    /// on PATH (the package's /usr/bin), each `run:` with /bin/sh in the checkout.
    static func runJob(
        _ job: [String: Any], number: Int, checkout: String, store: inout [(key: String, folder: String)], root: String
    ) async throws -> (status: Int32, stderr: String) {
        let bin = root + "/bin"
        if !FileManager.default.fileExists(atPath: bin) {
            try Fixtures.makeDirectory(bin)
            try FileManager.default.createSymbolicLink(atPath: bin + "/thumbframe", withDestinationPath: CLITests.executable)
        }
        func expand(_ text: String) -> String {
            text.replacingOccurrences(of: "${{ runner.os }}", with: "Linux").replacingOccurrences(
                of: "${{ github.run_id }}", with: "\(number)")
        }
        var failed = false
        var stderr = ""
        for step in job["steps"] as? [[String: Any]] ?? [] {
            let condition = step["if"] as? String
            guard !failed || condition == "${{ !cancelled() }}" || condition == "always()" else { continue }
            let uses = step["uses"] as? String ?? ""
            let with = step["with"] as? [String: String] ?? [:]
            if let script = step["run"] as? String {
                if script.contains("$THUMBFRAME_DEB") { continue }  // the install: thumbframe on PATH below
                let run = try await Processes.run(
                    "/usr/bin/env",
                    ["-i", "PATH=\(bin):/usr/bin:/bin", "HOME=\(root)", "/bin/sh", "-c", "cd \"$0\" && " + script, checkout])
                stderr += run.stderr
                if run.status != 0 { failed = true }
            } else if uses.hasPrefix("actions/cache/restore@") {
                let key = expand(with["key"] ?? "")
                let prefixes = (with["restore-keys"] ?? "").split(separator: "\n").map { expand(String($0)) }
                let hit = store.first { $0.key == key } ?? store.last { entry in prefixes.contains { entry.key.hasPrefix($0) } }
                if let hit { try FileManager.default.copyItem(atPath: hit.folder, toPath: checkout + "/" + (with["path"] ?? "")) }
            } else if uses.hasPrefix("actions/cache/save@") {
                let key = expand(with["key"] ?? "")
                let path = checkout + "/" + (with["path"] ?? "")
                guard !store.contains(where: { $0.key == key }), FileManager.default.fileExists(atPath: path) else { continue }
                let folder = root + "/cache-\(store.count)"
                try FileManager.default.copyItem(atPath: path, toPath: folder)
                store.append((key, folder))
            }
        }
        return (failed ? 1 : 0, stderr)
    }

    @Test(
        "the CI workflow on a stock runner under save-on-success caching: a first run fails once naming the broken file, every later run passes until a new file fails"
    )
    func ciWorkflow() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let text = try Self.recipe("ci/github-actions.yml")
            let parsed = try await Processes.run(
                "/usr/bin/env",
                [
                    "python3", "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
                    Fixtures.packageRoot + "/examples/ci/github-actions.yml",
                ])
            #expect(parsed.status == 0, "\(parsed.stderr)")
            let workflow = try #require(try JSONSerialization.jsonObject(with: Data(parsed.stdout.utf8)) as? [String: Any])
            let job = try #require((workflow["jobs"] as? [String: Any])?.values.first as? [String: Any])
            // A stock runner: Debian 12's container, the package installed from THUMBFRAME_DEB.
            #expect(job["container"] as? String == "debian:12")
            #expect(((job["env"] as? [String: String])?["THUMBFRAME_DEB"] ?? "").hasSuffix(".deb"))
            let steps = job["steps"] as? [[String: Any]] ?? []
            #expect(
                steps.contains {
                    ($0["run"] as? String ?? "").contains("apt-get install") && ($0["run"] as? String ?? "").contains("$THUMBFRAME_DEB")
                })
            #expect(text.contains("--fail-on new"))
            var store: [(key: String, folder: String)] = []
            var number = 0
            func push(broken: [String]) async throws -> (status: Int32, stderr: String) {
                number += 1
                let checkout = root + "/run-\(number)"
                try Fixtures.makeLibrary(
                    checkout + "/photos", [.photo("a.jpg", width: 64, height: 48)] + broken.map { .bytes($0, Array("not a JPEG".utf8)) })
                return try await Self.runJob(job, number: number, checkout: checkout, store: &store, root: root)
            }
            let first = try await push(broken: ["broken.jpg"])
            #expect(first.status == 1 && first.stderr.contains("new failure: broken.jpg"), "\(first.stderr)")
            #expect(store.count == 1, "the first run's output is kept though it failed")
            let second = try await push(broken: ["broken.jpg"])
            #expect(second.status == 0 && second.stderr.isEmpty, "\(second.stderr)")
            let third = try await push(broken: ["broken.jpg", "new.jpg"])
            #expect(
                third.status == 1 && third.stderr.contains("new failure: new.jpg") && !third.stderr.contains("broken.jpg"),
                "\(third.stderr)")
            let fourth = try await push(broken: ["broken.jpg", "new.jpg"])
            #expect(fourth.status == 0 && fourth.stderr.isEmpty, "\(fourth.stderr)")
            #expect(store.count == 4)
        }
    }
}
