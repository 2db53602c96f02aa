import Foundation
import ThumbframeManifest

/// The files a publish writes: pages under their content address, and the top document
/// atomically, each only when its bytes change, and beside each its pre-compressed siblings
/// (`.gz`, `.br`: `Precompressed`).
extension Publisher {
    /// The pages of the published manifest that are still the files written, each with its
    /// pre-compressed siblings (a page without them, from before them or deleted, is written again).
    /// With `hashing` (`--verify`), a page whose file is another (a restored cache, a copy) is
    /// intact when its bytes still hash to its name.
    static func intactPages(_ published: StateIndex.Published, output: OutputDirectory, hashing: Bool = false) -> Set<String> {
        Set(
            published.pages.filter { page, fingerprint in
                (output.stat(file: page)?.fingerprint == fingerprint || (hashing && hashesToItsName(page, output: output)))
                    && Precompressed.allCases.allSatisfy { (output.stat(file: page + $0.suffix)?.size ?? 0) > 0 }
            }.keys)
    }

    /// Whether a page's bytes hash to its content address.
    static func hashesToItsName(_ page: String, output: OutputDirectory) -> Bool {
        guard let name = OutputName(page), let bytes = output.read(file: page) else { return false }
        return bytes.withUnsafeBytes(Digest.sha256).hasPrefix(name.file.prefix { $0 != "." })
    }

    /// Whether `manifest.json`'s pre-compressed siblings are there (not checked: their bytes).
    static func manifestSiblingsPresent(_ output: OutputDirectory) -> Bool {
        Precompressed.allCases.allSatisfy { (output.root.stat(Array((OutputDirectory.manifestName + $0.suffix).utf8))?.size ?? 0) > 0 }
    }

    /// Writes a page (or a grid page) under its content address unless a file of that name holds
    /// those bytes (its hash is its name: a page changed behind thumbframe's back is written
    /// again); returns its path.
    static func writePage(encoded: () throws -> Data, to output: OutputDirectory) throws(ThumbframeError) -> String {
        let data: Data
        do {
            data = try encoded()
        } catch {
            throw .cannotWrite(path: output.path + "/pages", reason: "cannot encode a page: \(error)")
        }
        let sha256 = data.withUnsafeBytes(Digest.sha256)
        let path = OutputName.path(area: "pages", hash: sha256, extension: "json")
        let bytes = Array(data)
        do {
            if let stat = output.stat(file: path), stat.isRegularFile, stat.size == data.count,
                output.read(file: path).map({ $0.elementsEqual(data) }) == true
            {
                // Its siblings are named after it: one there is these bytes compressed (validate
                // checks), one missing is written.
                for format in Precompressed.allCases where !((output.stat(file: path + format.suffix)?.size ?? 0) > 0) {
                    try writeSibling(format, of: bytes, to: path + format.suffix, output: output)
                }
                return path
            }
            // The siblings first: a page's name on disk means its siblings are there.
            for format in Precompressed.allCases { try writeSibling(format, of: bytes, to: path + format.suffix, output: output) }
            try output.write(file: path, bytes)
        } catch {
            throw .cannotWrite(path: output.path + "/" + path, reason: error.localizedDescription)
        }
        return path
    }

    /// Writes `bytes` compressed as `format` to the page sibling `path`.
    private static func writeSibling(_ format: Precompressed, of bytes: [UInt8], to path: String, output: OutputDirectory)
        throws(FileSystemError)
    {
        guard let compressed = format.compress(bytes) else { throw .posix(ENOMEM) }
        try output.write(file: path, compressed)
    }

    /// The files a page brings: itself and its pre-compressed siblings.
    static func pageFiles(_ path: String) -> [String] {
        [path] + Precompressed.allCases.map { path + $0.suffix }
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
        let bytes = Array(data)
        // Compared only when the sizes agree (a damaged manifest.json may be any size).
        let name = Array(OutputDirectory.manifestName.utf8)
        let unchanged =
            output.root.stat(name)?.size == data.count
            && (try? output.root.readFile(name, limit: data.count)).map { $0.elementsEqual(data) } == true
        do {
            if !unchanged {
                try output.root.syncFileSystem()
                try output.root.writeAtomically(bytes, to: OutputDirectory.manifestName, durable: true)
            }
            // The siblings after the manifest they compress, each rewritten unless it is these
            // bytes compressed: a build killed in between leaves the last manifest's siblings
            // (whose pages are still there: pruning comes later), which the next build replaces
            // whether or not the manifest changes again.
            for format in Precompressed.allCases {
                let sibling = Array((OutputDirectory.manifestName + format.suffix).utf8)
                guard let compressed = format.compress(bytes) else { throw FileSystemError.posix(ENOMEM) }
                let same =
                    output.root.stat(sibling)?.size == compressed.count
                    && (try? output.root.readFile(sibling, limit: compressed.count)) == compressed
                if !same { try output.root.writeAtomically(compressed, to: String(decoding: sibling, as: UTF8.self), durable: false) }
            }
        } catch {
            throw .cannotWrite(path: path, reason: error.localizedDescription)
        }
        return (!unchanged, sha256)
    }
}
