import Foundation

extension Manifest {
    /// Encodes the manifest deterministically: sorted keys, two-space indentation, no escaped
    /// slashes, and a final newline, so equal manifests are equal bytes.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }

    /// Decodes a manifest, rejecting JSON that is not a version-1 thumbframe manifest.
    public static func decode(from data: Data) throws(ManifestError) -> Manifest {
        struct Header: Decodable {
            var format: String?
            var version: Int?
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            throw .malformed(Self.describe(error))
        }
        guard header.format == formatName, header.version == currentVersion else {
            throw .unsupported(format: header.format ?? "(none)", version: header.version ?? 0)
        }
        do {
            return try JSONDecoder().decode(Manifest.self, from: data)
        } catch {
            throw .malformed(Self.describe(error))
        }
    }

    /// One line for a decoding error, naming the key path where it happened.
    private static func describe(_ error: any Error) -> String {
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
