import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// Every file is made in a decode worker (a process of its own, capped and sandboxed): one that
/// dies, hangs or outgrows its memory costs its file alone (issue 36).
@Suite("Decode workers")
struct WorkerTests {
    /// The decode workers of the build of `source` into an OUT_DIR beside it (their descriptor
    /// 5, OUT_DIR's `thumbs/`, is in the folder that holds `source`).
    static func workers(of source: String) -> [pid_t] {
        let resolved = URL(fileURLWithPath: source).resolvingSymlinksInPath().deletingLastPathComponent().path + "/"
        guard let proc = opendir("/proc") else { return [] }
        defer { closedir(proc) }
        var found: [pid_t] = []
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name), read("/proc/\(pid)/cmdline").contains("__decode-worker"),
                link("/proc/\(pid)/fd/5")?.hasPrefix(resolved) == true
            else { continue }
            found.append(pid)
        }
        return found
    }

    /// A small file's bytes as text (`/proc`'s report a size of 0: read to the end).
    static func read(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let got = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
        return String(decoding: buffer.prefix(max(0, got)), as: UTF8.self)
    }

    /// Where a symbolic link points, or nil.
    static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let got = readlink(path, &buffer, buffer.count - 1)
        guard got > 0 else { return nil }
        return String(decoding: buffer.prefix(got).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The worker of `source`'s build that is decoding `slow.jpg`: the one whose data is over
    /// 160 MiB (the JPEG's coefficients; a worker holds under 70 MiB between files).
    static func slowWorker(of source: String) -> pid_t? {
        workers(of: source).first { pid in
            let line = read("/proc/\(pid)/status").split(separator: "\n").first { $0.hasPrefix("VmData:") }
            let kibibytes = line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
            return (kibibytes ?? 0) > 160 << 10
        }
    }

    /// Four quick photos and `slow.jpg`, a 5000×5000 progressive JPEG of noise (a second or so
    /// of decoding: long enough to be caught in the act). `z.jpg` comes after it: at `--jobs 1` the
    /// build hands it to slow.jpg's worker ahead, and it must be made again when that one dies.
    static func library(_ root: String) throws -> String {
        let source = root + "/src"
        try Fixtures.makeLibrary(source, ["a", "b", "c", "z"].map { .photo("\($0).jpg", width: 320, height: 240) })
        try Fixtures.writeNoise(to: root + "/noise.jpg", width: 5000, height: 5000)
        try Fixtures.reencode(root + "/noise.jpg", to: source + "/slow.jpg", options: "[interlace,Q=95]")
        return source
    }

    /// Set once by the thread that polls, read after it has resumed its caller.
    final class Caught: @unchecked Sendable {
        var worker = false
    }

    /// Builds `source` while `act` is done to the worker decoding `slow.jpg`; the run's output and
    /// whether the worker was caught. The watch lasts until the worker is caught or the build has
    /// written its manifest (at most 10 minutes): with the whole suite running beside it, a build
    /// has taken over a minute to reach slow.jpg.
    static func build(_ source: String, _ out: String, _ extra: [String], act: @escaping @Sendable (pid_t) -> Void)
        async throws -> (Processes.Output, Bool)
    {
        async let run = CLITests.run(["build", source, "--out", out, "--jobs", "1", "--log-format", "json"] + extra)
        let caught = Caught()
        _ = await Processes.poll(
            every: 1000, attempts: 600_000,
            until: { Self.slowWorker(of: source) != nil || FileManager.default.fileExists(atPath: out + "/manifest.json") },
            then: {
                guard let pid = Self.slowWorker(of: source) else { return }
                act(pid)
                caught.worker = true
            })
        return (try await run, caught.worker)
    }

    @Test("a worker killed from outside (SIGSEGV) fails its file alone: the others are built, the summary counts one crash")
    func killedWorker() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root)
            let (run, caught) = try await Self.build(source, root + "/out", []) { kill($0, SIGSEGV) }
            #expect(caught, "a worker decoded slow.jpg")
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["a.jpg", "b.jpg", "c.jpg", "z.jpg"])
            #expect(manifest.failures.map { "\($0.path): \($0.reason)" } == ["slow.jpg: decoder crashed (SIGSEGV)"])
            #expect(manifest.failures.map(\.cause) == ["crash"])
            #expect(run.summary["failed"] as? [String: Int] == ["crash": 1], "\(run.summary)")
            let inspect = try await CLITests.run(["inspect", root + "/out/manifest.json"])
            #expect(inspect.stdout.contains("failures      1 (crash 1)"), "\(inspect.stdout)")
            // A failure like any other: retried when the file changes, not before.
            let again = try await CLITests.run(["build", source, "--out", root + "/out", "--log-format", "json"])
            #expect(again.summary["reused"] as? Int == 4 && again.summary["failures"] as? Int == 1, "\(again.stderr)")
        }
    }

    @Test("a worker stopped for good (SIGSTOP) is killed at its file's deadline; the run goes on")
    func stoppedWorker() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root)
            // A deadline long enough that slow.jpg's own decode, slowed by a busy machine (the
            // suite runs in parallel), cannot reach it before the worker is caught and stopped.
            let (run, caught) = try await Self.build(source, root + "/out", ["--decode-timeout", "30"]) { kill($0, SIGSTOP) }
            #expect(caught, "a worker decoded slow.jpg")
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["a.jpg", "b.jpg", "c.jpg", "z.jpg"])
            #expect(
                manifest.failures.map { "\($0.path): \($0.reason)" } == ["slow.jpg: timed out after 30 s (--decode-timeout), killed"])
            #expect(manifest.failures.map(\.cause) == ["time"])
            #expect(run.summary["failed"] as? [String: Int] == ["time": 1], "\(run.summary)")
            #expect(Self.workers(of: source).isEmpty, "no worker outlives its build")
        }
    }

    @Test("a worker's memory is capped by the kernel: a file the header checks let through fails 'over the memory limit'")
    func memoryCap() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = try Self.library(root)
            // A 5000×5000 progressive JPEG holds 143 MiB of coefficients: within --max-decode-bytes
            // (512 MiB), over a worker capped at 160 MiB.
            let run = try await Processes.run(
                "/usr/bin/env",
                [
                    "THUMBFRAME_WORKER_MEMORY=\(160 << 20)", CLITests.executable, "build", source, "--out", root + "/out", "--jobs", "2",
                    "--log-format", "json",
                ])
            #expect(run.status == 1, "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["a.jpg", "b.jpg", "c.jpg", "z.jpg"])
            #expect(manifest.failures.map(\.path) == ["slow.jpg"])
            #expect(manifest.failures.first?.reason.hasPrefix("over the memory limit (160 MiB)") == true, "\(manifest.failures)")
            #expect(manifest.failures.first?.cause == "memory", "\(manifest.failures)")
            #expect(run.summary["failed"] as? [String: Int] == ["memory": 1], "\(run.summary)")
        }
    }
}

