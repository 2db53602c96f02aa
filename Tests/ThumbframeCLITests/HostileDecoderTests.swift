import Foundation
import Testing
import ThumbframeCore
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

/// glibc's listxattr(2), which Swift's Glibc module does not declare.
@_silgen_name("listxattr")
private func listAttributes(_ path: UnsafePointer<CChar>, _ list: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int

/// The C compiler that builds the hostile decoder.
private let hostileCompiler = ["/usr/bin/cc", "/usr/bin/gcc"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// A decoder running an attacker's code: Tests/HostileDecoder/hostile.c, compiled here and
/// preloaded into the build, replaces libvips' first decoder call in each worker (after the
/// sandbox is in place) with one attack or one forged message. Each must be refused: the build
/// ends as documented (1: the file failed, the other went on), nothing outside OUT_DIR changed in
/// bytes, mode, times or extended attributes, no other process was signalled, nothing forged was
/// published, and no worker outlived the build. Run as root and, where the tests are root, as an
/// unprivileged user too; and where a container's profile refuses seccomp and Landlock, the
/// forgeries again (the build's checks hold without the kernel's sandbox).
@Suite("Hostile decoder", .enabled(if: hostileCompiler != nil, "needs cc to build the hostile decoder"))
struct HostileDecoderTests {

    /// What each attack is refused with: a fragment of the file's failure.
    static let attacks: [(action: String, refusal: String)] = [
        ("chmod", "probe: not a readable image"), ("fchmod", "probe: not a readable image"), ("chown", "probe: not a readable image"),
        ("truncate", "decoder crashed (SIGSYS)"), ("setxattr", "decoder crashed (SIGSYS)"), ("utimes", "decoder crashed (SIGSYS)"),
        ("kill-build", "decoder crashed (SIGSYS)"), ("kill-other", "decoder crashed (SIGSYS)"), ("kill-group", "decoder crashed (SIGSYS)"),
        ("prlimit", "decoder crashed (SIGSYS)"), ("setpriority", "decoder crashed (SIGSYS)"), ("affinity", "decoder crashed (SIGSYS)"),
        ("fanotify", "decoder crashed (SIGSYS)"), ("inotify", "decoder crashed (SIGSYS)"), ("sysv", "decoder crashed (SIGSYS)"),
        ("mqueue", "decoder crashed (SIGSYS)"), ("shared-memory", "decoder crashed (SIGSYS)"), ("outlive", "decoder crashed (SIGSYS)"),
        ("socket", "decoder crashed (SIGSYS)"),
        ("forge-item", "the decoder broke its contract"), ("forge-nested", "the decoder broke its contract"),
        ("forge-huge", "the decoder broke its contract: a malformed or oversized message"),
        // A claim that OUT_DIR is full, which it is not: that file fails (retried next run), no more.
        ("forge-unwritable", "a.jpg: write: No space left on device"),
        ("forge-rendering", "the decoder broke its contract: a video phase"),
        // A failure it forges is the job's own file's, whatever path it names.
        ("forge-failure", "a.jpg: decode: forged"),
    ]

    /// The facts of a file the attacks aim at: bytes, mode, times, extended attributes.
    static func facts(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "gone" }
        let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        var names = [CChar](repeating: 0, count: 4096)
        let count = listAttributes(path, &names, names.count)
        let attributes = count > 0 ? String(decoding: names.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return
            "\(bytes.base64EncodedString()) mode \(info.st_mode) uid \(info.st_uid) mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) "
            + "xattrs [\(attributes)]"
    }

    /// A process's state letter (`T`: stopped), from /proc.
    static func state(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return String(text[text.index(close, offsetBy: 2)])
    }

    @Test("every action of a decoder's planted code is refused, every forged message fails only its file, as root and unprivileged")
    func refused() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (library, source) = try Self.prepare(root)
            let users: [String?] =
                geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") ? [nil, "65534"] : [nil]
            for user in users {
                for (action, refusal) in Self.attacks where user == nil || !action.hasPrefix("forge") {
                    try await attack(action, refusal: refusal, user: user, root: root, source: source, library: library)
                }
            }
            if WorkerTests.refusingProfileAvailable {
                for (action, refusal) in Self.attacks where action.hasPrefix("forge") && action != "forge-rendering" {
                    try await attack(action, refusal: refusal, user: "refused", root: root, source: source, library: library)
                }
            }
        }
    }

    private func attack(_ action: String, refusal: String, user: String?, root: String, source: String, library: String) async throws {
        let (victim, out, pids) = (root + "/victim", root + "/out-\(action)-\(user ?? "root")", root + "/pids-\(action)-\(user ?? "root")")
        try Fixtures.write(Array("an original outside both trees".utf8), to: victim)
        try Fixtures.makeDirectory(pids)
        chmod(pids, 0o777)
        for path in [root, source, source + "/a.jpg"] { chmod(path, path == source + "/a.jpg" ? 0o644 : 0o777) }
        if let user, let id = UInt32(user) { chown(victim, id, id) }
        let before = Self.facts(victim)
        // Another process of the same user, which no worker may signal.
        let sentinel = Process()
        sentinel.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sentinel.arguments = ["3600"]
        // Not on the test's own pipes, and ended with SIGKILL (it inherits a mask that may block
        // SIGTERM from the test process).
        sentinel.standardOutput = FileHandle.nullDevice
        sentinel.standardError = FileHandle.nullDevice
        try sentinel.run()
        defer {
            kill(sentinel.processIdentifier, SIGKILL)
            sentinel.waitUntilExit()
        }
        let environment = [
            "LD_PRELOAD=" + library, "HOSTILE_ACTION=" + action, "HOSTILE_VICTIM=" + victim, "HOSTILE_DIR=" + pids,
            "HOSTILE_SENTINEL=\(sentinel.processIdentifier)",
        ]
        let prefix: [String]
        switch user {
        case nil: prefix = ["/usr/bin/env"]
        // A container's profile that refuses seccomp and Landlock (WorkerTests.refusingProfile).
        case "refused"?: prefix = ["/usr/bin/python3", "-c", WorkerTests.refusingProfile, "/usr/bin/env"]
        case let id?: prefix = Self.running(as: id)
        }
        let arguments =
            Array(prefix.dropFirst()) + environment + [CLITests.executable, "build", source, "--out", out, "--decode-timeout", "5"]
        let run = try await Processes.run(prefix[0], arguments)
        let who = "\(action) as \(user ?? "root")"
        #expect(run.status == 1, "\(who): \(run.stderr)")
        #expect(run.stderr.contains("a.jpg") && run.stderr.contains(refusal), "\(who): \(run.stderr)")
        #expect(Self.facts(victim) == before, "\(who) changed the victim")
        let sentinelState = Self.state(sentinel.processIdentifier)
        #expect(
            sentinelState != nil && sentinelState != "T", "\(who) stopped or ended another process: \(String(describing: sentinelState))")
        #expect(Self.facts(source + "/a.jpg").contains("mode 33188"), "\(who) changed the original")
        // No worker left: each wrote its pid as it started.
        let started = try FileManager.default.contentsOfDirectory(atPath: pids).compactMap { Int32($0.split(separator: ".").last ?? "") }
        #expect(!started.isEmpty, "\(who): no worker started")
        for pid in started {
            let cmdline = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            #expect(!cmdline.contains("__decode-worker") || Self.state(pid) == "Z", "\(who): worker \(pid) outlived the build")
        }
        // Nothing forged is published: every file of OUT_DIR is free of the forgeries' words.
        let files = FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String } ?? []
        for file in files {
            guard let data = FileManager.default.contents(atPath: out + "/" + file) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for forged in ["etc/passwd", "etc/shadow", "evil.example", "9223372036854775807"] {
                #expect(!text.contains(forged), "\(who): \(file) holds \(forged)")
            }
        }
        let manifest = try ManifestFile.load(out + "/manifest.json")
        #expect(manifest.items.isEmpty && manifest.failures.map(\.path) == ["a.jpg"], "\(who)")
    }

    /// Set by scripts/test for its second `swift test`, which runs what must run alone.
    static let alone = ProcessInfo.processInfo.environment["THUMBFRAME_TEST_ALONE"] == "1"

    @Test(
        "a worker's threads are bounded by RLIMIT_NPROC, as nobody under a root build and as the user of an unprivileged one: what that user ran, 1024 for its other processes, and 512 a job in flight",
        // Its planted code starts threads until the kernel refuses: every other build's workers
        // running as that user meanwhile could start none (a CI run failed so). scripts/test runs
        // it after the rest, alone.
        .enabled(if: alone, "runs alone, after the rest (THUMBFRAME_TEST_ALONE=1, as scripts/test does)")
    )
    func threadsBounded() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (library, source) = try Self.prepare(root)
            for path in [source, source + "/a.jpg"] { chmod(path, path == source ? 0o777 : 0o644) }
            let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
            // (user to run the build as, or nil for the test's own; the uid its workers run as)
            var runs: [(as: String?, uid: UInt32)] = [(nil, geteuid() == 0 ? nobody : geteuid())]
            if geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") { runs.append(("65534", 65534)) }
            for (user, uid) in runs {
                for jobs in [1, 2] {
                    let prefix = user.map(Self.running(as:)) ?? ["/usr/bin/env"]
                    let before = WorkerSandbox.threads(ofUser: uid)
                    let run = try await Processes.run(
                        prefix[0],
                        Array(prefix.dropFirst()) + [
                            "LD_PRELOAD=" + library, "HOSTILE_ACTION=threads", CLITests.executable, "build", source, "--out",
                            root + "/out-\(user ?? "own")-\(jobs)", "--jobs", "\(jobs)",
                        ])
                    let who = "as \(user ?? "the test's user"), --jobs \(jobs)"
                    #expect(run.status == 1, "\(who): \(run.stderr)")
                    // The planted code says, as the file's failure, who it runs as, its thread limit
                    // and how many threads it could start (of the 20 000 it tried).
                    let words = run.stderr.split(separator: "\n").first { $0.contains("a.jpg: decode: uid") }?.split(separator: " ")
                    let numbers = (words ?? []).compactMap { Int($0) }
                    try #require(numbers.count == 3, "\(who): \(run.stderr)")
                    let (limit, started) = (numbers[1], numbers[2])
                    #expect(numbers[0] == Int(uid), "\(who): \(run.stderr)")
                    let allowance = 1024 + 512 * jobs
                    #expect(limit >= allowance && limit <= before + allowance + 64, "\(who): limit \(limit), \(before) before")
                    #expect(started >= 256 && started < limit, "\(who): started \(started) under \(limit)")
                }
            }
        }
    }

    /// The hostile decoder compiled into `root` (open to every user, as the unprivileged runs need)
    /// and a library of one JPEG beside it.
    static func prepare(_ root: String) throws -> (library: String, source: String) {
        chmod(root, 0o777)
        let library = try compile(into: root)
        let source = root + "/src"
        try Fixtures.makeLibrary(source, [.photo("a.jpg", width: 64, height: 48)])
        return (library, source)
    }

    /// A command prefix that runs what follows as uid and gid `id`, with no supplementary groups.
    static func running(as id: String) -> [String] {
        ["/usr/bin/setpriv", "--reuid", id, "--regid", id, "--clear-groups", "/usr/bin/env"]
    }

    /// Compiles hostile.c into a preloadable library in `root`.
    static func compile(into root: String) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../HostileDecoder/hostile.c")
            .standardized.path
        let library = root + "/hostile.so"
        let built = try Processes.runBlocking(hostileCompiler!, ["-shared", "-fPIC", "-O1", "-o", library, source, "-lrt"])
        guard built.status == 0 else { throw CompileError(output: built.stderr) }
        chmod(library, 0o755)
        return library
    }

    struct CompileError: Error {
        var output: String
    }
}
