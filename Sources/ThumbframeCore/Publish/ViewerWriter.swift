import Foundation
import ThumbframeManifest

/// Writes the web viewer (`--viewer`) into OUT_DIR beside the manifest: `index.html` (with its
/// `.gz` and `.br` siblings) — the page with its style sheet, its script and its first screen
/// (the manifest and the first cells) inline, so a phone paints the first screen from the one
/// response — and `thumbframe-viewer-data.js` (the manifest and its pages as one script, so the
/// page also works from `file://`, where browsers refuse `fetch`), for libraries of up to
/// `maximumInlineItems` items.
///
/// Like everything else thumbframe writes, only its own files: a file of one of these names
/// that does not carry the viewer's marker (someone's own `index.html`) is left alone, and the
/// viewer is not written.
struct ViewerWriter {
    static let marker = "thumbframe viewer"
    static let dataName = "thumbframe-viewer-data.js"
    /// Above this many items the data script is not written (the page then needs a server).
    static let maximumInlineItems = 20_000
    /// The files the viewer wrote before its script and style sheet were inlined into
    /// index.html (0.5.0 and earlier): removed, with their siblings, where they are the viewer's.
    static let retired = ["thumbframe-viewer.js", "thumbframe-viewer.css"]

    var output: OutputDirectory

    static var assets: [(name: String, text: String)] { [("index.html", ViewerAssets.indexHTML)] }

