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
        /// `--name VALUE`, repeatable (a string or an array of strings in the file).
        case values
        /// `--name` (true or false in the file).
        case flag
        /// `--name` / `--no-name` (true or false in the file).
        case invertibleFlag
    }

    /// Every option of `build` but `--config` itself (a test keeps this in step with `build --help`).
    static let buildOptions: [String: Kind] = [
        "out": .value, "thumb": .values, "viewport": .values, "preset": .value, "original-url": .value, "raw-pairs": .value,
        "ladder-max-side": .value, "tile-pixels": .value, "shard": .value, "viewer": .flag, "sections": .value, "order": .value,
        "exclude": .values,
        "jobs": .value,
        "max-pixels": .value, "max-file-bytes": .value, "max-decode-bytes": .value, "decode-timeout": .value,
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
                if !given.positional { tokens.insert(source, at: 0) }
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
        do {
            return try JSONDecoder().decode([String: Value].self, from: data)
        } catch {
            throw ValidationError("--config \(path): not a JSON object of options")
        }
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
        case .values:
            if case .list(let list) = value { return try list.flatMap { ["--" + key, try scalar($0)] } }
            return ["--" + key, try scalar(value)]
        case .flag, .invertibleFlag:
            guard case .bool(let flag) = value else { throw ValidationError("\(path): \"\(key)\" must be true or false") }
            if flag { return ["--" + key] }
            return kind == .invertibleFlag ? ["--no-" + key] : []
        }
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
            var name: String?
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                name = String(body.split(separator: "=", maxSplits: 1).first ?? body)
                if name!.hasPrefix("no-"), buildOptions[String(name!.dropFirst(3))] == .invertibleFlag { name = String(name!.dropFirst(3)) }
                if let kind = buildOptions[name!], kind == .value || kind == .values, !argument.contains("=") { index += 1 }
            } else if argument.hasPrefix("-"), argument.count == 2, let short = shortNames[argument.last!] {
                name = short
                if buildOptions[short] == .value { index += 1 }
            } else {
                positional = true
            }
            if let name { options.insert(name) }
        }
        return (options, positional)
    }
}
