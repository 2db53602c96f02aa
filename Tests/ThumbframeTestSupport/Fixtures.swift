public import CThumbframeShim
public import CThumbframeTestShim
import CVips
public import Foundation
package import ThumbframeCore
package import ThumbframeManifest

/// Images synthesized with libvips for tests: nothing binary is committed.
public enum Fixtures {
    /// The package's root folder (this file is Tests/ThumbframeTestSupport/Fixtures.swift): the one
    /// place the tests find the repository's scripts, sources, README and viewer from.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// libvips for the fixtures themselves (the product starts it the same way).
    static let started: Bool = tf_vips_start("thumbframe-tests") == 0

    public static func startVips() throws {
        guard started else { throw FixtureError("libvips did not start") }
    }

    static func vipsError() -> String {
        guard let raw = vips_error_buffer_copy() else { return "unknown libvips error" }
        defer { g_free(raw) }
        return String(cString: raw)
    }

    /// A colour in 8-bit sRGB.
    public struct Colour: Equatable, Sendable, CustomStringConvertible {
        public var r: UInt8, g: UInt8, b: UInt8
        public static let red = Colour(r: 220, g: 30, b: 30)
        public static let green = Colour(r: 30, g: 200, b: 40)
        public static let blue = Colour(r: 30, g: 40, b: 210)

        public init(r: UInt8, g: UInt8, b: UInt8) {
            self.r = r
            self.g = g
            self.b = b
        }

        /// Close enough after resampling and JPEG compression.
        public func isNear(_ other: Colour) -> Bool {
            abs(Int(r) - Int(other.r)) < 60 && abs(Int(g) - Int(other.g)) < 60 && abs(Int(b) - Int(other.b)) < 60
        }
        public var description: String { "rgb(\(r),\(g),\(b))" }
    }

    /// The picture a viewer must show: red top-left quadrant, green top-right, blue bottom half.
    /// Two distinct top corners make every one of the eight orientations tell apart (a single
    /// marker would survive a transpose unnoticed).
    public static func markerColour(x: Int, y: Int, width: Int, height: Int) -> Colour {
        if y >= height / 2 { return .blue }
        return x < width / 2 ? .red : .green
    }

    /// Where display pixel (x, y) lies in the stored pixels for an EXIF orientation: the
    /// inverse of what a viewer applies (TIFF/EXIF 2.32 Orientation, values 1–8).
    public static func storedCoordinate(
        displayX x: Int, displayY y: Int, displayWidth w: Int, displayHeight h: Int,
        orientation: Int
    ) -> (Int, Int) {
        switch orientation {
        case 2: (w - 1 - x, y)  // mirrored horizontally
        case 3: (w - 1 - x, h - 1 - y)  // rotated 180°
        case 4: (x, h - 1 - y)  // mirrored vertically
        case 5: (y, x)  // transposed
        case 6: (y, w - 1 - x)  // stored rotated 90° counter-clockwise; viewer turns it clockwise
        case 7: (h - 1 - y, w - 1 - x)  // transverse
        case 8: (h - 1 - y, x)  // stored rotated 90° clockwise; viewer turns it back
        default: (x, y)
        }
    }

