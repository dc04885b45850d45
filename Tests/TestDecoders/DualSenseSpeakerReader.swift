/// Report 0x36 as the DualSense takes it over Bluetooth, from the layout DS5Dongle ships
/// (awalol/DS5Dongle src/audio.cpp, docs/audio.md): not from padgate's encoder.
public enum DualSenseSpeakerReader {
    public static let reportID: UInt8 = 0x36

    public struct Decoded: Sendable {
        public var sequence: UInt8, counter: UInt8
        /// The state sub-packet's first flag byte and the speaker volume it sets.
        public var validFlag0: UInt8, speakerVolume: UInt8
        public var left: [Int8], right: [Int8]
        /// The speaker's Opus frame, as the pad takes it (200 bytes).
        public var opus: [UInt8]
    }

    /// 398 bytes: 0x36, seq<<4; sub-packet 0x11 at 2 (0x91 0x07, 7 bytes, the counter last);
    /// sub-packet 0x10 at 11 (0x90 0x3F, the 63-byte state block); sub-packet 0x12 at 76 (0x92
    /// 0x40, 64 bytes of s8 L,R at 3 kHz); sub-packet 0x13 at 142 (0x93 0xC8, 200 bytes of Opus);
    /// zeros; CRC32 little-endian at 394 over 0xA2 and the bytes before it.
    public static func decode(_ r: [UInt8]) throws -> Decoded {
        typealias Malformed = DualSenseHapticsReader.Malformed
        guard r.count == 398, r[0] == 0x36 else { throw Malformed(description: "length \(r.count), id \(r.first ?? 0)") }
        guard r[1] & 0x0F == 0, r[2] == 0x91, r[3] == 0x07, r[11] == 0x90, r[12] == 0x3F, r[76] == 0x92, r[77] == 0x40,
              r[142] == 0x93, r[143] == 0xC8 else {
            throw Malformed(description: "sub-packet headers \([r[2], r[3], r[11], r[12], r[76], r[77], r[142], r[143]])")
        }
        guard r[344..<394].allSatisfy({ $0 == 0 }) else { throw Malformed(description: "padding is not zero") }
        let stored = UInt32(r[394]) | UInt32(r[395]) << 8 | UInt32(r[396]) << 16 | UInt32(r[397]) << 24
        guard stored == DualSenseHapticsReader.crc(r[0..<394]) else { throw Malformed(description: "CRC32 does not verify") }
        let pcm = r[78..<142].map { Int8(bitPattern: $0) }
        return Decoded(sequence: r[1] >> 4, counter: r[10], validFlag0: r[13], speakerVolume: r[13 + 5],
                       left: stride(from: 0, to: 64, by: 2).map { pcm[$0] }, right: stride(from: 1, to: 64, by: 2).map { pcm[$0] },
                       opus: Array(r[144..<344]))
    }
}
