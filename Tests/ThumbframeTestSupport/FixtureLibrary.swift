import CThumbframeShim
import Foundation

/// A file of a fixture library: a generated photo (a gradient JPEG, or PNG), a copy of another
/// file of the library, or given bytes. Paths are relative to the library.
public enum LibraryFile: Sendable {
    /// `exif` sets EXIF fields by libvips' names, e.g. `exif-ifd2-DateTimeOriginal`.
    case photo(String, width: Int, height: Int, png: Bool = false, exif: [String: String] = [:])
    case copy(String, of: String)
    case bytes(String, [UInt8])
    /// An animated GIF or WebP (by the extension): one flat colour per frame, each frame shown
    /// `delays[i]` milliseconds, played `loop` times (0: forever).
    case animation(String, width: Int, height: Int, delays: [Int], loop: Int = 0)

    var path: String {
        switch self {
        case .photo(let path, _, _, _, _), .copy(let path, _), .bytes(let path, _), .animation(let path, _, _, _, _): path
        }
    }
}

extension Fixtures {
    /// The one way the tests make a source library: each file written below `source`, its
    /// directories made as needed. A file already there is kept, so a test can grow its library
    /// between builds with the same call.
    public static func makeLibrary(_ source: String, _ files: [LibraryFile]) throws {
        for file in files {
            let path = source + "/" + file.path
            guard !FileManager.default.fileExists(atPath: path) else { continue }
            try makeDirectory((path as NSString).deletingLastPathComponent)
            switch file {
            case .photo(_, let width, let height, let png, let exif):
                try writeImage(to: path, width: width, height: height, format: png ? TF_FORMAT_PNG : TF_FORMAT_JPEG, exif: exif)
            case .copy(_, let original):
                try FileManager.default.copyItem(atPath: source + "/" + original, toPath: path)
            case .bytes(_, let bytes):
                try write(bytes, to: path)
            case .animation(_, let width, let height, let delays, let loop):
                try writeAnimation(to: path, width: width, height: height, delays: delays, loop: loop)
            }
        }
    }

    /// `count` JPEGs named `IMG_<first + i>.jpg`, the i-th in `folders[i % folders.count]`, each
    /// `width + i × step` wide (its own bytes, so its own thumbnails). With `distinct`, only the
    /// first `distinct` are drawn and the rest are copies of them (each copy is still read,
    /// hashed and probed, and under --force decoded and encoded too).
    public static func photos(
        _ count: Int, in folders: [String] = ["album"], width: Int, height: Int, step: Int = 1, first: Int = 0,
        distinct: Int? = nil
    ) -> [LibraryFile] {
        func name(_ index: Int) -> String {
            let folder = folders[index % folders.count]
            return (folder.isEmpty ? "" : folder + "/") + "IMG_\(first + index).jpg"
        }
        return (0..<count).map { index in
            if let distinct, index >= distinct {
                return .copy(name(index), of: name(index % distinct))
            }
            return .photo(name(index), width: width + index * step, height: height)
        }
    }
}
