import Foundation
import ThumbframeManifest

/// Reading a manifest from disk for the inspection commands.
public enum ManifestFile {
    /// Reads and decodes `path`, telling an unreadable file from one that is not a valid manifest.
    public static func load(_ path: String) throws(ThumbframeError) -> Manifest {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch {
            throw .manifestUnreadable(path: path, reason: error.localizedDescription)
        }
        do {
            return try Manifest.decode(from: Data(bytes))
        } catch {
            throw .invalidManifest(path: path, reason: error.localizedDescription)
        }
    }
}
