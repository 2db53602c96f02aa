import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// What makes thumbframe safe in cron and pipelines, exercised on the real executable.
@Suite("Cron safety", .serialized)
struct CronSafetyTests {
    /// Starts the executable without waiting for it.
    static func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLITests.executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Whether JSON log lines include a progress event with some files done and some to go.
    static func midway(_ log: String) -> Bool {
        ConventionTests.lines(log).contains { event in
            guard event["event"] as? String == "progress", let done = event["done"] as? Int, let total = event["total"] as? Int
            else { return false }
            return done > 0 && done < total
        }
    }

    /// The manifest in `out` (if any) is valid and every thumbnail it names exists.
    static func expectIntact(_ out: String, _ label: String) throws {
        guard FileManager.default.fileExists(atPath: out + "/manifest.json") else { return }
        let manifest = try ManifestFile.load(out + "/manifest.json")
        #expect(manifest.consistencyProblems().isEmpty, "\(label)")
        for item in manifest.items {
            for thumbnail in item.thumbnails.values {
                #expect(FileManager.default.fileExists(atPath: out + "/" + thumbnail.path), "\(label): \(thumbnail.path) missing")
            }
        }
    }

    @Test("exit 75: a second build on the same OUT_DIR stops at once")
    func locked() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(2, in: ["a", "b"], width: 100, height: 80, distinct: 4))
            try Fixtures.makeDirectory(root + "/out")
            // Hold the lock as a running build would.
            let fd = open(root + "/out/.thumbframe.lock", O_RDWR | O_CREAT, 0o644)
            #expect(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            // A build that waited for the lock would not return while it is held.
            let second = try await CLITests.run(["build", root + "/src", "--out", root + "/out"])
            #expect(second.status == 75)
            #expect(second.stderr.contains("another build"))
            #expect(!FileManager.default.fileExists(atPath: root + "/out/manifest.json"))
            close(fd)
            // A lock left by a process that is gone does not block: the kernel released it.
            let third = try await CLITests.run(["build", root + "/src", "--out", root + "/out"])
            #expect(third.status == 0)
        }
    }

    @Test("--check: exit 1 naming what is stale, 0 when up to date, nothing written")
    func check() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(2, in: ["a", "b"], width: 100, height: 80, distinct: 4))
            let stale = try await CLITests.run(["build", root + "/src", "--out", root + "/out", "--check"])
            #expect(stale.status == 1 && stale.stdout == "no manifest.json yet\n")
            #expect(!FileManager.default.fileExists(atPath: root + "/out"))
            #expect(try await CLITests.run(["build", root + "/src", "--out", root + "/out"]).status == 0)
            let fresh = try await CLITests.run(["build", root + "/src", "--out", root + "/out", "--check"])
            #expect(fresh.status == 0 && fresh.stdout.isEmpty && fresh.stderr.contains("up to date"))
            try Fixtures.writeImage(to: root + "/src/b/new.jpg", width: 50, height: 50)
            let added = try await CLITests.run(["build", root + "/src", "--out", root + "/out", "--check"])
            #expect(added.status == 1 && added.stdout == "added b/new.jpg\n")
        }
    }

    @Test(
        "SIGTERM, and SIGHUP (the terminal closed), stop between files: exit 143 or 129, previous manifest kept, lock released",
        arguments: [SIGTERM, SIGHUP])
    func terminate(signal: Int32) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(2, in: ["a", "b"], width: 1600, height: 1200, distinct: 4))
            #expect(try await CLITests.run(["build", root + "/src", "--out", root + "/out"]).status == 0)
            let before = try Data(contentsOf: URL(fileURLWithPath: root + "/out/manifest.json"))
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(200, in: ["a", "b"], width: 1600, height: 1200, distinct: 4))
            // Ready when the build says it is at work: its first progress line with files done
            // and files to go (not a guessed delay, which a loaded machine outlasts before the
            // build starts).
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLITests.executable)
            process.arguments = [
                "build", root + "/src", "--out", root + "/out", "--jobs", "1", "--force", "--progress", "--log-format", "json",
            ]
            let stderr = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = stderr
            try process.run()
            var seen = ""
            while process.isRunning, !seen.contains("\"event\":\"progress\"") || !Self.midway(seen) {
                let chunk = stderr.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen += String(decoding: chunk, as: UTF8.self)
            }
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit && process.terminationStatus == 128 + signal)
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/out/manifest.json")) == before)
            try Self.expectIntact(root + "/out", "after signal \(signal)")
            let next = try await CLITests.run(["build", root + "/src", "--out", root + "/out", "--check"])
            #expect(next.status == 1)
            let again = try await CLITests.run(["build", root + "/src", "--out", root + "/out"])
            #expect(again.status == 0, "\(again.status): \(again.stderr)")
        }
    }

    @Test("permission denied is a read failure; the rest is built")
    func permissionDenied() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(2, in: ["a", "b"], width: 100, height: 80, distinct: 4))
            try Fixtures.writeImage(to: root + "/src/a/secret.jpg", width: 100, height: 80)
            chmod(root + "/src/a/secret.jpg", 0)
            try Fixtures.makeDirectory(root + "/out")
            var arguments = ["build", root + "/src", "--out", root + "/out"]
            var executable = CLITests.executable
            if getuid() == 0 {
                // Root reads anything: run as nobody, who may write only the output directory.
                chmod(root, 0o755)
                chmod(root + "/out", 0o777)
                arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", CLITests.executable] + arguments
                executable = "/usr/bin/setpriv"
            }
            let run = try await Processes.run(executable, arguments)
            #expect(run.status == 1, "\(run.stderr)")
            #expect(run.stderr.contains("a/secret.jpg: read: Permission denied"))
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.count == 2)
        }
    }

    @Test(
        "a user that may lock no memory (ulimit -l 0, as a service runs): no library's warning on stderr, a quiet no-op night prints nothing"
    )
    func quietWithoutLockedMemory() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/src", Fixtures.photos(2, in: ["a"], width: 100, height: 80))
            try Fixtures.makeDirectory(root + "/out")
            // As nobody when root (root may lock memory whatever the limit), who reads the library
            // and writes only the output directory.
            chmod(root, 0o755)
            chmod(root + "/out", 0o777)
            let user = getuid() == 0 ? "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups " : ""
            func run(_ arguments: String) async throws -> Processes.Output {
                try await Processes.run("/bin/sh", ["-c", "ulimit -l 0 && exec \(user)\(CLITests.executable) " + arguments])
            }
            let version = try await run("--version")
            #expect(version.status == 0 && version.stderr.isEmpty, "\(version.stderr)")
            let night = "build \(root)/src --out \(root)/out -q --fail-on new"
            let first = try await run(night)
            #expect(first.status == 0 && first.stderr.isEmpty, "\(first.stderr)")
            let second = try await run(night)
            #expect(second.status == 0 && second.stdout.isEmpty && second.stderr.isEmpty, "\(second.stdout)\(second.stderr)")
        }
    }

    @Test("SIGKILL at 24 random moments: the manifest stays valid, then one run finishes the rest")
    func killLoop() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            let out = root + "/out"
            try Fixtures.makeLibrary(source, Fixtures.photos(40, in: ["a", "b"], width: 1200, height: 900, distinct: 4))
            // How long a full build takes here, so the kills land all over it.
            let timed = Date()
            #expect(try await CLITests.run(["build", source, "--out", root + "/timing", "--jobs", "1"]).status == 0)
            let fullMilliseconds = max(50, Int(Date().timeIntervalSince(timed) * 1000))
            // Every kill then lands while a previous manifest is in place.
            let second = try await CLITests.run(["build", source, "--out", out])
            #expect(second.status == 0, "\(second.stderr)")
            var random = SplitMix64(state: 142)
            var kills = 0
            var round = 0
            while kills < 24, round < 60 {
                // The library changes every few rounds, and most rounds force rewrites of
                // thumbnails that exist: a kill can land in every phase of a build.
                if round % 5 == 4 {
                    try Fixtures.writeImage(to: "\(source)/b/new-\(round).jpg", width: 900 + round, height: 700)
                }
                let process = try Self.start(["build", source, "--out", out, "--jobs", "1"] + (round % 3 == 0 ? [] : ["--force"]))
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...fullMilliseconds, using: &random)))
                if process.isRunning {
                    kill(process.processIdentifier, SIGKILL)
                    kills += 1
                }
                process.waitUntilExit()
                try Self.expectIntact(out, "after round \(round)")
                round += 1
            }
            #expect(kills >= 20, "only \(kills) of \(round) builds were still running when killed")

            // The next run completes and writes only the thumbnails that were not yet there.
            let existing = IncrementalThumbnails.list(out)
            let final = try await CLITests.run(["build", source, "--out", out])
            #expect(final.status == 0, "\(final.stderr)")
            try Self.expectIntact(out, "final")
            let manifest = try ManifestFile.load(out + "/manifest.json")
            let added: Int = (0..<round).filter { $0 % 5 == 4 }.count
            #expect(manifest.items.count == 40 + added)
            let referenced = Set(manifest.items.flatMap { $0.thumbnails.values.map(\.path) })
            let missingBefore = referenced.subtracting(existing.keys)
            let after = IncrementalThumbnails.list(out)
            let touched = Set(after.filter { existing[$0.key] != $0.value }.keys)
            #expect(touched == missingBefore, "the final run wrote exactly the thumbnails that were missing")
            #expect(!after.keys.contains { $0.contains(".tf-tmp-") }, "temporary files were pruned")
            // No orphan survives a kill in any phase (after the manifest rename, during pruning).
            #expect(Set(after.keys) == referenced, "orphans: \(Set(after.keys).subtracting(referenced).sorted())")
        }
    }
}

