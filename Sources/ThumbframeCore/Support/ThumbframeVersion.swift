import ThumbframeImaging
package import ThumbframeManifest

/// The thumbframe version written into manifests.
package enum ThumbframeVersion {
    /// Semantic version of this build of thumbframe.
    package static let current = "0.4.0"
}

extension Manifest.Generator {
    /// This thumbframe and the libvips it runs on (which decides what it can decode and how the
    /// pixels come out): the one identity written into manifests, kept in the state index, and
    /// printed by `--version`.
    package static var current: Manifest.Generator {
        Manifest.Generator(version: ThumbframeVersion.current, libvips: Decoders.libvipsVersion)
    }
}

extension ThumbframeVersion {
    /// `--version`: `0.4.0 (libvips 8.14.1)`.
    package static var withLibraries: String { "\(Manifest.Generator.current.version) (libvips \(Manifest.Generator.current.libvips))" }
}