extension WorkerTests {
    /// Whether Python's libseccomp binding is here to apply `refusingProfile`.
    static let refusingProfileAvailable =
        (try? Processes.runBlocking("/usr/bin/env", ["python3", "-c", "import seccomp"]))?.status == 0

    /// Runs what follows under a seccomp profile like a container's that predates Landlock and
    /// forbids nested filters: Landlock's calls and `seccomp` answer ENOSYS, `prctl(PR_SET_SECCOMP)`
    /// EINVAL (Debian's python3-seccomp, the libseccomp binding).
    static let refusingProfile = """
        import errno, os, sys, seccomp
        profile = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "seccomp"):
            profile.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
        profile.add_rule(seccomp.ERRNO(errno.EINVAL), "prctl", seccomp.Arg(0, seccomp.EQ, 22))
        profile.load()
        os.execv(sys.argv[1], sys.argv[1:])
        """

    @Test("where the kernel or a container refuses seccomp and Landlock, the build says so once and builds every file")
    func refusedSandbox() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, ["a", "b", "c", "d", "e"].map { .photo("\($0).jpg", width: 320, height: 240) })
            let run = try await Processes.run(
                "/usr/bin/python3",
                ["-c", Self.refusingProfile, CLITests.executable, "build", source, "--out", root + "/out", "--jobs", "2"])
            #expect(run.status == 0, "\(run.stderr)")
            let warnings = run.stderr.split(separator: "\n").filter { $0.contains("decode workers run isolated without") }
            #expect(
                warnings.map(String.init) == [
                    "decode workers run isolated without seccomp (Invalid argument), Landlock (Function not implemented): "
                        + "the kernel refused it"
                ], "\(run.stderr)")
            let manifest = try ManifestFile.load(root + "/out/manifest.json")
            #expect(manifest.items.map(\.path) == ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"] && manifest.failures.isEmpty)
            // Without the profile, the same build says nothing of the sandbox.
            let plain = try await CLITests.run(["build", source, "--out", root + "/plain", "--jobs", "2"])
            #expect(plain.status == 0 && !plain.stderr.contains("isolated without"), "\(plain.stderr)")
        }
    }
}
