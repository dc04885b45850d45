/// The control channel's messages (TLS, one frame each: `length u16 | type u8 | body`).
/// Frames come from peers nobody has authenticated yet, so every field is checked when decoded:
/// a frame either decodes to values padgate can use as they are, or is refused with a typed reason.
public enum ControlMessage: Equatable, Sendable {
    case hello(version: UInt8, clientName: PeerName)
    case welcome(session: UInt32, udpPort: UInt16, leaseMillis: UInt16, maxPads: UInt8)
    case refused(reason: String)
    /// Pairing (docs/pairing.md): SPAKE2 with the client as A and the host as B.
    case pairStart(share: [UInt8], clientName: PeerName)
    case pairReply(share: [UInt8], confirmation: [UInt8])
    case pairConfirm(confirmation: [UInt8])
    case pairResult(accepted: Bool, message: String)

    public static let protocolVersion: UInt8 = 1
    static let exporterLabel = "EXPORTER-padgate-datagram-v1"

    /// The largest control frame either side reads: the longest message (a pairing reply, 98 bytes;
    /// a refusal's text) fits many times over, and a peer cannot make the reader hold more.
    public static let maxFrameBytes = 1024
    /// Refusal and result texts are cut to this when sent and refused beyond it when read.
    public static let maxTextBytes = 512
    /// A SPAKE2 confirmation is one HMAC-SHA256.
    public static let confirmationLength = 32
    /// What a host may announce: a lease padgate can keep alive, and a pad count a client can use.
    public static let leaseMillisRange: ClosedRange<UInt16> = 100...60_000
    public static let maxPadsRange: ClosedRange<UInt8> = 1...16

    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case empty
        case tooLong(bytes: Int)
        case unknownType(UInt8)
        case truncated(type: UInt8)
        case badField(String)

        public var description: String {
            switch self {
            case .empty: return "an empty control frame"
            case .tooLong(let bytes): return "a control frame of \(bytes) bytes (at most \(ControlMessage.maxFrameBytes))"
            case .unknownType(let type): return "an unknown control frame type 0x\(String(type, radix: 16))"
            case .truncated(let type): return "a truncated control frame of type 0x\(String(type, radix: 16))"
            case .badField(let what): return "a control frame with \(what)"
            }
        }
    }

    public func encoded() -> [UInt8] {
        switch self {
        case .hello(let version, let name):
            return [0x01, version] + name.wireBytes
        case .welcome(let session, let port, let lease, let maxPads):
            return [0x02] + bigEndian(session, 4) + bigEndian(UInt32(port), 2) + bigEndian(UInt32(lease), 2) + [maxPads]
        case .refused(let reason):
            return [0x03] + Self.boundedText(reason)
        case .pairStart(let share, let name):
            return [0x10, UInt8(truncatingIfNeeded: share.count)] + share + name.wireBytes
        case .pairReply(let share, let confirmation):
            return [0x11, UInt8(truncatingIfNeeded: share.count)] + share + confirmation
        case .pairConfirm(let confirmation):
            return [0x12] + confirmation
        case .pairResult(let accepted, let message):
            return [0x13, accepted ? 1 : 0] + Self.boundedText(message)
        }
    }

    public init(decoding frame: [UInt8]) throws(DecodingError) {
        guard let type = frame.first else { throw .empty }
        guard frame.count <= Self.maxFrameBytes else { throw .tooLong(bytes: frame.count) }
        let body = frame[1...]
        func name(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> PeerName {
            do { return try PeerName(wire: bytes) } catch { throw .badField(error.description) }
        }
        func text(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> String {
            guard bytes.count <= Self.maxTextBytes else { throw .badField("a text of \(bytes.count) bytes") }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw .badField("a text that is not UTF-8") }
            return text
        }
        /// A SPAKE2 share (fixed length) followed by the rest of the frame.
        func share(_ bytes: ArraySlice<UInt8>) throws(DecodingError) -> (share: [UInt8], rest: ArraySlice<UInt8>) {
            guard let length = bytes.first, bytes.count >= 1 + Int(length) else { throw .truncated(type: type) }
            guard Int(length) == Spake2.messageLength else { throw .badField("a SPAKE2 share of \(length) bytes") }
            let start = bytes.startIndex + 1
            return (Array(bytes[start..<start + Int(length)]), bytes[(start + Int(length))...])
        }
        switch type {
        case 0x01:
            guard let version = body.first else { throw .truncated(type: type) }
            self = .hello(version: version, clientName: try name(body.dropFirst()))
        case 0x02:
            guard body.count == 9 else { throw .truncated(type: type) }
            let b = Array(body)
            let session = b[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let port = UInt16(b[4]) << 8 | UInt16(b[5]), lease = UInt16(b[6]) << 8 | UInt16(b[7])
            guard session != 0 else { throw .badField("session 0") }
            guard port != 0 else { throw .badField("UDP port 0") }
            guard Self.leaseMillisRange.contains(lease) else { throw .badField("a state lease of \(lease) ms") }
            guard Self.maxPadsRange.contains(b[8]) else { throw .badField("\(b[8]) pads per client") }
            self = .welcome(session: session, udpPort: port, leaseMillis: lease, maxPads: b[8])
        case 0x03:
            self = .refused(reason: try text(body))
        case 0x10:
            let (share, rest) = try share(body)
            self = .pairStart(share: share, clientName: try name(rest))
        case 0x11:
            let (share, rest) = try share(body)
            guard rest.count == Self.confirmationLength else { throw .badField("a confirmation of \(rest.count) bytes") }
            self = .pairReply(share: share, confirmation: Array(rest))
        case 0x12:
            // Empty: the client tells the host its confirmation did not verify (a wrong PIN).
            guard body.isEmpty || body.count == Self.confirmationLength else { throw .badField("a confirmation of \(body.count) bytes") }
            self = .pairConfirm(confirmation: Array(body))
        case 0x13:
            guard let accepted = body.first, accepted <= 1 else { throw .truncated(type: type) }
            self = .pairResult(accepted: accepted == 1, message: try text(body.dropFirst()))
        default:
            throw .unknownType(type)
        }
    }

    /// At most `maxTextBytes` of UTF-8, cut at a character boundary.
    static func boundedText(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            guard out.count + bytes.count <= maxTextBytes else { break }
            out += bytes
        }
        return out
    }

    /// Both directions' AES-GCM keys and IVs from the TLS session (docs/wire.md).
    public static func datagramKeys(_ connection: TLSConnection) throws -> (clientToHost: DirectionKeys, hostToClient: DirectionKeys) {
        let m = try connection.exportKeyingMaterial(label: exporterLabel, length: 2 * (32 + 12))
        return (DirectionKeys(key: Array(m[0..<32]), iv: Array(m[32..<44])),
                DirectionKeys(key: Array(m[44..<76]), iv: Array(m[76..<88])))
    }
}

/// Text from a peer (a refusal's reason), fit to print: no control characters reach the terminal.
public func displayable(peerText text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { PeerName.isSafeToShow($0) || $0 == "'" || $0 == "\\" ? $0 : "?" }))
}

private func bigEndian(_ value: UInt32, _ bytes: Int) -> [UInt8] {
    (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
}
