/// The DualSense's voice coils over Bluetooth: output report 0x32 carries 32 stereo frames of
/// signed 8-bit samples at 3 kHz (left coil, right coil, interleaved), one report every 10.667 ms
/// (the pad's clock: 512 samples at 48 kHz). Over USB the same coils are channels 2 and 3 of the
/// pad's 4-channel 48 kHz audio output. Layout and rates in docs/haptics.md (sources there).
public enum DualSenseHapticsReport {
    public static let reportID: UInt8 = 0x32
    /// 141 bytes after the id (the pad's own descriptor says so), the CRC32 in the last four.
    public static let length = 142
    public static let sampleRate = 3000
    public static let framesPerReport = 32
    /// The pad's cadence: 32 frames at 3 kHz.
    public static let interval: Duration = .nanoseconds(10_666_667)

    /// Where the parts are: two sub-packets, each a header byte (its id with the "sized" bit 0x80)
    /// and a length; the second holds the samples.
    enum Offset {
        static let sequence = 1, controlPacket = 2, counter = 10, samplePacket = 11, samples = 13, crc = 138
    }
    /// Sub-packet 0x11: 7 bytes of stream control. 0xFE: the microphone off; 0xFF at [7]: the
    /// pad's buffer length, the one byte SAxense and DS5Dongle found to matter.
    static let controlPacket: [UInt8] = [0x91, 0x07, 0xFE, 0, 0, 0, 0, 0xFF]
    static let samplePacketHeader: [UInt8] = [0x92, UInt8(framesPerReport * 2)]

    /// One report: `samples` (left, right interleaved; `framesPerReport` frames, padded with
    /// silence if short), the 4-bit sequence in byte 1's high nibble, and a counter that counts
    /// reports. The CRC32 is Bluetooth's, seeded with 0xA2 as every output report's.
    public static func encode(_ samples: ArraySlice<Int8>, sequence: UInt8, counter: UInt8) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: length)
        Array(samples).withUnsafeBufferPointer { write(into: &report, samples: $0, sequence: sequence, counter: counter) }
        return report
    }

    /// The one writer of the layout: `report` (`length` bytes) overwritten whole, CRC last.
    static func write(into report: inout [UInt8], samples: UnsafeBufferPointer<Int8>, sequence: UInt8, counter: UInt8) {
        precondition(report.count == length)
        report.withUnsafeMutableBufferPointer { out in
            for i in out.indices { out[i] = 0 }
            out[0] = reportID
            out[Offset.sequence] = (sequence & 0x0F) << 4
            for (i, byte) in controlPacket.enumerated() { out[Offset.controlPacket + i] = byte }
            out[Offset.counter] = counter
            out[Offset.samplePacket] = samplePacketHeader[0]
            out[Offset.samplePacket + 1] = samplePacketHeader[1]
            for i in 0..<min(samples.count, framesPerReport * 2) { out[Offset.samples + i] = UInt8(bitPattern: samples[i]) }
        }
        BluetoothCRC.stamp(seed: .output, report: &report)
    }

    /// A report of silence: what is sent last, so the coils stop at once rather than when the
    /// pad's buffer runs dry.
    public static func silence(sequence: UInt8, counter: UInt8) -> [UInt8] { encode([], sequence: sequence, counter: counter) }

    /// One stream's reports, numbered in order: the 4-bit sequence and the counter both advance.
    public struct Stream: Sendable {
        private var sequence: UInt8 = 0, counter: UInt8 = 0
        public init() {}
        public mutating func report(_ samples: ArraySlice<Int8>) -> [UInt8] {
            defer { sequence = (sequence + 1) & 0x0F; counter &+= 1 }
            return DualSenseHapticsReport.encode(samples, sequence: sequence, counter: counter)
        }

        /// The next report into `report` (`length` bytes, reused: 94 reports a second must not
        /// allocate), `samples` as in `encode`.
        public mutating func fill(_ report: inout [UInt8], samples: UnsafeBufferPointer<Int8>) {
            defer { sequence = (sequence + 1) & 0x0F; counter &+= 1 }
            DualSenseHapticsReport.write(into: &report, samples: samples, sequence: sequence, counter: counter)
        }
    }
}

/// 48 kHz 16-bit stereo to the Bluetooth path's 3 kHz 8-bit: the mean of each 16 frames (a box
/// filter, which also keeps most of what is above 1.5 kHz from folding down as a plain pick of
/// every 16th would), scaled from ±32767 to ±127 and rounded. Pure; 0 allocations per frame.
public struct HapticsDecimator: Sendable {
    public static let factor = 16
    private var left = 0, right = 0, count = 0

    public init() {}

    /// Takes one 48 kHz frame; every 16th returns a 3 kHz one.
    public mutating func push(left l: Int16, right r: Int16) -> (left: Int8, right: Int8)? {
        left += Int(l); right += Int(r); count += 1
        guard count == Self.factor else { return nil }
        defer { left = 0; right = 0; count = 0 }
        return (Self.scale(left), Self.scale(right))
    }

    /// A sum of 16 samples to s8, rounded half away from zero, clamped to ±127.
    static func scale(_ sum: Int) -> Int8 {
        let scaled = Double(sum) / Double(factor) * 127.0 / 32767.0
        return Int8(max(-127, min(127, scaled.rounded())))
    }
}
