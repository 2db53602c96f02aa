import CThumbframeKernels
import CThumbframeShim
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

@Suite("Natural order")
struct NaturalOrderTests {
    @Test func numbersCompareByValue() {
        let names = ["IMG_10.jpg", "IMG_2.jpg", "img_1.jpg", "IMG_002.jpg", "a", "IMG_9999999999999999999999.jpg", "B"]
        #expect(
            names.sorted(by: NaturalOrder.less) == [
                "a", "B", "img_1.jpg", "IMG_002.jpg", "IMG_2.jpg", "IMG_10.jpg", "IMG_9999999999999999999999.jpg",
            ])
    }

    @Test func totalOrderWithByteTieBreak() {
        // Equal by natural order alone; bytes decide, so sorting is stable across runs.
        #expect(NaturalOrder.less("IMG_002.jpg", "IMG_2.jpg"))
        #expect(!NaturalOrder.less("IMG_2.jpg", "IMG_002.jpg"))
        #expect(!NaturalOrder.less("x", "x"))
    }

    @Test func directoriesBeforeTheirChildrenAndSiblings() {
        let paths: [[String]] = [["a-b"], ["a", "b"], [], ["a"], ["a", "10"], ["a", "9"]]
        let sorted = paths.map { $0.map { Array($0.utf8) } }.sorted(by: NaturalOrder.lessPath)
        #expect(
            sorted.map { $0.map { String(decoding: $0, as: UTF8.self) } } == [[], ["a"], ["a", "9"], ["a", "10"], ["a", "b"], ["a-b"]])
    }
}

@Suite("Thumbnail plan")
struct ThumbnailPlanTests {
    @Test func decodeOnceAtTheLargestNeed() {
        let plan = ThumbnailPlan(width: 4000, height: 3000, recipes: ThumbnailRecipe.defaults)
        #expect((plan.decodeWidth, plan.decodeHeight) == (1280, 960))
        #expect(plan.outputs.map { [$0.width, $0.height] } == [[256, 256], [512, 384], [1280, 960]])
        #expect(plan.outputs[0].crop == Manifest.Rect(x: 0.125, y: 0, width: 0.75, height: 1))
    }

    @Test func coverCanNeedMoreThanFit() {
        // A panorama: the 256-high cover cell needs more pixels than the 1280-wide preview.
        let plan = ThumbnailPlan(width: 12_000, height: 1000, recipes: ThumbnailRecipe.defaults)
        #expect((plan.decodeWidth, plan.decodeHeight) == (3072, 256))
        #expect(plan.outputs.map { [$0.width, $0.height] } == [[256, 256], [512, 43], [1280, 107]])
    }

    @Test("a cover of a very long image is cut from the original; the box is the other outputs'")
    func longCoverIsCropped() {
        // 65 535 × 318: the 256-pixel square would need the whole image at 52 759 × 256.
        let plan = ThumbnailPlan(width: 65_535, height: 318, recipes: ThumbnailRecipe.defaults)
        #expect((plan.decodeWidth, plan.decodeHeight) == (52_758, 256))
        let (separated, cropped) = plan.separatingCroppedCovers()
        #expect(cropped == [0] && (separated.decodeWidth, separated.decodeHeight) == (1280, 6))
        #expect(separated.outputs == plan.outputs)
        // Only covers at least 4 MP and 4 times the rest: a 12 000 × 1000 panorama's 3072 × 256 stays whole.
        let panorama = ThumbnailPlan(width: 12_000, height: 1000, recipes: ThumbnailRecipe.defaults)
        #expect(panorama.separatingCroppedCovers().plan == panorama && panorama.separatingCroppedCovers().cropped.isEmpty)
        // Covers alone: the box falls to 4 MP, the placeholder's source.
        let covers = ThumbnailPlan(width: 65_535, height: 318, recipes: [ThumbnailRecipe.defaults[0]]).separatingCroppedCovers()
        #expect(covers.cropped == [0] && covers.plan.decodeWidth * covers.plan.decodeHeight <= 4_000_000)
        // The crop in stored pixels: the same share of each side, swapped with the axes.
        let upright = plan.storedCrop(plan.outputs[0], storedWidth: 65_535, storedHeight: 318, orientation: 1)
        #expect([upright.left, upright.top, upright.width, upright.height] == [Int](arrayLiteral: 32_608, 0, 318, 318), "\(upright)")
        let turned = plan.storedCrop(plan.outputs[0], storedWidth: 318, storedHeight: 65_535, orientation: 6)
        // A JPEG shrunk by 4 on load: the same shares of its sides.
        let shrunk = plan.storedCrop(plan.outputs[0], storedWidth: 16_384, storedHeight: 80, orientation: 1)
        #expect([shrunk.width, shrunk.height] == [Int](arrayLiteral: 80, 80), "\(shrunk)")
        #expect([turned.left, turned.top, turned.width, turned.height] == [Int](arrayLiteral: 0, 32_608, 318, 318), "\(turned)")
    }

