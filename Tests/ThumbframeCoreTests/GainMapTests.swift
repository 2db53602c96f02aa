import CThumbframeShim
import CThumbframeTestShim
import CVips
import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// HDR stays HDR: an HDR photo's lightbox renditions are JPEGs with its SDR picture and a gain
/// map after it (ISO 21496-1 and Ultra HDR v1), checked by arithmetic — the HDR picture
/// recomposed from them with the metadata's own formula (scripts/test-helpers/gainmap-check.py,
/// numpy) against the source's HDR rendering in linear light.
@Suite("HDR gain maps")
struct GainMapTests {
    static let checker = Fixtures.packageRoot + "/scripts/test-helpers/gainmap-check.py"
    static let iPhone = CorpusTests.corpus + "/heic/mobile/iphone_13_pro_max.HEIC"

    /// The check script's JSON for `arguments`.
    static func script(_ arguments: [String]) async throws -> [String: Any] {
        let run = try await Processes.run("/usr/bin/env", ["python3", checker] + arguments)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        return try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] ?? [:]
    }

    /// The SDR JPEG inside a gain-map rendition: its base, without the three segments the map adds.
    static func base(of file: [UInt8]) throws -> [UInt8] {
        let parsed = try #require(file.withUnsafeBytes { GainMapJPEG.read($0) })
        let primary = Array(file.prefix(try #require(parsed.mpfPrimaryLength)))
        var stripped: [UInt8] = [0xFF, 0xD8]
        var at = 2
        while primary[at] == 0xFF, [0xE1, 0xE2].contains(primary[at + 1]) {
            at += 2 + Int(primary[at + 2]) << 8 + Int(primary[at + 3])
        }
        stripped += primary[at...]
        return stripped
    }

    @Test(
        "PQ AVIF, HLG HEIC, iPhone-style HEIC (made here) and the corpus's iPhone HEIC renditions recompose to their HDR within 40 dB; the SDR base is byte for byte --hdr sdr's file; grid thumbnails and SDR photos are untouched",
        .enabled(
            if: Processes.tool("avifenc") != nil && Processes.tool("exiftool") != nil && Processes.tool("heif-enc") != nil,
            "needs avifenc, heif-enc and exiftool (scripts/bootstrap --test)"))
    func recomposed() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let made = try await Processes.run("/usr/bin/env", ["python3", Self.checker, "make", root + "/made"])
            #expect(made.status == 0, "\(made.stderr)")
            let styled = try await Processes.run("/usr/bin/env", ["python3", Self.checker, "apple", root + "/made"])
            #expect(styled.status == 0, "\(styled.stderr)")
            try Fixtures.makeDirectory(root + "/lib")
            try FileManager.default.copyItem(atPath: root + "/made/pq.avif", toPath: root + "/lib/pq.avif")
            try FileManager.default.copyItem(atPath: root + "/made/apple.heic", toPath: root + "/lib/apple.heic")
            #expect(tf_test_write_heif_hdr(root + "/made/hlg-16bit.png", root + "/lib/hlg.heic", 18, 0) == 0)
            try Pixels.patches().save(root + "/lib/sdr.jpg[Q=95]")
            let apple = FileManager.default.fileExists(atPath: Self.iPhone) && Processes.tool("heif-convert") != nil
            if apple { try FileManager.default.copyItem(atPath: Self.iPhone, toPath: root + "/lib/iphone.heic") }
            let options = BuildOptions(source: root + "/lib", output: root + "/out", jobs: 2).zooming(.ladder)
            let (_, manifest) = try await Fixtures.build(options)
            var flat = options
            flat.output = root + "/flat"
            flat.hdr = .sdr
            let (_, sdr) = try await Fixtures.build(flat)
            #expect(manifest.failures.isEmpty && manifest.settings.hdr == .gainMap && sdr.settings.hdr == .sdr)
            #expect(manifest.settings.gainMapNames == ["preview", "zoom-2560", "zoom-4096"])

            var renditions: [String] = []
            for item in manifest.items {
                let twin = try #require(sdr.items.first { $0.path == item.path })
                let carried = Set(item.thumbnails.filter { $0.value.headroom != nil }.keys)
                if item.image.hdr == nil {
                    #expect(carried.isEmpty && item.thumbnails == twin.thumbnails, "\(item.path): an SDR photo's files changed")
                    continue
                }
                #expect(carried == Set(item.thumbnails.keys).intersection(manifest.settings.gainMapNames) && carried.contains("preview"))
                for (name, thumbnail) in item.thumbnails {
                    let flatFile = try #require(twin.thumbnails[name])
                    guard let headroom = thumbnail.headroom else {
                        #expect(thumbnail == flatFile, "\(item.path) \(name): a grid thumbnail changed")
                        continue
                    }
                    renditions.append(thumbnail.path)
                    let file = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/out/" + thumbnail.path)))
                    let flatBytes = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/flat/" + flatFile.path)))
                    #expect(try Self.base(of: file) == flatBytes, "\(item.path) \(name): the base is not --hdr sdr's file")
                    #expect(headroom > 1.5 && (item.image.hdr?.kind != .gainMap || item.image.hdr?.headroom == headroom))
                }
                // Arithmetic: the preview's HDR against the source's.
                let preview = root + "/out/" + (item.thumbnails["preview"]?.path ?? "")
                let arguments: [String]
                switch item.path {
                case "pq.avif": arguments = ["--reference", root + "/made/reference-pq.npy"]
                case "hlg.heic": arguments = ["--reference", root + "/made/reference-hlg.npy"]
                // Turned by its irot (270°) with its map: the reference is turned by numpy.
                case "apple.heic": arguments = ["--reference", root + "/made/reference-apple.npy"]
                default:
                    let oracle = try await Processes.run(
                        try #require(Processes.tool("heif-convert")), ["--with-aux", "--no-colons", Self.iPhone, root + "/apple.png"])
                    #expect(oracle.status == 0)
                    let headroom = try #require(item.image.hdr?.headroom)
                    arguments = [
                        "--apple", root + "/apple.png", root + "/apple-urn_com_apple_photo_2020_aux_hdrgainmap.png", "\(headroom)",
                    ]
                }
                let result = try await Self.script(["check", preview] + arguments)
                let hdr = result["hdr"] as? [String: Any] ?? [:]
                let flat = result["sdr"] as? [String: Any] ?? [:]
                let psnr = hdr["psnr"] as? Double ?? 0
                let highlights = hdr["highlights"] as? Double ?? 1
                #expect(psnr >= 40 && highlights <= 0.03, "\(item.path): recomposed HDR \(hdr)")
                // Without its map the picture is flat: the highlights a third or more too dark.
                #expect((flat["highlights"] as? Double ?? 0) >= 0.3, "\(item.path): SDR base \(flat)")
                let metadata = result["metadata"] as? [String: Any] ?? [:]
                let xmp = metadata["xmp"] as? [String: String] ?? [:]
                let iso = metadata["iso"] as? [String: Any] ?? [:]
                let headroom = try #require(item.thumbnails["preview"]?.headroom)
                #expect(metadata["mapStartsAfterBase"] as? Bool == true && (metadata["baseXMP"] as? [String: String])?["Version"] == "1.0")
                #expect(Double(xmp["HDRCapacityMax"] ?? "") == iso["alternateHeadroom"] as? Double)
                #expect(abs(pow(2, iso["alternateHeadroom"] as? Double ?? 0) - headroom) < 0.001, "\(item.path): \(iso)")
                print("gain map \(item.path): HDR \(hdr), SDR base \(flat)")
            }
            // pq and hlg: the preview and zoom-2560; apple.heic (1280 px): the preview; the iPhone's 12 MP: three.
            #expect(renditions.count == (apple ? 8 : 5))
            #expect(manifest.items.first { $0.path == "apple.heic" }?.image.hdr == .init(kind: .gainMap, headroom: 4.732))

            // exiftool reads both images' metadata back: MPF's index and the map's hdrgm: numbers.
            let pq = try #require(manifest.items.first { $0.path == "pq.avif" }?.thumbnails["preview"])
            let exiftool = try #require(Processes.tool("exiftool"))
            let index = try await Processes.run(exiftool, ["-j", "-n", "-G1", "-MPF:all", "-XMP-hdrgm:all", root + "/out/" + pq.path])
            let tags = (try JSONSerialization.jsonObject(with: Data(index.stdout.utf8)) as? [[String: Any]])?.first ?? [:]
            #expect(tags["MPF0:NumberOfImages"] as? Int == 2 && tags["XMP-hdrgm:Version"] as? Double == 1, "\(tags)")
            let mapLength = try #require(tags["MPImage2:MPImageLength"] as? Int)
            #expect((tags["MPImage1:MPImageLength"] as? Int ?? 0) + mapLength == pq.bytes)
            let map = try await Processes.run(
                "/bin/sh", ["-c", "'\(exiftool)' -b -MPImage2 '\(root)/out/\(pq.path)' | '\(exiftool)' -j -n -XMP-hdrgm:all -"])
            let mapTags = (try JSONSerialization.jsonObject(with: Data(map.stdout.utf8)) as? [[String: Any]])?.first ?? [:]
            let capacity = try #require(mapTags["HDRCapacityMax"] as? Double, "\(map.stdout)")
            #expect(abs(pow(2, capacity) - (pq.headroom ?? 0)) < 0.001 && mapTags["BaseRenditionIsHDR"] as? Bool == false)

            // Chromium decodes every rendition at the manifest's size.
            let decoded = try await Self.script(["chromium", root + "/out"] + renditions)
            for item in manifest.items {
                for thumbnail in item.thumbnails.values where thumbnail.headroom != nil {
                    #expect(decoded[thumbnail.path] as? [Int] == [thumbnail.width, thumbnail.height], "\(thumbnail.path)")
                }
            }
            #expect(ManifestValidator.problems(of: manifest, thumbnailRoot: root + "/out").isEmpty)

            // The same bytes on every run, whatever --jobs; and a file met again under another
            // name finds its renditions at their content address with their headroom.
            try FileManager.default.copyItem(atPath: root + "/lib/pq.avif", toPath: root + "/lib/pq-copy.avif")
            var again = options
            again.output = root + "/again"
            again.jobs = 1
            let (_, rebuilt) = try await Fixtures.build(again)
            let (_, grown) = try await Fixtures.build(options)
            for item in manifest.items {
                #expect(rebuilt.items.first { $0.path == item.path }?.thumbnails == item.thumbnails, "\(item.path)")
            }
            #expect(
                grown.items.first { $0.path == "pq-copy.avif" }?.thumbnails == manifest.items.first { $0.path == "pq.avif" }?.thumbnails)
        }
    }

    @Test(
        "an Ultra HDR JPEG's own gain map is resized and turned with its renditions (EXIF orientation 1 and 6) and keeps its numbers: they recompose to the source's HDR",
        .enabled(if: Processes.tool("avifenc") != nil, "needs avifenc (scripts/bootstrap --test)"))
    func ultraHDRSource() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            let made = try await Processes.run("/usr/bin/env", ["python3", Self.checker, "make", root + "/made"])
            #expect(made.status == 0, "\(made.stderr)")
            // thumbframe's own writer makes the source: a full-size gain-map rendition of the PQ scene.
            try Fixtures.makeDirectory(root + "/hdr")
            try FileManager.default.copyItem(atPath: root + "/made/pq.avif", toPath: root + "/hdr/pq.avif")
            var options = BuildOptions(source: root + "/hdr", output: root + "/full", jobs: 1)
            options.thumbnails = [try ThumbnailRecipe(parsing: "full=2560x2560:q92")]
            let (_, full) = try await Fixtures.build(options)
            let source = try #require(full.items.first?.thumbnails["full"])
            #expect(source.width == 2560 && source.headroom != nil)
            try Fixtures.makeDirectory(root + "/lib")
            let ultra = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/full/" + source.path)))
            try Fixtures.write(ultra, to: root + "/lib/ultra.jpg")
            // The same file turned by EXIF: an APP1 of IFD0 with Orientation 6 after its SOI (the
            // map's MPF offset is relative to the MPF header, which moves with it).
            let tiff: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
            let exif = GainMapJPEG.segment(0xE1, Array("Exif\0\0".utf8) + tiff)
            try Fixtures.write(Array(ultra.prefix(2)) + exif + ultra.dropFirst(2), to: root + "/lib/turned.jpg")
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: root + "/lib", output: root + "/out", jobs: 1))
            #expect(manifest.items.count == 2, "\(manifest.failures)")
            for item in manifest.items {
                let turned = item.path == "turned.jpg"
                #expect(item.image.hdr == .init(kind: .gainMap, headroom: source.headroom))
                #expect(item.image.orientation == (turned ? 6 : 1) && item.image.width == (turned ? 1600 : 2560))
                let preview = try #require(item.thumbnails["preview"])
                #expect(preview.headroom == source.headroom && item.thumbnails["small"]?.headroom == nil)
                let result = try await Self.script(
                    ["check", root + "/out/" + preview.path, "--source", root + "/lib/ultra.jpg", turned ? "6" : "1"])
                let hdr = result["hdr"] as? [String: Any] ?? [:]
                // The map is resized by a triangle, which keeps its peaks (Lanczos3 overshot them by up to
                // 24 %) and blurs a little more: 49.4 and 45.0 dB measured, highlights within 1 %.
                #expect((hdr["psnr"] as? Double ?? 0) >= 44 && (hdr["highlights"] as? Double ?? 1) <= 0.02, "\(item.path): \(hdr)")
                print("gain map from an Ultra HDR source, \(item.path): \(hdr)")
            }
        }
    }

    /// A small gain-map JPEG made by the writer, and its parts: the patches, and as their map
    /// the patches at half size.
    static func sample() async throws -> (file: [UInt8], base: [UInt8], map: [UInt8], parameters: GainMapParameters) {
        try await Fixtures.withTemporaryDirectory { root in
            try Pixels.patches().save(root + "/base.jpg[Q=80,strip]")
            try Pixels.patches().apply { tf_vips_resize($0, $1, 0.5, 0) }.save(root + "/map.jpg[Q=80,strip]")
            let base = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/base.jpg")))
            let map = Array(try Data(contentsOf: URL(fileURLWithPath: root + "/map.jpg")))
            let parameters = GainMapParameters(gainMin: 0, gainMax: 2.5, offsetSDR: 1.0 / 64, offsetHDR: 1.0 / 64, capacityMax: 2.5)
            return (try #require(GainMapJPEG.assemble(base: base, map: map, parameters: parameters)), base, map, parameters)
        }
    }

    @Test(
        "a gain map whose capacity no screen means (HDRCapacityMax 1000, 9999) is no map: the photo builds as its SDR picture, and a manifest that says such a headroom does not validate"
    )
    func absurdCapacity() async throws {
        let (_, base, map, _) = try await Self.sample()
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            for capacity in [3.0, 1000, 9999] {
                // Both metadata forms (Ultra HDR's XMP, ISO 21496-1's fractions) say the capacity.
                let parameters = GainMapParameters(gainMin: 0, gainMax: 2.5, capacityMax: capacity)
                #expect(parameters.isUsable == (capacity == 3), "\(capacity)")
                let file = try #require(GainMapJPEG.assemble(base: base, map: map, parameters: parameters), "the writer takes \(capacity)")
                try Fixtures.write(file, to: root + "/lib/capacity-\(Int(capacity)).jpg")
            }
            var options = BuildOptions(source: root + "/lib", output: root + "/out", jobs: 1)
            options.hdr = .gainMap
            let (report, manifest) = try await Fixtures.build(options)
            #expect(manifest.failures.isEmpty && manifest.items.count == 3, "\(manifest.failures)")
            for item in manifest.items {
                let sane = item.path == "capacity-3.jpg"
                #expect(item.image.hdr?.kind == .gainMap, "\(item.path)")
                #expect((item.image.hdr?.headroom != nil) == sane, "\(item.path): \(String(describing: item.image.hdr))")
                #expect(item.thumbnails.values.contains { $0.headroom != nil } == sane, "\(item.path)")
            }
            #expect(try ManifestValidator.problems(at: report.manifestPath) == [])
            // A manifest that says a headroom of 10^301 is not valid, whoever wrote it.
            var item = try #require(manifest.items.first)
            item.image.hdr = .init(kind: .gainMap, headroom: 1.07e301)
            var consistency = Manifest.ItemConsistency(sections: manifest.sections)
            #expect(consistency.problems(of: item).contains { $0.contains("headroom 1.07e+301 is not 1–1000") })
        }
    }

    @Test("a gain map is resized by a kernel that keeps its peaks: no code above the map's own, where Lanczos3 rings over them")
    func mapResizeDoesNotRing() throws {
        // A step: the left half at the largest gain's code 200, the right at 0.
        let (width, height) = (96, 32)
        let step = (0..<(width * height)).map { UInt8($0 % width < width / 2 ? 200 : 0) }
        let map = try Pixels.Image.from(step, width: width, height: height, bands: 1)
        let triangle = try map.apply { tf_resize_linear($0, $1, 37, 12) }.doubles()
        let lanczos = try map.apply { tf_resize_exact($0, $1, 37, 12, 0) }.doubles()
        #expect(triangle.max()! <= 200, "the triangle's largest code \(triangle.max()!)")
        // The check can fail: Lanczos3 puts codes over the map's peak beside the step.
        #expect(lanczos.max()! > 200, "Lanczos3's largest code \(lanczos.max()!)")
    }

    @Test("the writer's file reads back: the base whole at the start, the map after it, both metadata forms with the same numbers")
    func readsBack() async throws {
        let (file, base, map, parameters) = try await Self.sample()
        let parsed = try #require(file.withUnsafeBytes { GainMapJPEG.read($0) })
        #expect(parsed.xmp == parameters && parsed.iso == parameters && parsed.baseHasISOVersion && parsed.baseHasXMPVersion)
        #expect(parsed.map == (file.count - parsed.baseXMPMapLength!)..<file.count && parsed.mpfPrimaryLength == parsed.map?.lowerBound)
        #expect(Array(file[parsed.map!].suffix(map.count - 2)) == Array(map.dropFirst(2)))
        #expect(Array(file.prefix(parsed.mpfPrimaryLength!).suffix(base.count - 2)) == Array(base.dropFirst(2)))
        #expect(parameters.headroom == 5.657)
        // A plain JPEG has no gain map.
        #expect(base.withUnsafeBytes { GainMapJPEG.read($0) } == nil)
    }

    @Test(
        "ISO 21496-1 boxes: libultrahdr's common-denominator form reads; an HDR base, a minimum version above 0 or differing channels do not"
    )
    func isoForms() {
        func u32(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xFF) } }
        // Common denominator 8: headrooms 0 and 2 (16/8), min 0, max 2, gamma 1, offsets 1/8.
        let common = [0, 0, 0, 0, 0x48] + u32(8) + u32(0) + u32(16) + u32(0) + u32(16) + u32(8) + u32(1) + u32(1)
        #expect(
            GainMapJPEG.isoParameters(common)
                == GainMapParameters(gainMin: 0, gainMax: 2, offsetSDR: 0.125, offsetHDR: 0.125, capacityMax: 2))
        let written = GainMapJPEG.iso(GainMapParameters(gainMin: -0.5, gainMax: 3.25, gamma: 1.5, capacityMin: 0.25, capacityMax: 3))
        #expect(
            GainMapJPEG.isoParameters(written)
                == GainMapParameters(gainMin: -0.5, gainMax: 3.25, gamma: 1.5, capacityMin: 0.25, capacityMax: 3))
        // The base the HDR picture (its headroom above the alternate's).
        #expect(
            GainMapJPEG.isoParameters(GainMapJPEG.iso(GainMapParameters(gainMin: 0, gainMax: 2, capacityMin: 3, capacityMax: 0))) == nil)
        #expect(GainMapJPEG.isoParameters([0, 1] + Array(written.dropFirst(2))) == nil)
        let channels =
            [0, 0, 0, 0, 0xC0] + Array(written.dropFirst(5).prefix(16)) + Array(written.suffix(40)) + Array(written.suffix(40))
            + Array(GainMapJPEG.iso(GainMapParameters(gainMin: 0, gainMax: 1, capacityMax: 3)).suffix(40))
        #expect(GainMapJPEG.isoParameters(channels) == nil)
        // Ultra HDR's per-channel XMP (rdf:Seq) is not one set of numbers.
        let seq = """
            <rdf:Description hdrgm:Version="1.0" hdrgm:HDRCapacityMax="2"><hdrgm:GainMapMax><rdf:Seq><rdf:li>1</rdf:li>\
            <rdf:li>2</rdf:li><rdf:li>3</rdf:li></rdf:Seq></hdrgm:GainMapMax></rdf:Description>
            """
        #expect(GainMapJPEG.xmpParameters(seq) == nil)
        #expect(GainMapJPEG.xmpParameters(GainMapJPEG.mapXMP(GainMapParameters(gainMin: 0, gainMax: 2, capacityMax: 2)))?.gainMax == 2)
    }

    @Test(
        "validate names a gain-map rendition whose forms disagree, whose index is wrong, whose headroom differs, or a gain map nobody recorded"
    )
    func validated() async throws {
        let (file, base, _, parameters) = try await Self.sample()
        let thumbnail = Manifest.Thumbnail(path: "thumbs/00/x.jpg", width: 600, height: 300, crop: nil, headroom: parameters.headroom)
        func problem(_ bytes: [UInt8], _ recorded: Manifest.Thumbnail = thumbnail) -> String? {
            bytes.withUnsafeBytes { ManifestValidator.gainMapProblem($0, recorded) }
        }
        #expect(problem(file) == nil)
        #expect(problem(base, Manifest.Thumbnail(path: "thumbs/00/x.jpg", width: 600, height: 300, crop: nil)) == nil)
        var other = thumbnail
        other.headroom = nil
        #expect(problem(file, other)?.contains("does not record") == true)
        other.headroom = 4
        #expect(problem(file, other)?.contains("the manifest says 4") == true)
        #expect(problem(base)?.contains("has no gain map") == true)
        // The ISO box's gainMapMax numerator, 256 higher (0.0256 stops).
        let signature = Array("urn:iso:std:iso:ts:21496:-1\0".utf8)
        let iso = try #require(file.withUnsafeBytes { ByteSearch.find(signature, in: $0, from: file.count / 2) })
        var tampered = file
        tampered[iso + 28 + 5 + 8 * 3 + 2] &+= 1
        #expect(problem(tampered)?.contains("XMP and ISO 21496-1 numbers differ") == true)
        // Cut short: the map no longer ends the file where MPF says.
        #expect(problem(Array(file.dropLast(10)))?.contains("MPF") == true)
        // No ISO box in the base.
        let head = try #require(file.withUnsafeBytes { ByteSearch.find(signature, in: $0) })
        var renamed = file
        renamed[head + 4] = UInt8(ascii: "X")
        #expect(problem(renamed)?.contains("the ISO 21496-1 version box") == true)
    }
}
