import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Stacks without ML (`--stacks`): bursts the camera marked, identical copies, and frames of one
/// camera seconds apart that look alike — measured on bursts made from the corpus's real photos.
@Suite("Stacks")
struct StackingTests {
    static let corpusScript = Fixtures.packageRoot + "/scripts/test-helpers/stack-corpus.py"

    /// A photo's evidence: camera 1, taken `seconds` in, looking like `picture`.
    static func photo(
        _ seconds: Double?, _ picture: Likeness?, camera: UInt64 = 1, burst: UInt64 = 0, pick: Bool = false, file: UInt64? = nil
    ) -> StackEvidence {
        StackEvidence(
            captured: seconds.map { Int64($0 * 1000) }, camera: camera, burst: burst, pick: pick,
            file: file ?? UInt64.random(in: 1...UInt64.max), width: 400, height: 300, likeness: picture)
    }

    /// A likeness `bits` hash bits away from `base` (flipped low bits), sharpness `sharpness`.
    static func like(_ base: UInt64, bits: Int = 0, sharpness: Int = 100, detail: Int = 100) -> Likeness {
        let flip: UInt64 = bits == 0 ? 0 : (bits >= 64 ? .max : (1 << UInt64(bits)) - 1)
        return Likeness(
            horizontal: base ^ flip, vertical: base, pixels: UInt64.random(in: 1...UInt64.max), sharpness: sharpness, detail: detail)
    }

