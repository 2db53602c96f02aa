import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

@Suite("Incremental builds")
struct IncrementalTests {
    /// Four photos and a broken file in `album`.
    static let library =
        Fixtures.photos(4, width: 310, height: 200, step: 10, first: 1) + [.bytes("album/broken.jpg", Array("broken".utf8))]

    static func build(_ source: String, _ output: String, _ configure: (inout BuildOptions) -> Void = { _ in })
        async throws -> BuildReport
    {
        var options = BuildOptions(source: source, output: output)
        configure(&options)
        return try await Builder(options: options).run()
    }

    /// Runs `body` with `library` in `root/src` built into `root/out`, and
    /// the manifest that build wrote.
    static func withBuiltLibrary(_ body: (_ root: String, _ source: String, _ out: String, _ manifest: Data) async throws -> Void)
        async throws
    {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, library)
            _ = try await build(source, out)
            try await body(root, source, out, try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
        }
    }

    /// Every regular file under `directory` (relative path → inode and modification time).
    static func snapshot(_ directory: String) -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let path = enumerator?.nextObject() as? String {
            let full = directory + "/" + path
            // The lock file notes the pid of each run; it is not output.
            if let stat = FileStat.lstat(full), stat.isRegularFile, path != ".thumbframe.lock" {
                files[path] = "\(stat.identity.inode)-\(stat.modifiedSeconds).\(stat.modifiedNanoseconds)"
            }
        }
        return files
    }

    @Test("a no-op rerun opens no image, rewrites nothing and leaves identical bytes")
    func noOp() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Self.library)
            let first = try await Self.build(source, root + "/out")
            #expect(first.reused == 0 && first.thumbnailsWritten == 4 * ThumbnailRecipe.defaults.count && first.failures.count == 1)
            let before = Self.snapshot(root + "/out")
            let second = try await Self.build(source, root + "/out")
            #expect(second.reused == 4 && second.thumbnailsWritten == 0 && !second.manifestWritten)
            #expect(second.failures == first.failures)
            #expect(Self.snapshot(root + "/out") == before)

            // Reuse is decided from size and mtime alone: content changed behind an unchanged
            // size and mtime is not seen (the file is not opened) until --verify re-hashes it.
            let path = source + "/album/IMG_1.jpg"
            let original = try FileStat.lstat(path).unwrap()
            var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[bytes.count - 3] ^= 0xFF
            try Fixtures.write(bytes, to: path)
            var times = [
                timespec(tv_sec: original.modifiedSeconds, tv_nsec: original.modifiedNanoseconds),
                timespec(tv_sec: original.modifiedSeconds, tv_nsec: original.modifiedNanoseconds),
            ]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let unseen = try await Self.build(source, root + "/out")
            #expect(unseen.reused == 4 && !unseen.manifestWritten)
            let checked = try await Self.build(source, root + "/out") {
                $0.check = true
                $0.verify = true
            }
            #expect(checked.stale == ["changed album/IMG_1.jpg"], "--check --verify hashes, and only the changed file is stale")
            let verified = try await Self.build(source, root + "/out") { $0.verify = true }
            #expect(verified.reused == 0 && verified.manifestWritten && verified.thumbnailsWritten == ThumbnailRecipe.defaults.count)
            #expect(verified.pruned == ThumbnailRecipe.defaults.count)
        }
    }

    @Test("renames reuse thumbnails, deletions are pruned after the manifest, --force rewrites")
    func changes() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Self.library)
            let out = root + "/out"
            _ = try await Self.build(source, out)
            let old = try ManifestFile.load(out + "/manifest.json")
            let removedThumbnails = old.items.first { $0.path == "album/IMG_2.jpg" }!.thumbnails.values.map(\.path)

            try FileManager.default.moveItem(atPath: source + "/album/IMG_1.jpg", toPath: source + "/album/renamed.jpg")
            try FileManager.default.removeItem(atPath: source + "/album/IMG_2.jpg")
            let report = try await Self.build(source, out)
            #expect(report.reused == 2 && report.thumbnailsWritten == 0 && report.pruned == ThumbnailRecipe.defaults.count)
            let manifest = try ManifestFile.load(out + "/manifest.json")
            #expect(manifest.items.map(\.path) == ["album/IMG_3.jpg", "album/IMG_4.jpg", "album/renamed.jpg"])
            #expect(manifest.items.last?.thumbnails == old.items.first?.thumbnails)
            for path in removedThumbnails { #expect(!FileManager.default.fileExists(atPath: out + "/" + path)) }
            for item in manifest.items {
                for thumbnail in item.thumbnails.values { #expect(FileManager.default.fileExists(atPath: out + "/" + thumbnail.path)) }
            }

            let before = Self.snapshot(out + "/thumbs")
            let forced = try await Self.build(source, out) { $0.force = true }
            #expect(forced.reused == 0 && forced.thumbnailsWritten == 3 * ThumbnailRecipe.defaults.count)
            let after = Self.snapshot(out + "/thumbs")
            #expect(Set(after.keys) == Set(before.keys))
            #expect(after.allSatisfy { before[$0.key] != $0.value }, "every thumbnail was rewritten")
        }
    }

    @Test("changed recipes rebuild every item and prune the old thumbnails")
    func settingsChange() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Self.library)
            let out = root + "/out"
            _ = try await Self.build(source, out)
            let small = try ThumbnailRecipe(parsing: "small=64x64:cover")
            let report = try await Self.build(source, out) { $0.thumbnails = [small] }
            #expect(report.reused == 0 && report.thumbnailsWritten == 4 && report.pruned == 4 * ThumbnailRecipe.defaults.count)
            // Layout-only settings reuse every item: layouts are recomputed from the entries.
            let relaid = try await Self.build(source, out) {
                $0.thumbnails = [small]
                $0.preset = .jx4
                $0.sections = .none
            }
            #expect(relaid.reused == 4 && relaid.manifestWritten && relaid.pruned == 0)
        }
    }

    @Test("a manifest.json changed outside thumbframe is noticed by stat and written again from the index")
    func tamperedManifest() async throws {
        try await Self.withBuiltLibrary { root, source, out, good in
            // Valid JSON of the right shape, but counted wrongly; the same size.
            let renumbered = String(decoding: good, as: UTF8.self).replacingOccurrences(
                of: "\"itemCount\" : 4,", with: "\"itemCount\" : 7,")
            #expect(renumbered.utf8.count == good.count)
            // (A manifest.json that is not thumbframe's at all is refused: SafetyTests.)
            for tampered in [Array(good.prefix(good.count / 2)), Array(renumbered.utf8), []] {
                try Fixtures.write(tampered, to: out + "/manifest.json")
                let lines = LogLines()
                let report = try await Builder(options: BuildOptions(source: source, output: out), events: lines.append).run()
                #expect(report.manifestWritten)
                #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")) == good)
                #expect(report.reused == 4 && report.thumbnailsWritten == 0, "no image is opened again")
                #expect(lines.all.contains { $0.hasPrefix("manifest.json was changed outside thumbframe") }, "\(lines.all)")
            }
            try FileManager.default.removeItem(atPath: out + "/manifest.json")
            let missing = try await Self.build(source, out)
            #expect(missing.manifestWritten && missing.reused == 4)
            // A page changed to other valid JSON of the same size: validate names it, a build writes it again.
            let page = try #require(ManifestFile.open(out + "/manifest.json").document.sections.first?.pages?.first?.path)
            let original = try Data(contentsOf: URL(fileURLWithPath: out + "/" + page))
            let changed = String(decoding: original, as: UTF8.self).replacingOccurrences(of: "IMG_1.jpg", with: "IMG_7.jpg")
            #expect(changed.utf8.count == original.count && Data(changed.utf8) != original)
            try Fixtures.write(Array(changed.utf8), to: out + "/" + page)
            #expect(try ManifestValidator.problems(at: out + "/manifest.json").contains { $0.contains("do not match its name") })
            _ = try await Self.build(source, out)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/" + page)) == original)
            #expect(try ManifestValidator.problems(at: out + "/manifest.json") == [])
        }
    }

    @Test("a damaged or foreign state index is reported and rebuilt from the sources, never trusted")
    func corruptIndex() async throws {
        try await Self.withBuiltLibrary { root, source, out, good in
            let index = out + "/" + StateIndex.name
            let valid = try Data(contentsOf: URL(fileURLWithPath: index))
            var damaged = Array(valid)
            for offset in stride(from: 100, to: damaged.count, by: 7) { damaged[offset] ^= 0x5A }
            let foreign = try SQLiteDatabase(path: root + "/foreign.sqlite", readOnly: false, create: true)
            try foreign.execute("CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('format', 'photos-app');")
            let foreignBytes = try Array(Data(contentsOf: URL(fileURLWithPath: root + "/foreign.sqlite")))
            for replacement in [Array("not a database".utf8), damaged, foreignBytes] {
                try Fixtures.write(replacement, to: index)
                let lines = LogLines()
                let report = try await Builder(options: BuildOptions(source: source, output: out), events: lines.append).run()
                #expect(report.reused == 0, "nothing is taken from a damaged index")
                #expect(lines.all.contains { $0.contains("state index .thumbframe-state.sqlite cannot be used") }, "\(lines.all)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")) == good)
                let again = try await Self.build(source, out)
                #expect(again.reused == 4 && !again.manifestWritten)
            }
        }
    }

    @Test("--check writes nothing and names what is stale")
    func check() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let source = root + "/src"
            try Fixtures.makeLibrary(source, Self.library)
            let out = root + "/out"
            let missing = try await Self.build(source, out) { $0.check = true }
            #expect(missing.stale == ["no manifest.json yet"])
            #expect(!FileManager.default.fileExists(atPath: out))
            _ = try await Self.build(source, out)
            let fresh = try await Self.build(source, out) { $0.check = true }
            #expect(fresh.stale.isEmpty)

            let before = Self.snapshot(out)
            try Fixtures.writeImage(to: source + "/album/IMG_9.jpg", width: 100, height: 100)
            try FileManager.default.removeItem(atPath: source + "/album/IMG_3.jpg")
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: 0)], ofItemAtPath: source + "/album/IMG_4.jpg")
            let stale = try await Self.build(source, out) { $0.check = true }
            #expect(stale.stale == ["changed album/IMG_4.jpg", "added album/IMG_9.jpg", "removed album/IMG_3.jpg"])
            #expect(Self.snapshot(out) == before)
            _ = try await Self.build(source, out) { $0 = $0.zooming(.tiles) }
            let relaid = try await Self.build(source, out) {
                $0 = $0.zooming(.tiles)
                $0.check = true
                $0.preset = .photoswipe
            }
            // With the zoom ladder and tiles (whose rungs follow the preset) every item is made
            // again; without them (the defaults) only the manifest changes.
            #expect(relaid.stale == ["settings or thumbframe version changed: every item would be rebuilt"])
            _ = try await Self.build(source, out)
            let unladdered = try await Self.build(source, out) {
                $0.check = true
                $0.preset = .photoswipe
            }
            #expect(unladdered.stale.contains("manifest.json differs from what a build would write"))
        }
    }
}

