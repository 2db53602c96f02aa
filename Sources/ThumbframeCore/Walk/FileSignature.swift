import ThumbframeImaging

/// Decides which files of a tree are meant to be items, photos or videos: by extension, or by
/// the magic bytes of a photo or video format when the extension says nothing (an image with a
/// wrong extension is still an image); the rest is counted by kind.
enum FileSignature {
    /// Extensions of formats people keep in photo libraries, including ones libvips cannot read
    /// (RAW, PSD): those become failures with a reason instead of vanishing without a word.
    static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "jfif", "png", "apng", "gif", "webp", "tif", "tiff", "heic", "heif", "hif",
        "avif", "jxl", "jp2", "j2k", "bmp", "psd", "dng", "cr2", "cr3", "nef", "arw", "orf", "rw2", "raf",
        "svg",
    ]

    /// True when the name's extension is an image format's (a RAW format's included).
    static func hasImageExtension(_ name: String) -> Bool {
        let ext = self.extension(name)
        return imageExtensions.contains(ext) || RawDecoder.extensions.contains(ext)
    }

    /// True when the name's extension is a video format's.
    static func hasVideoExtension(_ name: String) -> Bool {
        videoExtensions.contains(self.extension(name))
    }

    /// True when the name's extension is a RAW format's (LibRaw decodes it, not libvips: most
    /// RAW files are TIFFs whose first directory is a small preview or the raw mosaic).
    static func hasRawExtension(_ name: String) -> Bool {
        RawDecoder.extensions.contains(self.extension(name))
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
    static let headBytes = VideoDecoder.signatureBytes

    /// True when the file is meant to be an item: an image or video extension, else the first
    /// bytes of one (`head`: `headBytes` of them, or the whole file when shorter).
    static func isCandidate(_ name: String, head: () -> [UInt8]) -> Bool {
        if hasItemExtension(name) { return true }
        // Sound and sidecars say what they are by name: an `.m4a` is ISO media too.
        if skippedKind(name) != "other" { return false }
        let bytes = head()
        // Sound says what it is by its brand too (an `.mp4` of sound is still tried, and fails saying so).
        return looksLikeImage(bytes) || (VideoDecoder.recognizes(bytes) && !VideoDecoder.hasAudioBrand(bytes))
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

    static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "qt", "3gp", "3g2", "mkv", "webm", "avi", "mts", "m2ts", "mpg", "mpeg", "wmv", "flv",
    ]
    static let audioExtensions: Set<String> = ["mp3", "m4a", "aac", "wav", "flac", "ogg", "oga", "opus", "aiff", "aif", "wma"]
    static let documentExtensions: Set<String> = [
        "pdf", "ps", "eps", "ai", "doc", "docx", "odt", "rtf", "txt", "md", "xls", "xlsx", "ods", "ppt", "pptx", "odp", "pages", "key",
        "numbers", "epub",
    ]
    static let sidecarExtensions: Set<String> = ["xmp", "aae", "thm", "dop", "pp3", "on1", "xmpx"]

    /// True when the first bytes are those of a photo format.
    static func looksLikeImage(_ head: [UInt8]) -> Bool {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return true }  // JPEG
        if starts([0x89, 0x50, 0x4E, 0x47]) { return true }  // PNG
        if starts(Array("GIF8".utf8)) { return true }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return true }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return true }  // TIFF
        if starts(Array("ftyp".utf8), at: 4) {  // ISO base media: HEIF, AVIF
            let brands = ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis"]
            return brands.contains { starts(Array($0.utf8), at: 8) }
        }
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]) { return true }  // JPEG XL
        return false
    }
}