    @Test("grouping: bursts, duplicates, one camera's alike frames in the window; the reason and the cover")
    func grouping() {
        let scene: UInt64 = 0x0F0F_3355_AAAA_0FF0
        let other: UInt64 = 0xF0F0_CCAA_5555_F00F
        let stacks = Stacking.stacks(
            [
                Self.photo(0, Self.like(scene, sharpness: 50)),  // 0: stacked with 1 and 2
                Self.photo(0.4, Self.like(scene, bits: 10, sharpness: 90)),  // 1: the sharpest
                Self.photo(0.8, Self.like(scene, bits: 20, sharpness: 40)),  // 2: 10 bits from 1
                Self.photo(1.0, Self.like(other)),  // 3: another scene amid the burst
                Self.photo(1.2, Self.like(scene, bits: 4), camera: 2),  // 4: another camera
                Self.photo(30, Self.like(scene, bits: 2)),  // 5: alike, but 29 s later
                Self.photo(40, Self.like(other, detail: 10)),  // 6, 7: flat pictures alike to none
                Self.photo(40.5, Self.like(other, detail: 10)),
                Self.photo(nil, Self.like(scene), file: 77),  // 8, 9: the same bytes, no time
                Self.photo(nil, Self.like(other), file: 77),
                Self.photo(50, Self.like(other), burst: 5),  // 10, 11: the camera's burst, the pick
                Self.photo(55, Self.like(scene), burst: 5, pick: true),
                nil,  // 12: a video
            ], mode: .all)
        #expect(stacks[0] == Manifest.Stack(cover: 1, reason: .timeSimilar))
        #expect(stacks[1] == Manifest.Stack(cover: 1, reason: .timeSimilar, members: [0, 1, 2]))
        #expect(stacks[2]?.cover == 1)
        #expect([3, 4, 5, 6, 7, 12].allSatisfy { stacks[$0] == nil }, "\(stacks)")
        #expect(stacks[8] == Manifest.Stack(cover: 8, reason: .duplicate, members: [8, 9]))
        #expect(stacks[9] == Manifest.Stack(cover: 8, reason: .duplicate))
        #expect(stacks[11] == Manifest.Stack(cover: 11, reason: .burst, members: [10, 11]))
        // Only what the camera said with `bursts`; nothing with `none`.
        let bursts = Stacking.stacks([Self.photo(0, Self.like(scene)), Self.photo(0.2, Self.like(scene))], mode: .bursts)
        #expect(bursts == [nil, nil])
        #expect(
            Stacking.stacks([Self.photo(0, nil, burst: 3), Self.photo(9, nil, burst: 3)], mode: .bursts)[0]?.members == [0, 1])
        #expect(Stacking.stacks([Self.photo(0, nil, burst: 3), Self.photo(9, nil, burst: 3)], mode: .none) == [nil, nil])
        // A burst whose frames are also alike stays a burst; one past the threshold stays out.
        let mixed = Stacking.stacks(
            [
                Self.photo(0, Self.like(scene), burst: 9), Self.photo(0.1, Self.like(scene), burst: 9),
                Self.photo(0.2, Self.like(scene, bits: Stacking.threshold + 1)),
            ], mode: .all)
        #expect(mixed[0]?.reason == .burst && mixed[2] == nil, "\(mixed)")
    }

    @Test("a camera whose clock stood still: thousands of alike frames at one time still chain into one stack")
    func stillClock() {
        let scene: UInt64 = 0x0F0F_3355_AAAA_0FF0
        let frames = (0..<2000).map { _ in Self.photo(5, Self.like(scene, bits: 2)) }
        let stacks = Stacking.stacks(frames, mode: .all)
        #expect(stacks.allSatisfy { $0?.cover == stacks[0]?.cover } && stacks.compactMap { $0?.members }.first?.count == 2000)
    }

    @Test("validate: a stack's cover and members must agree, and a place must be of the settings' precision")
    func validated() {
        typealias Checker = ManifestValidator.Checker
        let good: [Int: Manifest.Stack] = [
            0: Manifest.Stack(cover: 1, reason: .burst), 1: Manifest.Stack(cover: 1, reason: .burst, members: [0, 1]),
        ]
        #expect(Checker.stackProblems([0: good]).isEmpty)
        var wrong = good
        wrong[0] = Manifest.Stack(cover: 1, reason: .duplicate)
        #expect(Checker.stackProblems([0: wrong]) == ["sections[0] item 0's stack says duplicate, its cover burst"])
        wrong = good
        wrong[0] = Manifest.Stack(cover: 5, reason: .burst)
        #expect(Checker.stackProblems([2: wrong]).first == "sections[2] item 0's stack names item 5 as its cover, which lists no members")
        wrong = good
        wrong[1] = Manifest.Stack(cover: 1, reason: .burst, members: [0, 1, 2])
        #expect(Checker.stackProblems([0: wrong]) == ["sections[0] item 1's stack lists item 2, which is not in it"])
        wrong[1] = Manifest.Stack(cover: 1, reason: .burst, members: [1, 0])
        #expect(Checker.stackProblems([0: wrong]) == ["sections[0] item 1's stack lists members [1, 0], not two or more ascending"])
        let city = Manifest.Place(latitude: 48.8534, longitude: 2.3488, name: "Paris", region: "Ile-de-France", country: "FR")
        #expect(Checker.placeProblem(city, .city) == nil && Checker.placeProblem(nil, nil) == nil)
        #expect(Checker.placeProblem(city, nil) == "is published, but settings.locations asks for none")
        #expect(Checker.placeProblem(city, .region) == "is not a region")
        let cell = Manifest.Place.cell(latitude: 48.81234, longitude: 2.40321, km: 10)
        #expect(Checker.placeProblem(cell, .cell(km: 10)) == nil)
        var moved = cell
        moved.latitude += 0.01
        #expect(Checker.placeProblem(moved, .cell(km: 10)) == "is not the centre of a 10 km cell")
        #expect(Checker.placeProblem(cell, .cell(km: 5)) == "is not the centre of a 5 km cell")
    }

    @Test("the evidence and the likeness survive the index's text; capture times count milliseconds")
    func evidenceText() throws {
        let evidence = Self.photo(12.345, Self.like(0xDEAD_BEEF, bits: 7, sharpness: 1234, detail: 77), burst: 42, pick: true)
        #expect(StackEvidence(text: evidence.text) == evidence)
        let bare = StackEvidence(captured: nil, camera: 0, burst: 0, pick: false, file: 1, width: 3, height: 4, likeness: nil)
        #expect(StackEvidence(text: bare.text) == bare && bare.text == "1 - - - 0 0000000000000001 3x4 -")
        #expect(StackEvidence(text: "2 - - - 0 0000000000000001 3x4 -") == nil)
        // A time no calendar date has (a forged row: ±(2^63−1)) is no evidence of time.
        for forged in ["9223372036854775807", "-9223372036854775807"] {
            let text = "1 \(forged) 00000000000000aa - 0 0000000000000001 3x4 -"
            #expect(StackEvidence(text: text)?.captured == nil, "\(forged)")
        }
        #expect(StackEvidence(text: "1 \(StackEvidence.latest) 00000000000000aa - 0 0000000000000001 3x4 -")?.captured != nil)
        let a = try #require(StackEvidence.milliseconds("2024-02-28T23:59:59.5"))
        let b = try #require(StackEvidence.milliseconds("2024-02-29T00:00:01.250"))
        #expect(b - a == 1750)
        let c = try #require(StackEvidence.milliseconds("2024-03-01T00:00:00"))
        #expect(c - b == 86_400_000 - 1250)
        #expect(StackEvidence.milliseconds("2024-13-01T00:00:00") == nil && StackEvidence.milliseconds("2024") == nil)
    }

    /// 100 × 75 RGBA of a pattern: `seed` chooses it, `shift` moves it right, `gain` brightens it.
    static func pixels(seed: Int, shift: Int = 0, gain: Double = 1) -> [UInt8] {
        var rgba: [UInt8] = []
        for y in 0..<75 {
            for x in 0..<100 {
                let u = Double(x + shift) / 100
                let v = Double(y) / 75
                let value = 110 + 60 * sin(Double(seed) * 3.1 * u + 2 * v) + 40 * cos(Double(seed + 2) * 2.3 * v - u)
                let level = UInt8(max(0, min(255, value * gain)))
                rgba += [level, UInt8(max(0, min(255, Double(level) * 0.8))), 90, 255]
            }
        }
        return rgba
    }

    @Test("likeness: a shifted, brighter copy is near, another picture far, a flat one not comparable")
    func likeness() {
        let base = Likeness(width: 100, height: 75, rgba: Self.pixels(seed: 3))
        let moved = Likeness(width: 100, height: 75, rgba: Self.pixels(seed: 3, shift: 2, gain: 1.15))
        let other = Likeness(width: 100, height: 75, rgba: Self.pixels(seed: 7))
        #expect(base.comparable && moved.comparable && other.comparable)
        #expect(base.distance(to: moved) <= Stacking.threshold, "\(base.distance(to: moved))")
        #expect(base.distance(to: other) > Stacking.threshold, "\(base.distance(to: other))")
        #expect(base.pixels != moved.pixels && base == Likeness(width: 100, height: 75, rgba: Self.pixels(seed: 3)))
        let flat = Likeness(width: 100, height: 75, rgba: [UInt8](repeating: 128, count: 100 * 75 * 4))
        #expect(!flat.comparable && flat.sharpness == 0)
        #expect(Likeness(text: base.text) == base && Likeness(text: "1 2 3") == nil)
    }

    @Test("burst marks: Android names, Google Camera's XMP, Apple's BurstUUID")
    func burstMarks() {
        let pixel = BurstMark.fileName(Array("00000IMG_00000_BURST20201231123456789_COVER.jpg".utf8))
        #expect(pixel == BurstMark(id: "name:BURST20201231123456789", pick: true))
        #expect(BurstMark.fileName(Array("00001IMG_00001_BURST20201231123456789.jpg".utf8))?.id == pixel?.id)
        let older = BurstMark.fileName(Array("IMG_20201231_123456_BURST002.jpg".utf8))
        #expect(older == BurstMark(id: "name:IMG_20201231_123456", pick: false))
        #expect(BurstMark.fileName(Array("IMG_20201231_123456_BURST001_COVER.JPG".utf8))?.id == older?.id)
        #expect(BurstMark.fileName(Array("IMG_1234.jpg".utf8)) == nil && BurstMark.fileName(Array("_BURST12.jpg".utf8)) == nil)
        let xmp = Array(#"<rdf:Description GCamera:BurstID="b7e3-11" GCamera:BurstPrimary="1"/>"#.utf8)
        #expect(BurstMark.googleCamera(xmp: xmp) == BurstMark(id: "gcamera:B7E3-11", pick: true))
        #expect(BurstMark.googleCamera(xmp: Array("<GCamera:BurstID>ab</GCamera:BurstID>".utf8))?.pick == false)
        #expect(BurstMark.googleCamera(xmp: Array("<x:xmpmeta/>".utf8)) == nil)
        let uuid = "8E3B7D4C-0000-4000-8000-00000000B0B5"
        let facts = ExifReader.read(Array(Fixtures.appleExifSegment(contentIdentifier: uuid, tag: 0x000B).dropFirst(4)))
        #expect(facts.burst == BurstMark(id: "apple:" + uuid) && facts.contentIdentifier == nil)
    }

    /// The stacks of a built library, by cover path: member paths.
    static func stacks(_ manifest: Manifest) -> [String: [String]] {
        var found: [String: [String]] = [:]
        for section in manifest.sections.indices {
            let items = manifest.items.filter { $0.section == section }
            for item in items {
                guard let stack = item.stack else { continue }
                found[items[stack.cover].path, default: []].append(item.path)
            }
        }
        return found
    }

    @Test(
        "bursts made from real photos: no unrelated photo stacked, at least 90 % of burst frames stacked; the same stacks with --jobs 1, after a change, and merged from shards",
        .enabled(if: FileManager.default.fileExists(atPath: CorpusTests.corpus + "/jpg/gps"), "needs ../shared/corpus"))
    func measured() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let made = try await Processes.run(
                "/usr/bin/env", ["python3", Self.corpusScript, CorpusTests.corpus + "/jpg", root + "/made"])
            try #require(made.status == 0, "\(made.stderr)")
            let truth = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/made/truth.json")))
                    as? [String: Any])
            let label = { (path: String) in truth[path] as? String }
            let lib = root + "/made/library"
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: lib, output: root + "/out", jobs: 2))
            let stacks = Self.stacks(manifest)
            var wrong: [String] = []
            for (cover, members) in stacks {
                let expected = label(cover)
                wrong += members.filter { label($0) == nil || label($0) != expected }
            }
            let frames = truth.keys.filter { label($0)?.hasPrefix("burst") == true }
            let stacked = frames.filter { frame in
                stacks.values.contains { $0.contains(frame) && $0.filter { label($0) == label(frame) }.count > 1 }
            }
            let recall = Double(stacked.count) / Double(frames.count)
            print(
                "stacks: \(stacks.count) stacks, \(wrong.count) unrelated photos stacked, \(stacked.count) of \(frames.count) burst frames stacked (\(String(format: "%.1f", 100 * recall)) %)"
            )
            #expect(wrong.isEmpty, "unrelated photos stacked: \(wrong.sorted())")
            #expect(recall >= 0.9, "recall \(recall)")
            #expect(manifest.items.first { $0.path.hasPrefix("copy-of-") }?.stack?.reason == .duplicate)
            #expect(try ManifestValidator.problems(at: root + "/out/manifest.json").isEmpty)
            let reader = try ManifestFile.open(root + "/out/manifest.json")
            let summary = reader.document.summary
            // The Swift library's view: the same stacks per section, and the cells a folded grid shows.
            let listed = try reader.stacks(inSection: 0)
            #expect(Set(listed.map { manifest.items[$0.cover].path }) == Set(stacks.keys))
            #expect(listed.allSatisfy { stacks[manifest.items[$0.cover].path]?.count == $0.members.count })
            let folded = try reader.foldedPositions(inSection: 0)
            #expect(folded.count == manifest.items.count - (summary.stacked ?? 0) + stacks.count)
            #expect(
                summary.stacked == manifest.items.count { $0.stack != nil } && (summary.stacks?.values.reduce(0, +) ?? 0) == stacks.count)

            // Deterministic: one job gives the same bytes; so do two shards merged.
            _ = try await Fixtures.build(BuildOptions(source: lib, output: root + "/one", jobs: 1))
            #expect(try Fixtures.manifestFiles(root + "/one") == Fixtures.manifestFiles(root + "/out"))
            try await ShardTests.buildShards(lib, root + "/shards", count: 2)
            _ = try await ShardMerge(output: root + "/shards", count: 2).run()
            #expect(try Fixtures.manifestFiles(root + "/shards") == Fixtures.manifestFiles(root + "/out"))

            // Incremental: a frame leaves, a copy of another joins; the stacks are a fresh build's.
            try FileManager.default.removeItem(atPath: lib + "/burst01_2.jpg")
            try FileManager.default.copyItem(atPath: lib + "/burst02_0.jpg", toPath: lib + "/burst02_0 copy.jpg")
            let (report, changed) = try await Fixtures.build(BuildOptions(source: lib, output: root + "/out", jobs: 2))
            #expect(report.reused == manifest.items.count - 1)
            let after = Self.stacks(changed)
            #expect(after.values.contains { $0.contains("burst02_0 copy.jpg") && $0.contains("burst02_0.jpg") })
            #expect(!after.values.joined().contains("burst01_2.jpg"))
            _ = try await Fixtures.build(BuildOptions(source: lib, output: root + "/fresh", jobs: 2))
            #expect(try Fixtures.manifestFiles(root + "/fresh") == Fixtures.manifestFiles(root + "/out"))

            // `bursts` and `none`: no camera marked these, so no stacks.
            var bursts = BuildOptions(source: lib, output: root + "/out", jobs: 2)
            bursts.stacks = .bursts
            #expect(try await Fixtures.build(bursts).manifest.items.allSatisfy { $0.stack == nil })
        }
    }
}
