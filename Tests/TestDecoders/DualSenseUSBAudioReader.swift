/// The DualSense's USB audio output as its isochronous OUT packets carry it, from the pad's own
/// USB audio descriptors (docs/haptics.md), not from padgate's writer: frames of 4 little-endian
/// 16-bit channels at 48 kHz, the headphone pair (0-1), then the voice coils (2-3).
public enum DualSenseUSBAudioReader {
    public static let frameBytes = 8
    public static let rate = 48_000

    /// Whether any frame of `packet` drives a coil.
    public static func coilsSound(_ packet: UnsafeRawBufferPointer) -> Bool {
        var i = 4
        while i + 3 < packet.count {
            if packet[i] != 0 || packet[i + 1] != 0 || packet[i + 2] != 0 || packet[i + 3] != 0 { return true }
            i += frameBytes
        }
        return false
    }

    /// How long a packet of `bytes` plays.
    public static func duration(ofPacketBytes bytes: Int) -> Duration {
        .microseconds(Int64(bytes / frameBytes) * 1_000_000 / Int64(rate))
    }
}