    @Test func neverEnlarges() {
        let plan = ThumbnailPlan(width: 100, height: 50, recipes: ThumbnailRecipe.defaults)
        #expect((plan.decodeWidth, plan.decodeHeight) == (100, 50))
        #expect(plan.outputs.map { [$0.width, $0.height] } == [[100, 50], [100, 50], [100, 50]])
        #expect(plan.outputs[0].crop == Manifest.Rect(x: 0, y: 0, width: 1, height: 1))
    }

    @Test func jpegShrinkLeavesAFactorOfTwoForLanczos() {
        // 6000×4000 to a 1280×853 box: 1/2 gives 3000×2000 (≥ 2 × the box), 1/4 gives 1500×1000
        // (covers the box, but would leave the DCT scaling almost all the work).
        let plan = ThumbnailPlan(width: 6000, height: 4000, recipes: ThumbnailRecipe.defaults)
        #expect(plan.jpegShrink(storedWidth: 6000, storedHeight: 4000, quarterTurn: false) == 2)
        // Stored sideways (orientation 6): the box turns with it.
        let portrait = ThumbnailPlan(width: 4000, height: 6000, recipes: ThumbnailRecipe.defaults)
        #expect(portrait.jpegShrink(storedWidth: 6000, storedHeight: 4000, quarterTurn: true) == 2)
        // Exactly 2× the box: no DCT scaling at all, Lanczos does the 2×.
        #expect(
            ThumbnailPlan(width: 2560, height: 2560, recipes: ThumbnailRecipe.defaults)
                .jpegShrink(storedWidth: 2560, storedHeight: 2560, quarterTurn: false) == 1)
        // libjpeg rounds up: 20481 / 8 = 2561 still leaves 2 × 1280.
        let huge = ThumbnailPlan(width: 20_481, height: 12_000, recipes: ThumbnailRecipe.defaults)
        #expect(huge.jpegShrink(storedWidth: 20_481, storedHeight: 12_000, quarterTurn: false) == 8)
        #expect(
            ThumbnailPlan(width: 1000, height: 700, recipes: ThumbnailRecipe.defaults)
                .jpegShrink(storedWidth: 1000, storedHeight: 700, quarterTurn: false) == 1)
    }

    @Test func longImagesAreLimitedByWidthAndFormat() {
        let plan = ThumbnailPlan(width: 1080, height: 7000, recipes: ThumbnailRecipe.defaults)
        // The preview keeps a long image's width; the small rendition is 512 wide.
        #expect(plan.outputs[2].width == 1080 && plan.outputs[2].height == 7000)
        #expect(plan.outputs[1].width == 512 && plan.outputs[1].height == 3319)
        let webp = ThumbnailRecipe(name: "p", width: 1280, height: 1280, fit: .fit, format: .webp)
        let tall = ThumbnailPlan(width: 1000, height: 40_000, recipes: [webp])
        #expect(tall.outputs[0].height == 16_383 && tall.outputs[0].width == 410)
        // Just under 3:1 is not long: fitted in the box.
        let notLong = ThumbnailPlan(width: 1000, height: 2999, recipes: ThumbnailRecipe.defaults)
        #expect(notLong.outputs[2].height == 1280 && notLong.outputs[1].height == 512)
    }
}

