import Foundation
import ThumbframeManifest

/// The files a publish writes: pages under their content address, and the top document
/// atomically, each only when its bytes change.
extension Publisher {
    /// The pages of the published manifest that are still the files written.
    static func intactPages(_ published: StateIndex.Published, output: OutputDirectory) -> Set<String> {
        Set(published.pages.filter { output.stat(file: $0.key)?.fingerprint == $0.value }.keys)
    }

    /// Writes a page under its content address unless a file of that name holds those bytes
    /// (its hash is its name: a page changed behind thumbframe's back is written again);
    /// returns its path.
    static func writePage(_ page: ManifestPage, to output: OutputDirectory) throws(ThumbframeError) -> String {
        let data: Data
        do {
            data = try page.encoded()
        } catch {
            throw .cannotWrite(path: output.path + "/pages", reason: "cannot encode a page: \(error)")
        }
        let sha256 = data.withUnsafeBytes(Digest.sha256)
        let path = OutputName.path(area: "pages", hash: sha256, extension: "json")
        if let stat = output.stat(file: path), stat.isRegularFile, stat.size == data.count,
            output.read(file: path).map({ $0.elementsEqual(data) }) == true
        {
            return path
        }
        do {
            try output.write(file: path, Array(data))
        } catch {
            throw .cannotWrite(path: output.path + "/" + path, reason: error.localizedDescription)
        }
        return path
    }

    /// Writes the top document only when its bytes change: pages and thumbnails are flushed to
    /// disk first, then it goes through a temporary file, fsync and rename, so a reader (or a
    /// crash at any moment) sees the old top document or the new one, and every page and
    /// thumbnail it names exists.
    /// Returns whether it wrote, and the manifest's SHA-256.
    static func writeManifest(_ manifest: ManifestDocument, to output: OutputDirectory)
        throws(ThumbframeError) -> (written: Bool, sha256: String)
    {
        let path = output.path + "/" + OutputDirectory.manifestName
        let data: Data
        do {
            data = try manifest.encoded()
        } catch {
            throw .cannotWrite(path: path, reason: "cannot encode manifest: \(error)")
        }
        let sha256 = data.withUnsafeBytes(Digest.sha256)
        // Compared only when the sizes agree (a damaged manifest.json may be any size).
        let name = Array(OutputDirectory.manifestName.utf8)
        if output.root.stat(name)?.size == data.count, let existing = try? output.root.readFile(name, limit: data.count),
            existing.elementsEqual(data)
        {
            return (false, sha256)
        }
        do {
            try output.root.syncFileSystem()
            try output.root.writeAtomically(Array(data), to: OutputDirectory.manifestName, durable: true)
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        return (true, sha256)
    }
}
