import CThumbframeShim
import CVips
import Foundation
import ThumbframeManifest

/// `thumbframe validate`: the version-1 contract checked in code, beyond what a schema can say.
public enum ManifestValidator {
    /// Every problem of the manifest at `path`, one sentence each; empty when it is valid.
    /// A manifest that cannot be read or decoded gives that one problem.
    public static func problems(at path: String, limit: Int = 1000) throws(ThumbframeError) -> [String] {
        let manifest: Manifest
        do {
            manifest = try ManifestFile.load(path)
        } catch .invalidManifest(_, let reason) {
            return [reason]
        }
        let directory = (path as NSString).deletingLastPathComponent
        return problems(of: manifest, thumbnailRoot: directory.isEmpty ? "." : directory, limit: limit)
    }

    /// Every problem of a decoded manifest; thumbnails are looked for under `thumbnailRoot`
    /// (the manifest's directory), or not at all when it is nil.
    public static func problems(of manifest: Manifest, thumbnailRoot: String?, limit: Int = 1000) -> [String] {
        var problems = manifest.consistencyProblems(limit: limit)
        func report(_ problem: String) {
            if problems.count < limit { problems.append(problem) }
        }
        let recipes = manifest.settings.thumbnails
        let viewports = manifest.settings.viewports
        if Set(recipes.map(\.name)).count != recipes.count { report("settings.thumbnails has a name twice") }
        if Set(viewports.map(\.name)).count != viewports.count { report("settings.viewports has a name twice") }
        if manifest.settings.frontend != FrontendConstants.of(manifest.settings.preset) {
            report("settings.frontend does not match preset \(manifest.settings.preset.rawValue)")
        }
        // Paths compare as bytes: NFC and NFD spellings of one name are different files.
        if Set(manifest.failures.map(\.pathBytes)).count != manifest.failures.count { report("failures has a path twice") }
        let itemPaths = Set(manifest.items.map(\.pathBytes))
        for failure in manifest.failures where itemPaths.contains(failure.pathBytes) {
            report("'\(failure.path)' is both an item and a failure")
        }
        let recipeNames = Set(recipes.map(\.name))
        let viewportNames = Set(viewports.map(\.name))
        for (index, item) in manifest.items.enumerated() {
            guard problems.count < limit else { break }
            if Set(item.thumbnails.keys) != recipeNames {
                report("items[\(index)] has thumbnails \(item.thumbnails.keys.sorted()), expected \(recipeNames.sorted())")
            }
            if Set(item.layouts.keys) != viewportNames {
                report("items[\(index)] has layouts \(item.layouts.keys.sorted()), expected \(viewportNames.sorted())")
            }
            let image = item.image
            if image.width > 0, image.height > 0, image.width <= 1 << 30, image.height <= 1 << 30 {
                let swapped = image.orientation >= 5 && image.orientation <= 8
                if (swapped ? (image.storedHeight, image.storedWidth) : (image.storedWidth, image.storedHeight))
                    != (image.width, image.height)
                {
                    report("items[\(index)].image size does not follow from its stored size and orientation \(image.orientation)")
                }
                for viewport in viewports {
                    guard let layout = item.layouts[viewport.name] else { continue }
                    let expected = LayoutEngine.layout(
                        width: image.width, height: image.height, viewport: viewport, preset: manifest.settings.preset)
                    if layout != expected { report("items[\(index)].layouts.\(viewport.name) is not what the layout engine gives") }
                }
            }
            if let root = thumbnailRoot {
                for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key })
                where Manifest.isContainedRelativePath(thumbnail.path) {
                    if let problem = checkThumbnail(root + "/" + thumbnail.path, thumbnail) {
                        report("items[\(index)].thumbnails.\(name) \(thumbnail.path): \(problem)")
                    }
                }
            }
        }
        return problems
    }

    /// The thumbnail file exists with the recorded byte size and hash, and its header has the
    /// recorded pixel size.
    private static func checkThumbnail(_ path: String, _ thumbnail: Manifest.Thumbnail) -> String? {
        guard let stat = FileStat.lstat(path) else { return "missing" }
        guard stat.isRegularFile else { return "not a regular file" }
        if let bytes = thumbnail.bytes, bytes != stat.size {
            return "is \(stat.size) bytes, the manifest says \(bytes) (truncated or replaced)"
        }
        if let sha256 = thumbnail.sha256 {
            guard let data = try? FileSystem.readFile(path, limit: 1 << 30) else { return "unreadable" }
            if data.withUnsafeBytes(Digest.sha256) != sha256 { return "content differs from its recorded sha256 (replaced)" }
        }
        do {
            try Vips.start()
        } catch {
            return error.localizedDescription
        }
        defer { Vips.threadDone() }
        guard let opened = tf_image_new_from_file(path) else { return "unreadable: \(Vips.takeError())" }
        let image = VipsImageHandle(opened)
        if image.width != thumbnail.width || image.height != thumbnail.height {
            return "is \(image.width)×\(image.height), the manifest says \(thumbnail.width)×\(thumbnail.height)"
        }
        return nil
    }
}
