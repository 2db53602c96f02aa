internal import CThumbframeShim
package import ThumbframeManifest

/// Turns the bytes of one file into what an item needs: its header (size, orientation, EXIF)
/// and, once the caller has said which thumbnails it lacks, those thumbnails encoded and the
/// placeholder, from one decode. Swift values in and out; every C handle stays inside.
///
/// `VipsDecoder` (libvips) takes images, `RawDecoder` (LibRaw) RAW files, as the format table
/// says (`MediaFormat.decoder(fileExtension:head:)`, `Decoders.decoder(for:)`); videos go
/// through `VideoDecoder`, which reads a descriptor rather than bytes in memory.
package protocol ImageDecoder: Sendable {
    /// Probes the file, refuses it when it would cost more than `limits` allow, asks `request`
    /// which thumbnails to make for that header (nil, or `render` false: none, nor a
    /// placeholder), and makes them.
    /// Never throws: a file that cannot be made is a `DecodeFailure` in the result.
    func decode(
        _ file: UnsafeRawBufferPointer, limits: ResourceLimits, cancellation: CancellationFlag?,
        request: (ImageHeader) -> RenderRequest?
    ) -> Decoded
}

/// The thumbnails one decode should make.
package struct RenderRequest: Sendable {
    /// The geometry of every thumbnail of the image (the decode box is the largest).
    package var plan: ThumbnailPlan
    /// The outputs to encode (those not already on disk), in order.
    package var outputs: [ThumbnailPlan.Output]
    /// False when nothing is to be rendered (every thumbnail exists and the placeholder of the
    /// same bytes is known): the header alone is wanted, with what the plan decides (a RAW's
    /// rendering).
    package var render: Bool
    /// The recipes (by name) whose outputs carry an HDR picture's gain map (JPEG fit renditions
    /// a lightbox shows); empty for an SDR picture or `--hdr sdr`.
    package var gainMaps: Set<String>
    /// Whether the rendering measures the picture's `Likeness` (`--stacks` other than none).
    package var likeness: Bool

    package init(
        plan: ThumbnailPlan, outputs: [ThumbnailPlan.Output], render: Bool = true, gainMaps: Set<String> = [], likeness: Bool = false
    ) {
        self.plan = plan
        self.outputs = outputs
        self.render = render
        self.gainMaps = gainMaps
        self.likeness = likeness
    }

    /// Whether an output to encode carries the gain map (else none is read or computed).
    package var wantsGainMap: Bool { outputs.contains { gainMaps.contains($0.recipe.name) && $0.recipe.format == .jpeg } }
}

/// What one decode made.
package struct Rendering: Sendable {
    /// One encoded file per requested output, in the request's order.
    package var encoded: [[UInt8]]
    package var placeholder: Manifest.Placeholder
    /// Per output: the headroom of the gain map it carries, or nil (an SDR file).
    package var headrooms: [Double?] = []
    /// The picture's likeness, from the placeholder's pixels, when the request asked for it.
    package var likeness: Likeness?
}

/// Where and why a file could not be made into an item.
package struct DecodeFailure: Error, Sendable, Equatable {
    package enum Stage: String, Sendable {
        case probe, decode, encode
    }

    package var stage: Stage
    package var reason: String
    /// What stopped the decode from outside the file (memory, time), where that is what did.
    package var cause: FailureCause?
    /// The errno of a write into OUT_DIR that failed while the file's output was written by a
    /// library (a rendition's muxer): the run's failure, not the file's.
    package var outputErrno: Int32?

    /// Whether a library's message says an allocation failed: libvips, libjpeg, GLib, glibc, C++
    /// and the Swift runtime say so only in words (their fixed messages), so the worker, where the
    /// message is the library's own, gives its failure the cause `memory`; the build reads no
    /// worker's words but a dying worker's last ones on stderr.
    package static func isAllocationFailure(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return [
            "out of memory", "cannot allocate memory", "failed to allocate", "could not allocate", "bad_alloc",
            "memory allocation", "not enough memory", "unable to allocate", "insufficient memory",
        ].contains { lowered.contains($0) }
    }

    package init(stage: Stage, reason: String, cause: FailureCause? = nil) {
        self.stage = stage
        self.reason = reason
        self.cause = cause
    }
}

/// The outcome of one `ImageDecoder.decode`.
package struct Decoded: Sendable {
    /// The header, and what was rendered (nil when the request asked for nothing).
    package var result: Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure>
}

extension Decoded {
    /// The outcome of a decode; after a success, a message libvips left in its buffer (an
    /// operation that recovered) is emptied, so the next file's failure reads its own alone.
    init(_ result: Result<(header: ImageHeader, rendering: Rendering?), DecodeFailure>) {
        if case .success = result, Vips.hasErrors() { Vips.clearErrors() }
        self.init(result: result)
    }
}

/// The decoders thumbframe has, and the decoding libraries' start.
package enum Decoders {
    /// The decoder of a still format's library (`MediaFormat.decoder`); videos are read by
    /// `VideoDecoder` from a descriptor instead, so libvips answers for them here.
    package static func decoder(for library: MediaFormat.Decoder) -> any ImageDecoder {
        switch library {
        case .libraw: RawDecoder()
        case .libvips, .ffmpeg: VipsDecoder()
        }
    }

    /// Starts every decoding library (idempotent), with `threads` worker threads per image.
    package static func start(threadsPerImage threads: Int) throws(DecodeFailure) {
        try Vips.start()
        Vips.setThreads(threads)
    }

    /// The libraries that decide how pixels come out, for the manifest's `generator`.
    package static var libvipsVersion: String { Vips.version }

    /// The version the binary was built as, when its build named one (`tf_build_version`).
    package static var buildVersion: String? { tf_build_version().map { String(cString: $0) } }

    /// Frees a decoding library's per-thread state on a thread it did not create, before the
    /// thread takes other work.
    package static func threadDone() {
        Vips.threadDone()
    }

    /// Empties the libraries' message buffers (before a failure is decoded again alone).
    package static func clearMessages() {
        Vips.clearErrors()
    }

    /// What a failure from a library says when its buffer held nothing (another thread took it).
    package static var noMessage: String { Vips.noMessage }

    /// The pixel size of an encoded image from its header, or why it cannot be opened.
    package static func imageSize(_ bytes: [UInt8]) -> Result<(width: Int, height: Int), DecodeFailure> {
        Vips.imageSize(bytes)
    }
}