/// Thumbnail files under `OUT_DIR/thumbs` with their inode and modification time.
enum IncrementalThumbnails {
    static func list(_ out: String) -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: out + "/thumbs")
        while let path = enumerator?.nextObject() as? String {
            var info = stat()
            if lstat(out + "/thumbs/" + path, &info) == 0, info.st_mode & 0o170000 == 0o100000 {
                files["thumbs/" + path] = "\(info.st_ino)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            }
        }
        return files
    }
}

@Suite("Cron safety: a killed cold build", .serialized)
struct KilledColdBuildTests {
    @Test("a cold build killed midway: the next run redoes only the files that were in flight")
    func resumesWhereItStopped() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            let count = 40
            try Fixtures.makeDirectory(source)
            try Fixtures.makeLibrary(source, Fixtures.photos(count, in: [""], width: 1400, height: 1000))
            // No zoom ladder: each file then journals exactly the default recipes' names.
            let process = try CronSafetyTests.start(["build", source, "--out", out, "--jobs", "1", "--ladder-max-side", "0"])
            // Readiness: the journal names each thumbnail before it is written; wait for ten files' worth.
            // (Polled on a thread of its own: a loaded test run must not oversleep past the build's end.)
            let pid = process.processIdentifier
            _ = await Processes.poll(
                every: 1000, attempts: 20_000,
                until: {
                    ((try? String(contentsOfFile: out + "/.thumbframe-journal", encoding: .utf8)) ?? "").split(separator: "\n").count >= 20
                }, then: { kill(pid, SIGKILL) })
            process.waitUntilExit()
            try #require(process.terminationReason == .uncaughtSignal, "the build finished before it was killed")
            // Every file whose thumbnails were written before the kill is recorded, but the one in
            // flight (--jobs 1) and those of the index's last commit interval (a quarter of a
            // second: at most 5 of these files): the next run reuses them without opening them.
            let journaled = ((try? String(contentsOfFile: out + "/.thumbframe-journal", encoding: .utf8)) ?? "").split(separator: "\n")
                .count
            let finished = journaled / ThumbnailRecipe.defaults.count
            let next = try await CLITests.run(["build", source, "--out", out, "--log-format", "json", "--ladder-max-side", "0"])
            #expect(next.status == 0)
            let reused = try #require(next.summary["reused"] as? Int)
            #expect(reused > 0 && reused >= finished - 6, "\(reused) files reused after \(finished) were finished")
            #expect(try ManifestFile.load(out + "/manifest.json").items.count == count)
        }
    }
}
