internal import CCrypto
import Foundation

/// SHA-256 through OpenSSL's libcrypto, which uses the CPU's SHA extensions where there are any:
/// every byte of every original is hashed on a cold build, so this is on the hot path.
enum Digest {
    /// Lowercase hex SHA-256 of `bytes`.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        // EVP_Digest takes a null pointer for no bytes only with a length of 0.
        let ok = digest.withUnsafeMutableBufferPointer { output in
            EVP_Digest(bytes.baseAddress, bytes.count, output.baseAddress, &length, EVP_sha256(), nil)
        }
        precondition(ok == 1 && length == 32, "OpenSSL SHA-256 failed")
        return hex(digest)
    }

    /// Lowercase hex SHA-256 of `size` bytes of an open file from `start` (its first by
    /// default), read with `pread` in blocks of 4 MiB (a video is never held whole); nil when the
    /// file cannot be read that far, or `each` (given every block as it is hashed, at its offset
    /// from `start`: a copy made in the same read) returns false.
    static func sha256(
        fd: Int32, offset start: Int = 0, size: Int, each: ((UnsafeRawBufferPointer, Int) -> Bool)? = nil
    ) -> String? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return nil }
        let block = 4 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: block, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let got = pread(fd, buffer, min(block, size - offset), off_t(start + offset))
            if got < 0, errno == EINTR { continue }
            guard got > 0, EVP_DigestUpdate(context, buffer, got) == 1 else { return nil }
            if let each, !each(UnsafeRawBufferPointer(start: buffer, count: got), offset) { return nil }
            offset += got
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else { return nil }
        return hex(digest)
    }

    private static func hex(_ digest: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in digest {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Lowercase hex SHA-256 of a string's UTF-8 bytes.
    static func sha256(_ text: String) -> String {
        var text = text
        return text.withUTF8 { sha256(UnsafeRawBufferPointer($0)) }
    }
}
