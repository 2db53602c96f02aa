// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation

    /// `build --config FILE`: the same options as the command line, as one JSON object whose keys
    /// are the long option names (`{"out": "site", "thumb": ["grid=256x256:cover"], "jobs": 4,
    /// "viewer": true}`) and `source` for SOURCE_DIR. The file's options go before the command
    /// line's, so the command line wins: a single value given there replaces the file's, and a
    /// repeatable option given there replaces the file's list.
    enum ConfigFile {
        enum Kind {
            /// `--name VALUE` (a string or a number in the file).
            case value
            /// `--name N` (a number in the file: `"jobs": "2"` is refused, as a mistake would be).
            case number
            /// `--name VALUE`, repeatable (a string or an array of strings in the file).
            case values
            /// `--name` (true or false in the file).
            case flag
            /// `--name` / `--no-name` (true or false in the file).
            case invertibleFlag

            /// Whether a value follows the option on the command line.
            var takesValue: Bool { self == .value || self == .values || self == .number }
        }

        /// Every option of `build` but `--config` itself (a test keeps this in step with `build --help`).
        static let buildOptions: [String: Kind] = [
            "out": .value, "thumb": .values, "viewport": .values, "preset": .value, "original-url": .value, "raw-pairs": .value,
            "zoom": .value, "ladder-max-side": .number, "tile-pixels": .number, "hdr": .value, "stacks": .value, "locations": .value,
            "shard": .value,
            "viewer": .flag,
            "sections": .value,
            "order": .value,
            "exclude": .values,
            "jobs": .number,
            "max-pixels": .number, "max-file-bytes": .number, "max-decode-bytes": .number, "decode-timeout": .number,
            "video-renditions": .value, "video-max-side": .number, "video-timeout": .number,
            "allow-shrink": .flag, "follow-symlinks": .flag, "force": .flag, "verify": .flag, "check": .flag, "json": .flag,
            "fail-on": .value, "quiet": .flag, "progress": .invertibleFlag, "log-format": .value,
        ]

        /// Short names of the options above, to see which ones the command line gives.
        static let shortNames: [Character: String] = ["j": "jobs", "q": "quiet"]

        /// The arguments with `build`'s `--config FILE` replaced by the file's options, put before
        /// the rest; other arguments are returned as they are.
        static func expand(_ arguments: [String]) throws -> [String] {
            guard arguments.first == "build" else { return arguments }
            var rest = Array(arguments.dropFirst())
            var path: String?
            if let at = rest.firstIndex(of: "--config") {
                guard at + 1 < rest.count else { throw ValidationError("--config needs a FILE") }
                path = rest[at + 1]
                rest.removeSubrange(at...at + 1)
            } else if let at = rest.firstIndex(where: { $0.hasPrefix("--config=") }) {
                path = String(rest[at].dropFirst("--config=".count))
                rest.remove(at: at)
            }
            guard let path else { return arguments }
            let given = Self.given(rest)
            var tokens: [String] = []
            for (key, value) in try read(path).sorted(by: { $0.key < $1.key }) {
                if key == "source" {
                    guard case .string(let source) = value else { throw ValidationError("\(path): \"source\" must be a string") }
                    if !given.positional { tokens.insert(Self.resolved(source, beside: path), at: 0) }
                    continue
                }
                if key == "out", case .string(let out) = value {
                    if !given.options.contains(key) { tokens += ["--out", Self.resolved(out, beside: path)] }
                    continue
                }
                guard let kind = buildOptions[key] else {
                    throw ValidationError("\(path): unknown option \"\(key)\" (keys are build's long option names, and \"source\")")
                }
                if kind == .values, given.options.contains(key) { continue }
                tokens += try Self.tokens(key, kind, value, path: path)
            }
            return ["build"] + tokens + rest
        }

        /// A path the file gives, relative to the file's own directory (a cron job's current
        /// directory is `$HOME`, not the one the file was written for).
        static func resolved(_ value: String, beside file: String) -> String {
            guard !value.hasPrefix("/"), !value.isEmpty else { return value }
            let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
            return directory.appendingPathComponent(value).standardizedFileURL.path
        }

        /// A value of the file: what JSON can say, kept apart so `true` is never taken for 1.
        enum Value: Decodable {
            case bool(Bool)
            case number(Double)
            case string(String)
            case list([Value])
            case other

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let flag = try? container.decode(Bool.self) {
                    self = .bool(flag)
                } else if let number = try? container.decode(Double.self) {
                    self = .number(number)
                } else if let text = try? container.decode(String.self) {
                    self = .string(text)
                } else if let list = try? container.decode([Value].self) {
                    self = .list(list)
                } else {
                    self = .other
                }
            }
        }

        private static func read(_ path: String) throws -> [String: Value] {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--config \(path): cannot read the file")
            }
            let options: [String: Value]
            do {
                options = try JSONDecoder().decode([String: Value].self, from: data)
            } catch {
                throw ValidationError("--config \(path): not a JSON object of options (\(Self.syntaxProblem(data)))")
            }
            if let key = duplicatedKey(data) { throw ValidationError("--config \(path): \"\(key)\" is given twice") }
            return options
        }

        private static func tokens(_ key: String, _ kind: Kind, _ value: Value, path: String) throws -> [String] {
            func scalar(_ value: Value) throws -> String {
                switch value {
                case .string(let text): return text
                case .number(let number) where number == number.rounded() && abs(number) < 1e15: return String(Int64(number))
                case .number(let number): return String(number)
                default: throw ValidationError("\(path): \"\(key)\" must be a string or a number")
                }
            }
            switch kind {
            case .value:
                return ["--" + key, try scalar(value)]
            case .number:
                guard case .number = value else { throw ValidationError("\(path): \"\(key)\" must be a number") }
                return ["--" + key, try scalar(value)]
            case .values:
                if case .list(let list) = value { return try list.flatMap { ["--" + key, try scalar($0)] } }
                return ["--" + key, try scalar(value)]
            case .flag, .invertibleFlag:
                guard case .bool(let flag) = value else { throw ValidationError("\(path): \"\(key)\" must be true or false") }
                if flag { return ["--" + key] }
                return kind == .invertibleFlag ? ["--no-" + key] : []
            }
        }

        /// The long name of the option an argument gives (`--name`, `--name=value`, `--no-name` of an
        /// invertible flag, `-j`, `-h`: `help`), known or not; nil for an argument that is no option.
        static func optionName(_ argument: String) -> String? {
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name = String(body.split(separator: "=", maxSplits: 1).first ?? body)
                let flag = String(name.dropFirst(3))
                return name.hasPrefix("no-") && buildOptions[flag] == .invertibleFlag ? flag : name
            }
            guard argument.count == 2, argument.hasPrefix("-"), let letter = argument.last, letter.isLetter else { return nil }
            return letter == "h" ? "help" : shortNames[letter] ?? String(letter)
        }

        /// Which options (by long name) and whether a positional argument the command line gives.
        private static func given(_ arguments: [String]) -> (options: Set<String>, positional: Bool) {
            var options = Set<String>()
            var positional = false
            var index = 0
            while index < arguments.count {
                let argument = arguments[index]
                index += 1
                if argument == "--" {
                    positional = positional || index < arguments.count
                    break
                }
                guard let name = optionName(argument) else {
                    positional = true
                    continue
                }
                options.insert(name)
                if buildOptions[name]?.takesValue == true, !argument.contains("=") { index += 1 }
            }
            return (options, positional)
        }

        /// What JSONSerialization says is wrong with the text.
        private static func syntaxProblem(_ data: Data) -> String {
            do {
                _ = try JSONSerialization.jsonObject(with: data)
                return "its top level is not an object"
            } catch {
                let info = (error as NSError).userInfo
                return (info[NSDebugDescriptionErrorKey] as? String) ?? "not JSON"
            }
        }

        /// The first key the top-level object gives twice (JSON parsers keep one of them silently).
        static func duplicatedKey(_ data: Data) -> String? {
            let bytes = [UInt8](data)
            var seen = Set<String>()
            var depth = 0
            var index = 0
            // The string just read, while nothing but white space follows it.
            var lastString: String?
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    var end = index + 1
                    while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
                    lastString = String(decoding: bytes[(index + 1)..<min(end, bytes.count)], as: UTF8.self)
                    index = end + 1
                    continue
                }
                if byte == UInt8(ascii: ":"), depth == 1, let key = lastString, !seen.insert(key).inserted { return key }
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { depth += 1 }
                if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { depth -= 1 }
                if byte > 0x20 { lastString = nil }
                index += 1
            }
            return nil
        }
    }
#endif
