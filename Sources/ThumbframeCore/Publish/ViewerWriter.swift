import Foundation
import ThumbframeManifest

/// Writes the web viewer (`--viewer`) into OUT_DIR beside the manifest: `index.html`,
/// `thumbframe-viewer.js`, `thumbframe-viewer.css` (each with its `.gz` and `.br` siblings), and `thumbframe-viewer-data.js` (the
/// manifest and its pages as one script, so the page also works from `file://`, where browsers
/// refuse `fetch`), for libraries of up to `maximumInlineItems` items.
///
/// Like everything else thumbframe writes, only its own files: a file of one of these names
/// that does not carry the viewer's marker (someone's own `index.html`) is left alone, and the
/// viewer is not written.
struct ViewerWriter {
    static let marker = "thumbframe viewer"
    static let dataName = "thumbframe-viewer-data.js"
    /// Above this many items the data script is not written (the page then needs a server).
    static let maximumInlineItems = 20_000

    var output: OutputDirectory

    static var assets: [(name: String, text: String)] {
        [
            ("index.html", ViewerAssets.indexHTML), ("thumbframe-viewer.js", ViewerAssets.script),
            ("thumbframe-viewer.css", ViewerAssets.styleSheet),
        ]
    }

    /// The viewer's file names in OUT_DIR that are someone else's: anything at one of these names
    /// (of any size or kind: a link, a directory) that is not a plain file beginning with the
    /// viewer's marker, and a pre-compressed sibling that is not a viewer file compressed.
    func foreignFiles() -> [String] {
        var foreign: [String] = []
        for name in Self.assets.map(\.name) + [Self.dataName] {
            guard let stat = output.root.stat(Array(name.utf8)) else { continue }
            let head = stat.isRegularFile ? output.root.head(Array(name.utf8), count: 512) : []
            if !String(decoding: head, as: UTF8.self).contains(Self.marker) { foreign.append(name) }
        }
        for (name, _) in Self.assets {
            for format in Precompressed.allCases where output.root.stat(Array((name + format.suffix).utf8)) != nil {
                if viewerSibling(name + format.suffix, format) == nil { foreign.append(name + format.suffix) }
            }
        }
        return foreign
    }

    /// Writes what changed. A file in the way that is not the viewer's stops it (`.cannotWrite`,
    /// exit 73, naming the file) before anything of the viewer is written: a page of someone
    /// else's (or one planted) is never published silently beside the manifest. The data script
    /// is written here when it is missing; a new manifest refreshes an existing one as it is
    /// published (`refreshData`).
    func write(manifest: ManifestDocument) throws(ThumbframeError) {
        if let name = foreignFiles().first {
            throw .cannotWrite(
                path: output.path + "/" + name,
                reason: "not thumbframe's viewer; the viewer was not written (move it, or choose another --out)")
        }
        for (name, text) in Self.assets {
            try writeAsset(name, Array((name == "index.html" ? indexHTML(manifest) : text).utf8))
        }
        if manifest.itemCount > Self.maximumInlineItems {
            _ = output.root.removeFile(Array(Self.dataName.utf8))
        } else if output.root.stat(Array(Self.dataName.utf8)) == nil {
            try replace(Self.dataName, with: try data(manifest))
        }
    }

    /// What `validate` finds wrong with the viewer's files in OUT_DIR: one not thumbframe's, one
    /// whose bytes are not what thumbframe writes for this manifest, a sibling that is not its
    /// file compressed. None when there is no viewer.
    func problems(manifest: ManifestDocument) -> [String] {
        let foreign = foreignFiles()
        var problems = foreign.map { "\($0) is not thumbframe's viewer" }
        for (name, text) in Self.assets where !foreign.contains(name) {
            let bytes = Array((name == "index.html" ? indexHTML(manifest) : text).utf8)
            guard let found = try? output.root.readFile(Array(name.utf8), limit: 256 << 20) else { continue }
            if found != bytes { problems.append("\(name) is not the viewer thumbframe writes for this manifest") }
            for format in Precompressed.allCases where output.root.stat(Array((name + format.suffix).utf8)) != nil {
                if viewerSibling(name + format.suffix, format) != bytes {
                    problems.append("\(name)\(format.suffix) is not \(name) compressed")
                }
            }
        }
        // The data script (no siblings): the manifest and pages as written, where there is one.
        if !foreign.contains(Self.dataName), manifest.itemCount <= Self.maximumInlineItems,
            let found = try? output.root.readFile(Array(Self.dataName.utf8), limit: 256 << 20), found != (try? data(manifest))
        {
            problems.append("\(Self.dataName) is not the viewer thumbframe writes for this manifest")
        }
        return problems
    }

    /// Every build or merge that writes a new manifest keeps an existing data script current (or
    /// removes it past `maximumInlineItems`), with or without `--viewer`, so a viewer left in
    /// OUT_DIR never shows a library that is gone. Only a data script of the viewer's own is touched.
    func refreshData(manifest: ManifestDocument) throws(ThumbframeError) {
        // index.html names the first screen's files: the viewer's own is kept current too.
        let index = Array("index.html".utf8)
        if let stat = output.root.stat(index), stat.isRegularFile,
            String(decoding: output.root.head(index, count: 512), as: UTF8.self).contains(Self.marker)
        {
            try writeAsset("index.html", Array(indexHTML(manifest).utf8))
        }
        let name = Array(Self.dataName.utf8)
        guard let stat = output.root.stat(name), stat.isRegularFile,
            String(decoding: output.root.head(name, count: 512), as: UTF8.self).contains(Self.marker)
        else { return }
        if manifest.itemCount > Self.maximumInlineItems {
            _ = output.root.removeFile(name)
        } else {
            try replace(Self.dataName, with: try data(manifest))
        }
    }

