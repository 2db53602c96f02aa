import Foundation
import Testing
import ThumbframeCore
import ThumbframeManifest
import ThumbframeTestSupport

/// What was built is never lost or published wrong: a merge never names a thumbnail that is not
/// on disk, and a full disk stops a build with its state index kept for the next run.
@Suite("Data kept", .serialized)
struct DataKeptTests {
    /// Runs a Python snippet (the standard library's sqlite3 edits a state index as a hand would).
    static func python(_ script: String, _ arguments: [String]) async throws -> Processes.Output {
        try await Processes.run("/usr/bin/env", ["python3", "-c", script] + arguments)
    }

    static func data(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// Runs SQL on OUT_DIR's state index with Python's sqlite3 and returns the first column of each row.
    /// Runs `statements` on OUT's state index (an older format's), then builds LIB again: every
    /// photo is probed again (format 9's upgrade), nothing is written.
    static func rebuild(_ lib: String, _ out: String, after statements: [String]) async throws {
        let downgrade =
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); [db.execute(s) for s in sys.argv[2:]]; db.commit()"
        #expect(try await Self.python(downgrade, [out + "/.thumbframe-state.sqlite"] + statements).status == 0)
        let before = SafetyTests.snapshot(out + "/thumbs")
        let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(rerun.summary["reused"] as? Int == 0 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
        #expect(SafetyTests.snapshot(out + "/thumbs") == before)
    }

    static func query(_ out: String, _ sql: String) async throws -> [String] {
        let run = try await python(
            "import sqlite3, sys; [print(row[0]) for row in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]",
            [out + "/.thumbframe-state.sqlite", sql])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    @Test(
        "merge never publishes a missing thumbnail: a plain build between shards and merge prunes none of theirs; a shard's missing or tampered row stops the merge (65), the manifest untouched"
    )
    func mergePublishesOnlyWhatIsThere() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(12, width: 80, height: 60))
            for shard in 0..<2 {
                let run = try await CLITests.run(["build", lib, "--out", out, "--shard", "\(shard)/2"])
                #expect(run.status == 0, "\(run.stderr)")
            }
            // A plain build with other recipes in the same OUT_DIR: its prune keeps what the
            // shards' indexes name.
            let plain = try await CLITests.run(["build", lib, "--out", out, "--thumb", "other=64x64:cover"])
            #expect(plain.status == 0, "\(plain.stderr)")
            let merge = try await CLITests.run(["merge", "--out", out, "--shards", "2"])
            #expect(merge.status == 0, "\(merge.stderr)")
            let validate = try await CLITests.run(["validate", out + "/manifest.json"])
            #expect(validate.status == 0, "merged manifest: \(validate.stdout)")

            // A thumbnail a shard's rows name is deleted: the merge refuses, naming the shard.
            let published = try Self.data(out + "/manifest.json")
            let victim = try #require(try ManifestFile.load(out + "/manifest.json").items.last?.thumbnails["grid"]?.path)
            try FileManager.default.removeItem(atPath: out + "/" + victim)
            let refused = try await CLITests.run(["merge", "--out", out, "--shards", "2"])
            #expect(refused.status == 65 && refused.stderr.contains("run that shard again"), "\(refused.stderr)")
            #expect(refused.stderr.contains(victim), "\(refused.stderr)")
            #expect(try Self.data(out + "/manifest.json") == published)
            // Running the shards again (as the message says) rewrites it; then the merge goes through.
            for shard in 0..<2 { #expect(try await CLITests.run(["build", lib, "--out", out, "--shard", "\(shard)/2"]).status == 0) }
            #expect(try await CLITests.run(["merge", "--out", out, "--shards", "2"]).status == 0)
            #expect(FileManager.default.fileExists(atPath: out + "/" + victim))

            // A tampered row naming a path outside thumbs/: refused the same way.
            let tamper = """
                import json, sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                path, entry = db.execute(
                    "SELECT path, entry FROM files JOIN entries USING (path) WHERE failed = 0 LIMIT 1").fetchone()
                item = json.loads(bytes(entry))
                name = sorted(item["thumbnails"])[0]
                old = item["thumbnails"][name]["path"]
                item["thumbnails"][name]["path"] = "thumbs/../../../../etc/passwd"
                db.execute("UPDATE entries SET entry = ? WHERE path = ?", (json.dumps(item).encode(), path))
                db.execute("UPDATE thumbnails SET thumbnail = ? WHERE path = ? AND thumbnail = ?",
                           ("thumbs/../../../../etc/passwd", path, old))
                db.commit()
                """
            let edited = try await Self.python(tamper, [out + "/.thumbframe-shard-0-of-2.sqlite"])
            #expect(edited.status == 0, "\(edited.stderr)")
            let merged = try Self.data(out + "/manifest.json")
            let tampered = try await CLITests.run(["merge", "--out", out, "--shards", "2"])
            #expect(tampered.status == 65 && tampered.stderr.contains("not a thumbnail path"), "\(tampered.stderr)")
            #expect(try Self.data(out + "/manifest.json") == merged)
            #expect(!String(decoding: merged, as: UTF8.self).contains("passwd"))
        }
    }

