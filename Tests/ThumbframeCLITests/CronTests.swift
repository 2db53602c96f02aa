import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// A build as cron runs it: cron mails whatever a job prints, so `-q` prints exactly the failures
/// that decide the exit code, and every failure says whether it is new (issue 37, item 1).
@Suite("Cron: quiet unless something is new")
struct CronTests {
    static func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    /// A file named like a JPEG that is none.
    static let broken = Array("not a JPEG, whatever its name says".utf8)

    @Test("-q prints the failures --fail-on counts, no others; text and JSON mark new failures; the summary counts them")
    func quietPrintsWhatDecides() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, [.photo("a.jpg", width: 64, height: 48), .bytes("broken.jpg", Self.broken)])
            func build(_ extra: [String]) async throws -> Processes.Output {
                try await CLITests.run(["build", source, "--out", out] + extra)
            }

            // The first night: the broken file is new, said so, and counted.
            let first = try await build([])
            #expect(first.status == 1)
            #expect(Self.lines(first.stderr).contains { $0.hasPrefix("new failure: broken.jpg: probe: ") }, "\(first.stderr)")
            #expect(first.stderr.contains(" 1 failed (1 new), "), "\(first.stderr)")

            // Known now: --fail-on new is silent and content; the default still counts it, and -q
            // prints it (not as new); --fail-on never prints nothing.
            let known = try await build(["-q", "--fail-on", "new"])
            #expect(known.status == 0 && known.stderr.isEmpty, "\(known.stderr)")
            let any = try await build(["-q"])
            #expect(any.status == 1)
            #expect(Self.lines(any.stderr).count == 1 && any.stderr.hasPrefix("broken.jpg: probe: "), "\(any.stderr)")
            let never = try await build(["-q", "--fail-on", "never"])
            #expect(never.status == 0 && never.stderr.isEmpty, "\(never.stderr)")
            let plain = try await build(["--fail-on", "new"])
            #expect(plain.stderr.contains(" 1 failed, ") && !plain.stderr.contains("new failure"), "\(plain.stderr)")

            // Another broken file: -q --fail-on new prints it alone, and exits 1.
            try Fixtures.makeLibrary(source, [.bytes("broken2.jpg", Self.broken)])
            let second = try await build(["-q", "--fail-on", "new"])
            #expect(second.status == 1)
            #expect(Self.lines(second.stderr).map { String($0.prefix(32)) } == ["new failure: broken2.jpg: probe:"], "\(second.stderr)")

            // JSON lines: each failure's `new`, and the summary's count.
            try Fixtures.makeLibrary(source, [.bytes("broken3.jpg", Self.broken)])
            let json = try await build(["--log-format", "json", "--fail-on", "new"])
            #expect(json.status == 1)
            let events = Self.lines(json.stderr).compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let failures = events.filter { $0["event"] as? String == "failure" }
            #expect(
                failures.map { "\($0["path"] as? String ?? "") \(($0["new"] as? Bool).map(String.init) ?? "none")" } == [
                    "broken.jpg false", "broken2.jpg false", "broken3.jpg true",
                ],
                "\(json.stderr)")
            #expect(json.summary["failures"] as? Int == 3 && json.summary["newFailures"] as? Int == 1, "\(json.summary)")
        }
    }
}

extension CronTests {
    /// stdout of `build --check --json`, parsed.
    static func document(_ run: Processes.Output) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
    }

    @Test("--check --json: one document of what a build would change, by kind; --json without --check is a usage error")
    func checkJSON() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(
                source, ["a", "b", "c"].map { .photo("\($0).jpg", width: 64, height: 48) } + [.bytes("broken.jpg", Self.broken)])
            let check = ["build", source, "--out", out, "--check", "--json"]

            let none = try await CLITests.run(check)
            #expect(none.status == 1)
            let empty = try Self.document(none)
            #expect(empty["upToDate"] as? Bool == false && empty["manifest"] as? String == "no manifest.json yet", "\(empty)")
            // Never built: every file found would be added.
            #expect(empty["added"] as? [String] == ["a.jpg", "b.jpg", "broken.jpg", "c.jpg"], "\(empty)")

            _ = try await CLITests.run(["build", source, "--out", out])
            let fresh = try await CLITests.run(check)
            #expect(fresh.status == 0, "\(fresh.stdout)")
            let current = try Self.document(fresh)
            #expect(current["upToDate"] as? Bool == true && current["manifest"] == nil, "\(current)")
            #expect((current["failing"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == ["broken.jpg"], "\(current)")
            for kind in ["added", "changed", "removed", "thumbnails"] { #expect((current[kind] as? [String])?.isEmpty == true) }

            try Fixtures.writeImage(to: source + "/b.jpg", width: 80, height: 60)
            try Fixtures.writeImage(to: source + "/d.jpg", width: 64, height: 48)
            try FileManager.default.removeItem(atPath: source + "/c.jpg")
            let changed = try await CLITests.run(check)
            #expect(changed.status == 1)
            let stale = try Self.document(changed)
            #expect(stale["upToDate"] as? Bool == false && stale["manifest"] == nil, "\(stale)")
            #expect(stale["added"] as? [String] == ["d.jpg"] && stale["changed"] as? [String] == ["b.jpg"], "\(stale)")
            #expect(stale["removed"] as? [String] == ["c.jpg"], "\(stale)")

            let alone = try await CLITests.run(["build", source, "--out", out, "--json"])
            #expect(alone.status == 64, "\(alone.stderr)")
        }
    }
}

