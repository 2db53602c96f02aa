import Foundation
import ThumbframeManifest

/// The answers of `lookup`, `show` and `layout`: finding items in a manifest and describing
/// them and their layouts for people.
public enum ManifestQuery {
    /// A flat index and its (section, item) position, with the item's path.
    public struct Lookup: Codable, Equatable, Sendable {
        /// Flat index.
        public var index: Int
        /// Section index.
        public var section: Int
        /// Item index inside the section.
        public var item: Int
        /// The section's name.
        public var sectionName: String
        /// The item's path.
        public var path: String

        /// `index 5 = section 2 item 2 (2019/trip): 2019/trip/IMG_10.jpg`
        public var rendered: String {
            "index \(index) = section \(section) item \(item) (\(sectionName)): \(path)\n"
        }
    }

    /// Looks up a flat index, or a (section, item) position, through the manifest's `IndexMap`.
    public static func lookup(_ manifest: Manifest, index: Int) throws(ThumbframeError) -> Lookup {
        let map = try indexMap(manifest)
        do {
            let position = try map.position(of: index)
            return describe(manifest, index: index, position: position)
        } catch {
            throw .invalidOptions(error.localizedDescription)
        }
    }

    /// Looks up the flat index of (section, item).
    public static func lookup(_ manifest: Manifest, section: Int, item: Int) throws(ThumbframeError) -> Lookup {
        let map = try indexMap(manifest)
        let position = IndexMap.Position(section: section, item: item)
        do {
            return describe(manifest, index: try map.index(of: position), position: position)
        } catch {
            throw .invalidOptions(error.localizedDescription)
        }
    }

    /// The manifest's map, when its sections count exactly its items (else an index could
    /// point past `items`).
    private static func indexMap(_ manifest: Manifest) throws(ThumbframeError) -> IndexMap {
        guard let map = try? IndexMap(manifest), map.count == manifest.items.count else {
            throw .invalidManifest(path: "manifest", reason: "its sections do not add up to its \(manifest.items.count) items")
        }
        return map
    }

    private static func describe(_ manifest: Manifest, index: Int, position: IndexMap.Position) -> Lookup {
        Lookup(
            index: index, section: position.section, item: position.item,
            sectionName: manifest.sections[position.section].name, path: manifest.items[index].path)
    }

    /// The item at `index` or with `path`.
    public static func item(_ manifest: Manifest, index: Int?, path: String?) throws(ThumbframeError) -> Manifest.Item {
        if let index {
            guard manifest.items.indices.contains(index) else {
                throw .invalidOptions(IndexMapError.indexOutOfRange(index: index, count: manifest.items.count).localizedDescription)
            }
            return manifest.items[index]
        }
        guard let path, let item = manifest.items.first(where: { $0.path.utf8.elementsEqual(path.utf8) }) else {
            throw .invalidOptions("no item has the path '\(path ?? "")'")
        }
        return item
    }

    /// One item for people: where it sits, its image and file facts, thumbnails and layouts.
    public static func rendered(_ item: Manifest.Item, in manifest: Manifest, viewport: String?) -> String {
        let image = item.image
        let section = manifest.sections.indices.contains(item.section) ? manifest.sections[item.section].name : "?"
        var lines = [
            "#\(item.index)  \(item.path)  (section \(item.section) \(section), item \(item.item))",
            "image       \(image.format) \(image.width)×\(image.height), stored \(image.storedWidth)×\(image.storedHeight) "
                + "orientation \(image.orientation), \(image.pages) page\(image.pages == 1 ? "" : "s")"
                + (image.hasAlpha ? ", alpha" : "") + (image.interlaced ? ", interlaced" : ""),
            "file        \(item.file.bytes) bytes, modified \(item.file.modified), sha256 \(item.file.sha256)",
        ]
        if let exif = item.exif {
            let parts = [
                exif.capturedAt.map { "captured \($0)\(exif.offset ?? "")" }, exif.make, exif.model,
            ].compactMap { $0 }
            lines.append("exif        " + parts.joined(separator: ", "))
        }
        for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key }) {
            let crop = thumbnail.crop.map { " crop \(format($0))" } ?? ""
            lines.append("thumbnail   \(name) \(thumbnail.width)×\(thumbnail.height) \(thumbnail.path)\(crop)")
        }
        for configured in manifest.settings.viewports where viewport == nil || configured.name == viewport {
            guard let layout = item.layouts[configured.name] else { continue }
            lines.append("layout      \(configured.name) \(number(configured.width))x\(number(configured.height))@\(number(configured.scale)): "
                + oneLine(layout))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A layout on one line: frame, content size, offsets, zoom.
    public static func oneLine(_ layout: Layout) -> String {
        "frame \(format(layout.frame)) content \(number(layout.contentSize.width))×\(number(layout.contentSize.height)) "
            + "maxOffset (\(number(layout.maxOffset.x)), \(number(layout.maxOffset.y)))\(layout.long ? " long" : "") "
            + "zoom \(number(layout.zoom.min))…\(number(layout.zoom.max)) doubleTap \(number(layout.zoom.doubleTap)) "
            + "native \(number(layout.zoom.native))"
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
