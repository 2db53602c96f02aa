import CThumbframeShim
import CThumbframeTestShim
import CVips
import Foundation
import Testing
import ThumbframeImaging
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore

/// Images made in memory with libvips for the pixel tests, and measurements on them.
enum Pixels {
    /// Owns a VipsImage made by a test.
    final class Image {
        let pointer: UnsafeMutablePointer<VipsImage>
        init(_ pointer: UnsafeMutablePointer<VipsImage>) { self.pointer = pointer }
        deinit { g_object_unref(pointer) }
        var width: Int { Int(vips_image_get_width(pointer)) }
        var height: Int { Int(vips_image_get_height(pointer)) }

        static func from(file path: String) throws -> Image {
            guard let image = tf_image_new_from_file(path) else { throw FixtureError(error()) }
            return Image(image)
        }

        static func from(_ pixels: [UInt8], width: Int, height: Int, bands: Int) throws -> Image {
            try Fixtures.startVips()
            let image = pixels.withUnsafeBytes {
                vips_image_new_from_memory_copy(
                    $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands),
                    VIPS_FORMAT_UCHAR)
            }
            guard let image else { throw FixtureError(error()) }
            if bands == 1 { vips_image_set_int(image, "interpretation", Int32(VIPS_INTERPRETATION_B_W.rawValue)) }
            return Image(image)
        }

        func apply(_ operation: (UnsafeMutablePointer<VipsImage>, UnsafeMutablePointer<UnsafeMutablePointer<VipsImage>?>) -> Int32) throws
            -> Image
        {
            var out: UnsafeMutablePointer<VipsImage>?
            guard operation(pointer, &out) == 0, let out else { throw FixtureError(error()) }
            return Image(out)
        }

        /// The 8-bit pixels, read from memory.
        func decoded() throws -> Fixtures.Decoded {
            try withExtendedLifetime(self) { try Fixtures.decode(image: pointer) }
        }

        func save(_ pathWithOptions: String) throws {
            guard tf_write_to_file(pointer, pathWithOptions) == 0 else { throw FixtureError(error()) }
        }

        /// Every pixel's bands as Double (any band format libvips can cast to double).
        func doubles() throws -> [Double] {
            let cast = try apply { tf_cast_double($0, $1) }
            var length = 0
            guard let memory = vips_image_write_to_memory(cast.pointer, &length) else { throw FixtureError(error()) }
            defer { g_free(memory) }
            return Array(UnsafeBufferPointer(start: memory.assumingMemoryBound(to: Double.self), count: length / 8))
        }
    }

    static func error() -> String {
        guard let raw = vips_error_buffer_copy() else { return "libvips error" }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    /// Twelve flat sRGB patches, 4 × 3, each 150 × 100: saturated and muted colours, greys.
    static let patchColours: [(UInt8, UInt8, UInt8)] = [
        (200, 40, 40), (40, 180, 60), (40, 60, 200), (230, 200, 60), (128, 128, 128), (90, 160, 200),
        (210, 120, 170), (30, 30, 30), (240, 240, 240), (150, 90, 40), (100, 200, 180), (250, 150, 50),
    ]
    static let patchSize = (150, 100)
    static var patchCentres: [(Int, Int)] {
        (0..<12).map { ((($0 % 4) * patchSize.0) + patchSize.0 / 2, (($0 / 4) * patchSize.1) + patchSize.1 / 2) }
    }

    static func patches() throws -> Image {
        let (w, h) = (patchSize.0 * 4, patchSize.1 * 3)
        var pixels = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                let (r, g, b) = patchColours[(y / patchSize.1) * 4 + x / patchSize.0]
                pixels.replaceSubrange((y * w + x) * 3..<(y * w + x) * 3 + 3, with: [r, g, b])
            }
        }
        return try Image.from(pixels, width: w, height: h, bands: 3)
    }

    /// A zone plate: cos(π r² / size) around the centre, every frequency from 0 at the centre to
    /// Nyquist at the edge: what any resampler that aliases turns into ghost rings.
    static func zonePlate(size: Int) throws -> Image {
        var pixels = [UInt8](repeating: 0, count: size * size)
        let half = Double(size) / 2
        for y in 0..<size {
            let dy = Double(y) - half
            for x in 0..<size {
                let dx = Double(x) - half
                pixels[y * size + x] = UInt8((127.5 + 127.5 * cos(Double.pi * (dx * dx + dy * dy) / Double(size))).rounded())
            }
        }
        return try Image.from(pixels, width: size, height: size, bands: 1)
    }

    /// PSNR of two 8-bit decodes of the same size.
    static func psnr(_ a: Fixtures.Decoded, _ b: Fixtures.Decoded) -> Double {
        precondition(a.pixels.count == b.pixels.count)
        var sum = 0.0
        for index in a.pixels.indices {
            let d = Double(a.pixels[index]) - Double(b.pixels[index])
            sum += d * d
        }
        let mse = sum / Double(a.pixels.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// PSNR of 8-bit pixels against exact values (clipped to 0…255 as a decode would be).
    static func psnr(_ pixels: [UInt8], ideal: [Double]) -> Double {
        var squares = 0.0
        for (value, exact) in zip(pixels, ideal) {
            let error = Double(value) - min(255, max(0, exact))
            squares += error * error
        }
        return 10 * log10(255 * 255 / (squares / Double(ideal.count)))
    }

    /// A minimal ICC v2 display profile for grey with a pure gamma curve (kTRC) and a D50 white:
    /// what Photoshop's "Gray Gamma" profiles are. Built here so no profile file is committed.
    static func greyProfile(gamma: Double) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func s15(_ v: Double) -> [UInt8] { be32(UInt32(bitPattern: Int32((v * 65536).rounded()))) }
        func sig(_ s: String) -> [UInt8] { Array(s.utf8) }
        let d50 = s15(0.9642) + s15(1.0) + s15(0.8249)
        let description = "Grey gamma \(gamma)"
        let desc =
            sig("desc") + be32(0) + be32(UInt32(description.utf8.count + 1)) + Array(description.utf8) + [0]
            + be32(0) + be32(0) + [0, 0, 0] + [UInt8](repeating: 0, count: 67)
        let wtpt = sig("XYZ ") + be32(0) + d50
        let gammaFixed = UInt16((gamma * 256).rounded())
        let ktrc = sig("curv") + be32(0) + be32(1) + [UInt8(gammaFixed >> 8), UInt8(gammaFixed & 0xFF)] + [0, 0]
        let cprt = sig("text") + be32(0) + Array("No copyright".utf8) + [0]
        var tags: [(String, [UInt8])] = [("desc", desc), ("wtpt", wtpt), ("kTRC", ktrc), ("cprt", cprt)]
        var offset = 128 + 4 + 12 * tags.count
        var table = be32(UInt32(tags.count))
        var data: [UInt8] = []
        for index in tags.indices {
            while tags[index].1.count % 4 != 0 { tags[index].1.append(0) }
            table += sig(tags[index].0) + be32(UInt32(offset)) + be32(UInt32(tags[index].1.count))
            data += tags[index].1
            offset += tags[index].1.count
        }
        var header =
            be32(UInt32(128 + table.count + data.count)) + sig("lcms") + be32(0x0210_0000)
            + sig("mntr") + sig("GRAY") + sig("XYZ ") + [UInt8](repeating: 0, count: 12) + sig("acsp")
            + [UInt8](repeating: 0, count: 4 + 4 + 4 + 4 + 8 + 4) + d50 + [UInt8](repeating: 0, count: 4)
        header += [UInt8](repeating: 0, count: 128 - header.count)
        return header + table + data
    }

    /// The preview (or another recipe) of the only item of a one-image build.
    static func build(_ source: String, out: String, zoom: ZoomRenditions = .default) async throws -> (
        Manifest, [String: Fixtures.Decoded]
    ) {
        let (_, manifest) = try await Fixtures.build(BuildOptions(source: source, output: out).zooming(zoom))
        var decoded: [String: Fixtures.Decoded] = [:]
        for item in manifest.items {
            for (name, thumbnail) in item.thumbnails {
                let image = try Fixtures.decode(out + "/" + thumbnail.path)
                // The manifest's size is the file's size, for every thumbnail of every item.
                #expect(
                    image.width == thumbnail.width && image.height == thumbnail.height,
                    "\(item.path) \(name): file \(image.width)×\(image.height), manifest \(thumbnail.width)×\(thumbnail.height)")
                decoded["\(item.path)#\(name)"] = image
            }
        }
        return (manifest, decoded)
    }
}