    /// Writes an image that shows the marker picture at `displayWidth` × `displayHeight` once a
    /// viewer applies `orientation`. With `applyOrientation: false` the pixels are written as
    /// displayed and the tag is only a label (what a HEIF decoder that already rotated presents).
    public static func writeMarkerImage(
        to path: String, displayWidth w: Int, displayHeight h: Int, orientation: Int, format: TFFormat,
        applyOrientation: Bool = true, alpha: Bool = false
    ) throws {
        let swaps = applyOrientation && orientation >= 5
        let storedW = swaps ? h : w
        let storedH = swaps ? w : h
        let bands = alpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: storedW * storedH * bands)
        for y in 0..<h {
            for x in 0..<w {
                let (sx, sy) =
                    applyOrientation
                    ? storedCoordinate(displayX: x, displayY: y, displayWidth: w, displayHeight: h, orientation: orientation)
                    : (x, y)
                let colour = markerColour(x: x, y: y, width: w, height: h)
                let offset = (sy * storedW + sx) * bands
                pixels[offset] = colour.r
                pixels[offset + 1] = colour.g
                pixels[offset + 2] = colour.b
                if alpha { pixels[offset + 3] = x < w / 4 ? 0 : 255 }
            }
        }
        try save(pixels, width: storedW, height: storedH, bands: bands, to: path, format: format, quality: 92) { image in
            if orientation != 1 { vips_image_set_int(image, "orientation", Int32(orientation)) }
        }
    }

    /// The bytes of a `writeImage` JPEG, for tests that open images from memory.
    public static func imageBytes(width: Int, height: Int) async throws -> [UInt8] {
        try await withTemporaryDirectory { root in
            try writeImage(to: root + "/image.jpg", width: width, height: height)
            return try Array(Data(contentsOf: URL(fileURLWithPath: root + "/image.jpg")))
        }
    }

    /// Writes a plain image (a smooth gradient, so JPEG sizes are realistic) of any size.
    /// `exif` sets EXIF fields by libvips' names, e.g. `exif-ifd2-DateTimeOriginal`; `orientation`
    /// the EXIF orientation (the pixels stay as stored).
    public static func writeImage(
        to path: String, width: Int, height: Int, format: TFFormat = TF_FORMAT_JPEG, exif: [String: String] = [:],
        orientation: Int = 1
    ) throws {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 3
                pixels[offset] = UInt8(x * 255 / max(1, width - 1))
                pixels[offset + 1] = UInt8(y * 255 / max(1, height - 1))
                pixels[offset + 2] = 128
            }
        }
        try save(pixels, width: width, height: height, bands: 3, to: path, format: format, quality: 85) { image in
            for (name, value) in exif { vips_image_set_string(image, name, value) }
            if orientation != 1 { vips_image_set_int(image, "orientation", Int32(orientation)) }
        }
    }

    /// Writes a JPEG of pseudo-random noise (xorshift from `seed`): what compresses worst, for
    /// outputs that must be large (a deep-zoom pyramid that fills a small disk).
    public static func writeNoise(to path: String, width: Int, height: Int, seed: UInt64 = 0x9E37_79B9) throws {
        var state = seed | 1
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for offset in stride(from: 0, to: pixels.count, by: 8) {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            withUnsafeBytes(of: state) { word in
                for byte in 0..<min(8, pixels.count - offset) { pixels[offset + byte] = word[byte] }
            }
        }
        try save(pixels, width: width, height: height, bands: 3, to: path, format: TF_FORMAT_JPEG, quality: 90) { _ in }
    }

    /// Writes an animated GIF or WebP (by the extension) of `delays.count` frames: frame i is a
    /// flat colour (red for the first, then greens), shown `delays[i]` milliseconds.
    public static func writeAnimation(to path: String, width: Int, height: Int, delays: [Int], loop: Int) throws {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 3 * delays.count)
        for frame in delays.indices {
            let colour: [UInt8] = frame == 0 ? [220, 30, 30] : [20, UInt8(80 + 150 * frame / max(1, delays.count - 1)), 40]
            for _ in 0..<(width * height) { pixels += colour }
        }
        try startVips()
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height * delays.count), 3, VIPS_FORMAT_UCHAR)
        }
        guard let image else { throw FixtureError(vipsError()) }
        defer { g_object_unref(image) }
        vips_image_set_int(image, "page-height", Int32(height))
        vips_image_set_int(image, "loop", Int32(loop))
        var values = delays.map(Int32.init)
        vips_image_set_array_int(image, "delay", &values, Int32(values.count))
        guard tf_write_to_file(image, path) == 0 else { throw FixtureError(vipsError()) }
    }

    /// Wraps 8-bit pixels in a libvips image, lets `metadata` set fields, and saves it with its
    /// metadata (so an orientation or EXIF field reaches the file).
    private static func save(
        _ pixels: [UInt8], width: Int, height: Int, bands: Int, to path: String, format: TFFormat, quality: Int32,
        metadata: (UnsafeMutablePointer<VipsImage>) -> Void
    ) throws {
        try startVips()
        let image = pixels.withUnsafeBytes {
            vips_image_new_from_memory_copy(
                $0.baseAddress, $0.count, Int32(width), Int32(height), Int32(bands),
                VIPS_FORMAT_UCHAR)
        }
        guard let image else { throw FixtureError(vipsError()) }
        defer { g_object_unref(image) }
        metadata(image)
        guard tf_save_file(image, path, format, quality) == 0 else { throw FixtureError(vipsError()) }
    }

    /// Decodes `source` and saves it as `destination` with libvips' save options string, e.g.
    /// `[interlace]` for a progressive JPEG; the format follows the destination's extension.
    public static func reencode(_ source: String, to destination: String, options: String) throws {
        try startVips()
        guard let image = tf_image_new_from_file(source) else { throw FixtureError(vipsError()) }
        defer { g_object_unref(image) }
        guard tf_write_to_file(image, destination + options) == 0 else { throw FixtureError(vipsError()) }
    }

    /// Decoded pixels of an image file, as 8-bit RGB.
    public struct Decoded {
        public var width: Int
        public var height: Int
        public var bands: Int
        public var pixels: [UInt8]

        public func colour(x: Int, y: Int) -> Colour {
            let offset = (y * width + x) * bands
            return Colour(r: pixels[offset], g: pixels[offset + 1], b: pixels[offset + 2])
        }
    }

    public static func decode(_ path: String) throws -> Decoded {
        try startVips()
        guard let image = tf_image_new_from_file(path) else { throw FixtureError(vipsError()) }
        defer { g_object_unref(image) }
        return try decode(image: image)
    }

    /// The pixels of an image in memory (8-bit bands expected), without a round trip through a file.
    public static func decode(image: UnsafeMutablePointer<VipsImage>) throws -> Decoded {
        var length = 0
        guard let memory = vips_image_write_to_memory(image, &length) else { throw FixtureError(vipsError()) }
        defer { g_free(memory) }
        return Decoded(
            width: Int(vips_image_get_width(image)), height: Int(vips_image_get_height(image)),
            bands: Int(vips_image_get_bands(image)),
            pixels: Array(UnsafeRawBufferPointer(start: memory, count: length)))
    }

    /// A published manifest's files by name: `manifest.json` and every page it names (read with
    /// Foundation's JSON, not thumbframe's reader), to compare two outputs byte for byte.
    public static func manifestFiles(_ out: String) throws -> [String: Data] {
        let top = try Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))
        var files = ["manifest.json": top]
        let document = try JSONSerialization.jsonObject(with: top) as? [String: Any] ?? [:]
        for section in document["sections"] as? [[String: Any]] ?? [] {
            for page in section["pages"] as? [[String: Any]] ?? [] {
                guard let path = page["path"] as? String else { continue }
                files[path] = try Data(contentsOf: URL(fileURLWithPath: out + "/" + path))
            }
        }
        return files
    }

    /// Runs `body` with a new empty directory, removed afterwards.
    /// With THUMBFRAME_TEST_MANIFESTS set to a directory, every `manifest.json` and page left in
    /// the temporary directory is copied there first, so scripts/test can check every manifest the
    /// suite wrote against the JSON Schema.
    public static func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("thumbframe-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer {
            archiveManifests(in: path)
            try? FileManager.default.removeItem(atPath: path)
        }
        return try await body(path)
    }

    private static func archiveManifests(in directory: String) {
        guard let archive = ProcessInfo.processInfo.environment["THUMBFRAME_TEST_MANIFESTS"] else { return }
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            // Top documents and their pages (a schema covers both).
            let isPage = relative.hasSuffix(".json") && (relative.hasPrefix("pages/") || relative.contains("/pages/"))
            guard (relative as NSString).lastPathComponent == "manifest.json" || isPage else { continue }
            // A file past what readers accept is a test's deliberately damaged one (sparse, huge).
            let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + relative)[.size] as? Int) ?? 0
            guard size <= ManifestReader.maximumDocumentBytes else { continue }
            try? FileManager.default.copyItem(
                atPath: directory + "/" + relative, toPath: archive + "/\(UUID().uuidString).json")
        }
    }

    /// Creates the directories of `path` and writes `bytes`.
    public static func write(_ bytes: [UInt8], to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Writes damaged copies of a seed file into `directory`: cut at each fraction of its length
    /// (`cut-<fraction>-<name>`), and `flips` copies with 1 to `maxFlips` bytes changed, each at
    /// the offset `offset(copy number, generator)` gives (`flip-<n>-<name>`). Returns how many.
    public static func writeDamagedCopies(
        of bytes: [UInt8], named name: String, into directory: String, fractions: [Double], flips: Int, maxFlips: Int,
        random: inout SplitMix64, offset: (Int, inout SplitMix64) -> Int
    ) throws -> Int {
        for fraction in fractions {
            try write(Array(bytes.prefix(Int(Double(bytes.count) * fraction))), to: directory + "/cut-\(fraction)-\(name)")
        }
        for copy in 0..<flips {
            var damaged = bytes
            for _ in 0..<(1 + Int(random.next() % UInt64(maxFlips))) {
                damaged[offset(copy, &random)] = UInt8(truncatingIfNeeded: random.next())
            }
            try write(damaged, to: directory + "/flip-\(copy)-\(name)")
        }
        return fractions.count + flips
    }

    public static func makeDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
}

