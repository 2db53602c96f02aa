internal import CThumbframeShim
internal import CVips
import Foundation
package import ThumbframeManifest

extension VipsDecoder {
    /// Writes the DeepZoom pyramid of the image in `file` (a format libvips decodes whole;
    /// `header` its probe) at full resolution, upright, sRGB and without metadata: `path`.dzi and
    /// `path`_files/ (see `tf_dzsave`). The decode stops after `remaining` seconds (what the
    /// file's `--decode-timeout` has left; 0: none) or at the build's cancellation; whatever it
    /// wrote before a failure is the caller's to remove.
    package static func writeTiles(
        _ file: UnsafeRawBufferPointer, header: ImageHeader, path: String, settings: Manifest.TileSettings, limits: ResourceLimits,
        remaining: Double, cancellation: CancellationFlag?
    ) -> Result<Void, DecodeFailure> {
        func write(_ raw: UnsafeRawBufferPointer) -> Result<Void, DecodeFailure> {
            var stopped: Int32 = 0
            let format = settings.format == .webp ? TF_FORMAT_WEBP : TF_FORMAT_JPEG
            let profile = header.iccProfile ?? []
            let result = tf_dzsave(
                raw.baseAddress, raw.count, Int32(VIPS_FAIL_ON_TRUNCATED.rawValue), Int32(header.orientation), header.profileIntent,
                profile, profile.count, path, Int32(format.rawValue), Int32(settings.quality), Int32(settings.tileSize),
                Int32(settings.overlap), remaining, cancellation?.pointer, &stopped)
            guard result != 0 else { return .success(()) }
            if var problem = DecodeFailure.stopped(stopped, limits: limits) {
                Vips.clearErrors()
                problem.reason = "deep-zoom tiles: " + problem.reason
                return .failure(problem)
            }
            return .failure(.vips(.encode, "deep-zoom tiles: "))
        }
        // As for thumbnails: a PNG without its text chunks.
        let bounded = MetadataBounds.pngWithoutText(file)
        return bounded.map { $0.withUnsafeBytes(write) } ?? write(file)
    }
}
