import Foundation
import ThumbframeManifest

/// Removes what no manifest needs any more from `OUT_DIR/thumbs`: thumbnails of deleted or
/// changed sources and temporary files of interrupted runs. Runs only after the new manifest is
/// in place (and under the build lock), so no manifest ever names a pruned file.
enum ThumbnailPruner {
    /// Returns how many files were removed.
    static func prune(_ outputDirectory: String, keeping manifest: Manifest) -> Int {
        let keep = Set(manifest.items.flatMap { $0.thumbnails.values.map(\.path) })
        var removed = 0
        let thumbs = outputDirectory + "/thumbs"
        for fanout in FileSystem.directoryEntries(thumbs) ?? [] {
            guard let fanoutName = String(validating: fanout, as: UTF8.self) else { continue }
            let directory = thumbs + "/" + fanoutName
            guard FileStat.lstat(directory)?.isDirectory == true else { continue }
            var remaining = 0
            for entry in FileSystem.directoryEntries(directory) ?? [] {
                guard let name = String(validating: entry, as: UTF8.self),
                    !keep.contains("thumbs/\(fanoutName)/\(name)"),
                    FileStat.lstat(directory + "/" + name)?.isRegularFile == true
                else {
                    remaining += 1
                    continue
                }
                if unlink(directory + "/" + name) == 0 { removed += 1 } else { remaining += 1 }
            }
            if remaining == 0 { rmdir(directory) }
        }
        // A manifest temporary left by a build killed while writing it.
        for entry in FileSystem.directoryEntries(outputDirectory) ?? [] where entry.starts(with: Array(".tf-tmp-".utf8)) {
            if unlink(outputDirectory + "/" + String(decoding: entry, as: UTF8.self)) == 0 { removed += 1 }
        }
        return removed
    }
}