/// A fixture could not be made.
public struct FixtureError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension Fixtures {
    /// Builds as `thumbframe build` does, in process, and loads the whole manifest it wrote: the
    /// body of most build tests.
    package static func build(_ options: BuildOptions, events: @escaping @Sendable (BuildEvent) -> Void = { _ in })
        async throws -> (report: BuildReport, manifest: Manifest)
    {
        let report = try await Builder(options: options, events: events).run()
        return (report, try ManifestFile.load(report.manifestPath))
    }
}

extension Manifest.Settings {
    /// Settings as `build --zoom tiles` writes them: the recipes, the zoom ladder and deep-zoom
    /// tiles (both off by default).
    package static func zoomed(
        preset: LayoutPreset = .jx3, viewports: [Viewport] = Viewport.defaults,
        thumbnails: [ThumbnailRecipe] = ThumbnailRecipe.defaults, originalURL: String? = nil,
        ladderMaxSide: Int = ZoomRenditions.tiles.ladderMaxSide, tilePixels: Int = ZoomRenditions.tiles.tilePixels
    ) -> Manifest.Settings {
        Manifest.Settings(
            preset: preset, viewports: viewports, thumbnails: thumbnails, originalURL: originalURL,
            ladderMaxSide: ladderMaxSide, tilePixels: tilePixels)
    }
}

extension BuildOptions {
    /// These options with `--zoom`'s renditions.
    package func zooming(_ zoom: ZoomRenditions) -> BuildOptions {
        var options = self
        options.ladderMaxSide = zoom.ladderMaxSide
        options.tilePixels = zoom.tilePixels
        return options
    }
}
