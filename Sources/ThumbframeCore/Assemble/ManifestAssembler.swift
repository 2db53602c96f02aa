import ThumbframeManifest

/// Puts items in their final order and sections, and lays each out in every viewport. Works on
/// light keys (a path and a capture time), so a library of any size is ordered without holding
/// its items; the writer then fetches each section's items a page at a time.
struct ManifestAssembler {
    /// Heading of the root directory's section (and of the single section of `none`): the
    /// source directory's own name.
    var sourceTitle: String
    var settings: Manifest.Settings

    /// What orders an item: its path and when it was taken.
    struct Key {
        var source: SourceFile
        /// `YYYY-MM-DDTHH:MM:SS`: the EXIF local time, else the file's modification time in UTC.
        var captured: String
        /// A Live Photo half's `files.pair` (`photo <id>`, `video <id>`), nil for other items.
        var pair: String? = nil
        /// A photo's Live Photo MOV, found by `LivePhotoPairing`.
        var motion: SourceFile? = nil
        /// A JPEG's RAW shot with it, found by `RawPairing`.
        var rawFile: SourceFile? = nil
    }

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
            let byDirectory = Dictionary(grouping: keys, by: \.source.directory)
            return byDirectory.keys.sorted(by: NaturalOrder.lessPath).map { directory in
                let raw = Array(directory.joined(separator: [UInt8(ascii: "/")]))
                return Group(
                    name: directory.isEmpty ? "." : String(decoding: raw, as: UTF8.self), rawName: RawPath.encode(raw),
                    title: directory.last.map { String(decoding: $0, as: UTF8.self) } ?? sourceTitle,
                    keys: byDirectory[directory]!)
            }
        case .date:
            let byDay = Dictionary(grouping: keys) { String($0.captured.prefix(10)) }
            return byDay.keys.sorted().map { Group(name: $0, title: $0, keys: byDay[$0]!) }
        }
    }

    private func ordered(_ keys: [Key]) -> [Key] {
        switch settings.order {
        case .name:
            return keys.sorted { SourceFile.inDisplayOrder($0.source, $1.source) }
        case .date:
            return keys.sorted {
                $0.captured != $1.captured ? $0.captured < $1.captured : SourceFile.inDisplayOrder($0.source, $1.source)
            }
        }
    }
}
