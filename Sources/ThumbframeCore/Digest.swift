import CVips

/// SHA-256 through GLib's GChecksum, which libvips already links: no extra dependency.
enum Digest {
    /// Lowercase hex SHA-256 of `bytes`.
    static func sha256(_ bytes: UnsafeRawBufferPointer) -> String {
        guard let checksum = g_checksum_new(G_CHECKSUM_SHA256) else {
            preconditionFailure("GLib has no SHA-256")
        }
        defer { g_checksum_free(checksum) }
        if let base = bytes.baseAddress, bytes.count > 0 {
            // g_checksum_update takes a gssize length; feed huge buffers in slices.
            var offset = 0
            while offset < bytes.count {
                let chunk = min(bytes.count - offset, 1 << 30)
                g_checksum_update(checksum, base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), chunk)
                offset += chunk
            }
        }
        return String(cString: g_checksum_get_string(checksum))
    }

    /// Lowercase hex SHA-256 of a string's UTF-8 bytes.
    static func sha256(_ text: String) -> String {
        var text = text
        return text.withUTF8 { sha256(UnsafeRawBufferPointer($0)) }
    }
}