@Suite("Pictures right")
struct PixelTests {
    static let colord = "/usr/share/color/icc/colord"

    /// The tagged images of the colour item, each made from the sRGB patches.
    enum Source: String, CaseIterable {
        case adobeRGB, proPhoto16, displayP3, cmykTagged, cmykUntagged, greyGamma1

        var file: String {
            switch self {
            case .proPhoto16: "\(rawValue).png"
            case .greyGamma1: "\(rawValue).png"
            default: "\(rawValue).jpg"
            }
        }

        func write(to path: String, patches: Pixels.Image) throws {
            switch self {
            case .adobeRGB:
                try patches.apply { tf_icc_transform($0, $1, PixelTests.colord + "/AdobeRGB1998.icc", "srgb", 0, 8) }
                    .save(path + "[Q=95]")
            case .proPhoto16:
                try patches.apply { tf_icc_transform($0, $1, PixelTests.colord + "/ProPhotoRGB.icc", "srgb", 0, 16) }
                    .save(path)
            case .displayP3:
                try patches.apply { tf_icc_transform($0, $1, "p3", "srgb", 0, 8) }.save(path + "[Q=95]")
            case .cmykTagged:
                try patches.apply { tf_icc_transform($0, $1, "cmyk", "srgb", 0, 8) }.save(path + "[Q=95]")
            case .cmykUntagged:
                try patches.apply { tf_icc_transform($0, $1, "cmyk", "srgb", 0, 8) }.save(path + "[Q=95,strip]")
            case .greyGamma1:
                // Linear-light grey values under a gamma-1.0 profile: shown without the profile they
                // are far too dark, converted they must match the sRGB reference.
                let profile = Pixels.greyProfile(gamma: 1.0)
                var ramp = [UInt8](repeating: 0, count: 600 * 300)
                for index in ramp.indices { ramp[index] = UInt8(((index / 600) / 100 * 4 + (index % 600) / 150) * 255 / 11) }
                let grey = try Pixels.Image.from(ramp, width: 600, height: 300, bands: 1)
                profile.withUnsafeBytes { vips_image_set_blob_copy(grey.pointer, "icc-profile-data", $0.baseAddress, $0.count) }
                try grey.save(path)
            }
        }
    }

    @Test(
        "tagged images become sRGB: ΔE00 ≤ 1 on every patch against the sRGB conversion of the source",
        .enabled(
            if: FileManager.default.fileExists(atPath: colord + "/AdobeRGB1998.icc"),
            "needs Debian's colord-data profiles (scripts/bootstrap --test)"),
        arguments: Source.allCases)
    func colourManaged(_ source: Source) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let path = root + "/lib/" + source.file
            try source.write(to: path, patches: try Pixels.patches())
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            let item = try #require(manifest.items.first)
            let preview = try #require(item.thumbnails["preview"])
            #expect((preview.width, preview.height) == (600, 300))

