import Foundation

extension Manifest {
    /// Structural problems of a decoded manifest, one sentence each (empty when consistent):
    /// numbering, sections, paths that must stay relative and inside their roots, duplicates.
    public func consistencyProblems(limit: Int = 100) -> [String] {
        var problems = headerProblems(limit: limit)
        let total = Self.itemTotal(sections)
        if total != items.count, problems.count < limit {
            problems.append("sections count \(total) items, but there are \(items.count)")
        }
        var checker = ItemConsistency(sections: sections)
        for (index, item) in items.enumerated() where problems.count < limit {
            problems += checker.problems(of: item, at: index).prefix(limit - problems.count)
        }
        return problems
    }

    /// Problems of everything but the items: format and version, section numbering, failure paths.
    public func headerProblems(limit: Int = 100) -> [String] {
        var problems: [String] = []
        func report(_ problem: String) {
            if problems.count < limit { problems.append(problem) }
        }
        if format != Self.formatName || !Self.readableVersions.contains(version) {
            report("format '\(format)' version \(version) is not \(Self.formatName) version \(Self.currentVersion)")
        }
        // Every number here comes from a file that may be hostile: arithmetic must not trap.
        var start = 0
        for (index, section) in sections.enumerated() {
            if section.count <= 0 { report("sections[\(index)] is empty (count \(section.count))") }
            if section.start != start { report("sections[\(index)].start is \(section.start), expected \(start)") }
            start = start.addingReportingOverflow(max(0, section.count)).partialValue
        }
        for (index, failure) in failures.enumerated() where !Self.isContainedRelativePath(failure.path) {
            report("failures[\(index)].path '\(failure.path)' leaves the source directory")
        }
        return problems
    }

    /// The number of items the sections hold (overflow-safe: the counts may be hostile).
    public static func itemTotal(_ sections: [Section]) -> Int {
        sections.reduce(0) { $0.addingReportingOverflow(max(0, $1.count)).partialValue }
    }

    /// Checks items one at a time against their sections, so a paged manifest is checked a page
    /// at a time: numbering, paths (inside the source, unique as bytes), sizes, orientation,
    /// thumbnail paths.
    public struct ItemConsistency {
        private let sections: [Section]
        private var paths = Set<[UInt8]>()  // bytes: NFC and NFD spellings are different files

        /// Creates a checker for items of these sections.
        public init(sections: [Section]) {
            self.sections = sections
        }

