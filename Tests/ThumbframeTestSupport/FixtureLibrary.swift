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
    /// An iPhone JPEG: EXIF Make `Apple` and an Apple MakerNote holding `contentIdentifier`
    /// (the half of a Live Photo that names its MOV).
    case livePhoto(String, width: Int, height: Int, contentIdentifier: String)

    var path: String {
        switch self {
        case .photo(let path, _, _, _, _), .copy(let path, _), .bytes(let path, _), .animation(let path, _, _, _, _),
            .livePhoto(let path, _, _, _):
            path
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
            case .livePhoto(_, let width, let height, let identifier):
                try writeImage(to: path, width: width, height: height)
                let jpeg = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                try write(Array(jpeg.prefix(2)) + appleExifSegment(contentIdentifier: identifier) + jpeg.dropFirst(2), to: path)
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

extension Fixtures {
    /// A JPEG APP1 segment of EXIF as an iPhone writes it, reduced to what pairs a Live Photo:
    /// IFD0 Make `Apple`, an EXIF IFD with a MakerNote in Apple's layout (`Apple iOS\0`, version
    /// 1, `MM`, a directory whose offsets count from the MakerNote's start) holding tag 0x0011,
    /// the content identifier (exiftool's MediaGroupUUID). Big-endian throughout. (exiftool cannot write Apple MakerNote tags.)
    /// With `tag` 0x000B the string is a BurstUUID instead.
    public static func appleExifSegment(contentIdentifier: String, tag: Int = 0x0011) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] {
            [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] { u16(tag) + u16(type) + u32(count) + value }
        let identifier = Array(contentIdentifier.utf8) + [0]
        // The MakerNote: header (14 bytes), a directory of one entry, no next directory, the string.
        let noteDirectory = 14
        let noteString = noteDirectory + 2 + 12 + 4
        let note =
            Array("Apple iOS\0".utf8) + u16(1) + Array("MM".utf8) + u16(1)
            + entry(tag, 2, identifier.count, u32(noteString)) + u32(0) + identifier
        // The TIFF structure: header, IFD0 (Make, ExifIFD pointer), Make's text, the EXIF IFD
        // (MakerNote), the MakerNote.
        let ifd0 = 8
        let make = ifd0 + 2 + 2 * 12 + 4
        let exifIFD = make + 6
        let noteOffset = exifIFD + 2 + 12 + 4
        let tiff =
            Array("MM".utf8) + u16(42) + u32(ifd0)
            + u16(2) + entry(0x010F, 2, 6, u32(make)) + entry(0x8769, 4, 1, u32(exifIFD)) + u32(0)
            + Array("Apple\0".utf8)
            + u16(1) + entry(0x927C, 7, note.count, u32(noteOffset)) + u32(0)
            + note
        let payload = Array("Exif\0\0".utf8) + tiff
        return [0xFF, 0xE1] + u16(payload.count + 2) + payload
    }
}

/// How a fixture Motion Photo says where its MP4 is.
public enum MotionPhotoStyle: Sendable {
    /// Google's Motion Photo 1.0: `GCamera:MotionPhoto` and a `Container:Directory` whose
    /// `MotionPhoto` item gives the MP4's length.
    case containerDirectory
    /// The older `GCamera:MicroVideo` with `MicroVideoOffset`, the MP4's distance from the end.
    case microVideo
    /// `GCamera:MotionPhoto` alone: the MP4 is found by its `ftyp` box.
    case flagOnly
}

extension Fixtures {
    /// Writes a Motion Photo: a JPEG whose XMP (an APP1 segment after SOI) announces the MP4
    /// appended after its end, as Pixel and Samsung phones write them.
    public static func writeMotionPhoto(to path: String, width: Int, height: Int, mp4: [UInt8], style: MotionPhotoStyle) throws {
        try writeImage(to: path, width: width, height: height)
        let jpeg = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let flags: String
        var directory = ""
        switch style {
        case .containerDirectory:
            flags = #"GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1" GCamera:MotionPhotoPresentationTimestampUs="0""#
            directory = """
                <Container:Directory><rdf:Seq>\
                <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" Item:Length="0" Item:Padding="0"/></rdf:li>\
                <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="\(mp4.count)" Item:Padding="0"/></rdf:li>\
                </rdf:Seq></Container:Directory>
                """
        case .microVideo:
            flags = #"GCamera:MicroVideo="1" GCamera:MicroVideoVersion="1" GCamera:MicroVideoOffset="\#(mp4.count)""#
        case .flagOnly:
            flags = #"GCamera:MotionPhoto="1""#
        }
        let xmp = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
            <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
            xmlns:Container="http://ns.google.com/photos/1.0/container/" xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \
            \(flags)>\(directory)</rdf:Description></rdf:RDF></x:xmpmeta>
            """
        let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8)
        let segment = [0xFF, 0xE1, UInt8(((payload.count + 2) >> 8) & 0xFF), UInt8((payload.count + 2) & 0xFF)] + payload
        try write(Array(jpeg.prefix(2)) + segment + jpeg.dropFirst(2) + mp4, to: path)
    }
}