/// Collects the lines of a build's events (which may arrive from any thread).
final class LogLines: @unchecked Sendable {
    // @unchecked: `lines` is only touched while `lock` is held.
    private let lock = NSLock()
    private var lines: [String] = []

    var append: @Sendable (BuildEvent) -> Void {
        { [self] event in
            lock.lock()
            lines.append(event.description)
            lock.unlock()
        }
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

extension Optional {
    func unwrap(_ file: StaticString = #filePath, _ line: UInt = #line) throws -> Wrapped {
        guard let self else { throw FixtureError("unexpected nil at \(file):\(line)") }
        return self
    }
}

@Suite("Incremental sections")
struct IncrementalSectionTests {
    /// The top document and every page of a manifest, by path.
    static func files(_ out: String) throws -> [String: Data] {
        let document = try ManifestFile.open(out + "/manifest.json").document
        var files = ["manifest.json": try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))]
        for page in document.sections.flatMap({ $0.pages ?? [] }) {
            files[page.path] = try Data(contentsOf: URL(fileURLWithPath: out + "/" + page.path))
        }
        return files
    }

    @Test("only the sections whose files changed are assembled again; the result is a full build's, byte for byte")
    func onlyChangedSections() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            for (directory, count) in [("a", 3), ("b", 2), ("c", 2), ("d", 0)] {
                try Fixtures.makeDirectory(source + "/" + directory)
                for index in 0..<count {
                    try Fixtures.writeImage(to: "\(source)/\(directory)/\(index).jpg", width: 60 + index, height: 40)
                }
            }
            _ = try await IncrementalTests.build(source, out)
            let before = try Self.files(out)
            let stamps = IncrementalTests.snapshot(out)
            // A file added to b, a folder d added, a file removed from c.
            try Fixtures.writeImage(to: source + "/b/new.jpg", width: 70, height: 50)
            try Fixtures.writeImage(to: source + "/d/0.jpg", width: 50, height: 70)
            try FileManager.default.removeItem(atPath: source + "/c/1.jpg")
            let report = try await IncrementalTests.build(source, out)
            #expect(report.manifestWritten && report.thumbnailsWritten == 2 * ThumbnailRecipe.defaults.count)
            #expect(report.sectionsAssembled == 3, "a was taken as it was")
            let after = try Self.files(out)
            // Section a kept its page file, untouched; b, c and d have new ones.
            let document = try ManifestFile.open(out + "/manifest.json").document
            let pageOfA = try #require(document.sections.first { $0.name == "a" }?.pages?.first?.path)
            #expect(before[pageOfA] != nil && IncrementalTests.snapshot(out)[pageOfA] == stamps[pageOfA])
            for name in ["b", "c", "d"] {
                let page = try #require(document.sections.first { $0.name == name }?.pages?.first?.path)
                #expect(before[page] == nil, "section \(name) was assembled again")
            }
            // The same bytes as a build from scratch of the same library.
            _ = try await IncrementalTests.build(source, root + "/fresh")
            #expect(try Self.files(root + "/fresh") == after)
            #expect(try ManifestValidator.problems(at: out + "/manifest.json") == [])
        }
    }
    @Test("pages are assembled on --jobs threads and come out as one thread writes them, reused sections among them")
    func parallelPages() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, seed) = (root + "/src", root + "/seed.jpg")
            try Fixtures.writeImage(to: seed, width: 12, height: 8)
            let jpeg = try Data(contentsOf: URL(fileURLWithPath: seed))
            // `big` has three pages (256, 256, 8); the small sections around it are assembled
            // while its pages wait, and later taken as they were.
            for (directory, count) in [("a", 2), ("big", 2 * ManifestPage.size + 8), ("c", 3), ("d", 1), ("e", 2)] {
                try Fixtures.makeDirectory(source + "/" + directory)
                for index in 0..<count {
                    // Distinct bytes after the end marker: each file its own item and thumbnails.
                    try (jpeg + Data("\(directory)\(index)".utf8)).write(to: URL(fileURLWithPath: "\(source)/\(directory)/\(index).jpg"))
                }
            }
            let one = try await IncrementalTests.build(source, root + "/one") { $0.jobs = 1 }
            let three = try await IncrementalTests.build(source, root + "/three") { $0.jobs = 3 }
            #expect(one.items == 2 * ManifestPage.size + 16 && three.sectionsAssembled == 5)
            let document = try ManifestFile.open(root + "/three/manifest.json").document
            #expect(document.sections.map { $0.pages?.count ?? 0 } == [1, 3, 1, 1, 1])
            #expect(try Self.files(root + "/one") == Self.files(root + "/three"))
            #expect(try ManifestValidator.problems(at: root + "/three/manifest.json") == [])
            // c and e change; a, big and d are taken as they were, between them.
            try Data("changed".utf8).write(to: URL(fileURLWithPath: source + "/c/0.jpg"), options: .atomic)
            try FileManager.default.removeItem(atPath: source + "/e/1.jpg")
            let again = try await IncrementalTests.build(source, root + "/three") { $0.jobs = 3 }
            #expect(again.sectionsAssembled == 2)
            _ = try await IncrementalTests.build(source, root + "/fresh") { $0.jobs = 1 }
            #expect(try Self.files(root + "/three") == Self.files(root + "/fresh"))
        }
    }
}

