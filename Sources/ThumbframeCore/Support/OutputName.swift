import Foundation
import ThumbframeManifest

/// A path of the shape thumbframe writes under OUT_DIR: `thumbs/XX/<32 hex>.<jpg|webp|avif|mp4|dzi|vtt>` or
/// `pages/XX/<32 hex>.<json|json.gz|json.br>`, the fan-out being the name's first two digits. Nothing of another
/// shape is ever removed.
struct OutputName: Equatable {
    /// `thumbs` or `pages`.
    var area: String
    var fanout: String
    var file: String
    var fileBytes: [UInt8] { Array(file.utf8) }

    static let extensions: [String: Set<String>] = [
        // Video renditions and a Motion Photo's MP4, a deep-zoom pyramid's `.dzi` and a scrub
        // preview's WebVTT live with the thumbnails.
        "thumbs": Set(ThumbnailRecipe.Format.allCases.map(\.fileExtension) + ["mp4", "dzi", "vtt"]),
        // A page and its pre-compressed siblings (`Precompressed`).
        "pages": ["json", "json.gz", "json.br"],
    ]

    init?(_ path: String) {
        // Parsed over the UTF-8 bytes: a rerun checks 200 000 of these.
        var path = path
        guard
            let parsed = path.withUTF8({ bytes -> (String, String, String)? in
                guard let first = bytes.firstIndex(of: UInt8(ascii: "/")) else { return nil }
                let area = String(decoding: bytes[..<first], as: UTF8.self)
                let fanoutStart = first + 1
                // "XX/" then 32 hex digits, a dot and the extension.
                guard bytes.count > fanoutStart + 3 + 33, bytes[fanoutStart + 2] == UInt8(ascii: "/") else { return nil }
                let fileStart = fanoutStart + 3
                let hex = bytes[fileStart..<(fileStart + 32)]
                guard hex.allSatisfy(TemporaryName.isLowerHex), bytes[fileStart + 32] == UInt8(ascii: "."),
                    bytes[fanoutStart] == bytes[fileStart], bytes[fanoutStart + 1] == bytes[fileStart + 1]
                else { return nil }
                let extensionBytes = bytes[(fileStart + 33)...]
                guard !extensionBytes.contains(UInt8(ascii: "/")) else { return nil }
                return (
                    area, String(decoding: bytes[fanoutStart..<(fanoutStart + 2)], as: UTF8.self),
                    String(decoding: bytes[fileStart...], as: UTF8.self)
                )
            })
        else { return nil }
        let (area, fanout, file) = parsed
        // Everything after the hash's dot: `jpg`, `json.gz`; only the area's own are names.
        guard let allowed = Self.extensions[area], allowed.contains(String(file.utf8.dropFirst(33))!) else { return nil }
        self.area = area
        self.fanout = fanout
        self.file = file
    }

    /// The content-addressed path of a file in `area` whose key is `hash` (hex).
    static func path(area: String, hash: String, extension: String) -> String {
        let name = String(hash.prefix(32))
        return "\(area)/\(name.prefix(2))/\(name).\(`extension`)"
    }
}

/// Names of temporary files: `.tf-tmp-` and 16 random hex digits. Only names of exactly this
/// shape are ever cleaned up as leftovers of an interrupted run.
enum TemporaryName {
    static let prefix = ".tf-tmp-"

    /// Random once per process; each name adds the next count to it (a run writes hundreds of
    /// thousands of files: one `getrandom` each was a tenth of its system calls).
    private static let seed: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()
    private static let counter = Counter()

    /// The names made so far (a lock: `Atomic` needs macOS 15).
    private final class Counter: @unchecked Sendable {
        // @unchecked: `value` is read and written with `lock` held.
        private let lock = NSLock()
        private var value: UInt64 = 0

        func next() -> UInt64 {
            lock.lock()
            defer { lock.unlock() }
            value &+= 1
            return value
        }
    }

    static func make() -> String {
        let value = seed &+ counter.next() &* 0x9E37_79B9_7F4A_7C15
        let hex = String(value, radix: 16)
        return prefix + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// True for a name `make()` could have given.
    static func matches(_ name: [UInt8]) -> Bool {
        let prefixBytes = Array(prefix.utf8)
        guard name.count == prefixBytes.count + 16, name.starts(with: prefixBytes) else { return false }
        return name.dropFirst(prefixBytes.count).allSatisfy(isLowerHex)
    }

    static func isLowerHex(_ byte: UInt8) -> Bool { (48...57).contains(byte) || (97...102).contains(byte) }
}