            // The oracle: libvips' ICC transform of the full source with its embedded profile
            // (libvips' default CMYK profile when it has none), compared in CIELAB.
            let original = try Pixels.Image.from(file: path)
            let reference = try original.apply {
                tf_icc_transform($0, $1, "srgb", source == .cmykUntagged ? "cmyk" : "srgb", 1, 8)
            }
            let thumbnail = try Pixels.Image.from(file: root + "/out/" + preview.path)
            #expect(decoded["\(item.path)#preview"]?.bands == (source == .greyGamma1 ? 1 : 3), "grey stays grey")
            let difference = try thumbnail.apply { tf_delta_e00($0, reference.pointer, $1) }
            let values = try difference.doubles()
            for (index, (x, y)) in Pixels.patchCentres.enumerated() {
                let deltaE = values[y * difference.width + x]
                #expect(deltaE <= 1, "\(source) patch \(index) at \(x),\(y): ΔE00 \(deltaE)")
            }
        }
    }

    @Test(
        "a profile with only a perceptual table (XYB JPEGs, some CMYK) is used with that intent, never swapped for libvips' default: ΔE00 ≤ 2.5 on every patch",
        arguments: [false, true])
    func perceptualOnlyProfile(cmyk: Bool) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            var data: UnsafeMutableRawPointer?
            var length = 0
            #expect(tf_test_lut_profile(cmyk ? 1 : 0, &data, &length) == 0)
            defer { g_free(data) }
            let patches = try Pixels.patches()
            // The patches in the profile's device space: converted with the embedded profile they
            // are the patches again; through libvips' default sRGB (CMYK) profile they are not.
            try patches.apply { tf_test_device_image($0, cmyk ? 1 : 0, data, length, $1) }.save(root + "/lib/device.jpg[Q=98]")
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            let item = try #require(manifest.items.first)
            #expect(item.image.profile == .perceptual)
            let preview = try #require(item.thumbnails["preview"])
            let thumbnail = try Pixels.Image.from(file: root + "/out/" + preview.path)
            let values = try thumbnail.apply { tf_delta_e00($0, patches.pointer, $1) }.doubles()
            for (index, (x, y)) in Pixels.patchCentres.enumerated() {
                let deltaE = values[y * thumbnail.width + x]
                #expect(deltaE <= 2.5, "\(cmyk ? "CMYK" : "RGB") patch \(index) at \(x),\(y): ΔE00 \(deltaE)")
            }
        }
    }

    @Test("a profile lcms cannot read is ignored and the manifest says so: the pixels are taken as sRGB")
    func unusableProfileSaid() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // libvips will not save a profile it cannot read: the APP2 ICC_PROFILE segment (300
            // bytes that are no profile) goes in after SOI by hand.
            try Pixels.patches().save(root + "/lib/plain.jpg[Q=98]")
            let plain = try Array(Data(contentsOf: URL(fileURLWithPath: root + "/lib/plain.jpg")))
            let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + [UInt8](repeating: 0x41, count: 300)
            let segment: [UInt8] = [0xFF, 0xE2, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
            try Data(plain.prefix(2) + segment + plain.dropFirst(2)).write(to: URL(fileURLWithPath: root + "/lib/broken.jpg"))
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.map(\.image.profile) == [.ignored, nil])
            let preview = try #require(decoded["broken.jpg#preview"])
            for (index, (x, y)) in Pixels.patchCentres.enumerated() {
                let expected = Pixels.patchColours[index]
                let got = preview.colour(x: x, y: y)
                #expect(max(abs(Int(got.r) - Int(expected.0)), abs(Int(got.g) - Int(expected.1)), abs(Int(got.b) - Int(expected.2))) <= 1)
            }
        }
    }

    @Test(
        "JPEG XL is read (libvips' loader unblocked): the patches within ΔE00 2.5; a JPEG transcoded by cjxl upright like its JPEG; a picture over --max-decode-bytes refused from its header",
        .enabled(if: Processes.tool("vips") != nil, "needs the vips program to write JPEG XL (scripts/bootstrap --test)"))
    func jpegXL() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let patches = try Pixels.patches()
            try patches.save(root + "/patches.png")
            let made = try await Processes.run(
                try #require(Processes.tool("vips")), ["copy", root + "/patches.png", root + "/lib/patches.jxl[Q=95]"])
            #expect(made.status == 0, "\(made.stderr)")
            let cjxl = Processes.tool("cjxl")
            if let cjxl {
                // Orientation 6 moves from the JPEG's EXIF into the JPEG XL codestream, which libjxl applies.
                try Fixtures.writeMarkerImage(
                    to: root + "/lib/turned.jpg", displayWidth: 90, displayHeight: 160, orientation: 6, format: TF_FORMAT_JPEG)
                let transcoded = try await Processes.run(cjxl, [root + "/lib/turned.jpg", root + "/lib/turned.jxl"])
                #expect(transcoded.status == 0, "\(transcoded.stderr)")
            }
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            let item = try #require(manifest.items.first { $0.path == "patches.jxl" }, "\(manifest.failures)")
            #expect(item.image.format == "jxl" && (item.image.width, item.image.height) == (600, 300))
            let thumbnail = try Pixels.Image.from(file: root + "/out/" + (try #require(item.thumbnails["preview"])).path)
            let values = try thumbnail.apply { tf_delta_e00($0, patches.pointer, $1) }.doubles()
            for (index, (x, y)) in Pixels.patchCentres.enumerated() {
                #expect(values[y * thumbnail.width + x] <= 2.5, "patch \(index): ΔE00 \(values[y * thumbnail.width + x])")
            }
            if cjxl != nil {
                let jpeg = try #require(manifest.items.first { $0.path == "turned.jpg" })
                let jxl = try #require(manifest.items.first { $0.path == "turned.jxl" }, "\(manifest.failures)")
                #expect((jxl.image.width, jxl.image.height, jxl.image.orientation) == (90, 160, 1))
                #expect((jpeg.image.width, jpeg.image.height) == (90, 160))
                let a = try #require(decoded["turned.jpg#preview"])
                let b = try #require(decoded["turned.jxl#preview"])
                #expect(Pixels.psnr(a, b) > 30, "the JPEG XL's preview is the JPEG's, turned alike")
            }

            var options = BuildOptions(source: root + "/lib", output: root + "/small")
            options.limits.maxDecodeBytes = 600 * 300 * 19 - 1
            let (_, refused) = try await Fixtures.build(options)
            let failure = try #require(refused.failures.first { $0.path == "patches.jxl" })
            #expect(failure.reason.contains("JPEG XL picture and libjxl's float planes"), "\(failure.reason)")
        }
    }

    @Test("untagged images are not shifted: every patch keeps its 8-bit values, grey 128 stays 128")
    func untaggedUntouched() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Pixels.patches().save(root + "/lib/untagged.png")
            try Pixels.patches().save(root + "/lib/untagged.jpg[Q=98]")
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.count == 2)
            for item in manifest.items {
                let preview = try #require(decoded["\(item.path)#preview"])
                for (index, (x, y)) in Pixels.patchCentres.enumerated() {
                    let expected = Pixels.patchColours[index]
                    let got = preview.colour(x: x, y: y)
                    let off = max(abs(Int(got.r) - Int(expected.0)), abs(Int(got.g) - Int(expected.1)), abs(Int(got.b) - Int(expected.2)))
                    #expect(off <= 1, "\(item.path) patch \(index): \(got) for \(expected)")
                }
                #expect(preview.colour(x: 75, y: 150) == Fixtures.Colour(r: 128, g: 128, b: 128), "\(item.path) grey 128")
            }
        }
    }

    @Test(
        "a two-page TIFF whose second page is half its first is a document of 2 pages, not a pyramid (no reduced-resolution mark)",
        .enabled(if: rawFixturesAvailable, "needs python3 with tifffile and numpy"))
    func twoPageDocument() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let script = """
                import numpy, sys, tifffile
                with tifffile.TiffWriter(sys.argv[1]) as tif:
                    tif.write(numpy.full((150, 200, 3), 200, numpy.uint8), photometric="rgb")
                    tif.write(numpy.full((75, 100, 3), 60, numpy.uint8), photometric="rgb")
                """
            let run = try await Processes.run("/usr/bin/env", ["python3", "-c", script, root + "/lib/scan.tif"])
            #expect(run.status == 0, "\(run.stderr)")
            let (_, manifest) = try await Fixtures.build(BuildOptions(source: root + "/lib", output: root + "/out"))
            #expect(manifest.items.first?.image.pages == 2)
        }
    }

    @Test(
        "pyramidal TIFF (pages and sub-IFDs): one page, thumbnails of the manifest's size from a level that covers them",
        arguments: ["[tile,pyramid,compression=jpeg]", "[tile,pyramid,subifd,compression=jpeg]"])
    func pyramidalTIFF(options: String) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let base = try Pixels.zonePlate(size: 2944)
            let wide = try base.apply { tf_resize_exact($0, $1, 4800, 2944, 0) }
            try wide.save(root + "/lib/pyramid.tif" + options)
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            let item = try #require(manifest.items.first)
            #expect(item.image.pages == 1, "pyramid levels are not pages")
            #expect((item.image.width, item.image.height) == (4800, 2944))
            #expect(item.thumbnails["grid"].map { ($0.width, $0.height) } ?? (0, 0) == (256, 256))
            #expect(item.thumbnails["preview"].map { ($0.width, $0.height) } ?? (0, 0) == (1280, 785))
            // Sharp as a resize of the full image, not a level smaller than the preview stretched up.
            let reference = try wide.apply { tf_resize_exact($0, $1, 1280, 785, 0) }
            let preview = try #require(decoded["pyramid.tif#preview"])
            let psnr = Pixels.psnr(preview, try reference.decoded())
            #expect(psnr >= 25, "preview PSNR \(psnr) dB against a resize of the full image")
        }
    }

    @Test("a multi-page TIFF whose pages are not a pyramid keeps its page count")
    func multiPageTIFF() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let strip = try Pixels.Image.from([UInt8](repeating: 90, count: 64 * 192 * 3), width: 64, height: 192, bands: 3)
            vips_image_set_int(strip.pointer, "page-height", 64)
            try strip.save(root + "/lib/three.tif")
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.first?.image.pages == 3)
        }
    }

    @Test(
        "the fast Lanczos3 of images in memory (down the columns, then along the rows through the transpose) is more exact than vips_resize, 60 dB or more from the exact values; the transpose is exact and keeps metadata"
    )
    func fastLanczos() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            var random = SplitMix64(state: 11)
            let noise = try Pixels.Image.from(
                (0..<(997 * 601 * 3)).map { _ in UInt8.random(in: 0...255, using: &random) },
                width: 997, height: 601, bands: 3)
            for (image, name) in [(try Pixels.zonePlate(size: 1201), "plate.png"), (noise, "noise.png")] {
                try image.save(root + "/" + name)
                // Read back from a file the image is computed lazily (vips_resize); copied into
                // memory it takes the fast path. In double precision, vips_resize is the reference.
                let lazy = try Pixels.Image.from(file: root + "/" + name)
                let memory = Pixels.Image(try #require(vips_image_copy_memory(lazy.pointer)))
                let exact = try lazy.apply { tf_cast_double($0, $1) }
                vips_image_set_string(memory.pointer, "thumbframe-test", "kept")
                let (width, height) = (lazy.width, lazy.height)
                for (w, h, crop) in [(413, 289, Int32(0)), (256, 256, 1), (500, 200, 0), (width, height / 3, 0), (width / 3, height, 0)] {
                    let fast = try memory.apply { tf_resize_exact($0, $1, Int32(w), Int32(h), crop) }
                    let libvips = try lazy.apply { tf_resize_exact($0, $1, Int32(w), Int32(h), crop) }.decoded()
                    let reference = try exact.apply { tf_resize_exact($0, $1, Int32(w), Int32(h), crop) }.doubles()
                    var text: UnsafeMutablePointer<CChar>?
                    #expect(
                        vips_image_get_as_string(fast.pointer, "thumbframe-test", &text) == 0 && text.map { String(cString: $0) } == "kept")
                    g_free(text)
                    let decoded = try fast.decoded()
                    #expect(decoded.width == w && decoded.height == h && libvips.width == w && libvips.height == h)
                    func psnr(_ pixels: [UInt8]) -> Double { Pixels.psnr(pixels, ideal: reference) }
                    let (ours, theirs) = (psnr(decoded.pixels), psnr(libvips.pixels))
                    // Measured: 61–70 dB; libvips' 8-bit path (16-bit passes) 43–58 dB.
                    #expect(
                        ours >= theirs && ours >= 60,
                        "\(name) → \(w)×\(h) crop \(crop): \(ours) dB against vips_resize's \(theirs) dB")
                }
                let source = try memory.decoded()
                let transposed = try memory.apply { tf_transpose($0, $1) }.decoded()
                #expect(transposed.width == source.height && transposed.height == source.width)
                var mismatches = 0
                for y in 0..<source.height {
                    for x in 0..<source.width {
                        for band in 0..<source.bands
                        where source.pixels[(y * source.width + x) * source.bands + band]
                            != transposed.pixels[(x * transposed.width + y) * source.bands + band]
                        {
                            mismatches += 1
                        }
                    }
                }
                #expect(mismatches == 0, "\(name): transpose differs in \(mismatches) values")
            }
        }
    }

    @Test(
        "exact 2× and 3× previews are filtered: zone plate PSNR ≥ 35 dB against a full-decode Lanczos3 reduction",
        arguments: [2560, 3840])
    func noAliasing(size: Int) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let plate = try Pixels.zonePlate(size: size)
            try plate.save(root + "/lib/zone.jpg[Q=95]")
            let (manifest, decoded) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.first?.thumbnails["preview"]?.width == 1280)
            let full = try Pixels.Image.from(file: root + "/lib/zone.jpg")
            let preview = try #require(decoded["zone.jpg#preview"])
            let psnr = Pixels.psnr(preview, try full.apply { tf_resize_exact($0, $1, 1280, 1280, 0) }.decoded())
            // The DCT-scaled decode used as the preview (no filter after it) gave 21.6 dB at 2×.
            #expect(psnr >= 35, "preview at \(size / 1280)×: PSNR \(psnr) dB")
            let grid = try #require(decoded["zone.jpg#grid"])
            let gridPSNR = Pixels.psnr(grid, try full.apply { tf_resize_exact($0, $1, 256, 256, 1) }.decoded())
            #expect(gridPSNR >= 35, "grid: PSNR \(gridPSNR) dB")
        }
    }

    @Test(
        "every thumbnail is resampled once from the decode: a zone plate reduced 2, 3, 4.37, 8 and 13 times (fit and cover) is within 50 dB of a floating-point Lanczos3 of the full picture",
        arguments: ["zone.jpg[Q=95]", "zone.png"])
    func reductions(file: String) async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let side = 2048
            try Pixels.zonePlate(size: side).save(root + "/lib/" + file)
            let name = String(file.prefix { $0 != "[" })
            // The largest recipe is the decode box; before, every other thumbnail was resampled
            // again from it (43–47 dB at 3×), and a PNG's box came from libvips' 16-bit
            // Lanczos3 (47 dB at 2×).
            let factors = [2, 3, 4.37, 8, 13]
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.thumbnails =
                try factors.map { (factor: Double) in
                    let box = Int((Double(side) / factor).rounded())
                    return try ThumbnailRecipe(parsing: "x\(Int(factor * 100))=\(box)x\(box):fit:q100")
                } + [try ThumbnailRecipe(parsing: "cover=200x150:cover:q100")]
            let (_, manifest) = try await Fixtures.build(options)
            let item = try #require(manifest.items.first)
            let full = try Pixels.Image.from(file: root + "/lib/" + name).apply { tf_cast_double($0, $1) }
            for recipe in options.thumbnails {
                let thumbnail = try #require(item.thumbnails[recipe.name])
                let made = try Fixtures.decode(root + "/out/" + thumbnail.path)
                let crop: Int32 = recipe.fit == .cover ? 1 : 0
                let ideal = try full.apply { tf_resize_exact($0, $1, Int32(made.width), Int32(made.height), crop) }.doubles()
                #expect(ideal.count == made.pixels.count, "\(recipe.name): \(made.bands) bands")
                let psnr = Pixels.psnr(made.pixels, ideal: ideal)
                #expect(psnr >= 50, "\(name) \(recipe.name) (\(made.width)×\(made.height)): \(psnr) dB")
            }
        }
    }

    @Test(
        "a JPEG whose decode would be over 64 MB (RGB, a recipe as large as half the picture; resized to the largest thumbnail as it streams) still gets every thumbnail at its size, filtered"
    )
    func largeDecodeStreams() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            let plate = try Pixels.zonePlate(size: 4800).apply { tf_grey_to_srgb($0, $1) }
            try plate.save(root + "/lib/large.jpg[Q=90]")
            // 4 800 × 4 800 × 3 bytes (69 MB): no shrink-on-load leaves twice 2 400 px.
            #expect(4800 * 4800 * 3 > 64 << 20)
            var options = BuildOptions(source: root + "/lib", output: root + "/out")
            options.thumbnails = [
                try ThumbnailRecipe(parsing: "big=2400x2400:fit:q95"), try ThumbnailRecipe(parsing: "grid=256x256:cover:q95"),
            ]
            let (_, manifest) = try await Fixtures.build(options)
            let item = try #require(manifest.items.first)
            let full = try Pixels.Image.from(file: root + "/lib/large.jpg").apply { tf_cast_double($0, $1) }
            for (name, side) in [("big", 2400), ("grid", 256)] {
                let thumbnail = try #require(item.thumbnails[name])
                let made = try Fixtures.decode(root + "/out/" + thumbnail.path)
                #expect(made.width == side && made.height == side)
                let ideal = try full.apply { tf_resize_exact($0, $1, Int32(side), Int32(side), 0) }.doubles()
                let psnr = Pixels.psnr(made.pixels, ideal: ideal)
                #expect(psnr >= 35, "\(name): \(psnr) dB")
            }
        }
    }

    @Test(
        "buffers handed from job to job never show an earlier job's pixels, and the pool keeps at most 8 blocks and 96 MiB"
    )
    func pooledBuffers() throws {
        // A noisy RGB photo-sized image (its decode, passes and transposes are pooled sizes).
        var random = SplitMix64(state: 52)
        let (width, height) = (1500, 1000)
        let source = try Pixels.Image.from(
            (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &random) }, width: width, height: height, bands: 3)
        let sizes = [(640, 427, 0), (256, 256, 1), (1000, 667, 0)]
        let first = try sizes.map { w, h, crop in try source.apply { tf_resize_exact($0, $1, Int32(w), Int32(h), Int32(crop)) }.decoded() }
        // Blocks of every size near the passes' filled with white, let go, then the same resizes.
        var held: [UnsafeMutablePointer<VipsImage>] = []
        for megabytes in [1, 2, 3, 4, 5, 6, 8, 12] {
            let rows = megabytes * 1024 / 3
            let image = try #require(tf_pool_image(1024, Int32(rows), 3, VIPS_FORMAT_UCHAR))
            memset(UnsafeMutableRawPointer(mutating: vips_image_get_data(image)), 0xFF, 1024 * rows * 3)
            held.append(image)
        }
        for image in held { g_object_unref(image) }
        let again = try sizes.map { w, h, crop in try source.apply { tf_resize_exact($0, $1, Int32(w), Int32(h), Int32(crop)) }.decoded() }
        for (a, b) in zip(first, again) { #expect(a.pixels == b.pixels, "\(a.width)×\(a.height) changed over reused buffers") }
        // Twelve 3 MiB buffers let go at once: eight kept, within the cap.
        let many = try (0..<12).map { _ in try #require(tf_pool_image(1024, 1024, 3, VIPS_FORMAT_UCHAR)) }
        for image in many { g_object_unref(image) }
        var (blocks, bytes): (Int32, Int) = (0, 0)
        tf_pool_kept(&blocks, &bytes)
        #expect(blocks <= 8 && bytes <= 96 << 20, "\(blocks) blocks, \(bytes) bytes kept")
    }

    @Test("a 10 000-frame GIF records 10 000 pages")
    func manyFrames() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            var pixels = [UInt8](repeating: 0, count: 8 * 8 * 10_000)
            for frame in 0..<10_000 { pixels[frame * 64] = UInt8(frame % 251) }
            let strip = try Pixels.Image.from(pixels, width: 8, height: 8 * 10_000, bands: 1)
            vips_image_set_int(strip.pointer, "page-height", 8)
            try strip.save(root + "/lib/frames.gif")
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.first?.image.pages == 10_000)
            #expect(manifest.failures.isEmpty)
        }
    }
}

