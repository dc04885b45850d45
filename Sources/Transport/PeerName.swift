import PadSystem

/// A name a peer gave itself (a client's host name in `hello` or a pairing request). It comes from
/// the network, so it is bounded when decoded and never printed or stored as it came: control
/// characters would rewrite the host's terminal, and spaces or newlines would corrupt the
/// one-entry-per-line stores (`paired-clients`, `known_hosts`).
public struct PeerName: Hashable, Sendable, CustomStringConvertible {
    /// The most UTF-8 bytes a name may have on the wire and in a store.
    public static let maxBytes = 64

    /// The name as the peer sent it (valid UTF-8, at most `maxBytes`).
    public let raw: String

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case tooLong(bytes: Int)
        case notUTF8
        public var description: String {
            switch self {
            case .tooLong(let bytes): return "a peer name of \(bytes) bytes (at most \(PeerName.maxBytes))"
            case .notUTF8: return "a peer name that is not UTF-8"
            }
        }
    }

    /// Decodes a name from wire bytes, refusing what no padgate peer sends.
    public init(wire bytes: some Collection<UInt8>) throws(Invalid) {
        guard bytes.count <= Self.maxBytes else { throw .tooLong(bytes: bytes.count) }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        raw = text
    }

    /// A local name (this machine's host name): cut to `maxBytes` at a character boundary.
    public init(local text: String) {
        var cut = ""
        for character in text where cut.utf8.count + String(character).utf8.count <= Self.maxBytes { cut.append(character) }
        raw = cut
    }

    public var wireBytes: [UInt8] { Array(raw.utf8) }

    /// For a terminal or a log: printable characters as they are, everything else as `\u{…}`, in quotes
    /// so that a name with spaces reads as one.
    public var description: String { "'" + displayed + "'" }

    public var displayed: String { TerminalText.escaped(raw) }

    /// One token for a line-based store (`LineToken`); `init(stored:)` reads it back exactly.
    public var stored: String { LineToken.encode(raw) }

    /// Reads a `stored` token; nil for anything `stored` cannot have written.
    public init?(stored token: some StringProtocol) {
        guard let text = LineToken.decode(token), let name = try? PeerName(wire: Array(text.utf8)) else { return nil }
        self = name
    }

    static func isSafeToShow(_ scalar: Unicode.Scalar) -> Bool { TerminalText.isSafeToShow(scalar) }
}

extension PeerName {
    /// Any text a peer or the LAN chose (a name, a service, an argument echoed back), for a
    /// terminal: escaped as `displayed` escapes a name, whatever its length.
    public static func escaped(_ text: some StringProtocol) -> String { TerminalText.escaped(text) }

    /// What a message may echo of text it refuses (docs/command-line.md): at most `limit`
    /// characters of it, escaped, with "…" when there was more.
    public static func echoed(_ text: some StringProtocol, limit: Int = 40) -> String {
        escaped(text.prefix(limit)) + (text.count > limit ? "…" : "")
    }

    /// JSON text made safe for a terminal without changing what it means: every character a
    /// terminal could act on (controls, C1, format and bidirectional marks, unassigned) as a
    /// `\uXXXX` escape, which every JSON reader turns back into the same string.
    public static func terminalSafeJSON(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            if scalar == "\n" || isSafeInJSON(scalar) { out.unicodeScalars.append(scalar); continue }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    static func isSafeInJSON(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return false
        default: return true
        }
    }
}