@Suite("EXIF text")
struct ExifTextTests {
    @Test(arguments: [
        ("2019:06:01 12:00:00", "2019-06-01T12:00:00"),
        ("2019-06-01 12:00:00", "2019-06-01T12:00:00"),
        ("2008:05:30 15:56:01\0", "2008-05-30T15:56:01"),
    ])
    func validDates(text: String, expected: String) {
        #expect(ExifText.captureDate(Array(text.utf8)) == expected)
    }

    @Test(arguments: [
        "0000:00:00 00:00:00", "    :  :     :  :  ", "", "2019:13:01 12:00:00", "2019:06:01 25:00:00",
        // Not on the calendar (JavaScript would roll them into March or the next minute).
        "2019:02:30 12:00:00", "2019:02:29 12:00:00", "1900:02:29 12:00:00", "2019:04:31 08:00:00",
        "2019:06:01 23:59:60",
    ])
    func invalidDates(text: String) {
        #expect(ExifText.captureDate(Array(text.utf8)) == nil)
    }

    @Test func leapDaysAndFractions() {
        #expect(ExifText.captureDate(Array("2020:02:29 12:00:00".utf8)) == "2020-02-29T12:00:00")
        #expect(ExifText.captureDate(Array("2000:02:29 12:00:00".utf8)) == "2000-02-29T12:00:00")
        #expect(ExifText.fraction(Array("054".utf8)) == ".054")
        #expect(ExifText.fraction(Array("5  ".utf8)) == ".5")
        #expect(ExifText.fraction(Array("  ".utf8)) == nil)
        #expect(ExifText.fraction(Array("5a".utf8)) == nil)
    }

    @Test func offsetsAndLabels() {
        #expect(ExifText.utcOffset(Array("+01:00".utf8)) == "+01:00")
        #expect(ExifText.utcOffset(Array("-09:30".utf8)) == "-09:30")
        #expect(ExifText.utcOffset(Array("01:00".utf8)) == nil)
        #expect(ExifText.utcOffset(Array("+1:00".utf8)) == nil)
        #expect(ExifText.label(Array("Canon  ".utf8)) == "Canon")
        #expect(ExifText.label(Array("   ".utf8)) == nil)
        // A control character separates words; an invisible format character is dropped.
        #expect(ExifText.label([0x41, 0x07, 0x42]) == "A B")
        #expect(ExifText.label(Array("Canon\tEOS\nR5".utf8)) == "Canon EOS R5")
        #expect(ExifText.label(Array("EOS\u{200B}R5".utf8)) == "EOSR5")
    }
}

@Suite("File signature")
struct FileSignatureTests {
    @Test func extensions() {
        #expect(FileSignature.hasImageExtension("IMG_1.JPG"))
        #expect(FileSignature.hasImageExtension("a.heic"))
        #expect(!FileSignature.hasImageExtension("notes.txt"))
        #expect(!FileSignature.hasImageExtension("jpg"))
        #expect(!FileSignature.hasImageExtension(".jpg"))
    }

    @Test func magicBytes() {
        #expect(MediaFormat.isStill([0xFF, 0xD8, 0xFF, 0xE0]))
        #expect(MediaFormat.isStill([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A]))
        #expect(MediaFormat.isStill(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)))
        #expect(MediaFormat.isStill([0, 0, 0, 0x18] + Array("ftypheic".utf8)))
        #expect(!MediaFormat.isStill([0, 0, 0, 0x18] + Array("ftypmp42".utf8)))
        #expect(!MediaFormat.isStill(Array("hello".utf8)))
        #expect(!MediaFormat.isStill([]))
    }

