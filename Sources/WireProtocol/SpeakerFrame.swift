/// Host → client: 5 ms of what a game plays on the host pad's speaker pair (its channels 0-1,
/// the headphone jack or the speaker), as one Opus packet (48 kHz stereo; docs/audio.md says
/// why). Numbered per pad like haptics blocks, so the client places each by its number and
/// conceals a gap. Sent only for a pad whose client asked (`WireCapabilities.speaker`).
public struct SpeakerFrame: Equatable, Sendable {
    public static let duration: Duration = .milliseconds(5)
    /// The most bytes a packet may have on the wire (`Opus.maximumPacket` is what is encoded).
    public static let maximumPacket = 160

    public var slot: PadSlot
    public var sequence: WireSequence
    public private(set) var packet: [UInt8]

    /// nil when `packet` is empty or longer than `maximumPacket`.
    public init?(slot: PadSlot, sequence: WireSequence, packet: [UInt8]) {
        guard (1...Self.maximumPacket).contains(packet.count) else { return nil }
        self.slot = slot; self.sequence = sequence; self.packet = packet
    }
}

extension SpeakerFrame: WireMessageBody {
    public static var wireType: WireMessageType { .speaker }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u8(UInt8(packet.count))
        for byte in packet { try w.u8(byte) }
    }

    static func decode(_ r: inout WireReader) throws(WireError) -> SpeakerFrame {
        let slot = try WireLimits.checkSlot(try r.u8()), sequence = WireSequence(try r.u16())
        let length = Int(try r.u8())
        guard (1...maximumPacket).contains(length) else { throw .malformed("a speaker packet of \(length) bytes") }
        let bytes = try r.slice(length)
        return SpeakerFrame(slot: slot, sequence: sequence, packet: Array(bytes))!
    }
}