    @Test(
        "a state index of the previous format (4) is upgraded in place by the next build: nothing decoded or written again, the manifest's bytes kept"
    )
    func upgradesFormat4() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(6, width: 120, height: 90) + [.bytes("album/broken.jpg", [1, 2, 3])])
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 1)
            let published = try Self.data(out + "/manifest.json")
            // Format 4 as 0.3.0 wrote it: thumbnails as `path bytes` lines in files.thumbs, what
            // was published under six text keys.
            let downgrade = """
                import json, sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("ALTER TABLE files ADD COLUMN thumbs TEXT NOT NULL DEFAULT ''")
                for (path,) in db.execute("SELECT path FROM files").fetchall():
                    lines = [f"{t} {b}" for t, b in db.execute(
                        "SELECT thumbnail, bytes FROM thumbnails WHERE path = ? ORDER BY thumbnail", (path,))]
                    db.execute("UPDATE files SET thumbs = ? WHERE path = ?", ("\\n".join(lines), path))
                db.execute("DROP TABLE thumbnails")
                record = json.loads(db.execute("SELECT value FROM meta WHERE key = 'published'").fetchone()[0])
                old = {"settings": record["settings"], "walkFailures": record["walkFailures"],
                       "pages": "\\n".join(f"{p} {f}" for p, f in record["pages"].items()),
                       "manifest": record["manifestFingerprint"] + " " + record["manifestSHA256"],
                       "items": str(record["items"]), "sections": str(record["sections"])}
                db.execute("DELETE FROM meta WHERE key = 'published'")
                db.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", old.items())
                db.execute("UPDATE meta SET value = 'thumbframe-state-4' WHERE key = 'format'")
                db.commit()
                print(db.execute("SELECT COUNT(*) FROM files WHERE thumbs != ''").fetchone()[0])
                """
            let downgraded = try await Self.python(downgrade, [out + "/.thumbframe-state.sqlite"])
            #expect(downgraded.status == 0 && downgraded.stdout == "6\n", "\(downgraded.stdout) \(downgraded.stderr)")
            let before = SafetyTests.snapshot(out + "/thumbs")
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.status == 1, "\(rerun.stderr)")
            #expect(!rerun.stderr.contains("cannot be used"), "\(rerun.stderr)")
            // Format 9's upgrade probes every photo again too (stack evidence): none is reused; nothing is written.
            #expect(rerun.summary["reused"] as? Int == 0 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
            #expect(try Self.data(out + "/manifest.json") == published)
            #expect(SafetyTests.snapshot(out + "/thumbs") == before)
            #expect(try await Self.query(out, "SELECT value FROM meta WHERE key = 'format'") == ["thumbframe-state-10"])
            // And the next run is the no-op it always was.
            let again = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(again.summary["manifestWritten"] as? Bool == false && again.summary["reused"] as? Int == 6, "\(again.stderr)")
        }
    }

    @Test(
        "an upgrade from 0.3 (state index format 5: rows without kinds or content identifiers) probes the GIFs and WebPs of several frames and Apple's photos again (and, since format 9, every photo), writes no thumbnail, and publishes the animations and the pair keys"
    )
    func upgradesFormat5() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(
                lib,
                Fixtures.photos(4, width: 120, height: 90) + [
                    .animation("album/loop.gif", width: 40, height: 30, delays: [100, 200], loop: 0),
                    .animation("album/still.gif", width: 40, height: 30, delays: [100]),
                    .livePhoto("album/IMG_7.JPG", width: 40, height: 30, contentIdentifier: "AB12CD34-0000-4000-8000-000000000007"),
                ])
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            // 0.3 as it left things: rows without kinds, format 5, a version-2 manifest published
            // under a settings key without the manifest's version.
            let downgrade = """
                import json, sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                # Format 5's files table, without `pair` (rebuilt: DROP COLUMN trips on the schema's comments).
                db.execute("CREATE TABLE f5 (path BLOB PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, "
                           "failed INTEGER NOT NULL, stage TEXT, captured TEXT NOT NULL) WITHOUT ROWID")
                db.execute("INSERT INTO f5 SELECT path, size, mtime, failed, stage, captured FROM files")
                db.execute("DROP TABLE files")
                db.execute("ALTER TABLE f5 RENAME TO files")
                for path, entry in db.execute("SELECT path, entry FROM entries").fetchall():
                    item = json.loads(entry)
                    item.pop("media", None)
                    item.pop("contentIdentifier", None)
                    db.execute("UPDATE entries SET entry = ? WHERE path = ?", (json.dumps(item).encode(), path))
                record = json.loads(db.execute("SELECT value FROM meta WHERE key = 'published'").fetchone()[0])
                record["settings"] = record["settings"].split("\\n", 1)[1]
                db.execute("UPDATE meta SET value = ? WHERE key = 'published'", (json.dumps(record),))
                db.execute("UPDATE meta SET value = 'thumbframe-state-5' WHERE key = 'format'")
                db.commit()
                print(sum(1 for _ in db.execute("SELECT path FROM entries WHERE CAST(entry AS TEXT) LIKE '%animated%'")))
                """
            let downgraded = try await Self.python(downgrade, [out + "/.thumbframe-state.sqlite"])
            #expect(downgraded.status == 0 && downgraded.stdout == "0\n", "\(downgraded.stdout) \(downgraded.stderr)")
            let before = SafetyTests.snapshot(out + "/thumbs")
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            // Format 9's upgrade probes every photo again too (stack evidence): none is reused; nothing is written.
            #expect(rerun.summary["reused"] as? Int == 0 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
            #expect(SafetyTests.snapshot(out + "/thumbs") == before)
            #expect(try await Self.query(out, "SELECT value FROM meta WHERE key = 'format'") == ["thumbframe-state-10"])
            #expect(
                try await Self.query(out, "SELECT pair FROM files WHERE pair IS NOT NULL")
                    == ["photo AB12CD34-0000-4000-8000-000000000007"])
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.version == 3)
            #expect(manifest.items.first { $0.path == "album/loop.gif" }?.animation == .init(frames: 2, duration: 0.3, loop: 0))
            #expect(manifest.items.filter { $0.kind == .photo }.count == 6)
            let again = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(again.summary["manifestWritten"] as? Bool == false && again.summary["reused"] as? Int == 7, "\(again.stderr)")
        }
    }

    @Test(
        "an upgrade from 0.4 (state index format 6: HEIF thumbnails made with a profile read from freed memory, Motion Photo MP4s copied with their metadata) probes the HEIC and AVIF photos and the Motion Photos again (and, since format 9, every photo) and writes nothing"
    )
    func upgradesFormat6() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(3, width: 120, height: 90))
            try Fixtures.reencode(lib + "/album/IMG_0.jpg", to: lib + "/album/phone.heic", options: "[Q=80]")
            try Fixtures.reencode(lib + "/album/IMG_1.jpg", to: lib + "/album/phone.avif", options: "[Q=80,compression=av1]")
            if Fixtures.ffmpeg != nil {
                try await Fixtures.makeVideos(root + "/clips", [("motion.mp4", VideoFixture().with { $0.seconds = 0.5 })])
                let mp4 = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/clips/motion.mp4")))
                try Fixtures.writeMotionPhoto(to: lib + "/album/PXL_1.MP.jpg", width: 80, height: 60, mp4: mp4, style: .microVideo)
            }
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            let downgrade =
                "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                + "db.execute(\"UPDATE meta SET value = 'thumbframe-state-6' WHERE key = 'format'\"); db.commit()"
            #expect(try await Self.python(downgrade, [out + "/.thumbframe-state.sqlite"]).status == 0)
            let before = SafetyTests.snapshot(out + "/thumbs")
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            // Probed again: the HEIC, the AVIF and the Motion Photo (their files, under this
            // version's addresses, are there).
            // Format 9's upgrade probes every photo again too (stack evidence): none is reused; nothing is written.
            #expect(rerun.summary["reused"] as? Int == 0 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
            #expect(SafetyTests.snapshot(out + "/thumbs") == before)
            #expect(try await Self.query(out, "SELECT value FROM meta WHERE key = 'format'") == ["thumbframe-state-10"])
            let again = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            let files = Fixtures.ffmpeg == nil ? 5 : 6
            #expect(again.summary["manifestWritten"] as? Bool == false && again.summary["reused"] as? Int == files, "\(again.stderr)")
        }
    }

    @Test(
        "an upgrade from state index format 7 (videos without their delivery) probes the videos again (and, since format 9, every photo) and writes nothing",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make the video"))
    func upgradesFormat7() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(2, width: 120, height: 90))
            try await Fixtures.makeVideos(lib, [("album/clip.mp4", VideoFixture().with { $0.seconds = 0.5 })])
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            // What format 7 wrote: the video's facts without `indexFirst`, `delivery` (and what came later).
            let downgrade =
                "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                + "db.execute(\"UPDATE entries SET entry = CAST(json_remove(CAST(entry AS TEXT), '$.media.video.indexFirst', "
                + "'$.media.video.delivery', '$.media.video.codecs', '$.media.video.rendition') AS BLOB) WHERE json_extract(CAST(entry AS TEXT), '$.media.video') IS NOT NULL\"); "
                + "db.execute(\"UPDATE meta SET value = 'thumbframe-state-7' WHERE key = 'format'\"); db.commit()"
            #expect(try await Self.python(downgrade, [out + "/.thumbframe-state.sqlite"]).status == 0)
            let stripped = try await Self.query(
                out, "SELECT CAST(entry AS TEXT) FROM entries WHERE json_extract(CAST(entry AS TEXT), '$.media.video') IS NOT NULL")
            #expect(stripped.count == 1 && !stripped[0].contains("delivery"))
            let before = SafetyTests.snapshot(out + "/thumbs")
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            // Format 9's upgrade probes every photo again too (stack evidence): none is reused; nothing is written.
            #expect(rerun.summary["reused"] as? Int == 0 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
            #expect(SafetyTests.snapshot(out + "/thumbs") == before)
            let video = try #require(try ManifestFile.load(out + "/manifest.json").items.first { $0.path == "album/clip.mp4" }?.video)
            #expect(video.delivery == .remux && video.indexFirst == false)
            #expect(try await Self.query(out, "SELECT value FROM meta WHERE key = 'format'") == ["thumbframe-state-10"])
        }
    }

    @Test(
        "an upgrade from state index format 8 (HDR photos without gain maps) probes the HDR photos again and reuses every other file; renditions already made keep their headroom",
        .enabled(if: Processes.tool("avifenc") != nil, "needs avifenc to make the HDR photo"))
    func upgradesFormat8() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(2, width: 120, height: 90))
            let made = try await Processes.run(
                "/usr/bin/env", ["python3", Fixtures.packageRoot + "/scripts/test-helpers/gainmap-check.py", "make", root + "/made"])
            #expect(made.status == 0, "\(made.stderr)")
            try FileManager.default.copyItem(atPath: root + "/made/pq.avif", toPath: lib + "/pq.avif")
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            let published = try Self.data(out + "/manifest.json")
            // Every photo probed again (format 9's upgrade: stack evidence), nothing written.
            try await Self.rebuild(lib, out, after: ["UPDATE meta SET value = 'thumbframe-state-8' WHERE key = 'format'"])
            // Probed again, its preview found at its content address: the headroom read from the file.
            #expect(try Self.data(out + "/manifest.json") == published)
            let preview = try ManifestFile.load(out + "/manifest.json").items.first { $0.path == "pq.avif" }?.thumbnails["preview"]
            #expect(preview?.headroom != nil)
            #expect(try await Self.query(out, "SELECT value FROM meta WHERE key = 'format'") == ["thumbframe-state-10"])
        }
    }

    @Test("a format-9 state index is upgraded: every photo probed and measured again, nothing written, the same stacks")
    func upgradesFormat9() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(3, width: 120, height: 90))
            try FileManager.default.copyItem(atPath: lib + "/album/IMG_0.jpg", toPath: lib + "/album/IMG_0 copy.jpg")
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            let published = try Self.data(out + "/manifest.json")
            #expect(try ManifestFile.load(out + "/manifest.json").items.filter { $0.stack?.reason == .duplicate }.count == 2)
            // Format 9 had no evidence column.
            try await Self.rebuild(
                lib, out,
                after: ["ALTER TABLE files DROP COLUMN evidence", "UPDATE meta SET value = 'thumbframe-state-9' WHERE key = 'format'"])
            #expect(try Self.data(out + "/manifest.json") == published)
            #expect(try await Self.query(out, "SELECT COUNT(*) FROM files WHERE evidence LIKE '1 %'") == ["4"])
        }
    }

    @Test(
        "a state index whose record of what was published is damaged keeps its rows: the next build reuses every file and writes the manifest again"
    )
    func damagedPublishedRecord() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            try Fixtures.makeLibrary(lib, Fixtures.photos(4, width: 100, height: 75))
            #expect(try await CLITests.run(["build", lib, "--out", out]).status == 0)
            let published = try Self.data(out + "/manifest.json")
            let damage =
                "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute(\"UPDATE meta SET value = '{' WHERE key = 'published'\"); db.commit()"
            #expect(try await Self.python(damage, [out + "/.thumbframe-state.sqlite"]).status == 0)
            let rerun = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(rerun.status == 0, "\(rerun.stderr)")
            #expect(rerun.summary["reused"] as? Int == 4 && rerun.summary["thumbnailsWritten"] as? Int == 0, "\(rerun.stderr)")
            #expect(try Self.data(out + "/manifest.json") == published)
            let again = try await CLITests.run(["build", lib, "--out", out, "--check"])
            #expect(again.status == 0, "\(again.stdout)")
        }
    }

    /// Mounts the small tmpfs a full-disk test fills, or says why the test is skipped: false then.
    /// (The test unmounts it.)
    static func fullDiskTestMounts(_ path: String, kilobytes: Int) async throws -> Bool {
        guard let reason = try await mountSmallFileSystem(path, kilobytes: kilobytes) else { return true }
        print("skipped: the full-disk test needs a tmpfs of its own (\(reason))")
        return false
    }

    /// A small file system of its own (tmpfs), or nil with the reason (not root, no mount here).
    static func mountSmallFileSystem(_ path: String, kilobytes: Int) async throws -> String? {
        guard getuid() == 0 else { return "not root" }
        try Fixtures.makeDirectory(path)
        let mount = try await Processes.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path])
        return mount.status == 0 ? nil : "mount failed: \(mount.stderr)"
    }

    @Test(
        "a disk that fills up while a pyramid of deep-zoom tiles is written: exit 73, no temporary folder left, nothing published; with space back the pyramid is made"
    )
    func fullDiskStopsTiles() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, small) = (root + "/lib", root + "/small")
            guard try await Self.fullDiskTestMounts(small, kilobytes: 8000) else { return }
            defer { _ = try? Processes.runBlocking("/bin/umount", ["-l", small]) }
            // Noise: its thumbnails fit (about 1.5 MB), its pyramid (about 12 MB) does not.
            try Fixtures.makeLibrary(lib, Fixtures.photos(3, width: 600, height: 450))
            try Fixtures.writeNoise(to: lib + "/noise.jpg", width: 4000, height: 3000)
            let out = small + "/out"
            let options = ["--jobs", "1", "--ladder-max-side", "0", "--tile-pixels", "1000000"]
            let full = try await CLITests.run(["build", lib, "--out", out] + options)
            #expect(full.status == 73, "\(full.stderr)")
            #expect(full.stderr.contains("deep-zoom tiles") && full.stderr.contains("No space left on device"), "\(full.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"), "nothing published from a full disk")
            let left = (FileManager.default.enumerator(atPath: out)?.allObjects as? [String] ?? [])
                .filter { $0.contains(".tf-tmp-") || $0.hasSuffix("_files") || $0.hasSuffix(".dzi") }
            #expect(left.isEmpty, "\(left)")
            #expect(try await Processes.run("/bin/mount", ["-o", "remount,size=64m", small]).status == 0)
            let again = try await CLITests.run(["build", lib, "--out", out] + options)
            #expect(again.status == 0, "\(again.stderr)")
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.first { $0.path == "noise.jpg" }?.thumbnails["tiles"]?.tiles != nil)
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).status == 0)
        }
    }

    @Test(
        "a disk that fills up while a video's rendition is written: exit 73 and nothing published, not a video without its rendition",
        .enabled(if: Fixtures.ffmpeg != nil, "needs the ffmpeg program to make the video"))
    func fullDiskStopsARendition() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, small) = (root + "/lib", root + "/small")
            guard try await Self.fullDiskTestMounts(small, kilobytes: 1024) else { return }
            defer { _ = try? Processes.runBlocking("/bin/umount", ["-l", small]) }
            // Noise in HEVC: its H.264 rendition is several megabytes, its thumbnails a few dozen kilobytes.
            try Fixtures.makeDirectory(lib)
            let made = try await Processes.run(
                "/usr/bin/env",
                [
                    "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "nullsrc=s=640x360:r=30:d=3,geq=random(1)*255:128:128",
                    "-c:v", "libx265", "-x265-params", "log-level=error", "-crf", "20", lib + "/noise.mov",
                ])
            #expect(made.status == 0, "\(made.stderr)")
            let out = small + "/out"
            let run = try await CLITests.run(["build", lib, "--out", out])
            #expect(run.status == 73, "\(run.stderr)")
            #expect(run.stderr.contains("No space left on device"), "\(run.stderr)")
            #expect(!run.stderr.contains("no rendition"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"), "nothing published from a full disk")
            // No temporary file is left to fill the disk further.
            let left = FileManager.default.enumerator(atPath: out)?.compactMap { $0 as? String }.filter { $0.contains(".tf-tmp-") }
            #expect(left == [], "\(left ?? [])")
        }
    }

    @Test(
        "a disk that fills up mid-build: exit 73, the state index kept as it was; with space back the next run reuses every file it recorded"
    )
    func fullDiskKeepsTheIndex() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, small) = (root + "/lib", root + "/small")
            guard try await Self.fullDiskTestMounts(small, kilobytes: 1024) else { return }
            defer { _ = try? Processes.runBlocking("/bin/umount", ["-l", small]) }
            // Enough files that the disk fills after the index's first commits (a quarter of a second
            // apart): at 320 KB it could fill before the first one on an idle machine.
            try Fixtures.makeLibrary(lib, Fixtures.photos(160, width: 600, height: 450))
            let out = small + "/out"
            let full = try await CLITests.run(["build", lib, "--out", out, "--jobs", "1"])
            #expect(full.status == 73, "\(full.stderr)")
            #expect(full.stderr.contains("No space left on device") || full.stderr.contains("full"), "\(full.stderr)")
            #expect(!full.stderr.contains("rebuilding it"), "\(full.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out + "/manifest.json"), "nothing published from a full disk")

            // A run that starts on a disk with no byte left cannot even open the index: it stops
            // (73) and leaves the index as it is, never taking it for damaged.
            let index = out + "/.thumbframe-state.sqlite"
            // (Its -shm, an index of the WAL that SQLite rebuilds on open, is gone as after a
            // reboot: opening the index must then write, and the disk has no room.)
            try? FileManager.default.removeItem(atPath: index + "-shm")
            let fill = try await Self.python(
                "import sys\nf = open(sys.argv[1], 'wb')\ntry:\n    while True: f.write(bytes(4096)); f.flush()\nexcept OSError: pass",
                [small + "/filler"])
            #expect(fill.status == 0, "\(fill.stderr)")
            let before = try #require(try? Self.data(index), "the first run left its index")
            let stillFull = try await CLITests.run(["build", lib, "--out", out])
            #expect(stillFull.status == 73, "\(stillFull.stderr)")
            #expect(!stillFull.stderr.contains("rebuilding"), "\(stillFull.stderr)")
            #expect(try Self.data(index) == before, "the index is kept byte for byte")

            // Space comes back: the rows recorded before the disk filled up are reused, not decoded.
            try FileManager.default.removeItem(atPath: small + "/filler")
            #expect(try await Processes.run("/bin/mount", ["-o", "remount,size=64m", small]).status == 0)
            let count = try await Self.python(
                "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                    + "print(*[db.execute(f'SELECT COUNT(*) FROM files WHERE failed = {f}').fetchone()[0] for f in (0, 1)])",
                [out + "/.thumbframe-state.sqlite"])
            let counts = count.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            let recorded = try #require(counts.first, "\(count.stderr)")
            #expect(recorded > 0 && recorded < 160, "the disk filled up midway: \(recorded) of 160 recorded")
            #expect(counts.last == 0, "no file was recorded as failed because the disk was full")
            let again = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(!again.stderr.contains("rebuilding"), "\(again.stderr)")
            let summary = try #require(ConventionTests.lines(again.stderr).first { $0["event"] as? String == "summary" })
            #expect(summary["reused"] as? Int == recorded, "\(summary)")
            #expect(summary["items"] as? Int == 160)
            #expect(try await CLITests.run(["validate", out + "/manifest.json"]).status == 0)
        }
    }
}
