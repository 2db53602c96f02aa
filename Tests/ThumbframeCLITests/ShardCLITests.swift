import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Shards as a cluster runs them: separate processes at once on one OUT_DIR.
@Suite("Shards in processes", .serialized)
struct ShardCLITests {
    @Test("4 shard processes at once, one killed and run again, then merge: the bytes of one build")
    func fourProcesses() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Fixtures.photos(96, in: ["a", "b"], width: 1600, height: 1200, distinct: 4))
            let single = try await CLITests.run(["build", root + "/lib", "--out", root + "/single", "--quiet"])
            #expect(single.status == 0, "\(single.stderr)")

            // Shard 3 is killed while it works (once its first thumbnail is journaled, with about 24
            // files to go), then run again, as a scheduler retries it.
            let victim = try CronSafetyTests.start(["build", root + "/lib", "--out", root + "/out", "--shard", "3/4", "--jobs", "1"])
            // (Polled on a thread of its own: a Task.sleep can wake late while the rest of the suite
            // keeps the cooperative pool busy, and the shard would be done.)
            let pid = victim.processIdentifier
            _ = await Processes.poll(
                every: 500, attempts: 20_000, until: { FileManager.default.fileExists(atPath: root + "/out/.thumbframe-journal") },
                then: { kill(pid, SIGKILL) })
            victim.waitUntilExit()
            #expect(victim.terminationReason == .uncaughtSignal, "the shard was killed while it worked, not after")
            let others = try (0..<3).map {
                try CronSafetyTests.start(["build", root + "/lib", "--out", root + "/out", "--shard", "\($0)/4"])
            }
            for process in others {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
            }
            let rerun = try await CLITests.run(["build", root + "/lib", "--out", root + "/out", "--shard", "3/4"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(rerun.stderr.contains("shard 3/4:") && rerun.stdout.isEmpty, "a shard prints no manifest path: \(rerun.stderr)")

            let merge = try await CLITests.run(["merge", "--out", root + "/out", "--shards", "4"])
            #expect(merge.status == 0, "\(merge.stderr)")
            #expect(try Fixtures.manifestFiles(root + "/out") == Fixtures.manifestFiles(root + "/single"))
            let validate = try await CLITests.run(["validate", root + "/out/manifest.json"])
            #expect(validate.status == 0, "\(validate.stdout)")

            // Usage and refusals as exit codes.
            #expect(try await CLITests.run(["merge", "--out", root + "/out", "--shards", "5"]).status == 66)
            #expect(try await CLITests.run(["build", root + "/lib", "--out", root + "/out", "--shard", "4/4"]).status == 64)
            #expect(try await CLITests.run(["build", root + "/lib", "--out", root + "/out", "--shard", "auto/4"]).status == 64)
        }
    }

    static let repository = Fixtures.packageRoot
    /// Whether a one-node Slurm cluster starts here (scripts/test-helpers/slurm-test --probe starts one and
    /// stops it); asked once, and only when the Slurm test is to run.
    static let slurmStarts: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/slurmctld"), getuid() == 0 else { return false }
        return (try? Processes.runBlocking(repository + "/scripts/test-helpers/slurm-test", ["--probe"]))?.status == 0
    }()

    @Test(
        "a real Slurm job array (sbatch --array=0-3 --wait, --shard auto/4) and merge: the bytes of one build",
        .enabled(if: slurmStarts, "needs Slurm to start a one-node cluster here (root, slurm-wlm and munge: scripts/bootstrap --test)"))
    func slurmArray() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeLibrary(root + "/lib", Fixtures.photos(12, in: ["a", "b"], width: 400, height: 300, distinct: 4))
            try Fixtures.write(Array("not a jpeg".utf8), to: root + "/lib/b/broken.jpg")
            let single = try await CLITests.run(["build", root + "/lib", "--out", root + "/single", "--quiet"])
            #expect(single.status == 1, "one broken file: \(single.stderr)")
            let cluster = try await Processes.run(
                Self.repository + "/scripts/test-helpers/slurm-test", [CLITests.executable, root + "/lib", root + "/out", "4"])
            #expect(cluster.status == 1, "merge exits 1 for the broken file, as the single build: \(cluster.stdout)\n\(cluster.stderr)")
            #expect(
                (0..<4).allSatisfy { cluster.stdout.contains("shard \($0)/4:") || cluster.stderr.contains("shard \($0)/4:") },
                "every array task ran its own shard: \(cluster.stdout)")
            #expect(try Fixtures.manifestFiles(root + "/out") == Fixtures.manifestFiles(root + "/single"))
        }
    }
}
