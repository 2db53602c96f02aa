import ThumbframeImaging
package import ThumbframeManifest

/// The thumbframe version written into manifests.
package enum ThumbframeVersion {
    /// The release this source is, or comes after (semantic versioning). scripts/install and
    /// scripts/package count the commits since this line last changed.
    package static let release = "0.5.0"

    /// This build's version: `release`, or between releases `release+N.gHASH` (N commits after
    /// it, at commit HASH), as scripts/install and scripts/package build it, so that every
    /// package built later is an upgrade (dpkg orders 0.5.0 < 0.5.0+1.g… < 0.5.0+2.g… < 0.5.1).
    package static var current: String { build(Decoders.buildVersion) }

    /// `named` when it is `release` or `release+N.gHASH`; otherwise `release`.
    package static func build(_ named: String?) -> String {
        guard let named, named.hasPrefix(release) else { return release }
        let rest = named.dropFirst(release.count)
        if rest.isEmpty { return named }
        let parts = rest.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
        guard rest.first == "+", parts.count == 2, let count = Int(parts[0]), count > 0, parts[1].first == "g",
            parts[1].count >= 5, parts[1].dropFirst().allSatisfy({ $0.isHexDigit && !$0.isUppercase })
        else { return release }
        return named
    }
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
    /// `--version`: `0.5.0 (libvips 8.14.1)`, or between releases `0.5.0+3.gabc1234 (libvips 8.14.1)`.
    package static var withLibraries: String { "\(Manifest.Generator.current.version) (libvips \(Manifest.Generator.current.libvips))" }
}
