/// Natural ordering of names, as file browsers sort them: runs of digits compare by value, so
/// `IMG_2` comes before `IMG_10`; byte order breaks every tie, so the order is total.
enum NaturalOrder {
    /// True when `a` sorts before `b`.
    static func less(_ a: String, _ b: String) -> Bool {
        less(Array(a.utf8), Array(b.utf8))
    }

    /// True when the name `x` sorts before `y` (raw bytes: names need not be UTF-8, and two
    /// spellings of one text in different Unicode normalizations are different names).
    static func less(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        let order = compare(x, y)
        return order != 0 ? order < 0 : x.lexicographicallyPrecedes(y)
    }

    /// Component-wise natural order of `/`-separated paths: a directory's contents sort right after it.
    static func lessPath(_ a: [[UInt8]], _ b: [[UInt8]]) -> Bool {
        for (x, y) in zip(a, b) where x != y {
            return less(x, y)
        }
        return a.count < b.count
    }

    /// -1, 0 or 1 by natural order alone (0 for names like `a01` and `a1`).
    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var i = 0
        var j = 0
        while i < a.count, j < b.count {
            if isDigit(a[i]), isDigit(b[j]) {
                let startA = i
                let startB = j
                while i < a.count, isDigit(a[i]) { i += 1 }
                while j < b.count, isDigit(b[j]) { j += 1 }
                // Compare the values without converting (runs may exceed Int): drop leading
                // zeros, then the longer run is larger, then digit by digit.
                let runA = a[startA..<i].drop { $0 == 48 }
                let runB = b[startB..<j].drop { $0 == 48 }
                if runA.count != runB.count { return runA.count < runB.count ? -1 : 1 }
                for (x, y) in zip(runA, runB) where x != y {
                    return x < y ? -1 : 1
                }
            } else {
                let x = lowered(a[i])
                let y = lowered(b[j])
                if x != y { return x < y ? -1 : 1 }
                i += 1
                j += 1
            }
        }
        let restA = a.count - i
        let restB = b.count - j
        return restA == restB ? 0 : (restA < restB ? -1 : 1)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }

    /// ASCII case folding, as Finder and most file managers do for Latin names.
    private static func lowered(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
}
