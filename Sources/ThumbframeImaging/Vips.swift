internal import CThumbframeShim
internal import CVips
import Foundation

/// libvips, started once per process before any worker runs.
enum Vips {
    private static let started: Result<Void, DecodeFailure> = {
        guard tf_vips_start("thumbframe") == 0 else { return .failure(DecodeFailure(stage: .probe, reason: takeError())) }
        return .success(())
    }()

    /// Starts libvips (idempotent): cache off, untrusted loaders blocked.
    static func start() throws(DecodeFailure) {
        try started.get()
    }

    /// libvips' worker threads per image.
    static func setThreads(_ threads: Int) {
        vips_concurrency_set(Int32(threads))
    }

    /// Opens an image on `bytes` for the length of `body`, or returns nil when libvips cannot
    /// (its message then waits in the error buffer). libvips reads the pixels from those bytes
    /// lazily, so neither the image nor anything computed from it lazily may outlive them: debug
    /// builds check, when `body` returns, that nothing holds the image any more.
    static func withImage<T>(_ bytes: UnsafeRawBufferPointer, failOn: Int32, _ body: (VipsImageHandle) throws -> T) rethrows -> T? {
        guard let opened = tf_image_new_from_buffer(bytes.baseAddress, bytes.count, failOn) else { return nil }
        var handle: VipsImageHandle? = VipsImageHandle(opened)
        let result = try body(handle!)
        assert(isKnownUniquelyReferenced(&handle), "a libvips image opened on bytes in memory was kept past them")
        assert(tf_ref_count(opened) == 1, "an image computed lazily from bytes in memory was kept past them")
        handle = nil
        return result
    }

    /// `withImage` on the bytes of an array.
    static func withImage<T>(_ bytes: [UInt8], failOn: Int32, _ body: (VipsImageHandle) throws -> T) rethrows -> T? {
        try bytes.withUnsafeBytes { try withImage($0, failOn: failOn, body) }
    }

    /// The pixel size of an image in memory, from its header; or why it cannot be opened.
    static func imageSize(_ bytes: [UInt8]) -> Result<(width: Int, height: Int), DecodeFailure> {
        do {
            try start()
        } catch {
            return .failure(error)
        }
        defer { threadDone() }
        let size = withImage(bytes, failOn: 0) { image in (image.width, image.height) }
        guard let size else { return .failure(DecodeFailure(stage: .probe, reason: "unreadable: " + takeError())) }
        return .success(size)
    }

    /// The libvips version string, e.g. `8.14.1`.
    static var version: String { String(cString: vips_version_string()) }

    /// Takes libvips' error buffer as one line and clears it. The buffer is global and shared by
    /// threads, so read it right after the failing call; the caller adds the file path.
    static func takeError() -> String {
        guard let raw = vips_error_buffer_copy() else { return noMessage }
        defer { g_free(raw) }
        let lines = String(cString: raw).split(whereSeparator: \.isNewline).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let message = lines.filter { !$0.isEmpty }.joined(separator: "; ")
        return message.isEmpty ? noMessage : message
    }

    /// What a failure says when libvips' buffer held nothing (another thread took or cleared it).
    static let noMessage = "unknown libvips error"

    /// Whether libvips' error buffer holds anything.
    static func hasErrors() -> Bool {
        vips_error_buffer().map { $0.pointee != 0 } ?? false
    }

    /// Empties libvips' error buffer (lines left by operations that recovered).
    static func clearErrors() {
        vips_error_clear()
    }

    /// Frees libvips' per-thread state on a thread libvips did not create, before the thread
    /// goes back to its pool.
    static func threadDone() {
        vips_thread_shutdown()
    }
}

/// Owns one `VipsImage` reference; a class rather than a struct because the reference is
/// released in `deinit`. Never leaves the adapter files: callers get Swift values.
final class VipsImageHandle {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(_ pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        g_object_unref(pointer)
    }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var hasAlpha: Bool { vips_image_hasalpha(pointer) != 0 }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    var bytesPerBand: Int { Int(tf_image_sizeof_band(pointer)) }
    /// An embedded ICC profile is attached (the pixels are not sRGB until converted).
    var hasProfile: Bool { vips_image_get_typeof(pointer, "icc-profile-data") != 0 }
    var isCMYK: Bool { tf_is_cmyk(pointer) != 0 }

    func int(_ name: String) -> Int? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, name, &value) == 0 else {
            vips_error_clear()
            return nil
        }
        return Int(value)
    }

    func string(_ name: String) -> String? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var value: UnsafePointer<CChar>?
        guard vips_image_get_string(pointer, name, &value) == 0, let value else {
            vips_error_clear()
            return nil
        }
        return String(cString: value)
    }

    /// Copies an integer-array metadata item (such as an animation's `delay`) out of the image.
    func ints(_ name: String) -> [Int]? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var values: UnsafeMutablePointer<Int32>?
        var count: Int32 = 0
        guard vips_image_get_array_int(pointer, name, &values, &count) == 0, let values, count >= 0 else {
            vips_error_clear()
            return nil
        }
        return UnsafeBufferPointer(start: values, count: Int(count)).map(Int.init)
    }

    /// Copies a binary metadata item (such as `exif-data`) out of the image.
    func blob(_ name: String) -> [UInt8]? {
        guard vips_image_get_typeof(pointer, name) != 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, name, &data, &length) == 0, let data, length > 0 else {
            vips_error_clear()
            return nil
        }
        return Array(UnsafeRawBufferPointer(start: data, count: length))
    }
}
