import Foundation

/// Decoding shared by the top document and pages: the header first, so JSON of another kind or
/// version is named as such instead of failing on a missing key.
enum ManifestCoding {
    private struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    static func decode<T: Decodable>(
        _ type: T.Type, from data: Data, format: String, versions: ClosedRange<Int> = Manifest.readableVersions
    ) throws(ManifestError) -> T {
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw .malformed(describe(error))
        }
        guard header.format == format, let version = header.version, versions.contains(version) else {
            // A hostile file's format may be 100 MB long: the message quotes its beginning.
            let named = header.format.map { $0.count > 40 ? String($0.prefix(40)) + "…" : $0 } ?? "(none)"
            throw .unsupported(format: named, version: header.version ?? 0)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw .malformed(describe(error))
        }
    }

    /// One line for a decoding error, naming the key path where it happened.
    static func describe(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }
            return keys.isEmpty ? "top level" : keys.joined()
        }
        switch error as? DecodingError {
        case .dataCorrupted(let context):
            return "invalid JSON at \(path(context))"
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(path(context))"
        default:
            return "\(error)"
        }
    }
}
