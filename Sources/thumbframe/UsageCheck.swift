// Built with the CommandLine trait (the default); without it, WithoutCommandLine.swift.
#if CommandLine
    import ArgumentParser
    import Foundation

    /// Usage mistakes named for what they are, before ArgumentParser reports what they broke (it says
    /// "Missing '--out'" for `-o site`, "Unknown option '--out'" for a mistyped or forgotten
    /// subcommand, and prints the top help with status 0 for `help nosuch`). Also takes `-j4` as
    /// `-j 4`, as getopt does.
    enum UsageCheck {
        /// The subcommands' names.
        static var subcommands: [String] {
            Thumbframe.configuration.subcommands.compactMap { $0.configuration.commandName }
        }

        /// The arguments (with a short option's attached value split off), or a `ValidationError`
        /// naming the mistake.
        static func check(_ arguments: [String]) throws -> [String] {
            guard let first = arguments.first else { return arguments }
            let names = subcommands
            if first == "help" {
                if arguments.count > 1, !names.contains(arguments[1]) {
                    throw ValidationError("unknown subcommand '\(arguments[1])'" + suggestion(arguments[1], among: names, prefix: ""))
                }
                return arguments
            }
            if !first.hasPrefix("-"), !names.contains(first) {
                if let close = closest(first, among: names) {
                    throw ValidationError("unknown subcommand '\(first)'; did you mean '\(close)'?")
                }
                throw ValidationError("'\(first)' is not a subcommand; to build it: thumbframe build \(first) --out OUT_DIR")
            }
            if first.hasPrefix("-"), let name = ConfigFile.optionName(first), ConfigFile.buildOptions[name] != nil {
                throw ValidationError("no subcommand before '\(first)'; a build is: thumbframe build SOURCE_DIR --out OUT_DIR [options]")
            }
            return first == "build" ? try checkBuild(arguments) : arguments
        }

        /// `build`'s options: an unknown one is named with the closest known one; `-j4` is `-j 4`.
        private static func checkBuild(_ arguments: [String]) throws -> [String] {
            var checked = ["build"]
            var index = 1
            while index < arguments.count {
                let argument = arguments[index]
                index += 1
                if argument == "--" {
                    checked += arguments[(index - 1)...]
                    break
                }
                guard argument.count > 1, argument.hasPrefix("-"), Double(argument) == nil else {
                    checked.append(argument)
                    continue
                }
                if !argument.hasPrefix("--"), argument.count > 2,
                    let long = ConfigFile.shortNames[argument[argument.index(after: argument.startIndex)]],
                    ConfigFile.buildOptions[long]?.takesValue == true
                {
                    checked += [String(argument.prefix(2)), String(argument.dropFirst(2))]
                    continue
                }
                checked.append(argument)
                guard let name = ConfigFile.optionName(argument) else { continue }
                let own = ["config", "help", "version", "help-hidden", "experimental-dump-help"]
                let known = Array(ConfigFile.buildOptions.keys) + own.prefix(1)
                let kind = name == "config" ? .value : ConfigFile.buildOptions[name]
                if kind == nil, !own.contains(name) {
                    let dashes = argument.hasPrefix("--") ? "--" : "-"
                    throw ValidationError("unknown option '\(dashes)\(name)'" + suggestion(name, among: known, prefix: "--"))
                }
                // A value follows: it is not an option, whatever it looks like.
                if kind?.takesValue == true, !argument.contains("="), index < arguments.count {
                    checked.append(arguments[index])
                    index += 1
                }
            }
            return checked
        }

        /// `; did you mean 'build'?`, or the choices when none is close.
        private static func suggestion(_ word: String, among names: [String], prefix: String) -> String {
            if let close = closest(word, among: names) { return "; did you mean '\(prefix)\(close)'?" }
            return prefix.isEmpty ? " (subcommands: \(names.joined(separator: ", ")))" : ""
        }

        /// The name nearest `word` (edit distance at most 2, or one a prefix of the other), if any.
        static func closest(_ word: String, among names: [String]) -> String? {
            let candidates = names.filter { distance(word, $0) <= 2 || $0.hasPrefix(word) || word.hasPrefix($0) }
            return candidates.min { (distance(word, $0), $0) < (distance(word, $1), $1) }
        }

        /// Levenshtein distance.
        static func distance(_ a: String, _ b: String) -> Int {
            let (a, b) = (Array(a), Array(b))
            guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
            var row = Array(0...b.count)
            for i in 1...a.count {
                var diagonal = row[0]
                row[0] = i
                for j in 1...b.count {
                    let above = row[j]
                    row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                    diagonal = above
                }
            }
            return row[b.count]
        }
    }
#endif
