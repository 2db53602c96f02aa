import ThumbframeManifest

/// An `OutputName` path (`thumbs/XX/<32 hex>.jpg`, `pages/XX/<32 hex>.json`) in 24 bytes: what
/// the pruner holds for each file of a library (a million photos have three million thumbnails;
/// as strings in sets they took over a gigabyte). Ordered as the paths' bytes are.
struct CompactName: Hashable, Comparable, Sendable {
    /// Index in `areas`.
    private var area: UInt8
    /// Index in `suffixes`.
    private var suffix: UInt8
    /// The 32 hex digits as two numbers.
    private var high: UInt64
    private var low: UInt64

    /// In byte order, so comparing indexes compares the names.
    private static let areas = OutputName.extensions.keys.sorted()
    private static let suffixes = Set(OutputName.extensions.values.joined()).sorted()
    private static let areaBytes = areas.map { Array($0.utf8) }
    private static let suffixBytes = suffixes.map { Array($0.utf8) }
    private static let allowed: [[Bool]] = areas.map { area in suffixes.map { OutputName.extensions[area]!.contains($0) } }

    /// The name of `path`, or nil when it is not of the shape `OutputName` accepts.
    init?(_ path: String) {
        var path = path
        guard let name = path.withUTF8({ Self(bytes: $0) }) else { return nil }
        self = name
    }

    /// The name of a path's bytes, or nil when they are not of the shape `OutputName` accepts.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")),
            let area = Self.areaBytes.firstIndex(where: { $0.elementsEqual(bytes[..<slash]) })
        else { return nil }
        // "XX/", 32 hex digits (the first two the fan-out's), a dot and the extension.
        let fanout = slash + 1
        let file = fanout + 3
        guard bytes.count > file + 33, bytes[fanout + 2] == UInt8(ascii: "/"), bytes[fanout] == bytes[file],
            bytes[fanout + 1] == bytes[file + 1], bytes[file + 32] == UInt8(ascii: ".")
        else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for offset in 0..<32 {
            let byte = bytes[file + offset]
            let digit: UInt8
            switch byte {
            case 48...57: digit = byte - 48
            case 97...102: digit = byte - 87
            default: return nil
            }
            if offset < 16 { high = high << 4 | UInt64(digit) } else { low = low << 4 | UInt64(digit) }
        }
        let extensionBytes = bytes[(file + 33)...]
        guard let suffix = Self.suffixBytes.firstIndex(where: { $0.elementsEqual(extensionBytes) }), Self.allowed[area][suffix]
        else { return nil }
        self.area = UInt8(area)
        self.suffix = UInt8(suffix)
        self.high = high
        self.low = low
    }

    /// The path again.
    var path: String {
        String(unsafeUninitializedCapacity: pathLength) { buffer in
            var count = 0
            func put(_ bytes: [UInt8]) {
                for byte in bytes {
                    buffer[count] = byte
                    count += 1
                }
            }
            func hex(_ value: UInt64, digits: Int) {
                for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
                    let digit = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 15
                    buffer[count] = digit < 10 ? 48 + digit : 87 + digit
                    count += 1
                }
            }
            put(Self.areaBytes[Int(area)])
            put([UInt8(ascii: "/")])
            hex(high >> 56, digits: 2)
            put([UInt8(ascii: "/")])
            hex(high, digits: 16)
            hex(low, digits: 16)
            put([UInt8(ascii: ".")])
            put(Self.suffixBytes[Int(suffix)])
            return count
        }
    }

    /// The path's length in bytes.
    var pathLength: Int { Self.areaBytes[Int(area)].count + 37 + Self.suffixBytes[Int(suffix)].count }

    /// `area/XX`, the fan-out directory's path.
    var fanoutKey: String {
        let path = path
        return String(path.prefix(Self.areaBytes[Int(area)].count + 3))
    }

    static func < (a: CompactName, b: CompactName) -> Bool {
        (a.area, a.high, a.low, a.suffix) < (b.area, b.high, b.low, b.suffix)
    }
}

/// A set of `CompactName`s, sorted: 24 bytes a name, looked up by bisection, and read back in
/// the paths' byte order (the ledger's order) without sorting strings.
struct OwnedNames: Sendable {
    private(set) var sorted: [CompactName]

    /// The names given (in any order, repeats allowed).
    init(_ names: [CompactName] = []) {
        var names = names
        names.sort()
        var unique = 0
        for position in names.indices where unique == 0 || names[unique - 1] != names[position] {
            names[unique] = names[position]
            unique += 1
        }
        names.removeLast(names.count - unique)
        sorted = names
    }

    /// The names of `paths` that have thumbframe's shape.
    init(paths: some Sequence<String>) {
        self.init(paths.compactMap(CompactName.init))
    }

    var count: Int { sorted.count }

    func contains(_ name: CompactName) -> Bool {
        var range = 0..<sorted.count
        while !range.isEmpty {
            let middle = range.lowerBound + range.count / 2
            if sorted[middle] == name { return true }
            range = sorted[middle] < name ? (middle + 1)..<range.upperBound : range.lowerBound..<middle
        }
        return false
    }

    func contains(path: String) -> Bool {
        CompactName(path).map(contains) ?? false
    }

    /// Both sets' names.
    func union(_ other: OwnedNames) -> OwnedNames {
        OwnedNames(sorted + other.sorted)
    }

    /// The bytes of `path\n` for every name in order, handed out in pieces of about `size` bytes.
    func forEachLedgerPiece<Failure: Error>(size: Int = 1 << 20, _ body: ([UInt8]) throws(Failure) -> Void) throws(Failure) {
        var piece: [UInt8] = []
        piece.reserveCapacity(size + 64)
        for name in sorted {
            piece.append(contentsOf: name.path.utf8)
            piece.append(10)
            if piece.count >= size {
                try body(piece)
                piece.removeAll(keepingCapacity: true)
            }
        }
        if !piece.isEmpty { try body(piece) }
    }

    /// The ledger's size in bytes: every path and its newline.
    var ledgerBytes: Int { sorted.reduce(0) { $0 + $1.pathLength + 1 } }
}