    @Test("items are photos and videos by extension or first bytes; sound and sidecars never, whatever their bytes")
    func candidates() {
        func iso(_ brand: String) -> [UInt8] { [0, 0, 0, 0x18] + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] }
        #expect(FileSignature.isCandidate("clip.MOV") { [] } && FileSignature.isCandidate("a.webm") { [] })
        // Every RAW extension LibRaw takes is an image's, not "other".
        #expect(MediaFormat.raw.extensions.allSatisfy { FileSignature.isCandidate("IMG_1.\($0.uppercased())") { [] } })
        #expect(FileSignature.isCandidate("no-extension") { iso("isom") })
        #expect(FileSignature.isCandidate("no-extension") { [0x1A, 0x45, 0xDF, 0xA3, 0x01] })  // Matroska
        #expect(FileSignature.isCandidate("photo.bin") { iso("heic") })
        #expect(!FileSignature.isCandidate("song.m4a") { iso("M4A ") })
        #expect(!FileSignature.isCandidate("no-extension") { iso("M4A ") })
        #expect(!FileSignature.isCandidate("IMG_1.AAE") { iso("isom") })
        #expect(!FileSignature.isCandidate("notes.txt") { Array("hello".utf8) })
        #expect(FileSignature.skippedKind("song.M4A") == "audio" && FileSignature.skippedKind("a.jpg.json") == "sidecar")
        #expect(FileSignature.skippedKind("ticket.PDF") == "document" && FileSignature.skippedKind("notes.bin") == "other")
        #expect(!FileSignature.isCandidate("scan.pdf") { Array("%PDF-1.7".utf8) } && FileSignature.isCandidate("logo.svg") { [] })
        // MPEG-TS by three sync bytes 188 apart; a GIF starts with a `G` too, and is an image first.
        var ts = [UInt8](repeating: 0, count: MediaFormat.headBytes)
        (ts[0], ts[188], ts[376]) = (0x47, 0x47, 0x47)
        #expect(MediaFormat.isVideo(ts) && !MediaFormat.isVideo(Array(ts.prefix(300))))
        var gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: MediaFormat.headBytes - 6)
        (gif[188], gif[376]) = (0x47, 0x47)
        #expect(MediaFormat.isStill(gif) && !MediaFormat.isVideo(Array(gif.prefix(200))))
    }

    @Test("one table of formats: the walk's extensions, the decoder a file goes to, what each format gives")
    func formatTable() {
        func iso(_ brand: String) -> [UInt8] { [0, 0, 0, 0x18] + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] }
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        // The first bytes decide; a RAW extension keeps a TIFF-based RAW from libvips.
        #expect(MediaFormat.decoder(fileExtension: "jpg", head: [0xFF, 0xD8, 0xFF, 0xE0]) == .libvips)
        #expect(MediaFormat.decoder(fileExtension: "tif", head: tiff) == .libvips)
        #expect(MediaFormat.decoder(fileExtension: "nef", head: tiff) == .libraw)
        #expect(MediaFormat.decoder(fileExtension: "bin", head: iso("crx ")) == .libraw)
        #expect(MediaFormat.decoder(fileExtension: "jpg", head: iso("isom")) == .ffmpeg)
        #expect(MediaFormat.decoder(fileExtension: "mov", head: Array("garbage".utf8)) == .libvips)
        // Every HEIF brand is a picture, never a video; CR3 is neither a picture nor a video.
        #expect(MediaFormat.heifBrands.allSatisfy { MediaFormat.isStill(iso($0)) && !MediaFormat.isVideo(iso($0)) })
        #expect(!MediaFormat.isStill(iso("crx ")) && !MediaFormat.isVideo(iso("crx ")))
        // No extension belongs to two formats, and the walk takes every format's.
        let extensions = MediaFormat.all.flatMap(\.extensions)
        #expect(Set(extensions).count == extensions.count)
        #expect(extensions.allSatisfy { FileSignature.isCandidate("a.\($0)") { [] } })
        // What the layouts and frontends read from it.
        #expect(Manifest.tileableFormats == ["avif", "heic", "heif", "jpeg", "jxl", "png", "tiff", "webp"])
        #expect(Manifest.browserImageFormats == ["avif", "gif", "jpeg", "png", "webp"])
        #expect(ImageHeader.decoderApplies(format: "heic") && ImageHeader.decoderApplies(format: "jxl"))
        #expect(!ImageHeader.decoderApplies(format: "jpeg"))
        #expect(MediaFormat.named("jpeg")?.motion == .afterJPEG && MediaFormat.named("avif")?.motion == .heifBox)
    }
}