@Suite("Upgrading from thumbframe 0.1")
struct UpgradeTests {
    @Test("an OUT_DIR of 0.1 (no ledger) is taken over: the thumbnails its manifest names are pruned, nothing else")
    func adoptsVersion1() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeLibrary(source, IncrementalTests.library)
            let old = "thumbs/ab/ab" + String(repeating: "0", count: 30) + ".jpg"
            try Fixtures.write([1, 2, 3], to: out + "/" + old)
            try Fixtures.write(Array("mine".utf8), to: out + "/thumbs/ab/notes.txt")
            let version1 = #"{"format":"thumbframe-manifest","version":1,"items":[{"thumbnails":{"grid":{"path":"\#(old)"}}}]}"#
            try Fixtures.write(Array(version1.utf8), to: out + "/manifest.json")
            let report = try await IncrementalTests.build(source, out)
            #expect(report.manifestWritten)
            #expect(!FileManager.default.fileExists(atPath: out + "/" + old), "0.1's thumbnail pruned")
            #expect(FileManager.default.fileExists(atPath: out + "/thumbs/ab/notes.txt"), "a file 0.1 did not name is kept")
        }
    }
}

@Suite("Shrink guard and the index")
struct ShrinkIndexTests {
    @Test("files that turn broken trip the shrink guard; the next run with --allow-shrink writes what was recorded")
    func refusedRunLeavesWorkToPublish() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            try Fixtures.makeDirectory(source)
            for index in 0..<20 { try Fixtures.writeImage(to: "\(source)/\(index).jpg", width: 40 + index, height: 30) }
            _ = try await IncrementalTests.build(source, out)
            for index in 0..<11 { try Fixtures.write(Array("broken \(index)".utf8), to: "\(source)/\(index).jpg") }
            await #expect(throws: ThumbframeError.wouldShrink(previous: 20, dropped: 11)) {
                try await IncrementalTests.build(source, out)
            }
            #expect(try ManifestFile.load(out + "/manifest.json").items.count == 20, "nothing published")
            // The broken files are recorded (not decoded again), but the manifest is still to write.
            let allowed = try await IncrementalTests.build(source, out) { $0.allowShrink = true }
            #expect(allowed.manifestWritten && allowed.items == 9 && allowed.failures.count == 11)
        }
    }
}

