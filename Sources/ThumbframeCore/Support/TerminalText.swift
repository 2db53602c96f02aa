/// Text that names files, made safe to print on a terminal: a file name may hold ESC, CR,
/// newlines or bidirectional overrides that would rewrite the screen, forge lines of output or
/// reorder what is shown. Those characters become visible escapes (`\x1B`, `\n`, `\u{202E}`);
/// everything else, including all printable Unicode, passes unchanged. JSON output needs none
/// of this: the encoder escapes control characters itself.
package enum TerminalText {
    /// `text` with control characters, DEL, C1 controls and bidirectional formatting
    /// characters written as escapes.
    package static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result +=
                    scalar.value < 0x100
                    ? "\\x" + (hex.count < 2 ? "0" + hex : hex)
                    : "\\u{" + hex + "}"
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional formatting
        default: false
        }
    }
}

extension TerminalText {
    /// Multi-line text made safe line by line: its own line breaks stay, everything else that
    /// `safe` escapes is escaped.
    package static func safeLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }.joined(separator: "\n")
    }
}