@Suite("EXIF dates and text")
struct ExifDateTests {
    @Test("an impossible DateTimeOriginal falls back to DateTimeDigitized with its own offset; SubSec kept")
    func datesFallBack() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            try Fixtures.writeImage(
                to: root + "/lib/a.jpg", width: 64, height: 48,
                exif: [
                    "exif-ifd2-DateTimeOriginal": "2019:02:30 10:00:00",
                    "exif-ifd2-OffsetTimeOriginal": "+09:00",
                    "exif-ifd2-DateTimeDigitized": "2019:03:01 10:00:00",
                    "exif-ifd2-SubSecTimeDigitized": "25",
                    "exif-ifd2-OffsetTimeDigitized": "-05:00",
                ])
            try Fixtures.writeImage(
                to: root + "/lib/b.jpg", width: 64, height: 48,
                exif: [
                    "exif-ifd2-DateTimeOriginal": "2019:06:01 23:59:59",
                    "exif-ifd2-SubSecTimeOriginal": "054",
                    "exif-ifd2-OffsetTimeOriginal": "+02:00",
                    "exif-ifd0-Make": "Canon\tInc",
                ])
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            #expect(items["a.jpg"]?.exif?.capturedAt == "2019-03-01T10:00:00.25")
            #expect(items["a.jpg"]?.exif?.offset == "-05:00")
            #expect(items["b.jpg"]?.exif?.capturedAt == "2019-06-01T23:59:59.054")
            #expect(items["b.jpg"]?.exif?.offset == "+02:00")
            #expect(items["b.jpg"]?.exif?.make == "Canon Inc")
        }
    }

    /// A little-endian RGB TIFF written by hand with its IFD0 after 90 KB of pixels (as libtiff
    /// and most cameras lay files out), Make/Model/DateTime/Orientation in IFD0 and
    /// DateTimeOriginal, SubSecTimeOriginal and OffsetTimeOriginal in the Exif IFD.
    static func tiffWithLateIFD(width: Int, height: Int) -> [UInt8] {
        var out: [UInt8] = []
        func u16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) {
            u16(v & 0xFFFF)
            u16(v >> 16)
        }
        let pixelBytes = width * height * 3
        let ifd0 = 8 + pixelBytes
        out += [0x49, 0x49]
        u16(42)
        u32(ifd0)
        for index in 0..<pixelBytes { out.append(UInt8(index % 3 == 0 ? 200 : 60)) }
        let make = Array("Nikon\0".utf8)
        let model = Array("Z 9\0".utf8)
        let dateTime = Array("2020:01:01 00:00:00\0".utf8)
        let original = Array("2021:07:04 18:30:15\0".utf8)
        let ifd0Entries = 14
        let exifEntries = 3
        let ifd0Size = 2 + 12 * ifd0Entries + 4
        let exifIFD = ifd0 + ifd0Size
        let data = exifIFD + 2 + 12 * exifEntries + 4
        var blobs: [UInt8] = []
        func place(_ bytes: [UInt8]) -> Int {
            defer {
                blobs += bytes
                if blobs.count % 2 == 1 { blobs.append(0) }
            }
            return data + blobs.count
        }
        func entry(_ tag: Int, _ type: Int, _ count: Int, inline value: Int) {
            u16(tag)
            u16(type)
            u32(count)
            u32(value)
        }
        func entry(_ tag: Int, _ type: Int, _ count: Int, at offset: Int) {
            u16(tag)
            u16(type)
            u32(count)
            u32(offset)
        }
        u16(ifd0Entries)
        entry(256, 3, 1, inline: width)
        entry(257, 3, 1, inline: height)
        entry(258, 3, 3, at: place([8, 0, 8, 0, 8, 0]))
        entry(259, 3, 1, inline: 1)
        entry(262, 3, 1, inline: 2)
        entry(271, 2, make.count, at: place(make))
        entry(272, 2, model.count, inline: Int(model[0]) | Int(model[1]) << 8 | Int(model[2]) << 16)
        entry(273, 4, 1, inline: 8)
        entry(274, 3, 1, inline: 6)
        entry(277, 3, 1, inline: 3)
        entry(278, 3, 1, inline: height)
        entry(279, 4, 1, inline: pixelBytes)
        entry(306, 2, dateTime.count, at: place(dateTime))
        entry(34665, 4, 1, inline: exifIFD)
        u32(0)
        u16(exifEntries)
        entry(36867, 2, original.count, at: place(original))
        entry(36881, 2, 7, at: place(Array("-03:00\0".utf8)))
        entry(37521, 2, 4, inline: Int(UInt8(ascii: "7")) | Int(UInt8(ascii: "5")) << 8 | Int(UInt8(ascii: "0")) << 16)
        u32(0)
        return out + blobs
    }

    @Test("a TIFF whose IFDs lie past 64 KiB keeps its EXIF")
    func lateTIFFDirectories() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // libvips writes IFD0 after the pixels; exiftool adds the Exif IFD where it likes, so
            // the file is laid out by hand and checked against exiftool where it is installed.
            let bytes = Self.tiffWithLateIFD(width: 200, height: 150)
            try Fixtures.write(bytes, to: root + "/lib/late.tif")
            #expect(Array(bytes[4..<8]) != [8, 0, 0, 0] && bytes.count > 90_000)
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            let item = try #require(manifest.items.first, "\(manifest.failures)")
            #expect(item.exif?.make == "Nikon")
            #expect(item.exif?.model == "Z 9")
            #expect(item.exif?.capturedAt == "2021-07-04T18:30:15.750")
            #expect(item.exif?.offset == "-03:00")
            #expect(item.image.orientation == 6)
            if let exiftool = Processes.tool("exiftool") {
                let oracle = try await Processes.run(exiftool, ["-s3", "-EXIF:DateTimeOriginal", "-EXIF:Make", root + "/lib/late.tif"])
                #expect(oracle.stdout.split(separator: "\n") == ["2021:07:04 18:30:15", "Nikon"])
            }
        }
    }
}