        /// The problems of one item; with `position`, its `index` must be that.
        public mutating func problems(of item: Item, at position: Int? = nil) -> [String] {
            var problems: [String] = []
            let index = position ?? item.index
            if let position, item.index != position { problems.append("items[\(position)].index is \(item.index)") }
            if sections.indices.contains(item.section) {
                let section = sections[item.section]
                if item.item < 0 || item.item >= section.count
                    || section.start.addingReportingOverflow(item.item) != (index, false)
                {
                    problems.append("items[\(index)] is section \(item.section) item \(item.item), which is not index \(index)")
                }
            } else {
                problems.append("items[\(index)].section \(item.section) does not exist")
            }
            if !Manifest.isContainedRelativePath(item.path) {
                problems.append("items[\(index)].path '\(item.path)' leaves the source directory")
            }
            if !paths.insert(item.pathBytes).inserted { problems.append("items[\(index)].path '\(item.path)' appears twice") }
            let image = item.image
            if image.width <= 0 || image.height <= 0 || image.storedWidth <= 0 || image.storedHeight <= 0 {
                problems.append("items[\(index)] has a size that is not positive")
            }
            if !(1...8).contains(image.orientation) {
                problems.append("items[\(index)].image.orientation \(image.orientation) is not 1–8")
            }
            if let headroom = image.hdr?.headroom, !(1...Manifest.maximumHeadroom).contains(headroom) {
                problems.append("items[\(index)].image.hdr.headroom \(headroom) is not 1–\(Int(Manifest.maximumHeadroom))")
            }
            for (name, thumbnail) in item.thumbnails.sorted(by: { $0.key < $1.key }) {
                if !Manifest.isThumbnailPath(thumbnail.path) {
                    problems.append("items[\(index)].thumbnails.\(name).path '\(thumbnail.path)' is not inside thumbs/")
                }
                if thumbnail.width <= 0 || thumbnail.height <= 0 { problems.append("items[\(index)].thumbnails.\(name) has no size") }
                if let headroom = thumbnail.headroom, !(1...Manifest.maximumHeadroom).contains(headroom) {
                    problems.append("items[\(index)].thumbnails.\(name).headroom \(headroom) is not 1–\(Int(Manifest.maximumHeadroom))")
                }
                // The tiles entry and only it is a `.dzi` with its pyramid described.
                if (name == Manifest.tilesName) != (thumbnail.tiles != nil) || (thumbnail.tiles != nil) != thumbnail.path.hasSuffix(".dzi")
                {
                    problems.append("items[\(index)].thumbnails.\(name) is not a thumbnail, or not tiles, as its name says")
                }
                if let tiles = thumbnail.tiles,
                    tiles.tileSize <= 0 || tiles.overlap < 0
                        || tiles.levels != Manifest.Tiles.levels(width: thumbnail.width, height: thumbnail.height)
                        || !Manifest.Tiles.formats.contains(tiles.format)
                {
                    problems.append("items[\(index)].thumbnails.\(name).tiles does not describe a pyramid of its size")
                }
            }
            if !Manifest.isTimestamp(item.file.modified, utcNanoseconds: true) {
                problems.append("items[\(index)].file.modified '\(item.file.modified)' is not a date of years 0000–9999")
            }
            if !Manifest.isSHA256(item.file.sha256) { problems.append("items[\(index)].file.sha256 is not 64 hex digits") }
            if let captured = item.exif?.capturedAt, !Manifest.isTimestamp(captured, utcNanoseconds: false) {
                problems.append("items[\(index)].exif.capturedAt '\(captured)' is not a calendar date and time")
            }
            problems += Manifest.mediaProblems(item.media, at: index)
            if let placeholder = item.placeholder {
                if placeholder.picture == nil { problems.append("items[\(index)].placeholder.thumbhash is not a ThumbHash") }
                if !Manifest.isColour(placeholder.color) {
                    problems.append("items[\(index)].placeholder.color '\(placeholder.color)' is not #rrggbb")
                }
            } else {
                problems.append("items[\(index)] has no placeholder")
            }
            return problems
        }
    }

