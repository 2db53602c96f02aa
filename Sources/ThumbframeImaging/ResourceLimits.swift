import Foundation
import ThumbframeManifest

/// What one file may cost before it is refused as a failure: bytes read, pixels, memory held
/// by the decoder, progressive scans, and wall time. Checked from the file's size and header
/// before anything is decoded (the deadline while decoding), so no single file can exhaust
/// memory or stall the run. Peak memory is about `jobs` × (`maxFileBytes` + `maxDecodeBytes`).
package struct ResourceLimits: Sendable, Equatable, Codable {
    /// Larger files fail without being read (`--max-file-bytes`).
    package var maxFileBytes = 512 << 20
    /// Images with more pixels than this fail from their header (`--max-pixels`).
    package var maxPixels = 268_402_689
    /// What a decoder may hold beyond the streamed pixels (`--max-decode-bytes`): a GIF's
    /// frame buffer, an interlaced PNG or a progressive JPEG's coefficients, a HEIF picture.
    package var maxDecodeBytes = 512 << 20
    /// Seconds one decode may take before it is killed (`--decode-timeout`); 0: no deadline.
    package var decodeTimeout = 120.0
    /// Seconds one video's rendition may take (`--video-timeout`; a transcode is longer than a
    /// decode): the worker is killed once it is over by as long again (at most 60 s); 0: no deadline.
    package var videoTimeout = 3600.0
    /// Progressive JPEGs with more scans fail from their markers: libjpeg decodes every scan
    /// over the whole image before the first row comes out, and cannot be interrupted there
    /// (the limit libjpeg-turbo's tools suggest).
    package var maxJPEGScans = 500

    /// Creates the default limits.
    package init() {}

    /// What a decode worker may hold (its `RLIMIT_DATA`): the runtime, the libraries and their
    /// threads' stacks (`workerBaseBytes`), the file read whole, twice what a decoder may hold (its
    /// picture and the copy a conversion makes), and the largest output at 16 bytes a pixel. The
    /// kernel refuses an allocation past it, whatever the header checks estimated.
    package func workerMemoryBytes(largestOutputPixels: Int) -> Int {
        let parts = [
            Self.workerBaseBytes, maxFileBytes, maxDecodeBytes, maxDecodeBytes,
            largestOutputPixels.multipliedReportingOverflow(by: 16).partialValue,
        ]
        return parts.reduce(0) { sum, part in
            let next = sum.addingReportingOverflow(max(0, part))
            return next.overflow ? Int.max : next.partialValue
        }
    }

    /// A worker's data before any file: Swift, libvips, FFmpeg, LibRaw, libheif and the stacks of
    /// its threads (measured 42–65 MiB idle, up to 140 MiB after a HEIC; the rest is margin).
    package static let workerBaseBytes = 256 << 20

    /// Why an image of this header may not be decoded, or nil.
    func refusal(_ header: ImageHeader, bands: Int, bytesPerBand: Int, file: UnsafeRawBufferPointer) -> String? {
        let pixels = header.storedWidth.multipliedReportingOverflow(by: header.storedHeight)
        if pixels.overflow || pixels.partialValue > maxPixels {
            return "\(header.storedWidth)×\(header.storedHeight) pixels is over --max-pixels \(maxPixels)"
        }
        // A GIF's frames may lie outside its logical screen: the canvas they need is counted.
        let counted = max(pixels.partialValue, header.gifCanvasPixels ?? 0)
        if let (bytes, what) = Self.decoderBytes(header, pixels: counted, bands: bands, bytesPerBand: bytesPerBand),
            bytes > maxDecodeBytes
        {
            return "decoding \(header.storedWidth)×\(header.storedHeight) pixels would hold about \(Self.mebibytes(bytes)) "
                + "(\(what)), over --max-decode-bytes \(Self.mebibytes(maxDecodeBytes))"
        }
        if header.mediaFormat?.family == .jpeg, header.interlaced {
            let scans = JPEGMarkers.scanCount(file, stoppingAfter: maxJPEGScans)
            if scans > maxJPEGScans {
                return "progressive JPEG with more than \(maxJPEGScans) scans (each is decoded over the whole image)"
            }
        }
        return nil
    }

    /// Memory a decoder holds at once for an image, beyond the rows it streams, and what for;
    /// nil when it streams (baseline JPEG with shrink-on-load, plain PNG, TIFF strips and tiles).
    static func decoderBytes(_ header: ImageHeader, pixels: Int, bands: Int, bytesPerBand: Int) -> (Int, String)? {
        let (bytesPerPixel, what): (Int, String)
        if header.toneMappedTransfer != nil {
            // libheif's 16-bit picture and the full-scale signal copy made from it (`tf_heif_decode_hdr`).
            let bytes = pixels.multipliedReportingOverflow(by: 12)
            return (bytes.overflow ? Int.max : bytes.partialValue, "HDR picture at 16 bits, twice")
        }
        // What the format's decode holds (the format table, `MediaFormat.DecodeMemory`).
        switch header.mediaFormat?.memory ?? .wholePicture {
        case .progressiveCoefficients:
            guard header.interlaced else { return nil }
            (bytesPerPixel, what) = (bands * 2, "progressive JPEG coefficients")
        case .interlacedPicture:
            guard header.interlaced else { return nil }
            (bytesPerPixel, what) = (bands * bytesPerBand, "interlaced PNG")
        case .gifCanvas:
            // libnsgif's canvas and previous frame, libvips' copy and the thumbnail's working
            // copies: 16 bytes a canvas pixel measured (RSS over canvases of 5 to 21 MP).
            (bytesPerPixel, what) = (16, "GIF canvas and frame buffers")
        case .animatedCanvas:
            guard header.pages > 1 else { return nil }
            (bytesPerPixel, what) = (4, "animated WebP canvas")
        case .streamed:
            return nil
        case .jxlPlanes:
            // libjxl decodes the whole picture at once (`tf_jxl_decode_image`) and holds its own
            // float plane per channel meanwhile: 21.1 bytes a pixel measured for a phone's 21 MP
            // 16-bit picture (the worker's anonymous memory less its base; a lossless 48 MP
            // 8-bit one through libvips: 705 MiB).
            (bytesPerPixel, what) = (bands * bytesPerBand + 4 * max(3, bands) + 4, "JPEG XL picture and libjxl's float planes")
        case .heifPicture:
            // Measured: 8 bytes a pixel for a 12 MP iPhone grid, 9.5 for a 25 MP picture (3 bands).
            (bytesPerPixel, what) = (3 * max(3, bands) * bytesPerBand + 1, "HEIF planes, picture and copy")
        case .wholePicture, .ownDecoder:
            (bytesPerPixel, what) = (max(3, bands) * bytesPerBand, "whole picture")
        }
        let bytes = pixels.multipliedReportingOverflow(by: bytesPerPixel)
        return (bytes.overflow ? Int.max : bytes.partialValue, what)
    }

    package static func mebibytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    package static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// JPEG marker segments, read without decoding.
enum JPEGMarkers {
    /// Start-of-scan markers in the file, counting no further than `limit + 1`.
    static func scanCount(_ data: UnsafeRawBufferPointer, stoppingAfter limit: Int) -> Int {
        var scans = 0
        var index = 2  // after SOI
        let count = data.count
        while index + 1 < count, scans <= limit {
            guard data[index] == 0xFF else {
                index += 1  // entropy-coded data between markers
                continue
            }
            let marker = data[index + 1]
            // Stuffed zero, fill byte, restart markers and TEM carry no length.
            if marker == 0x00 || marker == 0xFF || (0xD0...0xD7).contains(marker) || marker == 0x01 {
                index += marker == 0xFF ? 1 : 2
                continue
            }
            if marker == 0xD9 { break }  // EOI
            guard index + 3 < count else { break }
            let length = Int(data[index + 2]) << 8 | Int(data[index + 3])
            if marker == 0xDA { scans += 1 }
            index += 2 + length
        }
        return scans
    }
}

/// GIF blocks, read without decoding.
enum GIFBlocks {
    /// The number of frames (image descriptors) in a GIF and the canvas they are drawn on, walking
    /// its blocks and skipping their data sub-blocks; nil when the data is not a GIF. A file cut
    /// short counts the frames whose descriptor it reached. (libvips 8.14's GIF loader stops
    /// counting at 4 097.) The first frame's rectangle grows the canvas as libnsgif grows it (a first frame at
    /// x = 65 280 makes a 64-pixel-wide GIF 65 344 wide; a later frame outside the screen does
    /// not grow it).
    static func scan(_ data: UnsafeRawBufferPointer) -> (frames: Int, width: Int, height: Int)? {
        let count = data.count
        guard count >= 13, data[0] == 0x47, data[1] == 0x49, data[2] == 0x46 else { return nil }  // "GIF"
        var index = 13  // header (6) + logical screen descriptor (7)
        let flags = data[10]
        if flags & 0x80 != 0 { index += 3 << (Int(flags & 0x07) + 1) }  // global colour table
        /// Skips data sub-blocks (length byte, bytes) up to and including the terminator.
        func skipSubBlocks(_ start: Int) -> Int {
            var at = start
            while at < count {
                let length = Int(data[at])
                at += 1 + length
                if length == 0 { break }
            }
            return at
        }
        func u16(_ at: Int) -> Int { Int(data[at]) | Int(data[at + 1]) << 8 }
        var frames = 0
        var (width, height) = (u16(6), u16(8))
        while index < count {
            switch data[index] {
            case 0x21:  // extension: label, then sub-blocks
                index = skipSubBlocks(index + 2)
            case 0x2C:  // image descriptor
                frames += 1
                guard index + 10 <= count else { return (frames, width, height) }
                if frames == 1 {
                    width = max(width, u16(index + 1) + u16(index + 5))
                    height = max(height, u16(index + 3) + u16(index + 7))
                }
                let local = data[index + 9]
                index += 10
                if local & 0x80 != 0 { index += 3 << (Int(local & 0x07) + 1) }  // local colour table
                index = skipSubBlocks(index + 1)  // LZW minimum code size, then image data
            default:  // 0x3B trailer, or garbage after the last frame
                return (frames, width, height)
            }
        }
        return (frames, width, height)
    }
}