@Suite("Touched files")
struct TouchedFileTests {
    @Test("a touched file of the same bytes whose thumbnails exist takes its recorded placeholder and is not decoded")
    func knownPlaceholder() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Fixtures.writeImage(to: root + "/lib/a.jpg", width: 320, height: 240)
            let (_, first) = try await Fixtures.build(BuildOptions(source: root + "/lib", output: root + "/out"))
            let recorded = try #require(first.items.first?.placeholder)
            let sha256 = try #require(first.items.first?.file.sha256)
            let source = try SourceRoot.open(root + "/lib")
            let file = try #require(try SourceWalker(root: source, excluded: []).walk().files.first)
            let context = ProcessingContext(
                recipes: ThumbnailRecipe.defaults, source: source, output: try OutputDirectory(root + "/out", create: false),
                limits: ResourceLimits())
            // A placeholder no decode would give: taken only when the bytes hash the same.
            let marker = Manifest.Placeholder(thumbhash: recorded.thumbhash, color: "#123456")
            func placeholder(_ known: ReusePlan.KnownPlaceholder) throws -> Manifest.Placeholder? {
                guard case .item(let item) = ItemProcessor.timed(file, context: context, known: known).outcome else {
                    Issue.record("not an item")
                    return nil
                }
                return item.placeholder
            }
            // (With the likeness `--stacks` wants, which the index records beside it.)
            let likeness = Likeness(horizontal: 1, vertical: 2, pixels: 3, sharpness: 4, detail: 5)
            #expect(try placeholder(.init(sha256: sha256, placeholder: marker, likeness: likeness)) == marker)
            #expect(try placeholder(.init(sha256: String(repeating: "0", count: 64), placeholder: marker)) == recorded)
            // Thumbnails gone: decoded, so the placeholder is computed again.
            try FileManager.default.removeItem(atPath: root + "/out/" + (first.items[0].thumbnails["grid"]?.path ?? ""))
            #expect(try placeholder(.init(sha256: sha256, placeholder: marker)) == recorded)

