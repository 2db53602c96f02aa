internal import CCompress
import Foundation

/// The pre-compressed siblings of a JSON file OUT_DIR serves (`manifest.json.gz`,
/// `pages/XX/<hash>.json.br`): what nginx's `gzip_static`/`brotli_static`, Caddy's
/// `precompressed` and static hosts send as they are, so a phone fetches a page at a fifth of its
/// size without the server compressing it. The same input gives the same bytes on every machine:
/// gzip at level 9 with no time or system in its header, Brotli at quality `brotliQuality`.
enum Precompressed: CaseIterable {
    case gzip, brotli

    /// Brotli's quality: 6. On a 520 KB page of 256 real-looking items, quality 11 makes 51 KB in
    /// 0.44 s, 10 makes 53 KB in 0.11 s, 6 makes 62 KB in under 5 ms (gzip -9: 66 KB in 10 ms): a
    /// cold build of a million photos writes 4 000 pages, half an hour at 11, seconds at 6.
    static let brotliQuality: Int32 = 6

    /// The sibling's suffix: `.gz`, `.br`.
    var suffix: String {
        switch self {
        case .gzip: ".gz"
        case .brotli: ".br"
        }
    }

    /// `bytes` compressed; nil if the library fails (out of memory).
    func compress(_ bytes: [UInt8]) -> [UInt8]? {
        switch self {
        case .gzip: Self.gzip(bytes)
        case .brotli: Self.brotli(bytes)
        }
    }

    /// The bytes a sibling holds, decompressed (at most `limit`); nil when they are not this
    /// format's or are longer.
    func decompress(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        switch self {
        case .gzip: Self.gunzip(bytes, limit: limit)
        case .brotli: Self.unbrotli(bytes, limit: limit)
        }
    }

    private static func gzip(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16: a gzip wrapper. Its header is set below: no name, time 0, system
        // 255 ("unknown"), where zlib's default names the system it was built for.
        guard
            deflateInit2_(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var header = gz_header()
        header.os = 255
        guard deflateSetHeader(&stream, &header) == Z_OK else { return nil }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        guard pump(&stream, bytes, &output, { deflate(&$0, Z_FINISH) }) == Z_STREAM_END else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    private static func gunzip(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: limit + 1)
        let result = pump(&stream, bytes, &output, { inflate(&$0, Z_FINISH) })
        guard result == Z_STREAM_END, Int(stream.total_out) <= limit, stream.avail_in == 0 else { return nil }
        return Array(output.prefix(Int(stream.total_out)))
    }

    /// Runs `step` (deflate or inflate to the end) over all of `input` into `output`: its result.
    private static func pump(
        _ stream: inout z_stream, _ input: [UInt8], _ output: inout [UInt8], _ step: (inout z_stream) -> Int32
    ) -> Int32 {
        var input = input
        return input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return step(&stream)
            }
        }
    }

    private static func brotli(_ bytes: [UInt8]) -> [UInt8]? {
        var size = BrotliEncoderMaxCompressedSize(bytes.count)
        guard size > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: size)
        let done = bytes.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                BrotliEncoderCompress(
                    Self.brotliQuality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, source.count, source.baseAddress, &size,
                    target.baseAddress)
            }
        }
        return done == BROTLI_TRUE ? Array(output.prefix(size)) : nil
    }

    private static func unbrotli(_ bytes: [UInt8], limit: Int) -> [UInt8]? {
        var size = limit + 1
        var output = [UInt8](repeating: 0, count: size)
        let result = bytes.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                BrotliDecoderDecompress(source.count, source.baseAddress, &size, target.baseAddress)
            }
        }
        guard result == BROTLI_DECODER_RESULT_SUCCESS, size <= limit else { return nil }
        return Array(output.prefix(size))
    }
}