@Suite("Images on bytes in memory")
struct ScopedImageTests {
    @Test("Vips.withImage opens an image on bytes for the length of a closure; what cannot be opened is nil")
    func scoped() async throws {
        let bytes = try await Fixtures.imageBytes(width: 64, height: 48)
        // Inside, the handle is the image's only holder (what the closing check relies on).
        let seen = Vips.withImage(bytes, failOn: 0) { image in (image.width, image.height, tf_ref_count(image.pointer)) }
        #expect(seen?.0 == 64 && seen?.1 == 48 && seen?.2 == 1)
        #expect(Vips.withImage(Array("not an image".utf8), failOn: 0) { $0.width } == nil)
        Vips.clearErrors()
    }
}

@Suite("Computed in the calling thread")
struct CallingThreadCopyTests {
    @Test("with one libvips thread an image is computed in the calling thread: the pixels of libvips' own sink, and a stop honoured")
    func sameAsSink() async throws {
        let bytes = try await Fixtures.imageBytes(width: 301, height: 203)
        let threads = vips_concurrency_get()
        defer { vips_concurrency_set(threads) }
        /// The JPEG decoded lazily and resized by libvips' Lanczos3 (a lazy pipeline, as a decode
        /// is before it is materialized), a new one for each computation: a sequential decode is
        /// read once.
        func lazy(_ body: (UnsafeMutablePointer<VipsImage>) -> [UInt8]?) -> [UInt8]? {
            bytes.withUnsafeBytes { raw in
                var loaded: UnsafeMutablePointer<VipsImage>?
                var lazy: UnsafeMutablePointer<VipsImage>?
                guard tf_image_from_buffer(raw.baseAddress, raw.count, &loaded, 0) == 0, let loaded else { return nil }
                defer { g_object_unref(loaded) }
                guard tf_resize_exact(loaded, &lazy, 150, 101, 0) == 0, let lazy else { return nil }
                defer { g_object_unref(lazy) }
                return body(lazy)
            }
        }
        func pixels(threads: Int32, stop: Int32 = 0) -> (bytes: [UInt8]?, reason: Int32, written: [UInt8]?) {
            vips_concurrency_set(threads)
            let written = lazy { image in
                var length = 0
                return tf_write_to_memory(image, &length).map { memory in
                    defer { g_free(memory) }
                    return Array(UnsafeRawBufferPointer(start: memory, count: length))
                }
            }
            var reason: Int32 = 0
            let copied = lazy { image in
                var flag = stop
                guard let copy = tf_copy_memory_guarded(image, 0, &flag, &reason) else { return nil }
                defer { g_object_unref(copy) }
                var length = 0
                guard let memory = vips_image_write_to_memory(copy, &length) else { return nil }
                defer { g_free(memory) }
                return Array(UnsafeRawBufferPointer(start: memory, count: length))
            }
            return (copied, reason, written)
        }
        let here = pixels(threads: 1)
        let pooled = pixels(threads: 2)
        #expect(here.bytes?.count == 150 * 101 * 3)
        #expect(here.bytes == pooled.bytes && here.written == pooled.written && here.written == here.bytes)
        let stopped = pixels(threads: 1, stop: 1)
        #expect(stopped.bytes == nil && stopped.reason == Int32(TF_STOP_REQUESTED.rawValue))
        Vips.clearErrors()
    }
}

