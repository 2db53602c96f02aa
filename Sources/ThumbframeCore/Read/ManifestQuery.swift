import Foundation
package import ThumbframeManifest

/// The answers of `lookup`, `show` and `layout`: finding items in a manifest and describing
/// them and their layouts for people.
package enum ManifestQuery {
    /// A flat index and its (section, item) position, with the item's path.
    package struct Lookup: Codable, Equatable, Sendable {
        /// Flat index.
        package var index: Int
        /// Section index.
        package var section: Int
        /// Item index inside the section.
        package var item: Int
        /// The section's name.
        package var sectionName: String
        /// The item's path.
        package var path: String

        /// `index 5 = section 2 item 2 (2019/trip): 2019/trip/IMG_10.jpg`
        package var rendered: String {
            "index \(index) = section \(section) item \(item) (\(sectionName)): \(path)\n"
        }
    }

    /// Looks up a flat index through the manifest's `IndexMap`; reads the one page that holds it.
    package static func lookup(_ manifest: ManifestReader, index: Int) throws(ThumbframeError) -> Lookup {
        let position: IndexMap.Position
        do {
            position = try manifest.indexMap.position(of: index)
        } catch {
            throw .invalidOptions(error.localizedDescription)
        }
        return try describe(manifest, index: index, position: position)
    }

    /// Looks up the flat index of (section, item).
    package static func lookup(_ manifest: ManifestReader, section: Int, item: Int) throws(ThumbframeError) -> Lookup {
        let position = IndexMap.Position(section: section, item: item)
        let index: Int
        do {
            index = try manifest.indexMap.index(of: position)
        } catch {
            throw .invalidOptions(error.localizedDescription)
        }
        return try describe(manifest, index: index, position: position)
    }

    private static func describe(_ manifest: ManifestReader, index: Int, position: IndexMap.Position)
        throws(ThumbframeError) -> Lookup
    {
        let path: String
        do {
            path = try manifest.path(at: index)
        } catch {
            throw .invalidManifest(path: "manifest", reason: error.localizedDescription)
        }
        return Lookup(
            index: index, section: position.section, item: position.item,
            sectionName: manifest.document.sections[position.section].name, path: path)
    }

    /// The item at `index` (one page read) or with `path` (pages read in turn until it is found).
    package static func item(_ manifest: ManifestReader, index: Int?, path: String?) throws(ThumbframeError) -> Manifest.Item {
        if let index {
            guard index >= 0, index < manifest.indexMap.count else {
                throw .invalidOptions(IndexMapError.indexOutOfRange(index: index, count: manifest.indexMap.count).localizedDescription)
            }
            do {
                return try manifest.item(at: index)
            } catch {
                throw .invalidManifest(path: "manifest", reason: error.localizedDescription)
            }
        }
        struct Found: Error {
            var item: Manifest.Item
        }
        let wanted = Array((path ?? "").utf8)
        do {
            try manifest.forEachItem { item in
                if item.path.utf8.elementsEqual(wanted) { throw Found(item: item) }
            }
        } catch let found as Found {
            return found.item
        } catch {
            throw .invalidManifest(path: "manifest", reason: error.localizedDescription)
        }
        // A file that failed is no item, but it is not unknown either: say why it failed.
        if let failure = manifest.document.failures.first(where: { $0.path == path }) {
            throw .invalidOptions("'\(failure.path)' is no item: it failed (\(failure.stage)): \(failure.reason)")
        }
        // Paths are the manifest's: below SOURCE_DIR, without "./" or a leading "/".
        let given = path ?? ""
        var bare = Substring(given)
        while bare.hasPrefix("./") || bare.hasPrefix("/") { bare = bare.drop { $0 == "." || $0 == "/" } }
        let hint = bare != given && !bare.isEmpty ? " (paths are as the manifest gives them, below SOURCE_DIR: try '\(bare)')" : ""
        throw .invalidOptions("no item has the path '\(given)'" + hint)
    }

    /// One item for people: where it sits, its image and file facts, thumbnails and layouts.
    package static func rendered(_ item: Manifest.Item, in manifest: ManifestDocument, viewport: String?) -> String {
        let image = item.image
        let section = manifest.sections.indices.contains(item.section) ? manifest.sections[item.section].name : "?"
        var lines = [
            "#\(item.index)  \(item.path)  (section \(item.section) \(section), item \(item.item))",
            "image       \(image.format) \(image.width)×\(image.height), stored \(image.storedWidth)×\(image.storedHeight) "
                + "orientation \(image.orientation), \(image.pages) page\(image.pages == 1 ? "" : "s")"
                + (image.hasAlpha ? ", alpha" : "") + (image.interlaced ? ", interlaced" : ""),
            "file        \(item.file.bytes) bytes, modified \(item.file.modified), sha256 \(item.file.sha256)",
            "kind        \(item.kind.rawValue)",
        ]
        if let video = item.video { lines.append("video       " + describe(video)) }
        if let animation = item.animation {
            lines.append(
                "animation   \(animation.frames) frames, \(number(animation.duration)) s, "
                    + (animation.loop == 0 ? "loops forever" : "plays \(animation.loop)×"))
        }
        if let motion = item.motion {
            let place = motion.path ?? motion.original ?? "?"
            lines.append(
                "motion      \(motion.source.rawValue) \(place) \(motion.width)×\(motion.height), \(motion.bytes) bytes, "
                    + describe(motion.video))
        }
        if let raw = item.raw {
            let preview = raw.previewWidth.map { " (embedded preview \($0)×\(raw.previewHeight ?? 0))" } ?? ""
            lines.append("raw         thumbnails from the \(raw.rendering.rawValue)\(preview)")
        }
        if let rawFile = item.rawFile {
            lines.append(
                "raw file    \(rawFile.original) (\(rawFile.format), \(rawFile.width)×\(rawFile.height), \(rawFile.bytes) bytes)")
        }
        if let profile = item.image.profile { lines.append("profile     \(profile.rawValue)") }
        if let hdr = item.image.hdr {
            let meaning = hdr.kind == .gainMap ? "an SDR picture with a gain map" : "tone-mapped to SDR"
            let carried = item.thumbnails.filter { $0.value.headroom != nil }.keys.sorted()
            let renditions = carried.isEmpty ? "; every thumbnail SDR" : "; gain maps in " + carried.joined(separator: ", ")
            lines.append("hdr         \(hdr.kind.rawValue)\(hdr.headroom.map { ", headroom \($0)×" } ?? ""), \(meaning)\(renditions)")
        }
        if let place = item.place {
            let named = place.cell.map { "cell " + $0 } ?? place.label
            lines.append("place       \(named) (\(number(place.latitude)), \(number(place.longitude)))")
        }
        if let stack = item.stack {
            let why = stack.reason.rawValue
            if let members = stack.members {
                let others = members.filter { $0 != item.item }.map(String.init).joined(separator: ", ")
                lines.append("stack       cover of \(members.count) (\(why)): with items \(others) of its section")
            } else {
                lines.append("stack       in the stack of item \(stack.cover) of its section (\(why))")
            }
        }
        if let exif = item.exif {
            let parts = [
                exif.capturedAt.map { "captured \($0)\(exif.offset ?? "")" }, exif.make, exif.model,
            ].compactMap { $0 }
            lines.append("exif        " + parts.joined(separator: ", "))
        }
        for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key }) {
            let crop = thumbnail.crop.map { " crop \(format($0))" } ?? ""
            let tiles =
                thumbnail.tiles.map {
                    " \($0.levels) levels, \($0.files) \($0.format) tiles of \($0.tileSize)+\($0.overlap) px, \($0.bytes) bytes"
                } ?? ""
            let headroom = thumbnail.headroom.map { " gain map, headroom \($0)×" } ?? ""
            lines.append("thumbnail   \(name) \(thumbnail.width)×\(thumbnail.height) \(thumbnail.path)\(crop)\(tiles)\(headroom)")
        }
        for configured in manifest.settings.viewports where viewport == nil || configured.name == viewport {
            guard let layout = item.layouts[configured.name] else { continue }
            lines.append(
                "layout      \(configured.name) \(number(configured.width))x\(number(configured.height))@\(number(configured.scale)): "
                    + oneLine(layout))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A video's facts on one line: `mp4 h264 12.5 s 29.97 fps, aac, rotated 90, hlg, plays in
    /// browsers, index last: remux, poster at 1.25 s`.
    static func describe(_ video: Manifest.VideoInfo) -> String {
        var parts = ["\(video.container) \(video.codec) \(number(video.duration)) s \(number(video.frameRate)) fps"]
        parts.append(video.audio ?? "silent")
        if video.rotation != 0 { parts.append("rotated \(video.rotation)") }
        if let hdr = video.hdr { parts.append(hdr) }
        parts.append(video.playable ? "plays in browsers" : "not playable in every browser")
        if video.indexFirst == false { parts.append("index last") }
        if let delivery = video.delivery { parts.append("delivery " + delivery.rawValue) }
        if let rendition = video.rendition {
            parts.append(
                "rendition \(rendition.width)×\(rendition.height) \(rendition.codecs) "
                    + "\(ManifestSummary.size(rendition.bytes)) \(rendition.path)")
        }
        parts.append("poster at \(number(video.poster)) s")
        return parts.joined(separator: ", ")
    }

    /// A layout on one line: frame, content size, offsets, zoom, and the zoom up to which each
    /// rendition of its ladder is sharp.
    package static func oneLine(_ layout: Layout) -> String {
        "frame \(format(layout.frame)) content \(number(layout.contentSize.width))×\(number(layout.contentSize.height)) "
            + "maxOffset (\(number(layout.maxOffset.x)), \(number(layout.maxOffset.y)))\(layout.long ? " long" : "") "
            + "zoom \(number(layout.zoom.min))…\(number(layout.zoom.max)) doubleTap \(number(layout.zoom.doubleTap)) "
            + "native \(number(layout.zoom.native))"
            + (layout.ladder.map { " ladder " + $0.map { "\($0.name) ≤\(number($0.native))" }.joined(separator: " ") } ?? "")
    }

    static func format(_ rect: Manifest.Rect) -> String {
        "(\(number(rect.x)), \(number(rect.y)), \(number(rect.width)), \(number(rect.height)))"
    }

    /// A number as the manifest holds it: up to 4 decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        let rounded = value.roundedForManifest
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
        return String(rounded)
    }
}