    /// Problems of an item's kind and the facts that go with it: each kind has its own facts
    /// and no other's, and their numbers are possible.
    static func mediaProblems(_ media: Media, at index: Int) -> [String] {
        var problems: [String] = []
        let name = "items[\(index)]"
        if (media.kind == .video) != (media.video != nil) {
            problems.append("\(name) is \(media.kind.rawValue) but video facts are \(media.video == nil ? "missing" : "present")")
        }
        if (media.kind == .animated) != (media.animation != nil) {
            problems.append("\(name) is \(media.kind.rawValue) but animation facts are \(media.animation == nil ? "missing" : "present")")
        }
        if media.motion != nil, media.kind != .photo { problems.append("\(name) is \(media.kind.rawValue) but has a motion part") }
        if media.raw != nil, media.kind != .photo { problems.append("\(name) is \(media.kind.rawValue) but has RAW facts") }
        func check(_ video: VideoInfo, _ key: String) {
            if ![0, 90, 180, 270].contains(video.rotation) {
                problems.append("\(name).\(key).rotation \(video.rotation) is not 0, 90, 180 or 270")
            }
            if !(video.duration >= 0) || !(video.frameRate >= 0) || !(video.poster >= 0) {
                problems.append("\(name).\(key) has a negative duration, frame rate or poster time")
            }
            if let rendition = video.rendition {
                if !(isThumbnailPath(rendition.path) && rendition.path.hasSuffix(".mp4")) {
                    problems.append("\(name).\(key).rendition.path is not an MP4 inside thumbs/")
                }
                if rendition.delivery == .original || video.delivery == .original {
                    problems.append("\(name).\(key).rendition is of a video that plays as it is")
                }
                if !isSHA256(rendition.sha256) || rendition.bytes <= 0 || rendition.width <= 0 || rendition.height <= 0
                    || rendition.codecs.isEmpty || !(rendition.duration >= 0)
                {
                    problems.append("\(name).\(key).rendition has no size, SHA-256, picture size, codecs or duration")
                }
            }
        }
        if let video = media.video { check(video, "video") }
        for (key, scrub) in [("video", media.video?.scrub), ("motion.video", media.motion?.video.scrub)] {
            guard let scrub else { continue }
            let jpeg = isThumbnailPath(scrub.sprite) && scrub.sprite.hasSuffix(".jpg")
            let vtt = isThumbnailPath(scrub.vtt) && scrub.vtt.hasSuffix(".vtt")
            if !jpeg || !vtt { problems.append("\(name).\(key).scrub names no JPEG and WebVTT file inside thumbs/") }
            if !isSHA256(scrub.spriteSHA256) || !isSHA256(scrub.vttSHA256) || scrub.spriteBytes <= 0 || scrub.vttBytes <= 0 {
                problems.append("\(name).\(key).scrub has no size or SHA-256")
            }
            if scrub.count < 1 || scrub.columns < 1 || scrub.columns > scrub.count || scrub.tileWidth < 1 || scrub.tileHeight < 1
                || !(scrub.interval > 0)
            {
                problems.append("\(name).\(key).scrub has no tiles")
            }
        }
        if let animation = media.animation, animation.frames < 2 || !(animation.duration >= 0) || animation.loop < 0 {
            problems.append("\(name).animation needs 2 frames or more, a duration and a loop count of 0 or more")
        }
        if let motion = media.motion {
            check(motion.video, "motion.video")
            switch motion.source {
            case .embedded:
                if !(motion.path.map { isThumbnailPath($0) && $0.hasSuffix(".mp4") } ?? false) {
                    problems.append("\(name).motion.path is not an MP4 inside thumbs/")
                }
            case .live:
                if !(motion.original.map(isContainedRelativePath) ?? false) {
                    problems.append("\(name).motion.original is not a path inside the source directory")
                }
            }
            if !isSHA256(motion.sha256) || motion.bytes <= 0 { problems.append("\(name).motion has no size or SHA-256") }
        }
        return problems
    }

    /// A real calendar date and time as thumbframe writes them: `YYYY-MM-DDTHH:MM:SS` with a
    /// fraction of 1–9 digits (EXIF capture times, local), or with `utcNanoseconds` exactly
    /// nine digits and `Z` (file modification times). The schema's pattern, and more: the day
    /// exists in its month (`2019-02-30` and day `00` are not dates).
    public static func isTimestamp(_ text: String, utcNanoseconds: Bool) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19 else { return false }
        func digits(_ range: Range<Int>) -> Int? {
            var value = 0
            for at in range {
                guard (48...57).contains(bytes[at]) else { return nil }
                value = value * 10 + Int(bytes[at] - 48)
            }
            return value
        }
        guard bytes[4] == 45, bytes[7] == 45, bytes[10] == 84, bytes[13] == 58, bytes[16] == 58,
            let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
            let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19),
            (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return false }
        let rest = bytes[19...]
        if utcNanoseconds { return rest.count == 11 && rest.first == 46 && rest.last == 90 && digits(20..<29) != nil }
        if rest.isEmpty { return true }
        return rest.first == 46 && (2...10).contains(rest.count) && digits(20..<bytes.count) != nil
    }

    /// 64 lowercase hex digits.
    /// The largest headroom a manifest may say (1000 × SDR white, about 10 stops): ISO 21496-1
    /// allows more, no screen shows it (the brightest show about 16 ×).
    public static let maximumHeadroom = 1000.0

    public static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// `#rrggbb`, lowercase hex.
    public static func isColour(_ text: String) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.utf8.first == UInt8(ascii: "#") && digits.count == 6
            && digits.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// A relative path inside `thumbs/`.
    public static func isThumbnailPath(_ path: String) -> Bool {
        path.hasPrefix("thumbs/") && isContainedRelativePath(path)
    }

    /// A `/`-separated relative path with no empty, `.` or `..` component.
    public static func isContainedRelativePath(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.contains("\0")
            && path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }
}