@Suite("Placeholders")
struct PlaceholderTests {
    @Test(
        "a placeholder's RGBA computed in one pass is libvips' colourspace, alpha and cast for grey and sRGB of 1 to 4 bands, in memory or lazy; a placeholder-sized image is its own coarse resize"
    )
    func pixelsInOnePass() throws {
        var random = SplitMix64(state: 7)
        for bands in 1...4 {
            let (width, height) = (37, 23)
            let kind = bands <= 2 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB
            let made = try Pixels.Image.from(
                (0..<(width * height * bands)).map { _ in UInt8.random(in: 0...255, using: &random) }, width: width, height: height,
                bands: bands)
            let interpreted = try made.apply { tf_interpreted_as($0, $1, kind) }
            let image = Pixels.Image(try #require(withExtendedLifetime(interpreted) { vips_image_copy_memory(interpreted.pointer) }))
            #expect(vips_image_get_interpretation(image.pointer) == kind)
            func bytes(_ memory: UnsafeMutableRawPointer?, _ length: Int) -> [UInt8]? {
                defer { g_free(memory) }
                return memory.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) }
            }
            var length = 0
            let libvips = try image.apply { tf_placeholder_rgba($0, $1) }
            let expected = try #require(bytes(tf_write_to_memory(libvips.pointer, &length), length))
            #expect(expected.count == width * height * 4, "\(bands) bands: \(expected.count)")
            #expect(bytes(tf_placeholder_pixels(image.pointer, &length), length) == expected, "\(bands) bands in memory")
            let lazy = try image.apply { tf_autorot($0, $1, 1) }
            #expect(bytes(tf_placeholder_pixels(lazy.pointer, &length), length) == expected, "\(bands) bands, lazy")
            // The coarse resize of an image already the placeholder's size is the image, as
            // vips_resize by 1 would give.
            let same = try image.apply { tf_resize_coarse($0, $1, Int32(width), Int32(height)) }.decoded()
            #expect(same.pixels == (try image.apply { tf_vips_resize($0, $1, 1, 2) }.decoded().pixels))
        }
    }

    @Test(
        "the placeholder is the same whichever thumbnails a decode writes: a rerun that lost only the grid, only the preview, or both fit thumbnails"
    )
    func placeholderWhateverIsWritten() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // Red, green and blue thirds: the grid's centre crop is nearly all green.
            let (width, height) = (2400, 800)
            var pixels = [UInt8](repeating: 0, count: width * height * 3)
            for y in 0..<height {
                for x in 0..<width { pixels[(y * width + x) * 3 + x * 3 / width] = 255 }
            }
            try Pixels.Image.from(pixels, width: width, height: height, bands: 3).save(root + "/lib/thirds.jpg[Q=90]")
            let options = BuildOptions(source: root + "/lib", output: root + "/out")
            let (_, first) = try await Fixtures.build(options)
            let item = try #require(first.items.first)
            let recorded = try #require(item.placeholder)
            for lost in [["grid"], ["preview"], ["small", "preview"]] {
                for name in lost {
                    try FileManager.default.removeItem(atPath: root + "/out/" + (item.thumbnails[name]?.path ?? ""))
                }
                let (report, again) = try await Fixtures.build(options)
                #expect(report.thumbnailsWritten == lost.count)
                #expect(again.items.first?.placeholder == recorded, "after losing \(lost)")
            }
        }
    }

    @Test("every item carries a ThumbHash of its pixels and their average colour; alpha is kept")
    func placeholders() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            try Fixtures.makeDirectory(root + "/lib")
            // Left half red, right half blue, 400×200: average #7d2378 or so, a landscape hash.
            var pixels = [UInt8](repeating: 0, count: 400 * 200 * 3)
            for i in 0..<400 * 200 { pixels.replaceSubrange(i * 3..<i * 3 + 3, with: i % 400 < 200 ? [220, 30, 30] : [30, 40, 210]) }
            try Pixels.Image.from(pixels, width: 400, height: 200, bands: 3).save(root + "/lib/halves.png")
            try Fixtures.writeMarkerImage(
                to: root + "/lib/alpha.png", displayWidth: 120, displayHeight: 240, orientation: 1,
                format: TF_FORMAT_PNG, alpha: true)
            let (manifest, _) = try await Pixels.build(root + "/lib", out: root + "/out")
            #expect(manifest.items.count == 2)
            #expect(manifest.consistencyProblems().isEmpty, "\(manifest.consistencyProblems())")
            let items = Dictionary(uniqueKeysWithValues: manifest.items.map { ($0.path, $0) })
            let halves = try #require(items["halves.png"]?.placeholder)
            #expect(halves.color == "#7d2378", "average of the two halves")
            let picture = try #require(halves.picture)
            #expect(picture.width == 32 && picture.height > 0 && picture.height < 32, "landscape: \(picture.width)×\(picture.height)")
            // The left edge of the placeholder is red, the right edge blue.
            let left = Array(picture.rgba[(picture.height / 2 * picture.width) * 4..<(picture.height / 2 * picture.width) * 4 + 3])
            let rightStart = (picture.height / 2 * picture.width + picture.width - 1) * 4
            let right = Array(picture.rgba[rightStart..<rightStart + 3])
            #expect(left[0] > left[2] + 60 && right[2] > right[0] + 60, "left \(left), right \(right)")

            let alpha = try #require(items["alpha.png"]?.placeholder)
            let hash = try #require(Data(base64Encoded: alpha.thumbhash).map(Array.init))
            #expect(hash[2] & 0x80 != 0, "the alpha flag is set for an image with transparent pixels")
            #expect(try #require(alpha.picture).height == 32, "portrait")
        }
    }
}

