import ThumbframeImaging
import ThumbframeManifest

/// Decides which files of a tree are meant to be items, photos or videos: by extension, or by
/// the magic bytes of a photo or video format when the extension says nothing (an image with a
/// wrong extension is still an image); the rest is counted by kind.
enum FileSignature {
    /// Extensions of formats people keep in photo libraries (`MediaFormat.all` but videos),
    /// including ones libvips is kept from reading (PSD, SVG, …): those become failures with a
    /// reason instead of vanishing without a word.
    static let imageExtensions: Set<String> = MediaFormat.all.filter { $0.family != .video }
        .reduce(into: []) { $0.formUnion($1.extensions) }

    /// True when the name's extension is an image format's (a RAW format's included).
    static func hasImageExtension(_ name: String) -> Bool {
        imageExtensions.contains(self.extension(name))
    }

    /// True when the name's extension is a video format's.
    static func hasVideoExtension(_ name: String) -> Bool {
        MediaFormat.video.extensions.contains(self.extension(name))
    }

    /// True when the name's extension is a RAW format's (LibRaw decodes it, not libvips: most
    /// RAW files are TIFFs whose first directory is a small preview or the raw mosaic).
    static func hasRawExtension(_ name: String) -> Bool {
        MediaFormat.raw.extensions.contains(self.extension(name))
    }
    /// True when the name's extension is an image or a video format's.
    static func hasItemExtension(_ name: String) -> Bool {
        hasImageExtension(name) || hasVideoExtension(name)
    }

    /// The lowercased extension, or "" (a dot-file's name is not an extension).
    static func `extension`(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    /// How many first bytes a file whose extension says nothing is judged by: an MPEG transport
    /// stream shows itself by a sync byte every 188 bytes (a `.ts`, or a camera file renamed).
    static let headBytes = MediaFormat.headBytes

    /// True when the file is meant to be an item: an image or video extension, else the first
    /// bytes of one (`head`: `headBytes` of them, or the whole file when shorter).
    static func isCandidate(_ name: String, head: () -> [UInt8]) -> Bool {
        if hasItemExtension(name) { return true }
        // Sound and sidecars say what they are by name: an `.m4a` is ISO media too.
        if skippedKind(name) != "other" { return false }
        let bytes = head()
        // Sound says what it is by its brand too (an `.mp4` of sound is still tried, and fails saying so).
        return MediaFormat.isStill(bytes) || (MediaFormat.isVideo(bytes) && !VideoDecoder.hasAudioBrand(bytes))
    }

    /// What a file the walk met is when it is not an item: `audio`, `sidecar` (an editor's or
    /// camera's file beside a photo: XMP, AAE, THM, …), `document` (PDF, PostScript, office
    /// files: a scan or a ticket is not a photo, and making each a failure would fail every run
    /// of a library that keeps some) or `other`, by extension.
    static func skippedKind(_ name: String) -> String {
        let lower = name.lowercased()
        let ext = self.extension(lower)
        if audioExtensions.contains(ext) { return "audio" }
        if documentExtensions.contains(ext) { return "document" }
        // Google Takeout writes `IMG_1.jpg.json` beside each photo.
        if sidecarExtensions.contains(ext) || (ext == "json" && hasImageExtension(String(lower.dropLast(5)))) { return "sidecar" }
        return "other"
    }

    static let audioExtensions: Set<String> = ["mp3", "m4a", "aac", "wav", "flac", "ogg", "oga", "opus", "aiff", "aif", "wma"]
    static let documentExtensions: Set<String> = [
        "pdf", "ps", "eps", "ai", "doc", "docx", "odt", "rtf", "txt", "md", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "pages", "key",
        "numbers", "epub",
    ]
    static let sidecarExtensions: Set<String> = ["xmp", "aae", "thm", "dop", "pp3", "on1", "xmpx"]
}
