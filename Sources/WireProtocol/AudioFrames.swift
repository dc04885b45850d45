/// Which way an `AudioFrame` goes, and so its message type.
public protocol AudioFrameKind: Sendable {
    static var wireType: WireMessageType { get }
}
/// Host → client: the host pad's speaker pair (its channels 0-1, the headphone jack or the
/// speaker), sent only for a pad whose client asked (`WireCapabilities.speaker`).
public enum SpeakerAudio: AudioFrameKind { public static var wireType: WireMessageType { .speaker } }
/// Client → host: the physical pad's microphone, sent only while the host asks
/// (`MicrophoneRequest`) for a pad whose client offered it (`WireCapabilities.microphone`).
public enum MicrophoneAudio: AudioFrameKind { public static var wireType: WireMessageType { .microphone } }

public typealias SpeakerFrame = AudioFrame<SpeakerAudio>
public typealias MicrophoneFrame = AudioFrame<MicrophoneAudio>

/// 5 ms of a pad's audio (48 kHz stereo) as one Opus packet (docs/audio.md says why), numbered per
/// pad like haptics blocks, so the receiver places each by its number and conceals a gap.
public struct AudioFrame<Kind: AudioFrameKind>: Equatable, Sendable {
    public static var duration: Duration { .milliseconds(5) }
    /// The most bytes a packet may have on the wire (`Opus.maximumPacket` is what is encoded).
    public static var maximumPacket: Int { 160 }

    public var slot: PadSlot
    public var sequence: WireSequence
    public private(set) var packet: [UInt8]

    /// nil when `packet` is empty or longer than `maximumPacket`.
    public init?(slot: PadSlot, sequence: WireSequence, packet: [UInt8]) {
        guard (1...Self.maximumPacket).contains(packet.count) else { return nil }
        self.slot = slot; self.sequence = sequence; self.packet = packet
    }
}

extension AudioFrame: WireMessageBody {
    public static var wireType: WireMessageType { Kind.wireType }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u8(UInt8(packet.count))
        for byte in packet { try w.u8(byte) }
    }

    static func decode(_ r: inout WireReader) throws(WireError) -> AudioFrame {
        let slot = try WireLimits.checkSlot(try r.u8()), sequence = WireSequence(try r.u16())
        let length = Int(try r.u8())
        guard (1...maximumPacket).contains(length) else { throw .malformed("an audio packet of \(length) bytes") }
        let bytes = try r.slice(length)
        return AudioFrame(slot: slot, sequence: sequence, packet: Array(bytes))!
    }
}

/// Host → client: record the pad's microphone for `ttlMillis` more (renewed while a program on the
/// host records from the host pad's microphone; 0: stop now). A lease, so a lost stop or a dead
/// host never leaves the microphone recording: the client stops when it lapses. Numbered per pad,
/// as rumble leases are: a renewal that the network delivers after the stop that followed it is
/// older, and ignored.
public struct MicrophoneRequest: Equatable, Sendable {
    /// The longest lease a client honours.
    public static let maximumMillis: UInt16 = 2000
    public var slot: PadSlot
    public var sequence: WireSequence
    public var ttlMillis: UInt16
    public init(slot: PadSlot, sequence: WireSequence, ttlMillis: UInt16) { self.slot = slot; self.sequence = sequence; self.ttlMillis = ttlMillis }
}

extension MicrophoneRequest: WireMessageBody {
    public static var wireType: WireMessageType { .microphoneRequest }
    public func write(into w: inout WireWriter) throws(WireError) { try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u16(ttlMillis) }
    static func decode(_ r: inout WireReader) throws(WireError) -> MicrophoneRequest {
        MicrophoneRequest(slot: try WireLimits.checkSlot(try r.u8()), sequence: WireSequence(try r.u16()), ttlMillis: min(try r.u16(), maximumMillis))
    }
}
