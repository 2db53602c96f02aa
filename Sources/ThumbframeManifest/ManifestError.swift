public import Foundation

/// Errors of the manifest layer: reading manifests and parsing option values.
public enum ManifestError: LocalizedError, Equatable, Sendable {
    /// The bytes are not JSON of the manifest's shape.
    case malformed(String)
    /// The JSON is a manifest of another kind or version.
    case unsupported(format: String, version: Int)
    /// A `--thumb` value that cannot be parsed.
    case invalidThumbnailSpec(String, String)
    /// A `--viewport` value that cannot be parsed.
    case invalidViewport(String, String)
    /// A page the top document names cannot be read or does not fit it.
    case badPage(path: String, reason: String)
    /// The manifest, or a page it names, is not there (deleted, not yet downloaded, a wrong path).
    case missing(path: String)
    /// The manifest file is there but cannot be read (permission, I/O): not a question of its content.
    case unreadable(path: String, reason: String)
    /// An index (or section) the manifest does not have: the caller's mistake, not the file's.
    case outOfRange(IndexMapError)

    /// The one-line sentence shown to the user.
    public var errorDescription: String? {
        switch self {
        case .malformed(let why):
            "not a thumbframe manifest: \(why)"
        case .unsupported(let format, let version):
            "unsupported manifest: format '\(format)' version \(version) "
                + "(expected '\(Manifest.formatName)' version \(Manifest.readableVersions.lowerBound)–\(Manifest.currentVersion))"
        case .invalidThumbnailSpec(let text, let why):
            "invalid thumbnail recipe '\(text)': \(why)"
        case .invalidViewport(let text, let why):
            "invalid viewport '\(text)': \(why)"
        case .badPage(let path, let why):
            "page \(path): \(why)"
        case .missing(let path):
            "\(path): no such file"
        case .unreadable(let path, let why):
            "cannot read \(path): \(why)"
        case .outOfRange(let error):
            error.localizedDescription
        }
    }
}