@Suite("Build lock")
struct BuildLockTests {
    @Test("a build's lock is released when it ends even while a copy of its descriptor lives on (a child process being spawned)")
    func releasedForEveryCopy() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let output = try OutputDirectory(root, create: true)
            var lock: BuildLock? = try BuildLock.acquire(in: output.root)
            #expect(lock != nil)
            let lockPath = try #require(FileSystem.realPath(root)) + "/" + OutputDirectory.lockName
            // The descriptor the lock holds, found as a child would inherit it; a copy of it (dup)
            // shares its open file, as a child's copy does until it execs.
            let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int32($0) }
            let held = try #require(
                descriptors.first { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == lockPath })
            let copy = dup(held)
            #expect(copy >= 0)
            defer { close(copy) }
            #expect(throws: ThumbframeError.self) { _ = try BuildLock.acquire(in: output.root) }
            lock = nil
            // Unlocked, not merely closed: the copy no longer holds it.
            #expect(throws: Never.self) { _ = try BuildLock.acquire(in: output.root) }
        }
    }
}

@Suite("Owned names")
struct OwnedNamesTests {
    /// Random names of every area and extension, some repeated.
    static func paths(_ count: Int) -> [String] {
        var generator = SystemRandomNumberGenerator()
        let shapes = [("thumbs", "jpg"), ("thumbs", "webp"), ("thumbs", "avif"), ("thumbs", "mp4"), ("pages", "json")]
        return (0..<count).map { _ in
            let hex = (0..<32).map { _ in String(Int.random(in: 0..<16, using: &generator), radix: 16) }.joined()
            let (area, suffix) = shapes.randomElement(using: &generator)!
            return "\(area)/\(hex.prefix(2))/\(hex).\(suffix)"
        }
    }

