import Foundation
import ThumbframeImaging
package import ThumbframeManifest

/// `thumbframe validate`: the contract checked in code, beyond what a schema can say. Items are
/// checked one at a time as pages are read, so validating a library of any size holds one page
/// (and the set of paths seen, for duplicates) in memory.
package enum ManifestValidator {
    /// Every problem of the manifest at `path` (top document and every page), one sentence
    /// each; empty when it is valid. A top document that cannot be read or decoded gives that
    /// one problem; a page that cannot, one problem for that page.
    package static func problems(at path: String, limit: Int = 1000) throws(ThumbframeError) -> [String] {
        let reader: ManifestReader
        do {
            reader = try ManifestFile.open(path, verifyingPages: true)
        } catch .invalidManifest(_, let reason) {
            return [reason]
        }
        let folder = try ManifestFile.folder(path)
        let document = reader.document
        let header = Manifest(
            generator: document.generator, settings: document.settings, sections: document.sections, items: [],
            failures: document.failures)
        var checker = Checker(header, thumbnails: folder, limit: limit)
        let total = Manifest.itemTotal(document.sections)
        if document.itemCount != total { checker.report("itemCount is \(document.itemCount), but the sections hold \(total)") }
        for (number, section) in document.sections.enumerated() where checker.hasRoom {
            var next = 0
            for reference in section.pages ?? [] where checker.hasRoom {
                if reference.start != next {
                    checker.report("sections[\(number)] has a page from item \(reference.start), expected \(next)")
                }
                next = reference.start.addingReportingOverflow(max(0, reference.count)).partialValue
                if !Manifest.isContainedRelativePath(reference.path) || OutputName(reference.path)?.area != "pages" {
                    checker.report("sections[\(number)] page '\(reference.path)' is not a page path")
                    continue
                }
                do {
                    let page = try reader.page(reference)
                    for item in page.items {
                        checker.check(item.item(index: section.start.addingReportingOverflow(item.item).partialValue, section: number))
                    }
                    if let grid = reference.grid {
                        for problem in gridProblems(grid, of: page, reference, reader: reader, folder: folder) {
                            checker.report("sections[\(number)] \(problem)")
                        }
                    }
                } catch {
                    checker.report(error.localizedDescription)
                }
                for problem in siblingProblems(reference.path, in: folder) { checker.report(problem) }
            }
            if next != section.count { checker.report("sections[\(number)]'s pages hold \(next) items, the section \(section.count)") }
            checker.closeSection(number)
        }
        for problem in document.timelineProblems() { checker.report(problem) }
        if checker.hasRoom, checker.counted != document.summary {
            checker.report("summary does not match the items of the pages")
        }
        for problem in siblingProblems(OutputDirectory.manifestName, in: folder) { checker.report(problem) }
        return checker.finish()
    }

    /// A page's grid page: a page path, readable, and the cells its page's items make (the
    /// same paths, shapes, placeholders and thumbnails), with its siblings.
    static func gridProblems(
        _ grid: String, of page: ManifestPage, _ reference: Manifest.PageReference, reader: ManifestReader,
        folder: ContainedDirectory
    ) -> [String] {
        guard Manifest.isContainedRelativePath(grid), OutputName(grid)?.area == "pages" else {
            return ["grid page '\(grid)' is not a page path"]
        }
        let cells: ManifestGridPage
        do {
            cells = try reader.gridPage(reference)
        } catch {
            return [error.localizedDescription]
        }
        let expected = ManifestGridPage(page, settings: reader.document.settings)
        var problems = siblingProblems(grid, in: folder)
        if let (cell, _) = zip(cells.items, expected.items).first(where: { $0 != $1 }) {
            problems.insert("grid page \(grid) differs from page \(reference.path) at item \(cell.item)", at: 0)
        }
        // Its geometry, as the reference gives it: the shown cells' aspects, every viewport's
        // rows and height, the months (where the library is ordered by date).
        if reference.aspects != nil || reference.rows != nil || reference.heights != nil {
            let settings = reader.document.settings
            var described = reference
            described.describe(cells, viewports: settings.viewports, months: settings.order == .date)
            for (name, matches) in [
                ("aspects", described.aspects == reference.aspects), ("rows", described.rows == reference.rows),
                ("heights", described.heights == reference.heights), ("months", described.months == reference.months),
            ] where !matches {
                problems.append("page \(reference.path): \(name) is not its grid page's geometry")
            }
        }
        return problems
    }

    /// The pre-compressed siblings of `path` (`.gz`, `.br`) that are there but do not hold its
    /// bytes: a server would send them for it. (One missing is no problem: servers then send
    /// the file itself.)
    static func siblingProblems(_ path: String, in folder: ContainedDirectory) -> [String] {
        guard let original = try? folder.read(path, limit: ManifestReader.maximumDocumentBytes) else { return [] }
        return Precompressed.allCases.compactMap { format in
            guard let sibling = try? folder.read(path + format.suffix, limit: ManifestReader.maximumDocumentBytes) else { return nil }
            let bytes = format.decompress(Array(sibling), limit: original.count)
            return bytes.map({ $0.elementsEqual(original) }) == true ? nil : "\(path)\(format.suffix) is not \(path) compressed"
        }
    }

    /// Every problem of a manifest in memory; thumbnails are looked for under `thumbnailRoot`
    /// (the manifest's directory), or not at all when it is nil.
    package static func problems(of manifest: Manifest, thumbnailRoot: String?, limit: Int = 1000) -> [String] {
        var header = manifest
        header.items = []
        var checker = Checker(header, thumbnails: thumbnailRoot.flatMap { try? ContainedDirectory($0) }, limit: limit)
        let total = Manifest.itemTotal(manifest.sections)
        if total != manifest.items.count { checker.report("sections count \(total) items, but there are \(manifest.items.count)") }
        for (position, item) in manifest.items.enumerated() where checker.hasRoom {
            checker.check(item, at: position)
        }
        return checker.finish()
    }

    /// Checks items one at a time against the header (settings, sections, failures): the
    /// manifest's own consistency (`Manifest.ItemConsistency`), then what only the tool can
    /// check (recipes, viewports, layouts recomputed, thumbnail files).
    struct Checker {
        private let manifest: Manifest
        private let thumbnails: ContainedDirectory?
        private let limit: Int
        private var problems: [String]
        private var consistency: Manifest.ItemConsistency
        private let failurePaths: Set<[UInt8]>
        private let recipeNames: Set<String>
        private let viewportNames: Set<String>
        /// The counts of the items checked so far (to compare with a top document's summary).
        private(set) var counted = ManifestDocument.Summary()
        /// The stack entries seen, by section and position (each section's checked when it is
        /// closed, or by `finish`: a paged manifest holds one section's at a time).
        private var stacks: [Int: [Int: Manifest.Stack]] = [:]

        init(_ header: Manifest, thumbnails: ContainedDirectory?, limit: Int) {
            manifest = header
            self.thumbnails = thumbnails
            self.limit = limit
            // The header's own problems (format, sections, failures) come first.
            problems = header.headerProblems(limit: limit)
            consistency = Manifest.ItemConsistency(sections: header.sections)
            failurePaths = Set(header.failures.map(\.pathBytes))
            let recipes = header.settings.thumbnails
            let viewports = header.settings.viewports
            recipeNames = Set(recipes.map(\.name))
            viewportNames = Set(viewports.map(\.name))
            if recipeNames.count != recipes.count { report("settings.thumbnails has a name twice") }
            if viewportNames.count != viewports.count { report("settings.viewports has a name twice") }
            if header.settings.frontend != FrontendConstants.of(header.settings.preset) {
                report("settings.frontend does not match preset \(header.settings.preset.rawValue)")
            }
            if failurePaths.count != header.failures.count { report("failures has a path twice") }
        }

        var hasRoom: Bool { problems.count < limit }

        mutating func report(_ problem: String) {
            if problems.count < limit { problems.append(problem) }
        }

        /// Checks one item; with `position` (a manifest in memory), its `index` must be that.
        mutating func check(_ item: Manifest.Item, at position: Int? = nil) {
            counted.add(item)
            for problem in consistency.problems(of: item, at: position) { report(problem) }
            if let problem = Self.placeProblem(item.place, manifest.settings.locations) { report("items[\(item.index)].place \(problem)") }
            if let stack = item.stack {
                stacks[item.section, default: [:]][item.item] = stack
                if item.kind != .photo { report("items[\(item.index)] is a \(item.kind.rawValue) in a stack: only photos are stacked") }
            }
            let index = item.index
            if failurePaths.contains(item.pathBytes) { report("'\(item.path)' is both an item and a failure") }
            // The recipes', and the zoom renditions and tiles the settings give a photo of its size.
            let sized = item.image.width > 0 && item.image.height > 0
            let extras = sized ? manifest.settings.zoomExtras(image: item.image, kind: item.kind) : (rungs: [], tiles: false)
            var expectedNames = recipeNames.union(extras.rungs.map(\.name))
            if extras.tiles { expectedNames.insert(Manifest.tilesName) }
            if Set(item.thumbnails.keys) != expectedNames {
                report("items[\(index)] has thumbnails \(item.thumbnails.keys.sorted()), expected \(expectedNames.sorted())")
            }
            for rung in manifest.settings.ladder?.renditions ?? [] {
                guard let thumbnail = item.thumbnails[rung.name] else { continue }
                if thumbnail.width > item.image.width || thumbnail.height > item.image.height {
                    report("items[\(index)].thumbnails.\(rung.name) is larger than the original")
                }
            }
            if Set(item.layouts.keys) != viewportNames {
                report("items[\(index)] has layouts \(item.layouts.keys.sorted()), expected \(viewportNames.sorted())")
            }
            let image = item.image
            if image.width > 0, image.height > 0 {
                // A video's display matrix turns it as orientations 5–8 turn a photo.
                let swapped = Orientation.swapsAxes(image.orientation) != ((item.video?.rotation ?? 0) % 180 == 90)
                if (swapped ? (image.storedHeight, image.storedWidth) : (image.storedWidth, image.storedHeight))
                    != (image.width, image.height)
                {
                    report(
                        "items[\(index)].image size does not follow from its stored size, orientation \(image.orientation)"
                            + " and rotation \(item.video?.rotation ?? 0)")
                }
                let size = manifest.settings.layoutSize(image: image, kind: item.kind, thumbnails: item.thumbnails)
                for viewport in manifest.settings.viewports where size.width > 0 && size.height > 0 {
                    guard let layout = item.layouts[viewport.name] else { continue }
                    let expected = manifest.settings.layout(image: image, kind: item.kind, thumbnails: item.thumbnails, in: viewport)
                    if layout != expected { report("items[\(index)].layouts.\(viewport.name) is not what the layout engine gives") }
                }
            }
            guard let thumbnails else { return }
            for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key }) where Manifest.isThumbnailPath(thumbnail.path) {
                if let problem = ManifestValidator.checkThumbnail(thumbnail, in: thumbnails) ?? checkPyramid(thumbnail) {
                    report("items[\(index)].thumbnails.\(name) \(thumbnail.path): \(problem)")
                }
            }
            for file in item.media.videoFiles where Manifest.isThumbnailPath(file.path) {
                // Hashed a block at a time: a rendition is as long as its video. (A Motion Photo's MP4 too.)
                let found = try? thumbnails.withFile(file.path) { fd, size in (size, Digest.sha256(fd: fd, size: size)) }
                if found?.0 != file.bytes || found?.1 != file.sha256 {
                    report("items[\(index)].\(file.key) \(file.path): \(found == nil ? "missing" : "not the recorded bytes")")
                }
            }
        }

        /// Checks the stacks of a section whose items have all been seen, and forgets them.
        mutating func closeSection(_ number: Int) {
            guard let entries = stacks.removeValue(forKey: number) else { return }
            for problem in Self.stackProblems([number: entries]) { report(problem) }
        }

        mutating func finish() -> [String] {
            for problem in Self.stackProblems(stacks) { report(problem) }
            return problems
        }

        /// A place must be of the precision the settings ask, and only with them: a city's name
        /// and country, a region's name and country, or the cell of the grid whose centre it is.
        static func placeProblem(_ place: Manifest.Place?, _ locations: Manifest.Locations?) -> String? {
            guard let place else { return nil }
            guard abs(place.latitude) <= 90, abs(place.longitude) <= 180 else { return "is not on the globe" }
            switch locations ?? .none {
            case .none:
                return "is published, but settings.locations asks for none"
            case .city:
                return place.name == nil || place.country == nil || place.cell != nil ? "is not a city" : nil
            case .region:
                return place.region == nil || place.country == nil || place.name != nil || place.cell != nil ? "is not a region" : nil
            case .cell(let km):
                let expected = Manifest.Place.cell(latitude: place.latitude, longitude: place.longitude, km: km)
                return place != expected ? "is not the centre of a \(km) km cell" : nil
            }
        }

        /// Each stack entry names a cover whose `members` list it, with the same reason; each
        /// cover lists at least two distinct members, ascending, itself among them, each pointing
        /// back to it; only photos are stacked.
        static func stackProblems(_ stacks: [Int: [Int: Manifest.Stack]]) -> [String] {
            var problems: [String] = []
            for (section, entries) in stacks.sorted(by: { $0.key < $1.key }) {
                for (position, stack) in entries.sorted(by: { $0.key < $1.key }) {
                    let name = "sections[\(section)] item \(position)'s stack"
                    guard let cover = entries[stack.cover], let members = cover.members, cover.cover == stack.cover else {
                        problems.append("\(name) names item \(stack.cover) as its cover, which lists no members")
                        continue
                    }
                    if cover.reason != stack.reason {
                        problems.append("\(name) says \(stack.reason.rawValue), its cover \(cover.reason.rawValue)")
                    }
                    if !members.contains(position) { problems.append("\(name): its cover does not list it") }
                    if position == stack.cover {
                        if members.count < 2 || members != members.sorted() || Set(members).count != members.count {
                            problems.append("\(name) lists members \(members), not two or more ascending")
                        }
                        for member in members where entries[member]?.cover != position {
                            problems.append("\(name) lists item \(member), which is not in it")
                        }
                    } else if stack.members != nil {
                        problems.append("\(name) lists members but is not its cover")
                    }
                }
            }
            return problems
        }

        /// For the `tiles` entry: the pyramid beside the `.dzi` has the levels, tile files and
        /// bytes the manifest records, each of dzsave's shape, as many as the `.dzi`'s size needs.
        private func checkPyramid(_ thumbnail: Manifest.Thumbnail) -> String? {
            guard let recorded = thumbnail.tiles, let thumbnails, let name = OutputName(thumbnail.path),
                let folder = OutputDirectory.tileFolder(of: name)
            else { return nil }
            guard let root = try? Directory.open(thumbnails.path),
                let tiles = try? root.descend(["thumbs", name.fanout, folder].map { Array($0.utf8) })
            else { return "its tiles folder \(folder) is missing" }
            guard let count = OutputDirectory.count(tiles) else { return "its tiles folder \(folder) is not a DeepZoom pyramid" }
            let expected = Manifest.Tiles.fileCount(width: thumbnail.width, height: thumbnail.height, tileSize: recorded.tileSize)
            if count.levels != recorded.levels || count.files != recorded.files || count.files != expected || count.bytes != recorded.bytes
            {
                return "its pyramid has \(count.levels) levels, \(count.files) tiles, \(count.bytes) bytes; "
                    + "the manifest says \(recorded.levels), \(recorded.files) (\(expected) for its size), \(recorded.bytes)"
            }
            return nil
        }
    }

    /// The largest thumbnail `validate` reads (a 65 500-pixel-long JPEG is far below it).
    static let maximumThumbnailBytes = 256 << 20

    /// The thumbnail file exists below the manifest's folder (reached without links) with the
    /// recorded byte size and hash, and its header has the recorded pixel size.
    static func checkThumbnail(_ thumbnail: Manifest.Thumbnail, in folder: ContainedDirectory) -> String? {
        let data: Data
        do {
            data = try folder.read(thumbnail.path, limit: maximumThumbnailBytes)
        } catch .posix(ENOENT) {
            return "missing"
        } catch {
            return error.localizedDescription
        }
        if let bytes = thumbnail.bytes, bytes != data.count {
            return "is \(data.count) bytes, the manifest says \(bytes) (truncated or replaced)"
        }
        if let sha256 = thumbnail.sha256, data.withUnsafeBytes(Digest.sha256) != sha256 {
            return "content differs from its recorded sha256 (replaced)"
        }
        if let tiles = thumbnail.tiles {
            guard let dzi = Manifest.Tiles.parseDZI(data) else { return "is not a DeepZoom .dzi" }
            if (dzi.width, dzi.height) != (thumbnail.width, thumbnail.height) || dzi.tileSize != tiles.tileSize
                || dzi.overlap != tiles.overlap || dzi.format != tiles.format
            {
                return "describes \(dzi.width)×\(dzi.height) in \(dzi.tileSize) px \(dzi.format) tiles, overlap \(dzi.overlap), "
                    + "not what the manifest says"
            }
            return nil
        }
        switch Decoders.imageSize(Array(data)) {
        case .failure(let problem):
            return problem.reason
        case .success(let size) where size.width != thumbnail.width || size.height != thumbnail.height:
            return "is \(size.width)×\(size.height), the manifest says \(thumbnail.width)×\(thumbnail.height)"
        case .success:
            break
        }
        return data.withUnsafeBytes { gainMapProblem($0, thumbnail) }
    }

    /// A gain-map rendition (`headroom`) has both metadata forms, consistent with each other,
    /// with its MPF index and with the manifest, and a map that decodes no larger than the
    /// picture; any other thumbnail carries no gain map.
    static func gainMapProblem(_ file: UnsafeRawBufferPointer, _ thumbnail: Manifest.Thumbnail) -> String? {
        let parsed = GainMapJPEG.read(file)
        guard let headroom = thumbnail.headroom else {
            return parsed?.map == nil ? nil : "carries a gain map the manifest does not record (no headroom)"
        }
        guard let parsed, let map = parsed.map else { return "has no gain map (no MPF index of a second image), yet a headroom" }
        var missing: [String] = []
        if !parsed.baseHasXMPVersion { missing.append("hdrgm:Version in its XMP") }
        if !parsed.baseHasISOVersion { missing.append("the ISO 21496-1 version box") }
        if parsed.xmp == nil { missing.append("its map's hdrgm: numbers") }
        if parsed.iso == nil { missing.append("its map's ISO 21496-1 numbers") }
        if !missing.isEmpty { return "gain map lacks " + missing.joined(separator: ", ") }
        if parsed.mpfPrimaryLength != map.lowerBound || map.upperBound != file.count || parsed.baseXMPMapLength != map.count {
            return "gain map at \(map.lowerBound)..<\(map.upperBound) of \(file.count) bytes disagrees with its MPF index "
                + "(base \(parsed.mpfPrimaryLength ?? 0) bytes) or its XMP directory (\(parsed.baseXMPMapLength ?? 0) bytes)"
        }
        if let xmp = parsed.xmp, let iso = parsed.iso, !xmp.agrees(with: iso) { return "gain map's XMP and ISO 21496-1 numbers differ" }
        if let iso = parsed.iso, abs(iso.headroom - headroom) > 0.001 * max(1, headroom) {
            return "gain map's headroom is \(iso.headroom), the manifest says \(headroom)"
        }
        switch Decoders.imageSize(Array(file[map])) {
        case .failure(let problem): return "gain map: " + problem.reason
        case .success(let size) where size.width > thumbnail.width || size.height > thumbnail.height:
            return "gain map is \(size.width)×\(size.height), larger than the picture"
        case .success: return nil
        }
    }
}