    /// `window.thumbframeData = {"manifest": …, "pages": {path: page, …}};` (grid pages too) from the files as
    /// written (JSON is a JavaScript expression).
    private func data(_ manifest: ManifestDocument) throws(ThumbframeError) -> [UInt8] {
        func read(_ path: String) throws(ThumbframeError) -> [UInt8] {
            do {
                return try output.root.readFile(Array(path.utf8), limit: ManifestReader.maximumDocumentBytes).filter { $0 != 0x0A }
            } catch {
                throw .cannotWrite(path: output.path + "/" + Self.dataName, reason: "cannot read \(path): \(error.localizedDescription)")
            }
        }
        var bytes = Array("// \(Self.marker) data: the manifest and its pages for file:// (written by --viewer)\n".utf8)
        bytes += Array("window.thumbframeData = {\"manifest\": ".utf8) + (try read(OutputDirectory.manifestName))
        bytes += Array(", \"pages\": {".utf8)
        var first = true
        for section in manifest.sections {
            for page in section.pages ?? [] {
                for path in [page.path] + (page.grid.map { [$0] } ?? []) {
                    bytes += Array("\(first ? "" : ",")\n\"\(path)\": ".utf8) + (try read(path))
                    first = false
                }
            }
        }
        bytes += Array("}};\n".utf8)
        return bytes
    }

    /// Writes a viewer file and its siblings (the siblings first, as for the manifest: a server
    /// that sends one sends this viewer), each only when its bytes change.
    private func writeAsset(_ name: String, _ bytes: [UInt8]) throws(ThumbframeError) {
        for format in Precompressed.allCases where viewerSibling(name + format.suffix, format) != bytes {
            guard let compressed = format.compress(bytes) else {
                throw .cannotWrite(path: output.path + "/" + name + format.suffix, reason: "cannot compress it")
            }
            try replace(name + format.suffix, with: compressed)
        }
        try replace(name, with: bytes)
    }

    /// Cells of the first screen whose thumbnails index.html preloads: a phone's first screen
    /// holds 20 to 30 of a justified grid's cells, a desktop's about as many.
    static let firstScreenCells = 30

    /// index.html for `manifest`: the viewer's page with, after its preload of manifest.json,
    /// preloads of what its first screen needs next — the first grid page and the smallest
    /// `srcset` thumbnail of its first `firstScreenCells` cells — so the browser fetches them
    /// beside the script instead of one round trip after another (page, script, manifest, grid
    /// page, thumbnails). Written again with every manifest.
    func indexHTML(_ manifest: ManifestDocument) -> String {
        let anchor = "<link rel=\"preload\" href=\"manifest.json\" as=\"fetch\" crossorigin=\"anonymous\">\n"
        guard let reference = manifest.sections.first?.pages?.first, let grid = reference.grid,
            OutputName(grid)?.area == "pages",
            let bytes = try? output.root.readFile(Array(grid.utf8), limit: ManifestReader.maximumPageBytes),
            let page = try? ManifestGridPage.decode(from: Data(bytes)), ViewerAssets.indexHTML.contains(anchor)
        else { return ViewerAssets.indexHTML }
        let recipes = (manifest.settings.srcset ?? []) + [manifest.settings.display].compactMap { $0 }
        var links = "<link rel=\"preload\" href=\"\(grid)\" as=\"fetch\" crossorigin=\"anonymous\">\n"
        for cell in page.items.prefix(Self.firstScreenCells) {
            // Content-addressed names (`thumbs/XX/<hex>.jpg`): nothing to escape, checked.
            guard let thumbnail = recipes.lazy.compactMap({ cell.thumbnails[$0] }).first,
                OutputName(thumbnail.path)?.area == "thumbs"
            else { continue }
            links += "<link rel=\"preload\" href=\"\(thumbnail.path)\" as=\"image\">\n"
        }
        return ViewerAssets.indexHTML.replacingOccurrences(of: anchor, with: anchor + links)
    }

    /// The viewer file a pre-compressed sibling holds, or nil when it is missing, not `format`,
    /// or not the viewer's (no marker).
    private func viewerSibling(_ name: String, _ format: Precompressed) -> [UInt8]? {
        guard let stat = output.root.stat(Array(name.utf8)), stat.isRegularFile,
            let compressed = try? output.root.readFile(Array(name.utf8), limit: 1 << 20),
            let bytes = format.decompress(compressed, limit: 4 << 20),
            String(decoding: bytes.prefix(512), as: UTF8.self).contains(Self.marker)
        else { return nil }
        return bytes
    }

    private func replace(_ name: String, with bytes: [UInt8]) throws(ThumbframeError) {
        if output.root.stat(Array(name.utf8))?.size == bytes.count,
            let existing = try? output.root.readFile(Array(name.utf8), limit: bytes.count), existing == bytes
        {
            return
        }
        do {
            try output.root.writeAtomically(bytes, to: name, durable: false)
        } catch {
            throw .cannotWrite(path: output.path + "/" + name, reason: error.localizedDescription)
        }
    }
}

/// `thumbframe validate`'s look at the web viewer beside a manifest (`ViewerWriter.problems`).
package enum ViewerCheck {
    /// What is wrong with the viewer's files in the folder of the manifest at `path`: none when
    /// there is no viewer, or it is what thumbframe writes for this manifest.
    package static func problems(beside path: String) throws(ThumbframeError) -> [String] {
        let document = try ManifestFile.open(path).document
        let folder = (path as NSString).deletingLastPathComponent
        guard let output = try? OutputDirectory(folder.isEmpty ? "." : folder, create: false) else { return [] }
        return ViewerWriter(output: output).problems(manifest: document)
    }
}
