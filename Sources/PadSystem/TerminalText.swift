/// Text from outside padgate (a peer's or the LAN's names, a name a USB device gave itself, an
/// argument echoed back) made safe for a terminal: printable characters as they are, everything a
/// terminal could act on (controls such as ESC and BEL, format and bidirectional marks such as
/// U+202E, unassigned) as `\u{…}`. The one escaping rule: `PeerName.escaped` is this function,
/// and the device layer, below Transport, uses it for what it echoes.
public enum TerminalText {
    public static func escaped(_ text: some StringProtocol) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if isSafeToShow(scalar) { out.unicodeScalars.append(scalar) } else { out += "\\u{\(String(scalar.value, radix: 16))}" }
        }
        return out
    }

    /// A whole message padgate wrote that may quote outside text (an error naming what a file
    /// held): its own lines and quotes kept, everything a terminal could act on escaped as above.
    public static func escapedMessage(_ text: some StringProtocol) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\\" || scalar == "'" || isSafeToShow(scalar) { out.unicodeScalars.append(scalar) }
            else { out += "\\u{\(String(scalar.value, radix: 16))}" }
        }
        return out
    }

    /// Backslash and quote are escaped too, so an escaped text reads back unambiguously inside quotes.
    public static func isSafeToShow(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return false
        default: return scalar != "\\" && scalar != "'"
        }
    }
}
