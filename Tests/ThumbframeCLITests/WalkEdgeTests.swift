import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Correctness at the edges of a library: what the walk leaves out (other builds' OUT_DIRs,
/// NAS folders, ignore files), links followed in one order whatever readdir says, dates no
/// calendar has, and a viewer that never shows a library that is gone.
@Suite("Walk and output edges", .serialized)
struct WalkEdgeTests {
    static func paths(_ manifest: String) throws -> [String] {
        try ManifestFile.load(manifest).items.map(\.path).sorted()
    }

    @Test(
        "files that are neither items nor failures are counted by kind — in the summary, the manifest and inspect — and one more rewrites the manifest; a video that cannot be read is a failure"
    )
    func skippedByKind() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (lib, out) = (root + "/lib", root + "/out")
            func iso(_ brand: String) -> [UInt8] { [0, 0, 0, 0x18] + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] + Array("isommp42".utf8) }
            try Fixtures.makeLibrary(
                lib,
                [
                    .photo("a.jpg", width: 64, height: 48), .bytes("clip.MOV", iso("qt  ")), .bytes("2020/b.mp4", iso("isom")),
                    .bytes("2020/no-extension", iso("mp42")), .bytes("a.xmp", Array("<x:xmpmeta/>".utf8)),
                    .bytes("IMG_1.AAE", Array("<plist/>".utf8)), .bytes("a.jpg.json", Array("{}".utf8)),
                    .bytes("song.mp3", Array("ID3".utf8)), .bytes("notes.txt", Array("hi".utf8)),
                    .bytes(".DS_Store", [0]), .bytes("2020/.hidden.mov", iso("qt  ")),
                ])
            let expected = ["sidecar": 3, "audio": 1, "document": 1]
            let json = try await CLITests.run(["build", lib, "--out", out, "--log-format", "json"])
            #expect(json.status == 1, "\(json.stderr)")
            #expect(json.summary["skipped"] as? [String: Int] == expected, "\(json.stderr)")
            let document = try ManifestDocument.decode(from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
            #expect(document.skipped == expected)
            // Videos (by extension, or an ISO media file's brand) are items; these are damaged.
            #expect(document.itemCount == 1 && document.failures.map(\.path) == ["2020/b.mp4", "2020/no-extension", "clip.MOV"])
            #expect(document.failures.allSatisfy { $0.reason.hasPrefix("not a readable video: ") }, "\(document.failures)")

            let text = try await CLITests.run(["build", lib, "--out", out])
            #expect(
                text.stderr.contains("1 items in 1 sections, 3 failed, 5 skipped (1 audio, 1 document, 3 sidecar), "),
                "\(text.stderr)")
            #expect(text.stderr.contains("manifest unchanged"))
            let inspect = try await CLITests.run(["inspect", out + "/manifest.json"])
            #expect(inspect.stdout.contains("\nskipped       sidecar=3, audio=1, document=1\n"), "\(inspect.stdout)")
            let inspectJSON = try await CLITests.run(["inspect", out + "/manifest.json", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(inspectJSON.stdout.utf8)) as? [String: Any])
            #expect(object["skipped"] as? [String: Int] == expected)

            // No item changed, but the manifest says what was skipped: one more sidecar is news.
            #expect(try await CLITests.run(["build", lib, "--out", out, "--check"]).status == 0)
            try Fixtures.write(Array("<x:xmpmeta/>".utf8), to: lib + "/2020/c.xmp")
            let check = try await CLITests.run(["build", lib, "--out", out, "--check"])
            #expect(check.status == 1 && check.stdout.contains("manifest.json differs"), "\(check.stdout) \(check.stderr)")
            let again = try await CLITests.run(["build", lib, "--out", out])
            #expect(again.stderr.contains("6 skipped (1 audio, 1 document, 4 sidecar)") && again.stderr.contains("manifest written"))
            let updated = try ManifestDocument.decode(from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
            #expect(updated.skipped?["sidecar"] == 4)
        }
    }

    @Test("another build's OUT_DIR inside SOURCE_DIR, NAS system folders, .nomedia folders and .thumbframeignore patterns are not walked")
    func leftOut() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            let photos = [
                "a.jpg", "@eaDir/a.jpg/SYNOPHOTO_THUMB_XL.jpg", "#recycle/old.jpg", "trip/#snapshot/b.jpg", "trip/b.jpg",
                "cache/x.jpg", "private/p.jpg", "drafts/d.tmp.jpg", "drafts/keep.tmp.jpg",
                "drafts/sub/e.jpg", "deep/er/raw/f.jpg", "deep/g.jpg",
            ]
            for path in photos {
                try Fixtures.makeDirectory(source + "/" + (path as NSString).deletingLastPathComponent)
                try Fixtures.writeImage(to: source + "/" + path, width: 40 + path.count, height: 30)
            }
            try Fixtures.write([], to: source + "/cache/.nomedia")
            try Fixtures.write(
                Array("# left out\nprivate/\n*.tmp.jpg\n!keep.tmp.jpg\n/drafts/sub\n**/raw\n".utf8), to: source + "/.thumbframeignore")
            // A first build into a folder of SOURCE_DIR (never scanned by that build).
            #expect(try await CLITests.run(["build", source, "--out", source + "/site"]).status == 0)
            // A second build, elsewhere, must not take the first one's thumbnails for photos.
            let run = try await CLITests.run(["build", source, "--out", root + "/out"])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try Self.paths(root + "/out/manifest.json") == ["a.jpg", "deep/g.jpg", "drafts/keep.tmp.jpg", "trip/b.jpg"])
        }
    }

    @Test(
        "--follow-symlinks names a folder reached also through a link after its real path, whatever readdir's order; a directory link out of SOURCE_DIR is a failure"
    )
    func linksInOneOrder() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            for folder in [source + "/zz-real", root + "/elsewhere"] { try Fixtures.makeDirectory(folder) }
            try Fixtures.writeImage(to: source + "/zz-real/photo.jpg", width: 40, height: 30)
            try Fixtures.writeImage(to: root + "/elsewhere/secret.jpg", width: 40, height: 30)
            // Links that sort before and after the real folder, and one out of SOURCE_DIR.
            for name in ["aa-link", "zzz-link"] {
                try FileManager.default.createSymbolicLink(atPath: source + "/" + name, withDestinationPath: "zz-real")
            }
            try FileManager.default.createSymbolicLink(atPath: source + "/gallery", withDestinationPath: root + "/elsewhere")
            for attempt in 0..<3 {
                let out = root + "/out\(attempt)"
                let run = try await CLITests.run(["build", source, "--out", out, "--follow-symlinks"])
                #expect(run.status == 1, "\(run.stderr)")
                let manifest = try ManifestFile.load(out + "/manifest.json")
                #expect(manifest.items.map(\.path) == ["zz-real/photo.jpg"])
                #expect(manifest.failures.map(\.path) == ["gallery"])
                #expect(manifest.failures.first?.reason == "symbolic link points outside the source directory")
            }
        }
    }

    @Test("file times no calendar has (±2^40 s, 2^62 s) become the nearest representable date; validate checks dates and large layouts")
    func impossibleDates() async throws {
        // The clamp itself, whatever the file system below can store.
        for (seconds, expected) in [
            (1 << 40, "9999-12-31T23:59:59.999999999Z"), (-(1 << 40), "0000-01-01T00:00:00.000000000Z"),
            (1 << 62, "9999-12-31T23:59:59.999999999Z"), (0, "1970-01-01T00:00:00.000000000Z"),
        ] {
            var stat = FileStat.missing
            stat.modifiedSeconds = seconds
            #expect(stat.modifiedRFC3339 == expected)
        }
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            // ext4 clamps such times itself (to 1901–2446); tmpfs keeps them as given.
            if let reason = try await DataKeptTests.mountSmallFileSystem(source, kilobytes: 4096) {
                print("the sources of this test lie on the temporary directory's file system (\(reason))")
            }
            defer { _ = try? Processes.runBlocking("/bin/umount", ["-l", source]) }
            for (name, seconds) in [("far.jpg", 1 << 40), ("past.jpg", -(1 << 40)), ("huge.jpg", 1 << 62)] {
                try Fixtures.writeImage(to: source + "/" + name, width: 40 + name.count, height: 30)
                var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
                let changed = utimensat(AT_FDCWD, source + "/" + name, &times, 0)
                if changed != 0 {
                    print("skipped \(name): this file system does not take that time (\(String(cString: strerror(errno))))")
                    try FileManager.default.removeItem(atPath: source + "/" + name)
                }
            }
            let run = try await CLITests.run(["build", source, "--out", root + "/out", "--sections", "date"])
            #expect(run.status == 0, "\(run.stderr)")
            let manifestPath = root + "/out/manifest.json"
            let manifest = try ManifestFile.load(manifestPath)
            for item in manifest.items {
                #expect(Manifest.isTimestamp(item.file.modified, utcNanoseconds: true), "\(item.path): \(item.file.modified)")
            }
            #expect(try await CLITests.run(["validate", manifestPath]).status == 0)

            // validate checks what the schema says of dates, and layouts of any size.
            var bad = manifest
            bad.items[0].file.modified = "109626219-01-00T00:00:00.000000000Z"
            bad.items[0].exif = Manifest.ExifInfo(capturedAt: "2019-02-30T10:00:00")
            let problems = ManifestValidator.problems(of: bad, thumbnailRoot: nil)
            #expect(problems.contains { $0.contains("file.modified") }, "\(problems)")
            #expect(problems.contains { $0.contains("capturedAt") }, "\(problems)")
            var large = manifest
            large.items[0].image.width = 1 << 31
            large.items[0].image.storedWidth = 1 << 31  // upright fixtures: stored = displayed
            let layoutProblems = ManifestValidator.problems(of: large, thumbnailRoot: nil)
            #expect(layoutProblems.contains { $0.contains("layout engine") }, "\(layoutProblems)")
        }
    }

    @Test("a build without --viewer keeps an earlier viewer's data script current; over HTTP the viewer reads manifest.json")
    func viewerDataStaysCurrent() async throws {
        try await SafetyTests.withBuiltLibrary(3) { _, source, out in
            #expect(try await CLITests.run(["build", source, "--out", out, "--viewer"]).status == 0)
            let data = out + "/thumbframe-viewer-data.js"
            #expect(try String(contentsOfFile: data, encoding: .utf8).contains("IMG_2.jpg"))
            try FileManager.default.removeItem(atPath: source + "/album/IMG_2.jpg")
            for index in 0..<4 { try Fixtures.writeImage(to: source + "/album/NEW_\(index).jpg", width: 70 + index, height: 30) }
            #expect(try await CLITests.run(["build", source, "--out", out]).status == 0)
            let text = try String(contentsOfFile: data, encoding: .utf8)
            #expect(!text.contains("IMG_2.jpg") && (0..<4).allSatisfy { text.contains("NEW_\($0).jpg") }, "data script is stale")
            // The page's script loads the data script under file:// only; the page never names it.
            let page = try String(contentsOfFile: out + "/index.html", encoding: .utf8)
            #expect(page.contains(#"if (location.protocol !== "file:") return Promise.resolve(undefined);"#))
            #expect(page.contains(#"script.src = "thumbframe-viewer-data.js";"#) && !page.contains(#"src="thumbframe-viewer-data.js""#))
            // Its first screen follows the manifest too.
            #expect(!page.contains("IMG_2.jpg") && page.contains("NEW_0.jpg"))
        }
    }
}
