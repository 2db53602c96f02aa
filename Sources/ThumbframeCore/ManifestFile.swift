import Foundation
import ThumbframeManifest

/// Reading a manifest from disk for the inspection commands.
public enum ManifestFile {
    /// Opens the top document at `path`; pages are read from beside it when asked for.
    public static func open(_ path: String) throws(ThumbframeError) -> ManifestReader {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(path)
        } catch {
            throw .manifestUnreadable(path: path, reason: error.localizedDescription)
        }
        let directory = (path as NSString).deletingLastPathComponent
        do {
            let document = try ManifestDocument.decode(from: Data(bytes))
            return try ManifestReader(document: document) { page in
                Data(try FileSystem.readFile((directory.isEmpty ? "." : directory) + "/" + page, limit: 1 << 30))
            }
        } catch {
            throw .invalidManifest(path: path, reason: error.localizedDescription)
        }
    }

    /// Reads the whole manifest at `path` (top document and every page) into memory.
    public static func load(_ path: String) throws(ThumbframeError) -> Manifest {
        let reader = try open(path)
        do {
            return try reader.loadAll()
        } catch {
            throw .invalidManifest(path: path, reason: error.localizedDescription)
        }
    }
}

extension ManifestFile {
    /// True when `bytes` are a thumbframe manifest, whole or damaged: JSON whose `format` is
    /// `thumbframe-manifest`, or text that begins the way thumbframe's encoder begins every
    /// manifest (a truncated one). Anything else in OUT_DIR — a web app's `manifest.json` —
    /// is not thumbframe's to replace. (An empty file holds nothing to lose.)
    public static func isThumbframeOutput(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty || bytes.starts(with: Array("{\n  \"failures\" : [".utf8)) { return true }
        struct Header: Decodable {
            var format: String?
        }
        return (try? JSONDecoder().decode(Header.self, from: Data(bytes)))?.format == Manifest.formatName
    }
}
