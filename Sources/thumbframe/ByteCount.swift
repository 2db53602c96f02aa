// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser

    /// A size on the command line: whole bytes, or a number with a binary unit (`K`, `M`, `G`, `T`,
    /// each also as `KiB`…; `1G` is 1 073 741 824 bytes, `1.5G` is allowed).
    struct ByteCount: ExpressibleByArgument, Equatable {
        var bytes: Int

        init(bytes: Int) { self.bytes = bytes }

        init?(argument: String) {
            let units: [(String, Int)] = [("K", 10), ("M", 20), ("G", 30), ("T", 40)]
            var text = Substring(argument)
            var shift = 0
            for (unit, bits) in units {
                for suffix in [unit + "iB", unit + "B", unit, unit.lowercased()] where text.hasSuffix(suffix) {
                    text = text.dropLast(suffix.count)
                    shift = bits
                    break
                }
                if shift != 0 { break }
            }
            if shift == 0, text.hasSuffix("B") { text = text.dropLast() }
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let value = Double(text), value >= 0 else {
                return nil
            }
            let bytes = (value * Double(1 << shift)).rounded()
            guard bytes < Double(Int.max) else { return nil }
            self.bytes = Int(bytes)
        }

        /// The default as the shortest exact spelling (`512M`).
        var defaultValueDescription: String {
            for (unit, bits) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] where bytes > 0 && bytes % (1 << bits) == 0 {
                return "\(bytes >> bits)\(unit)"
            }
            return String(bytes)
        }
    }
#endif
