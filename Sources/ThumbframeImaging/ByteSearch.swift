import Foundation

/// Byte strings found in a file's bytes: the XMP and boxes of a Motion Photo, a JPEG's gain-map
/// segment.
package enum ByteSearch {
    /// The first index at or after `from` where `needle` starts in `haystack` (memmem).
    package static func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer, from: Int = 0) -> Int? {
        guard !needle.isEmpty, from >= 0, from < haystack.count, let base = haystack.baseAddress else { return nil }
        // memchr to each candidate first byte, memcmp for the rest (memmem is a GNU extension).
        return needle.withUnsafeBytes { pattern -> Int? in
            var index = from
            while index + needle.count <= haystack.count {
                guard let hit = memchr(base + index, Int32(needle[0]), haystack.count - needle.count + 1 - index) else { return nil }
                let position = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + position, pattern.baseAddress!, needle.count) == 0 { return position }
                index = position + 1
            }
            return nil
        }
    }

}