extension CronTests {
    /// Every file under `out` (dot files aside) with its inode and modification time.
    static func published(_ out: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: out))
        for case let path as String in enumerator where !path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
            var info = stat()
            guard lstat(out + "/" + path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            files[path] = "\(info.st_ino) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
        return files
    }

    @Test("a checkout (same bytes, new file times) is no change: --check --verify exits 0, a build rewrites no published file")
    func checkoutIsNoChange() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(
                source, ["a", "b", "2024/c"].enumerated().map { .photo("\($1).jpg", width: 96 + $0, height: 64) })
            let first = try await CLITests.run(["build", source, "--out", out])
            #expect(first.status == 0, "\(first.stderr)")
            let before = try Self.published(out)
            let items = try ManifestFile.load(out + "/manifest.json").items
            #expect(before.keys.contains("manifest.json") && before.keys.contains { $0.hasPrefix("pages/") }, "\(before.keys.sorted())")
            #expect(before.keys.count { $0.hasPrefix("thumbs/") } >= 3, "\(before.keys.sorted())")

            // What a fresh clone does: the same bytes, every file time new.
            for name in ["a", "b", "2024/c"] {
                try FileManager.default.setAttributes(
                    [.modificationDate: Date(timeIntervalSinceNow: 3_600)], ofItemAtPath: source + "/\(name).jpg")
            }
            let plainCheck = try await CLITests.run(["build", source, "--out", out, "--check"])
            #expect(plainCheck.status == 1 && plainCheck.stdout.contains("changed a.jpg"), "without --verify, times are all it reads")
            let verified = try await CLITests.run(["build", source, "--out", out, "--check", "--verify"])
            #expect(verified.status == 0, "\(verified.stdout)")

            let rebuilt = try await CLITests.run(["build", source, "--out", out])
            #expect(rebuilt.status == 0 && rebuilt.stderr.contains("manifest unchanged"), "\(rebuilt.stderr)")
            #expect(try Self.published(out) == before, "no published file was written again")
            #expect(try ManifestFile.load(out + "/manifest.json").items == items)
            let after = try await CLITests.run(["build", source, "--out", out, "--check"])
            #expect(after.status == 0, "the new times are recorded: \(after.stdout)")
        }
    }
}

extension CronTests {
    /// A process's parent (`/proc/PID/stat`, the field after the state).
    static func parent(of pid: pid_t) -> pid_t? {
        let stat = WorkerTests.read("/proc/\(pid)/stat")
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? pid_t(fields[1]) : nil
    }

    @Test("a --force killed midway (SIGTERM) leaves the next run nothing to redo; --check never calls a published item added")
    func killedForce() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try WorkerTests.library(root)
            let out = root + "/out"
            let first = try await CLITests.run(["build", source, "--out", out])
            #expect(first.status == 0, "\(first.stderr)")
            // --jobs 1: a, b and c are made again, then SIGTERM while slow.jpg decodes; z.jpg
            // is never reached.
            async let forced = CLITests.run(["build", source, "--out", out, "--force", "--jobs", "1"])
            let caught = await Processes.poll(
                every: 1000, attempts: 60_000, until: { WorkerTests.slowWorker(of: source) != nil },
                then: {
                    if let worker = WorkerTests.slowWorker(of: source), let build = Self.parent(of: worker) { kill(build, SIGTERM) }
                })
            let stopped = try await forced
            #expect(caught && stopped.status == 143, "\(stopped.stderr)")

            let check = try await CLITests.run(["build", source, "--out", out, "--check"])
            #expect(!check.stdout.contains("added"), "\(check.stdout)")
            let next = try await CLITests.run(["build", source, "--out", out, "--log-format", "json"])
            #expect(next.status == 0, "\(next.stderr)")
            #expect(next.summary["reused"] as? Int == 5 && next.summary["thumbnailsWritten"] as? Int == 0, "\(next.summary)")
            #expect(try ManifestFile.load(out + "/manifest.json").items.count == 5)
        }
    }
}
