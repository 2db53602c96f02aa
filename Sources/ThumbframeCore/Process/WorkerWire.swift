import Foundation

/// The bytes of one `WorkerProtocol` message as it is built: its length (4 bytes, big-endian,
/// filled in by `framed`), then fields in a fixed order — integers as 8 bytes little-endian, byte
/// strings after their length, optionals after a presence byte.
///
/// Not JSON for the messages every file sends (a job, its outcome): on a library of small files
/// Codable's generic machinery on both ends of the socket cost more CPU than decoding the file.
/// What goes once a worker (its setup) or rarely (a stored item to verify) is JSON inside a field.
struct WireWriter {
    private var buffer: [UInt8] = [0, 0, 0, 0]

    init(tag: UInt8) { buffer.append(tag) }

    mutating func bool(_ value: Bool) { buffer.append(value ? 1 : 0) }

    mutating func int(_ value: Int) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }

    mutating func bytes(_ value: [UInt8]) {
        int(value.count)
        buffer.append(contentsOf: value)
    }

    mutating func string(_ value: String) {
        int(value.utf8.count)
        buffer.append(contentsOf: value.utf8)
    }

    mutating func optional<Value>(_ value: Value?, _ write: (inout WireWriter, Value) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }

    /// `value` as JSON (what is sent rarely; nothing thumbframe sends fails to encode).
    mutating func json(_ value: some Encodable) {
        bytes((try? JSONEncoder().encode(value)).map(Array.init) ?? [])
    }

    /// The message, its length in front.
    func framed() -> [UInt8] {
        var framed = buffer
        let count = UInt32(framed.count - 4)
        framed[0] = UInt8(count >> 24)
        framed[1] = UInt8(count >> 16 & 0xFF)
        framed[2] = UInt8(count >> 8 & 0xFF)
        framed[3] = UInt8(count & 0xFF)
        return framed
    }
}

/// Reads a message `WireWriter` built (after its length), field by field; any field that runs
/// past the end, or bytes left over, make it malformed.
struct WireReader {
    /// A message that is not one.
    struct Malformed: Error {}

    private let body: [UInt8]
    private var offset = 0

    init(_ body: [UInt8]) { self.body = body }

    mutating func byte() throws(Malformed) -> UInt8 {
        guard offset < body.count else { throw Malformed() }
        offset += 1
        return body[offset - 1]
    }

    mutating func bool() throws(Malformed) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw Malformed()
        }
    }

    mutating func int() throws(Malformed) -> Int {
        guard body.count - offset >= 8 else { throw Malformed() }
        var value = 0
        for shift in stride(from: 0, to: 64, by: 8) {
            value |= Int(body[offset]) << shift
            offset += 1
        }
        return value
    }

    mutating func bytes() throws(Malformed) -> [UInt8] { Array(try counted()) }

    mutating func string() throws(Malformed) -> String { String(decoding: try counted(), as: UTF8.self) }

    /// A byte string's bytes, after its length.
    private mutating func counted() throws(Malformed) -> ArraySlice<UInt8> {
        let count = try int()
        guard count >= 0, count <= body.count - offset else { throw Malformed() }
        offset += count
        return body[(offset - count)..<offset]
    }

    mutating func optional<Value>(_ read: (inout WireReader) throws(Malformed) -> Value) throws(Malformed) -> Value? {
        try bool() ? try read(&self) : nil
    }

    mutating func json<Value: Decodable>(_ type: Value.Type) throws(Malformed) -> Value {
        let bytes = try bytes()
        guard let value = try? JSONDecoder().decode(type, from: Data(bytes)) else { throw Malformed() }
        return value
    }

    /// Throws unless every byte was read.
    func finish() throws(Malformed) {
        guard offset == body.count else { throw Malformed() }
    }
}