            // End to end: touching the file rewrites nothing and keeps the item as it was, its
            // `file.modified` (the bytes' time as first read) included.
            try Fixtures.makeDirectory(root + "/lib2")
            try Fixtures.writeImage(to: root + "/lib2/b.jpg", width: 320, height: 240)
            let (_, before) = try await Fixtures.build(BuildOptions(source: root + "/lib2", output: root + "/out2"))
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -86_400)], ofItemAtPath: root + "/lib2/b.jpg")
            let (report, after) = try await Fixtures.build(BuildOptions(source: root + "/lib2", output: root + "/out2"))
            #expect(report.thumbnailsWritten == 0 && report.reused == 0)
            #expect(after.items.first?.placeholder == before.items.first?.placeholder)
            #expect(after.items.first == before.items.first)
        }
    }
}

@Suite("Plan in chunks")
struct PlanChunkTests {
    @Test("the plan decides a few rows at a time (memory), and decides exactly as in one piece, whatever the chunk")
    func chunksDecideAlike() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let (source, out) = (root + "/src", root + "/out")
            for (number, directory) in ["a", "b", "c"].enumerated() {
                try Fixtures.makeDirectory(source + "/" + directory)
                for index in 0..<7 {
                    try Fixtures.writeImage(to: "\(source)/\(directory)/\(index).jpg", width: 40 + index, height: 30 + number)
                }
            }
            try Fixtures.write(Array("broken".utf8), to: source + "/b/broken.jpg")
            _ = try await IncrementalTests.build(source, out)
            // Touched, changed, thumbnails lost, removed and added: every decision there is.
            let late = Date(timeIntervalSinceNow: 60)
            try FileManager.default.setAttributes([.modificationDate: late], ofItemAtPath: source + "/a/1.jpg")
            try Fixtures.writeImage(to: source + "/a/5.jpg", width: 90, height: 30)
            try FileManager.default.removeItem(atPath: source + "/b/2.jpg")
            try FileManager.default.removeItem(atPath: source + "/c/6.jpg")
            try Fixtures.writeImage(to: source + "/c/new.jpg", width: 50, height: 50)
            let document = try ManifestFile.open(out + "/manifest.json")
            let lost = try #require(document.item(at: 17).thumbnails["grid"]?.path)
            try FileManager.default.removeItem(atPath: out + "/" + lost)