@Suite("JPEG encoder")
struct JpegEncoderTests {
    @Test(
        "a baseline JPEG decoded by libjpeg in the calling thread is libvips' jpegload at every shrink, pixels and ICC profile; progressive, CMYK and damaged files are left to libvips; a stop is honoured"
    )
    func decodedAsLibvips() async throws {
        try await Fixtures.withTemporaryDirectory { root in
            var random = SplitMix64(state: 5)
            func image(_ width: Int, _ height: Int, bands: Int) throws -> Pixels.Image {
                try Pixels.Image.from(
                    (0..<(width * height * bands)).map { offset in
                        UInt8(truncatingIfNeeded: (offset / bands) % width * 3 + Int.random(in: 0..<40, using: &random))
                    }, width: width, height: height, bands: bands)
            }
            let profile = Pixels.greyProfile(gamma: 1.8)
            var files: [(String, Bool, Int)] = []  // (path, taken here, its shorter side)
            for (width, height) in [(1, 1), (64, 48), (257, 131), (1001, 333)] {
                try image(width, height, bands: 3).save(root + "/c\(width).jpg[Q=80]")
                try image(width, height, bands: 3).save(root + "/s\(width).jpg[Q=95]")
                let grey = try image(width, height, bands: 1)
                profile.withUnsafeBytes { vips_image_set_blob_copy(grey.pointer, "icc-profile-data", $0.baseAddress, $0.count) }
                try grey.save(root + "/g\(width).jpg[Q=85]")
                try image(width, height, bands: 3).save(root + "/p\(width).jpg[Q=85,interlace]")
                let side = min(width, height)
                files += [
                    ("/c\(width).jpg", true, side), ("/s\(width).jpg", true, side), ("/g\(width).jpg", true, side),
                    ("/p\(width).jpg", false, side),
                ]
            }
            let cmyk = try image(40, 30, bands: 4).apply { tf_interpreted_as($0, $1, VIPS_INTERPRETATION_CMYK) }
            try cmyk.save(root + "/k.jpg[Q=90]")
            files.append(("/k.jpg", false, 30))
            func blob(_ image: UnsafeMutablePointer<VipsImage>) -> [UInt8]? {
                var data: UnsafeRawPointer?
                var length = 0
                guard vips_image_get_typeof(image, "icc-profile-data") != 0,
                    vips_image_get_blob(image, "icc-profile-data", &data, &length) == 0, let data
                else { return nil }
                return Array(UnsafeRawBufferPointer(start: data, count: length))
            }
            var compared = 0
            for (file, taken, side) in files {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: root + file)))
                for shrink in [1, 2, 4, 8] {
                    try bytes.withUnsafeBytes { raw in
                        var here: UnsafeMutablePointer<VipsImage>?
                        var reason: Int32 = 0
                        let result = tf_jpeg_decode_here(raw.baseAddress, raw.count, Int32(shrink), 0, nil, &here, &reason)
                        // A side under the shrink has no whole pixel left (libvips keeps floor(side / shrink)).
                        #expect(result == (taken && side >= shrink ? 1 : 0), "\(file) shrink \(shrink)")
                        // libvips' error buffer is the process's: tests running beside this
                        // one leave their own messages in it; none may be the decoder's.
                        let messages = (vips_error_buffer().map { String(cString: $0) } ?? "").split(separator: "\n")
                        #expect(!messages.contains { $0.hasPrefix("thumbframe") }, "\(file): nothing left in libvips' error buffer")
                        guard let here else { return }
                        defer { g_object_unref(here) }
                        var libvips: UnsafeMutablePointer<VipsImage>?
                        #expect(tf_jpeg_load_shrunk(raw.baseAddress, raw.count, &libvips, Int32(shrink), 2) == 0)
                        let reference = Pixels.Image(try #require(libvips))
                        let (ours, theirs) = (try Fixtures.decode(image: here), try reference.decoded())
                        #expect(ours.width == theirs.width && ours.height == theirs.height && ours.bands == theirs.bands)
                        #expect(ours.pixels == theirs.pixels, "\(file) shrink \(shrink)")
                        #expect(blob(here) == blob(reference.pointer), "\(file): ICC profile")
                        if file.hasPrefix("/g") { #expect(blob(here) == profile) }
                        compared += 1
                    }
                }
            }
            #expect(compared == 3 * 3 * 4 + 3)  // the 1 × 1 files only at shrink 1
            // Damaged: the first half of a file, or its entropy-coded data corrupted, goes to libvips.
            let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: root + "/c1001.jpg")))
            var corrupt = whole
            for index in stride(from: whole.count / 2, to: whole.count - 2, by: 97) { corrupt[index] = 0xFF }
            for damaged in [Array(whole.prefix(whole.count / 2)), corrupt] {
                damaged.withUnsafeBytes { raw in
                    var here: UnsafeMutablePointer<VipsImage>?
                    var reason: Int32 = 0
                    #expect(tf_jpeg_decode_here(raw.baseAddress, raw.count, 1, 0, nil, &here, &reason) == 0 && here == nil)
                }
            }
            // A stop set before the first rows: stopped, and why.
            whole.withUnsafeBytes { raw in
                var here: UnsafeMutablePointer<VipsImage>?
                var reason: Int32 = 0
                var stop: Int32 = 1
                #expect(tf_jpeg_decode_here(raw.baseAddress, raw.count, 1, 0, &stop, &here, &reason) == -1)
                #expect(reason == Int32(TF_STOP_REQUESTED.rawValue) && here == nil)
            }
        }
    }

    @Test("thumbnails encoded in the calling thread are libvips' jpegsave bytes, for every size, quality, band count and interlace")
    func sameBytesAsLibvips() throws {
        try Fixtures.startVips()
        var generator = SystemRandomNumberGenerator()
        var compared = 0
        for (width, height) in [(1, 1), (7, 5), (17, 33), (256, 256), (513, 389)] {
            for bands in [1, 3] {
                // Noise over a gradient: every coefficient and both Huffman paths get exercised.
                let pixels = (0..<(width * height * bands)).map { offset in
                    UInt8(truncatingIfNeeded: (offset / bands) % max(1, width) + Int.random(in: 0..<64, using: &generator))
                }
                let memory = try #require(
                    pixels.withUnsafeBytes {
                        vips_image_new_from_memory_copy(
                            $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands), VIPS_FORMAT_UCHAR)
                    })
                defer { g_object_unref(memory) }
                // The image itself, and a lazy centre crop of it (what a cover thumbnail can be).
                var cropped: UnsafeMutablePointer<VipsImage>?
                #expect(tf_resize_exact(memory, &cropped, Int32(max(1, width - 2)), Int32(height), 1) == 0)
                let croppedImage = try #require(cropped)
                defer { g_object_unref(croppedImage) }
                for image in [memory, croppedImage] {
                    for quality in [1, 50, 80, 89, 90, 100] {
                        for interlace in [0, 1] {
                            func encode(
                                _ save: (
                                    UnsafeMutablePointer<VipsImage>, Int32, Int32, UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                                    UnsafeMutablePointer<Int>
                                ) -> Int32
                            ) -> [UInt8]? {
                                var buffer: UnsafeMutableRawPointer?
                                var length = 0
                                guard save(image, Int32(quality), Int32(interlace), &buffer, &length) == 0, let buffer else { return nil }
                                defer { g_free(buffer) }
                                return Array(UnsafeRawBufferPointer(start: buffer, count: length))
                            }
                            let ours = encode(tf_jpegsave_here)
                            let theirs = encode(tf_jpegsave_libvips)
                            #expect(
                                ours != nil && ours == theirs, "\(width)×\(height), \(bands) bands, Q\(quality), interlace \(interlace)")
                            compared += 1
                        }
                    }
                }
            }
        }
        #expect(compared == 5 * 2 * 2 * 6 * 2)
    }
}
