/// The DualSense's Bluetooth haptics report 0x32 read from its documented layout (docs/haptics.md),
/// with its CRC32 computed bit by bit: a decoder the tests hold padgate's encoder to, written
/// without it.
public enum DualSenseHapticsReader {
    public static let reportID: UInt8 = 0x32

    /// Reflected CRC-32 (poly 0xEDB88320) over 0xA2 and the report before its trailer.
    public static func crc(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in [0xA2] + bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    public struct Decoded: Sendable {
        public var sequence: UInt8, counter: UInt8
        public var left: [Int8], right: [Int8]
        public init(sequence: UInt8, counter: UInt8, left: [Int8], right: [Int8]) {
            self.sequence = sequence; self.counter = counter; self.left = left; self.right = right
        }
    }

    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    /// 142 bytes: 0x32, seq<<4, sub-packet 0x11 (0x91 0x07 0xFE 0 0 0 0 0xFF counter), sub-packet
    /// 0x12 (0x92 0x40 and 64 bytes of s8 L,R), zeros, CRC32 little-endian at 138.
    public static func decode(_ r: [UInt8]) throws -> Decoded {
        guard r.count == 142, r[0] == 0x32 else { throw Malformed(description: "length \(r.count), id \(r.first ?? 0)") }
        guard r[1] & 0x0F == 0, Array(r[2..<10]) == [0x91, 0x07, 0xFE, 0, 0, 0, 0, 0xFF], r[11] == 0x92, r[12] == 0x40 else {
            throw Malformed(description: "header \(Array(r[0..<13]))")
        }
        guard r[77..<138].allSatisfy({ $0 == 0 }) else { throw Malformed(description: "padding is not zero") }
        let stored = UInt32(r[138]) | UInt32(r[139]) << 8 | UInt32(r[140]) << 16 | UInt32(r[141]) << 24
        guard stored == crc(r[0..<138]) else { throw Malformed(description: "CRC32 does not verify") }
        let pcm = r[13..<77].map { Int8(bitPattern: $0) }
        return Decoded(sequence: r[1] >> 4, counter: r[10], left: stride(from: 0, to: 64, by: 2).map { pcm[$0] }, right: stride(from: 1, to: 64, by: 2).map { pcm[$0] })
    }
}
