import Foundation
import Testing
import ThumbframeManifest
import ThumbframeTestSupport

@testable import ThumbframeCore
@testable import ThumbframeImaging

/// Every parser that reads numbers out of a file's own bytes is fed the extremes a hostile file
/// can hold — 0, 1, the largest signed and unsigned values of the field's width, and as text
/// Int.min, Int.max and numbers past them. None may trap (an overflow check, a force unwrap, a
/// precondition): one trap took down every build of a library (exit 132, no manifest). Each
/// case also checks what the parser makes of it.
@Suite("Parsers fed extreme integers")
struct ParserBoundsTests {
    /// Decimal texts a file's XMP or XML may hold where a length or size is expected.
    static let texts = [
        "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "99999999999999999999", "-1", "0", "1",
        "4294967295", "2147483648", " 12 ", "+5", "0x10", "",
    ]
    /// 32-bit field values.
    static let words: [UInt32] = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFF0, 0xFFFF_FFFF]

    static func be32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
    static func le32(_ value: UInt32) -> [UInt8] { be32(value).reversed() }
    static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    /// A JPEG-like file whose XMP says `attributes`, then `tail` (an MP4 or nothing).
    static func motionPhoto(_ attributes: String, directory: String = "", tail: [UInt8]) -> [UInt8] {
        let xmp = Array(
            """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description \(attributes)>\(directory)</rdf:Description></rdf:RDF></x:xmpmeta>
            """.utf8)
        return [0xFF, 0xD8, 0xFF, 0xE1] + be16(UInt16(xmp.count + 2)) + xmp + [0xFF, 0xD9] + tail
    }

    static let mp4: [UInt8] = be32(24) + Array("ftypisom".utf8) + be32(0x200) + Array("isommp41".utf8) + be32(8) + Array("mdat".utf8)

    @Test("Motion Photo XMP: MicroVideoOffset and Item:Length of any text locate the MP4 by its ftyp or not at all", arguments: texts)
    func motionPhotoLengths(_ text: String) {
        let offset = Self.motionPhoto(#"GCamera:MicroVideo="1" GCamera:MicroVideoOffset="\#(text)""#, tail: Self.mp4)
        let directory = """
            <Container:Directory><rdf:Seq><rdf:li><Container:Item Item:Semantic="MotionPhoto" Item:Length="\(text)"/></rdf:li></rdf:Seq></Container:Directory>
            """
        let item = Self.motionPhoto(#"GCamera:MotionPhoto="1""#, directory: directory, tail: Self.mp4)
        for file in [offset, item] {
            let found = file.withUnsafeBytes { MotionPhoto.locate($0) }
            // Whatever the number says, the MP4 is where its ftyp box is (the right length, or
            // the last ftyp after the JPEG's data).
            #expect(found == (file.count - Self.mp4.count)..<file.count, "\(text)")
        }
        // Without an MP4 anywhere, no number makes one up.
        let empty = Self.motionPhoto(#"GCamera:MicroVideo="1" GCamera:MicroVideoOffset="\#(text)""#, tail: [])
        #expect(empty.withUnsafeBytes { MotionPhoto.locate($0) } == nil)
    }

    @Test("TIFF: IFD offsets, entry counts and value offsets at every extreme give a block or nil", arguments: words)
    func tiffFields(_ word: UInt32) {
        // Little-endian TIFF: IFD0 at `word`; then one at 8 whose entry's count and offset are `word`.
        let atWord = Array("II".utf8) + [42, 0] + Self.le32(word) + [UInt8](repeating: 0, count: 32)
        let entry =
            Array("II".utf8) + [42, 0] + Self.le32(8) + [1, 0] + [0x0F, 0x01, 2, 0] + Self.le32(word) + Self.le32(word)
            + Self.le32(0)
        let pointer =
            Array("II".utf8) + [42, 0] + Self.le32(8) + [1, 0] + [0x69, 0x87, 4, 0] + Self.le32(1) + Self.le32(word) + Self.le32(0)
        for file in [atWord, entry, pointer] {
            let block = file.withUnsafeBytes { TIFFExifBlock.block($0) }
            #expect(block == nil || block!.count < 4096)
            #expect(file.withUnsafeBytes { TIFFPages.reducedResolution($0, pages: 3) } == nil)
            _ = ExifReader.read(block ?? file)
        }
    }

    @Test("Apple's MakerNote: entry counts, lengths and offsets at every extreme", arguments: words)
    func appleMakerNote(_ word: UInt32) {
        let note =
            Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8) + Self.be16(1) + Self.be16(0x0011) + Self.be16(2) + Self.be32(word)
            + Self.be32(word)
        let counted = Array("Apple iOS\0".utf8) + [0, 1] + Array("MM".utf8) + Self.be16(UInt16(truncatingIfNeeded: word))
        #expect(AppleMakerNote.contentIdentifier(note) == nil)
        #expect(AppleMakerNote.contentIdentifier(counted) == nil)
    }

    @Test("PNG and WebP chunks whose lengths are at every extreme pass through or are cut off", arguments: words)
    func chunkLengths(_ word: UInt32) {
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Self.be32(word) + Array("tEXt".utf8) + [1, 2, 3, 4, 5, 6, 7, 8]
        let stripped = png.withUnsafeBytes { MetadataBounds.pngWithoutText($0) }
        #expect(stripped == nil || stripped!.count <= png.count)
        let webp = Array("RIFF".utf8) + Self.le32(word) + Array("WEBP".utf8) + Array("EXIF".utf8) + Self.le32(word) + [1, 2, 3, 4]
        #expect(MetadataBounds.webpWithoutMetadata(webp).count <= webp.count)
    }

    @Test("JPEG segment lengths and GIF colour tables at every extreme end the walk", arguments: [UInt16(0), 1, 2, 0x7FFF, 0xFFFF])
    func markerLengths(_ length: UInt16) {
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA] + Self.be16(length) + [0xFF, 0xDA, 0, 2, 0xFF, 0xD9]
        #expect(jpeg.withUnsafeBytes { JPEGMarkers.scanCount($0, stoppingAfter: 1000) } <= 2)
        let gif: [UInt8] =
            Array("GIF89a".utf8) + Self.be16(length) + Self.be16(length) + [0xFF, 0, 0] + [0x2C] + [UInt8](repeating: 0xFF, count: 9)
        #expect((gif.withUnsafeBytes { GIFBlocks.scan($0)?.frames } ?? 0) <= 1)
    }

    @Test("DeepZoom: sizes, tile sizes and overlaps of any text parse or not, and a pyramid of them never traps", arguments: texts)
    func deepZoom(_ text: String) {
        let dzi = """
            <Image xmlns="http://schemas.microsoft.com/deepzoom/2008" TileSize="\(text)" Overlap="\(text)" Format="jpg"><Size Width="\(text)" Height="\(text)"/></Image>
            """
        guard let parsed = Manifest.Tiles.parseDZI(Array(dzi.utf8)) else { return }
        let levels = Manifest.Tiles.levels(width: parsed.width, height: parsed.height)
        #expect(levels >= 0)
        _ = Manifest.Tiles.fileCount(width: parsed.width, height: parsed.height, tileSize: parsed.tileSize)
        let thumbnail = Manifest.Thumbnail(
            path: "thumbs/ab/x.dzi", width: parsed.width, height: parsed.height, crop: nil, bytes: 1, sha256: "",
            tiles: Manifest.Tiles(tileSize: parsed.tileSize, overlap: parsed.overlap, format: "jpg", levels: levels, files: 1, bytes: 1))
        _ = thumbnail.tilePath(level: max(0, levels - 1), column: Int.max, row: Int.min)
        _ = thumbnail.tilePath(level: 0, column: 0, row: 0)
    }

    @Test("HEIF top-level boxes: 32- and 64-bit sizes at every extreme find the mpvd box or nothing", arguments: words)
    func heifBoxes(_ word: UInt32) {
        let ftyp = Self.be32(16) + Array("ftypheic".utf8) + Self.be32(0)
        let mpvd = Self.be32(UInt32(8 + Self.mp4.count)) + Array("mpvd".utf8) + Self.mp4
        // A box of `word` bytes before the mpvd box, and a 64-bit size of `word` << 32 | word.
        let sized = ftyp + Self.be32(word) + Array("free".utf8) + mpvd
        let large = ftyp + Self.be32(1) + Array("free".utf8) + Self.be32(word) + Self.be32(word) + mpvd
        for file in [sized, large] {
            let found = file.withUnsafeBytes { MotionPhoto.locateInHEIF($0) }
            #expect(found == nil || found == (file.count - Self.mp4.count)..<file.count)
        }
        // The right sizes find it.
        let right = ftyp + Self.be32(12) + Array("free".utf8) + [0, 0, 0, 0] + mpvd
        #expect(right.withUnsafeBytes { MotionPhoto.locateInHEIF($0) } == (right.count - Self.mp4.count)..<right.count)
    }

    @Test("MP4 sample tables: box sizes and sample counts at every extreme are counted without overflow or found absent", arguments: words)
    func sampleTables(_ word: UInt32) {
        func box(_ kind: String, _ body: [UInt8]) -> [UInt8] { Self.be32(UInt32(8 + body.count)) + Array(kind.utf8) + body }
        let stbl =
            box("stsz", [0, 0, 0, 0] + Self.be32(1) + Self.be32(word))
            + box("stts", [0, 0, 0, 0] + Self.be32(2) + Self.be32(word) + Self.be32(1) + Self.be32(word) + Self.be32(1))
        let moov = box("moov", box("trak", box("mdia", box("minf", box("stbl", stbl)))))
        let file = Self.mp4 + moov
        let read = { (at: Int, length: Int) -> [UInt8] in at < file.count ? Array(file[at..<min(file.count, at + length)]) : [] }
        let samples = ISOMediaIndex.index(size: file.count, moovLimit: 1 << 20, read: read)?.samples
        // stts adds two counts of `word`; stsz says `word`: the larger, never a trap.
        #expect(samples == max(Int(word), 2 * Int(word)))
        // A top-level box whose size runs past the end, and a moov larger than the limit.
        let broken = Self.be32(word | 0x100) + Array("free".utf8) + moov
        let readBroken = { (at: Int, length: Int) -> [UInt8] in at < broken.count ? Array(broken[at..<min(broken.count, at + length)]) : []
        }
        #expect(ISOMediaIndex.index(size: broken.count, moovLimit: 1 << 20, read: readBroken) == nil || word == 0)
        #expect(ISOMediaIndex.index(size: file.count, moovLimit: 8, read: read)?.samples == Int.max)
    }
}