    /// The viewer's file names in OUT_DIR that are someone else's: anything at one of these names
    /// (of any size or kind: a link, a directory) that is not a plain file beginning with the
    /// viewer's marker, and a pre-compressed sibling that is not a viewer file compressed.
    func foreignFiles() -> [String] {
        var foreign: [String] = []
        for name in Self.assets.map(\.name) + [Self.dataName]
        where output.root.stat(Array(name.utf8)) != nil && !isViewerFile(name) {
            foreign.append(name)
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
        removeRetired()
        if manifest.itemCount > Self.maximumInlineItems {
            _ = output.root.removeFile(Array(Self.dataName.utf8))
        } else if output.root.stat(Array(Self.dataName.utf8)) == nil {
            try replace(Self.dataName, with: try data(manifest))
        }
    }

    /// Removes the script and style sheet an earlier viewer wrote beside index.html, and their
    /// siblings — each only where it is the viewer's (its marker; a sibling that decompresses to
    /// it): someone's file of that name is left alone.
    private func removeRetired() {
        for name in Self.retired {
            for format in Precompressed.allCases where viewerSibling(name + format.suffix, format) != nil {
                _ = output.root.removeFile(Array((name + format.suffix).utf8))
            }
            if isViewerFile(name) { _ = output.root.removeFile(Array(name.utf8)) }
        }
    }

    /// Whether OUT_DIR's `name` is a plain file of the viewer's: its marker in its first 512 bytes.
    private func isViewerFile(_ name: String) -> Bool {
        guard let stat = output.root.stat(Array(name.utf8)), stat.isRegularFile else { return false }
        return String(decoding: output.root.head(Array(name.utf8), count: 512), as: UTF8.self).contains(Self.marker)
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
        // index.html carries the manifest and the first screen: the viewer's own is kept current
        // too (and, now that it carries them, an earlier viewer's script and style sheet go).
        if isViewerFile("index.html") {
            try writeAsset("index.html", Array(indexHTML(manifest).utf8))
            removeRetired()
        }
        guard isViewerFile(Self.dataName) else { return }
        if manifest.itemCount > Self.maximumInlineItems {
            _ = output.root.removeFile(Array(Self.dataName.utf8))
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

    /// The cells index.html carries for its first screen: a phone's first screen holds 20 to 30
    /// of a justified grid's cells, a desktop's about as many; two screens' worth.
    static let firstScreenCells = 60
    /// The largest manifest.json index.html carries (a library of about 150 000 photos: with
    /// the grid's geometry, 100 000 are 588 KB, 121 KB with Brotli); past it the page fetches
    /// the manifest (preloaded as the page is parsed).
    static let maximumInlineManifestBytes = 1 << 20

    /// index.html for `manifest`: the viewer's page with its style sheet and script inline, the
    /// library's name as its title and heading, and its first screen — manifest.json and the
    /// first `firstScreenCells` cells of the first grid page — as JSON the script reads before
    /// anything is fetched: the page, then the first screen's thumbnails, no round trip between.
    /// Written again with every manifest.
    func indexHTML(_ manifest: ManifestDocument) -> String {
        let preload = "<link rel=\"preload\" href=\"manifest.json\" as=\"fetch\" crossorigin=\"anonymous\">\n"
        var html = ViewerAssets.indexHTML
            .replacingOccurrences(
                of: "<style>/* thumbframe-viewer.css */</style>", with: "<style>\n" + ViewerAssets.styleSheet + "\n</style>"
            )
            .replacingOccurrences(
                of: "<script>/* thumbframe-viewer.js */</script>", with: "<script>\n" + ViewerAssets.script + "\n</script>")
        let name = Self.escapedHTML(Self.libraryName(manifest))
        html = html.replacingOccurrences(
            of: "<title>Photos</title>",
            with: "<title>\(name) · \(manifest.itemCount) \(manifest.itemCount == 1 ? "item" : "items")</title>")
        html = html.replacingOccurrences(of: "<h1 id=\"tf-title\">Photos</h1>", with: "<h1 id=\"tf-title\">\(name)</h1>")
        guard let first = firstScreen(manifest) else {
            return html.replacingOccurrences(of: "<!-- the first screen -->\n", with: "")
        }
        return html.replacingOccurrences(of: preload, with: "")
            .replacingOccurrences(
                of: "<!-- the first screen -->\n", with: "<script type=\"application/json\" id=\"tf-first\">\(first)</script>\n")
    }

    /// `{"manifest": …, "grid": PATH, "cells": GRID PAGE, "picture": …}`: manifest.json as
    /// written, the first grid page's first cells and the picture a phone shows largest, every `<` written
    /// `\u003c` so that no name in them ends the script element. nil when the manifest is too
    /// large to carry or a file cannot be read.
    private func firstScreen(_ manifest: ManifestDocument) -> String? {
        guard
            let document = try? output.root.readFile(
                Array(OutputDirectory.manifestName.utf8), limit: Self.maximumInlineManifestBytes + 1),
            document.count <= Self.maximumInlineManifestBytes
        else { return nil }
        var json = "{\"manifest\": " + String(decoding: document, as: UTF8.self)
        // The first cells alone (a grid page is written a cell a line), as a frontend reads a screen.
        if let reference = manifest.sections.first?.pages?.first, let grid = reference.grid, OutputName(grid)?.area == "pages",
            let bytes = try? output.root.readFile(Array(grid.utf8), limit: ManifestReader.maximumPageBytes),
            let first = ManifestGridPage.cells(
                at: 0..<min(reference.count, Self.firstScreenCells), from: Data(bytes), expected: reference.count),
            let cells = try? ManifestGridPage(items: first).encoded()
        {
            json += ", \"grid\": \"\(grid)\", \"cells\": " + String(decoding: cells, as: UTF8.self)
            if let picture = inlinePicture(manifest, page: reference, cells: first) {
                json += ", \"picture\": " + picture
            }
        }
        return (json + "}").replacingOccurrences(of: "<", with: "\\u003c")
    }

    /// The largest thumbnail index.html carries (its data: URL a third larger): a 512-px JPEG of a
    /// photo is 15 to 50 KB.
    static let maximumInlinePictureBytes = 64 << 10
    /// Where a phone's first row begins below the top of the page, in points: the library's name
    /// (12 + 25.2) and the grid's padding (4), and the first section's title when it is not the
    /// library's name (40, grid.js's TITLE_HEIGHT) — thumbframe-viewer.css's sizes.
    static let headerHeight = (named: 41.2, titled: 81.2)

    /// `{"item": N, "path": P, "src": "data:…"}`: the thumbnail of the picture a phone (the
    /// `phone` viewport) shows largest on its first screen — the page's rows as the viewer lays
    /// them out (its `aspects`, `JustifiedRows`), among those whose cells index.html carries, the
    /// picture covering most of the screen, the rendition its srcset takes there — so the page
    /// paints it with no round trip after its own (what a browser counts as its largest
    /// contentful paint). nil without a phone viewport, srcset or aspects, or when that
    /// thumbnail is larger than `maximumInlinePictureBytes`.
    private func inlinePicture(
        _ manifest: ManifestDocument, page: Manifest.PageReference, cells: [ManifestGridPage.Cell]
    ) -> String? {
        let settings = manifest.settings
        guard let phone = settings.viewports.first(where: { $0.name == "phone" }), let family = settings.srcset,
            let section = manifest.sections.first, let codes = page.aspects.flatMap(GridGeometry.codes)
        else { return nil }
        let shown = ManifestGridPage.shown(cells)
        let rows = JustifiedRows.page(aspects: codes.map(GridGeometry.aspect(code:)), windowWidth: phone.width).rows
            .prefix { $0.cells.upperBound <= shown.count }
        var top = section.title == Self.libraryName(manifest) ? Self.headerHeight.named : Self.headerHeight.titled
        var largest: (area: Double, cell: ManifestGridPage.Cell, width: Double)?
        for row in rows where top < phone.height {
            let seen = min(top + row.height, phone.height) - top
            for (k, index) in row.cells.enumerated() where row.widths[k] * seen > (largest?.area ?? 0) {
                largest = (row.widths[k] * seen, shown[index], row.widths[k])
            }
            top += row.height + JustifiedRows.gap
        }
        guard let (_, cell, width) = largest else { return nil }
        let renditions = family.compactMap { cell.thumbnails[$0] }
        let need = (width / Layout.tileStretch).rounded(.up) * phone.scale
        guard let chosen = renditions.first(where: { Double($0.width) >= need }) ?? renditions.last,
            OutputName(chosen.path)?.area == "thumbs",
            let type = Self.imageTypes[(chosen.path as NSString).pathExtension.lowercased()],
            let bytes = try? output.root.readFile(Array(chosen.path.utf8), limit: Self.maximumInlinePictureBytes)
        else { return nil }
        return "{\"item\": \(cell.item), \"path\": \"\(chosen.path)\", \"src\": \"data:\(type);base64,"
            + Data(bytes).base64EncodedString() + "\"}"
    }
    static let imageTypes = ["jpg": "image/jpeg", "webp": "image/webp", "avif": "image/avif", "png": "image/png"]

    /// The library's name, as the viewer shows it: the root folder's section title (the source
    /// directory's name), the one section's, or "Photos".
    static func libraryName(_ manifest: ManifestDocument) -> String {
        if let root = manifest.sections.first(where: { $0.name == "." }) { return root.title }
        return manifest.sections.count == 1 ? manifest.sections[0].title : "Photos"
    }

    static func escapedHTML(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
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
