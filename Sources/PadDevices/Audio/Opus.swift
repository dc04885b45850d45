import COpus

/// libopus for the pad's speaker pair: 48 kHz stereo in 5 ms frames, the restricted low-delay
/// mode (CELT only: no lookahead beyond 2.5 ms, every frame decodable on its own). docs/audio.md
/// says why.
public enum Opus {
    public static let sampleRate = 48_000
    public static let channels = 2
    /// 5 ms.
    public static let frameSamples = 240
    public static let frameDuration: Duration = .milliseconds(5)
    /// The most an encoded frame may take: 64 kbit/s is 40 bytes a frame; variable rate stays
    /// under four times that.
    public static let maximumPacket = 160
    public static let bitrate = 64_000
    /// 0-10: the encoder's effort. 10 (libopus's default) took more than a frame's 5 ms on the
    /// emulated test guest, whose recording then fell behind; 5 keeps a frame well under it.
    public static let complexity = 5

    public struct Failure: Error, CustomStringConvertible {
        public let call: String, code: Int32
        public var description: String {
            "libopus \(call) failed: \(String(cString: opus_strerror(code))) (the Opus library, libopus0, may be missing or too old)"
        }
    }
}

/// One stream's encoder: a frame of interleaved stereo s16 in, one packet out.
public final class OpusEncoder {
    /// What a stream's packets are: the link's (`Opus`'s figures) unless a pad wants its own.
    public struct Settings: Sendable {
        public var frameSamples = Opus.frameSamples
        public var bitrate = Opus.bitrate
        /// A constant rate: every packet `maximumPacket` bytes (a pad's fixed slot).
        public var constantRate = false
        public var maximumPacket = Opus.maximumPacket
        public init() {}
    }

    public let settings: Settings
    private let state: OpaquePointer

    public init(_ settings: Settings = Settings()) throws {
        self.settings = settings
        var error: Int32 = 0
        guard let state = opus_encoder_create(Int32(Opus.sampleRate), Int32(Opus.channels), OPUS_APPLICATION_RESTRICTED_LOWDELAY, &error), error == OPUS_OK else {
            throw Opus.Failure(call: "opus_encoder_create", code: error)
        }
        self.state = state
        _ = padgate_opus_set_bitrate(state, Int32(settings.bitrate))
        _ = padgate_opus_set_complexity(state, Int32(Opus.complexity))
        if settings.constantRate { _ = padgate_opus_set_vbr(state, 0) }
    }

    deinit { opus_encoder_destroy(state) }

    /// `pcm`: `settings.frameSamples` stereo frames; the packet's bytes go to `packet`, its length is returned.
    public func encode(_ pcm: UnsafeBufferPointer<Int16>, into packet: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        precondition(pcm.count >= settings.frameSamples * Opus.channels)
        let length = opus_encode(state, pcm.baseAddress!, Int32(settings.frameSamples), packet.baseAddress!, Int32(min(packet.count, settings.maximumPacket)))
        guard length > 0 else { throw Opus.Failure(call: "opus_encode", code: length) }
        return Int(length)
    }
}

/// One stream's decoder: a packet (or a loss, concealed) in, 5 ms of interleaved stereo s16 out.
public final class OpusDecoder {
    private let state: OpaquePointer

    public init() throws {
        var error: Int32 = 0
        guard let state = opus_decoder_create(Int32(Opus.sampleRate), Int32(Opus.channels), &error), error == OPUS_OK else {
            throw Opus.Failure(call: "opus_decoder_create", code: error)
        }
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// Decodes `packet` (nil: a lost frame, which the decoder conceals) into `pcm`
    /// (`Opus.frameSamples` stereo frames). A corrupt packet throws and leaves `pcm` silent.
    public func decode(_ packet: UnsafeRawBufferPointer?, into pcm: UnsafeMutableBufferPointer<Int16>) throws {
        precondition(pcm.count >= Opus.frameSamples * Opus.channels)
        let data = packet?.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let decoded = opus_decode(state, data, Int32(packet?.count ?? 0), pcm.baseAddress!, Int32(Opus.frameSamples), 0)
        guard decoded == Int32(Opus.frameSamples) else {
            for i in 0..<Opus.frameSamples * Opus.channels { pcm[i] = 0 }
            throw Opus.Failure(call: "opus_decode", code: decoded < 0 ? decoded : OPUS_INVALID_PACKET)
        }
    }
}