            let output = try OutputDirectory(out, create: false)
            let (opened, problem) = try StateIndex.open(output, readOnly: true)
            let index = try #require(opened)
            #expect(problem == nil)
            var files = try SourceWalker(root: SourceRoot.open(source), excluded: []).walk().files
            files.sort { $0.rawPath.lexicographicallyPrecedes($1.rawPath) }
            func plan(_ chunk: Int) throws -> [String] {
                let plan = try ReusePlan(
                    index: index, reusable: true, verify: false, check: false, output: output, files: files, chunkSize: chunk)
                return ["reused \(plan.reusedItems)", "failures \(plan.reusedFailures)"]
                    + plan.work.map { "work \($0.file.relativePath) \($0.known) \($0.wasItem) \($0.placeholder != nil)" }
                    + plan.missing.map { "missing \(String(decoding: $0.path, as: UTF8.self)) \($0.wasItem)" }
                    + plan.missingThumbnails.map { "thumbnails \($0)" }
                    + plan.work.flatMap(\.recorded.keys).sorted()
            }
            let whole = try plan(4096)
            #expect(whole.contains("reused 16") && whole.contains("failures 1"), "\(whole)")
            #expect(whole.contains { $0.hasPrefix("thumbnails ") } && whole.contains { $0.hasPrefix("missing ") })
            #expect(whole.contains("work a/1.jpg true true true"), "touched: its placeholder is taken")
            for chunk in [1, 2, 5, 16] {
                #expect(try plan(chunk) == whole, "chunks of \(chunk)")
            }
        }
    }
}

@Suite("State index commits")
struct StateIndexCommitTests {
    @Test("rows are committed a batch at a time, and never more than a quarter of a second after they were recorded")
    func batchedCommits() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let output = try OutputDirectory(root, create: true)
            let writer = try #require(try StateIndex.open(output, readOnly: false).index)
            func record(_ name: String) throws {
                let file = SourceFile(path: Array(name.utf8))
                try writer.record(file, .failure(Manifest.Failure(path: name, stage: "decode", reason: "test")))
            }
            // What another connection (the next run, after a kill) sees. (A read-only index is
            // opened immutable, without the WAL: what --check reads after a clean close.)
            func committed() throws -> Int {
                let reader = try #require(try StateIndex.open(output, readOnly: false).index)
                var count = 0
                try reader.forEachEntry { _, _ in count += 1 }
                return count
            }
            for number in 0..<3 { try record("a/\(number).jpg") }
            #expect(try committed() == 0, "three files are not a batch")
            try await Task.sleep(for: .milliseconds(300))
            try record("a/3.jpg")
            #expect(try committed() == 4, "the first was recorded over a quarter of a second ago")
            for number in 4..<(4 + StateIndex.commitRows) { try record("b/\(number).jpg") }
            #expect(try committed() == 4 + StateIndex.commitRows, "a full batch is committed at once")
            try record("c/0.jpg")
            try writer.commit()
            #expect(try committed() == 5 + StateIndex.commitRows)
        }
    }
}
