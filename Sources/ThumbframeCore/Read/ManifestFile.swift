import Foundation
package import ThumbframeManifest

/// Reading a manifest from disk for the inspection commands.
package enum ManifestFile {
    /// Opens the top document at `path` (a link the user names is resolved); pages are read from
    /// beside it when asked for, through `ContainedDirectory` (relative, no link followed,
    /// size-limited), as every reader does. With `verifyingPages`, a page whose bytes do not
    /// hash to its name (changed after it was written) is an error when it is read.
    package static func open(_ path: String, verifyingPages: Bool = false) throws(ThumbframeError) -> ManifestReader {
        let (folder, data) = try read(path)
        do {
            let document = try ManifestDocument.decode(from: data)
            return try ManifestReader(document: document) { page in
                let bytes = try folder.read(page, limit: ManifestReader.maximumPageBytes)
                if verifyingPages, let name = OutputName(page),
                    !bytes.withUnsafeBytes(Digest.sha256).hasPrefix(String(name.file.prefix(32)))
                {
                    throw PageChanged()
                }
                return bytes
            }
        } catch {
            throw .invalidManifest(path: path, reason: error.localizedDescription)
        }
    }

    /// The folder of the manifest at `path`, where its pages and thumbnails are read.
    package static func folder(_ path: String) throws(ThumbframeError) -> ContainedDirectory {
        do {
            return try ContainedDirectory.locate(path).0
        } catch {
            throw .manifestUnreadable(path: path, reason: error.localizedDescription)
        }
    }

    /// The top document's bytes (at most `ManifestReader.maximumDocumentBytes`) and its folder.
    private static func read(_ path: String) throws(ThumbframeError) -> (ContainedDirectory, Data) {
        let located: (ContainedDirectory, String)
        do {
            located = try ContainedDirectory.locate(path)
        } catch {
            throw .manifestUnreadable(path: path, reason: error.localizedDescription)
        }
        do {
            return (located.0, try located.0.read(located.1, limit: ManifestReader.maximumDocumentBytes))
        } catch .tooLarge(let size, let limit) {
            throw .invalidManifest(path: path, reason: "the top document is \(size) bytes, over the \(limit) a reader accepts")
        } catch {
            // An OUT_DIR given where its manifest is meant: say which file to give.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                let inside = (path.hasSuffix("/") ? path : path + "/") + OutputDirectory.manifestName
                throw .manifestUnreadable(path: path, reason: "a directory; give its manifest: \(inside)")
            }
            throw .manifestUnreadable(path: path, reason: error.localizedDescription)
        }
    }

    /// Reads the whole manifest at `path` (top document and every page) into memory.
    package static func load(_ path: String) throws(ThumbframeError) -> Manifest {
        let reader = try open(path)
        do {
            return try reader.loadAll()
        } catch {
            throw .invalidManifest(path: path, reason: error.localizedDescription)
        }
    }
}

/// A page whose bytes are not those its content-addressed name was made from.
struct PageChanged: LocalizedError {
    var errorDescription: String? { "its bytes do not match its name (changed after it was written)" }
}

extension ManifestFile {
    /// True when `bytes` are a thumbframe manifest, whole or damaged: JSON whose `format` is
    /// `thumbframe-manifest`, or text that begins the way thumbframe's encoder begins every
    /// manifest (a truncated one). Anything else in OUT_DIR — a web app's `manifest.json` —
    /// is not thumbframe's to replace. (An empty file holds nothing to lose.)
    package static func isThumbframeOutput(_ bytes: [UInt8]) -> Bool {
        if bytes.isEmpty || bytes.starts(with: Array("{\n  \"failures\" : [".utf8)) { return true }
        struct Header: Decodable {
            var format: String?
        }
        return (try? JSONDecoder().decode(Header.self, from: Data(bytes)))?.format == Manifest.formatName
    }
}
