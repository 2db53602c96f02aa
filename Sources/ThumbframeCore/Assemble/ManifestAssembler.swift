import ThumbframeManifest

/// Puts items in their final order and sections, and lays each out in every viewport. Works on
/// light keys (a path and a capture time), so a library of any size is ordered without holding
/// its items; the writer then fetches each section's items a page at a time.
struct ManifestAssembler {
    /// Heading of the root directory's section (and of the single section of `none`): the
    /// source directory's own name.
    var sourceTitle: String
    var settings: Manifest.Settings

    /// What orders an item: its path and when it was taken. Small, as a library's worth of
    /// them is held at once: the path's bytes (one buffer), the time (empty unless sections or
    /// order are by date), and the rare pairing facts boxed.
    struct Key {
        /// The file's path below SOURCE_DIR (`SourceFile.rawPath`).
        var path: [UInt8]
        /// `YYYY-MM-DDTHH:MM:SS`: the EXIF local time, else the file's modification time in UTC
        /// (empty when the settings order nothing by date).
        var captured: String
        private var pairing: Pairing?

        /// What only Live Photo halves and RAW pairs carry.
        private final class Pairing {
            var pair: String?
            var motion: [UInt8]?
            var rawFile: [UInt8]?

            init(pair: String?, motion: [UInt8]?, rawFile: [UInt8]?) {
                (self.pair, self.motion, self.rawFile) = (pair, motion, rawFile)
            }
        }

        init(path: [UInt8], captured: String, pair: String? = nil) {
            self.path = path
            self.captured = captured
            if pair != nil { pairing = Pairing(pair: pair, motion: nil, rawFile: nil) }
        }

        /// A Live Photo half's `files.pair` (`photo <id>`, `video <id>`), nil for other items.
        var pair: String? { pairing?.pair }

        /// A photo's Live Photo MOV, found by `LivePhotoPairing`.
        var motion: SourceFile? {
            get { pairing?.motion.map { SourceFile(path: $0) } }
            set { setPairing(motion: newValue?.rawPath, rawFile: pairing?.rawFile) }
        }

        /// A JPEG's RAW shot with it, found by `RawPairing`.
        var rawFile: SourceFile? {
            get { pairing?.rawFile.map { SourceFile(path: $0) } }
            set { setPairing(motion: pairing?.motion, rawFile: newValue?.rawPath) }
        }

        private mutating func setPairing(motion: [UInt8]?, rawFile: [UInt8]?) {
            pairing = Pairing(pair: pairing?.pair, motion: motion, rawFile: rawFile)
        }

        /// The file, made from `path` when asked for.
        var source: SourceFile { SourceFile(path: path) }

        /// Where the name starts in `path`.
        private var nameStart: Int { (path.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1 }

        /// The directory's bytes (empty for the root).
        var directory: ArraySlice<UInt8> { path[..<max(0, nameStart - 1)] }

        /// The file name's bytes.
        var name: ArraySlice<UInt8> { path[nameStart...] }

        /// `SourceFile.inDisplayOrder` without making the files.
        static func inDisplayOrder(_ a: Key, _ b: Key) -> Bool {
            let (x, y) = (a.directory, b.directory)
            if x != y { return NaturalOrder.lessPath(components(x), components(y)) }
            return NaturalOrder.less(Array(a.name), Array(b.name))
        }

        static func components(_ directory: ArraySlice<UInt8>) -> [[UInt8]] {
            directory.isEmpty ? [] : directory.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        }
    }

    /// True when sections or order depend on capture times (else keys need not carry them).
    var ordersByDate: Bool { settings.sections == .date || settings.order == .date }

    /// One section before it is written: its heading and its items' keys in display order.
    struct SectionPlan {
        /// What identifies the section from run to run: the directory's bytes, the day, or `.`.
        var key: [UInt8]
        var name: String
        var rawName: String?
        var title: String
        var keys: [Key]
    }

    /// Sections in display order, each with its keys in display order; no empty section.
    func sections(_ keys: [Key]) -> [SectionPlan] {
        grouped(keys).map {
            SectionPlan(
                key: RawPath.bytes(path: $0.name, rawPath: $0.rawName), name: $0.name, rawName: $0.rawName, title: $0.title,
                keys: ordered($0.keys))
        }
    }

    /// The key of the section a file falls in by its directory (`directory` sections only).
    static func directoryKey(_ directory: [[UInt8]]) -> [UInt8] {
        directory.isEmpty ? Array(".".utf8) : Array(directory.joined(separator: [UInt8(ascii: "/")]))
    }

    private struct Group {
        var name: String
        var rawName: String? = nil
        var title: String
        var keys: [Key]
    }

    /// Sections in display order: directories in natural order of their paths (root first),
    /// capture days ascending, or everything in one.
    private func grouped(_ keys: [Key]) -> [Group] {
        switch settings.sections {
        case .none:
            return keys.isEmpty ? [] : [Group(name: ".", title: sourceTitle, keys: keys)]
        case .directory:
            // Grouped by the directories' bytes: two names that differ only in Unicode
            // normalization, or in bytes that are not UTF-8, are two directories.
            let byDirectory = Dictionary(grouping: keys) { Array($0.directory) }
            return byDirectory.keys.map { ($0, Key.components($0[...])) }.sorted { NaturalOrder.lessPath($0.1, $1.1) }.map {
                raw, directory in
                Group(
                    name: directory.isEmpty ? "." : String(decoding: raw, as: UTF8.self), rawName: RawPath.encode(raw),
                    title: directory.last.map { String(decoding: $0, as: UTF8.self) } ?? sourceTitle,
                    keys: byDirectory[raw]!)
            }
        case .date:
            let byDay = Dictionary(grouping: keys) { String($0.captured.prefix(10)) }
            return byDay.keys.sorted().map { Group(name: $0, title: $0, keys: byDay[$0]!) }
        }
    }

    private func ordered(_ keys: [Key]) -> [Key] {
        switch settings.order {
        case .name:
            return keys.sorted(by: Key.inDisplayOrder)
        case .date:
            return keys.sorted { $0.captured != $1.captured ? $0.captured < $1.captured : Key.inDisplayOrder($0, $1) }
        }
    }
}
