import Foundation

/// A camera's word that a photo is one frame of a burst: what `--stacks bursts` groups by, with
/// no judgment of the pixels. Read from Apple's MakerNote (BurstUUID), Google Camera's XMP
/// (`GCamera:BurstID`, `GCamera:BurstPrimary`) or an Android burst's file names
/// (`…_BURST<digits>…`, `_COVER` on the one the camera chose).
package struct BurstMark: Codable, Sendable, Equatable, Hashable {
    /// The burst's identifier, prefixed by where it came from (`apple:`, `gcamera:`, `name:`):
    /// frames of one burst share it.
    package var id: String
    /// The camera marked this frame as the burst's pick (its cover).
    package var pick: Bool

    package init(id: String, pick: Bool = false) {
        self.id = id
        self.pick = pick
    }

    /// Apple's BurstUUID, MakerNote tag 0x000B (exiftool's name), beside the content identifier.
    static func apple(_ note: [UInt8]) -> BurstMark? {
        AppleMakerNote.string(note, tag: 0x000B).map { BurstMark(id: "apple:" + $0) }
    }

    /// Google Camera's `GCamera:BurstID` (attribute or element), with `GCamera:BurstPrimary` 1
    /// on the frame it picked.
    static func googleCamera(xmp: [UInt8]?) -> BurstMark? {
        guard let xmp, let text = String(bytes: xmp.prefix(1 << 16), encoding: .utf8),
            let id = HDRFacts.attribute("GCamera:BurstID", in: text, limit: 128).flatMap({ ImageHeader.contentIdentifier(Array($0.utf8)) })
        else { return nil }
        return BurstMark(id: "gcamera:" + id, pick: HDRFacts.attribute("GCamera:BurstPrimary", in: text) == "1")
    }

    /// An Android burst's frame by its name: `00001IMG_00001_BURST20201231123456789.jpg` (the
    /// burst is the timestamp after `_BURST`) or `IMG_20201231_123456_BURST002.jpg` (the burst
    /// is the name before `_BURST`, the digits after it the frame); `_COVER` before the
    /// extension marks the camera's pick.
    package static func fileName(_ name: some Collection<UInt8>) -> BurstMark? {
        let name = Array(name)
        let marker = Array("_BURST".utf8)
        guard name.count > marker.count,
            let start = (0...(name.count - marker.count)).first(where: { name[$0..<($0 + marker.count)].elementsEqual(marker) })
        else { return nil }
        let digits = name[(start + marker.count)...].prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, start > 0 || digits.count >= 14 else { return nil }
        let id = digits.count >= 14 ? "BURST" + String(decoding: digits, as: UTF8.self) : String(decoding: name[..<start], as: UTF8.self)
        let stem = name.lastIndex(of: UInt8(ascii: ".")).map { name[..<$0] } ?? name[...]
        return BurstMark(id: "name:" + id, pick: stem.count >= 6 && stem.suffix(6).elementsEqual("_COVER".utf8))
    }
}