    @Test("a name is its path again, in 24 bytes, ordered as the paths' bytes (the ledger's order)")
    func roundTripAndOrder() {
        let paths =
            Self.paths(2000) + ["thumbs/00/00000000000000000000000000000000.jpg", "thumbs/ff/ffffffffffffffffffffffffffffffff.webp"]
        let names = paths.map { CompactName($0)! }
        #expect(names.map(\.path) == paths)
        #expect(names.map(\.pathLength) == paths.map(\.utf8.count))
        #expect(MemoryLayout<CompactName>.stride == 24)
        let byBytes = paths.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(names.sorted().map(\.path) == byBytes)
        // The same hash with two extensions, and the same fan-out with two hashes.
        #expect(
            CompactName("thumbs/ab/ab000000000000000000000000000001.avif")! < CompactName("thumbs/ab/ab000000000000000000000000000001.jpg")!
        )
        #expect(
            CompactName("pages/ff/ff000000000000000000000000000000.json")! < CompactName("thumbs/00/00000000000000000000000000000000.jpg")!)
    }

    @Test(
        "only thumbframe's shape is a name",
        arguments: [
            "thumbs/ab/ab00000000000000000000000000000.jpg", "thumbs/ab/ab0000000000000000000000000000000.jpg",
            "thumbs/ac/ab000000000000000000000000000000.jpg", "thumbs/ab/AB000000000000000000000000000000.jpg",
            "thumbs/ab/ab000000000000000000000000000000.json", "pages/ab/ab000000000000000000000000000000.jpg",
            "thumbs/ab/ab000000000000000000000000000000.jpg/x", "thumbs/ab/ab000000000000000000000000000000.jpg.jpg",
            "other/ab/ab000000000000000000000000000000.jpg", "thumbs/ab/ab000000000000000000000000000000", "", "thumbs",
            "thumbs/ab/ab00000000000000000000000000000g.jpg", "thumbs/ab/ab000000000000000000000000000000.jpgx",
        ])
    func shapes(path: String) {
        #expect(CompactName(path) == nil)
        #expect(OutputName(path) == nil)
    }

    @Test("a directory's entries are its names, byte for byte, of every length, in a folder of thousands")
    func entries() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            // Names of 1 to 255 bytes (not all UTF-8), many times over: entries of every size fill
            // the reader's buffer to its end.
            var expected: Set<[UInt8]> = []
            for index in 0..<3000 {
                let length = 1 + index % 255
                var name = Array(String(format: "%05d", index).utf8) + [UInt8](repeating: 0x61 + UInt8(index % 26), count: 250)
                name = Array(name.prefix(length))
                if index % 7 == 0 && length > 5 { name[length - 1] = 0xE9 }
                if name == [46] || name == [46, 46] { continue }
                expected.insert(name)
            }
            for name in expected {
                let path = Array(root.utf8) + [47] + name
                let fd = path.withCString { open($0, O_CREAT | O_WRONLY, 0o644) }
                #expect(fd >= 0)
                close(fd)
            }
            let found = try Directory.open(root).entries()
            #expect(found.count == expected.count && Set(found) == expected)
        }
    }

    @Test("a ledger is read line by line across pieces; a line too long is skipped whole, however long")
    func ledgerLines() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let lines = ["a", "", "eleven-byte", String(repeating: "x", count: 11), "b", String(repeating: "y", count: 5000), "last"]
            try Fixtures.write(Array(lines.joined(separator: "\n").utf8), to: root + "/ledger")
            let directory = try Directory.open(root)
            for pieceSize in [1, 3, 7, 64, 1 << 20] {
                var read: [String] = []
                try directory.openFile(Array("ledger".utf8)).forEachLine(maximumLine: 11, pieceSize: pieceSize) {
                    read.append(String(decoding: $0, as: UTF8.self))
                }
                #expect(read == ["a", "", "eleven-byte", String(repeating: "x", count: 11), "b", "last"], "pieces of \(pieceSize)")
            }
            // No newline at all: nothing, and never more than a piece and a line held.
            try Fixtures.write([UInt8](repeating: 0, count: 3 << 20), to: root + "/flat")
            var count = 0
            try directory.openFile(Array("flat".utf8)).forEachLine { _ in count += 1 }
            #expect(count == 0)
        }
    }

    @Test("a set holds each name once, finds exactly its own, and writes its ledger in pieces as one sorted text")
    func setAndLedger() throws {
        let paths = Self.paths(3000)
        let set = OwnedNames(paths: paths + paths.prefix(500))
        #expect(set.count == Set(paths).count)
        #expect(paths.allSatisfy { set.contains(path: $0) })
        #expect(!Self.paths(200).contains { set.contains(path: $0) })
        var ledger: [UInt8] = []
        var pieces = 0
        try set.forEachLedgerPiece(size: 4096) { (piece) throws(FileSystemError) in
            ledger += piece
            pieces += 1
        }
        #expect(pieces > 1)
        #expect(ledger.count == set.ledgerBytes)
        #expect(String(decoding: ledger, as: UTF8.self) == Set(paths).sorted().map { $0 + "\n" }.joined())
        #expect(set.union(OwnedNames(paths: ["pages/00/00000000000000000000000000000000.json"])).count == set.count + 1)
    }
}

@Suite("Lanczos3 windows")
struct LanczosWindowTests {
    @Test("a window of rows and a band of columns is exactly those bytes of the whole reduction, reading only the rows its span names")
    func windowIsPartOfTheWhole() throws {
        var random = SplitMix64(state: 3)
        for _ in 0..<200 {
            let columns = Int.random(in: 1...120, using: &random)
            let rowsIn = Int.random(in: 1...160, using: &random)
            let rowsOut = Int.random(in: 1...rowsIn, using: &random)
            let scale = Double(rowsIn) / Double(rowsOut) * (1 + 0.01 * Double(Int.random(in: 0..<5, using: &random)))
            let line = columns * 3
            let input = (0..<(line * rowsIn)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var whole = [UInt8](repeating: 0, count: line * rowsOut)
            #expect(tfk_lanczos3_rows(input, line, Int32(rowsIn), &whole, Int32(rowsOut), scale) == 0)
            let first = Int.random(in: 0..<rowsOut, using: &random)
            let count = Int.random(in: 1...(rowsOut - first), using: &random)
            let c0 = Int.random(in: 0..<columns, using: &random)
            let c1 = Int.random(in: (c0 + 1)...columns, using: &random)
            var from: Int32 = 0
            var to: Int32 = 0
            tfk_lanczos3_span(Int32(rowsIn), Int32(rowsOut), scale, Int32(first), Int32(count), &from, &to)
            // Only the span's rows and the band's columns, copied out: anything else it read would be missing.
            let band = (c1 - c0) * 3
            var window: [UInt8] = []
            for row in Int(from)..<Int(to) { window += input[(row * line + c0 * 3)..<(row * line + c1 * 3)] }
            var part = [UInt8](repeating: 0, count: band * count)
            #expect(
                tfk_lanczos3_window(
                    window, band, band, Int32(rowsIn), from, &part, band, Int32(rowsOut), Int32(first), Int32(count), scale) == 0)
            var expected: [UInt8] = []
            for row in first..<(first + count) { expected += whole[(row * line + c0 * 3)..<(row * line + c1 * 3)] }
            #expect(part == expected, "rows \(first)+\(count) of \(rowsOut) from \(rowsIn), columns \(c0)..<\(c1) of \(columns)")
        }
    }
    @Test(
        "a window written transposed is the window followed by a transpose, byte for byte, whatever its rows, bands and stride",
        arguments: [1, 2, 3, 4])
    func transposedWindow(bands: Int) throws {
        var random = SplitMix64(state: UInt64(17 + bands))
        for _ in 0..<60 {
            let columns = Int.random(in: 1...70, using: &random)
            let rowsIn = Int.random(in: 1...90, using: &random)
            let rowsOut = Int.random(in: 1...rowsIn, using: &random)
            let scale = Double(rowsIn) / Double(rowsOut)
            let line = columns * bands
            let input = (0..<(line * rowsIn)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let first = Int.random(in: 0..<rowsOut, using: &random)
            let count = Int.random(in: 1...(rowsOut - first), using: &random)
            var rows = [UInt8](repeating: 0, count: line * count)
            #expect(
                tfk_lanczos3_window(input, line, line, Int32(rowsIn), 0, &rows, line, Int32(rowsOut), Int32(first), Int32(count), scale)
                    == 0)
            var expected = [UInt8](repeating: 0, count: line * count)
            tfk_transpose(rows, &expected, Int32(columns), Int32(count), Int32(bands))
            // Output rows wider than the transpose (a stride), their padding left alone.
            let padding = Int.random(in: 0...5, using: &random)
            let stride = count * bands + padding
            var transposed = [UInt8](repeating: 0xA5, count: stride * columns)
            #expect(
                tfk_lanczos3_window_transposed(
                    input, line, line, Int32(rowsIn), 0, &transposed, stride, Int32(rowsOut), Int32(first), Int32(count), scale,
                    Int32(bands)) == 0)
            for column in 0..<columns {
                let row = transposed[(column * stride)..<(column * stride + stride)]
                #expect(Array(row.prefix(count * bands)) == Array(expected[(column * count * bands)..<((column + 1) * count * bands)]))
                #expect(row.suffix(padding).allSatisfy { $0 == 0xA5 }, "column \(column): the padding was written")
            }
        }
        var nothing = [UInt8](repeating: 0, count: 8)
        #expect(tfk_lanczos3_window_transposed([1, 2, 3, 4, 5], 5, 5, 1, 0, &nothing, 2, 1, 0, 1, 1, 2) == -1, "a line of half pixels")
    }
}
