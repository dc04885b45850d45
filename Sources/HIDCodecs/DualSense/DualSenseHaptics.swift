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

    /// One stream's reports, numbered in order: the 4-bit sequence and the counter both advance,
    /// across 0x32 and 0x36 alike (the pad takes them as one stream; two numberings kept the
    /// speaker and the coils from starting together, PadForge found).
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

        /// The next report as 0x36 (`DualSenseSpeakerReport.length` bytes, reused): the coils'
        /// samples and the speaker's Opus frame.
        public mutating func fill(_ report: inout [UInt8], samples: UnsafeBufferPointer<Int8>, speaker opus: UnsafeBufferPointer<UInt8>) {
            defer { sequence = (sequence + 1) & 0x0F; counter &+= 1 }
            DualSenseSpeakerReport.write(into: &report, samples: samples, opus: opus, sequence: sequence, counter: counter)
        }
    }
}

/// The DualSense's speaker over Bluetooth: output report 0x36 is report 0x32's stream control
/// and coil samples with a third sub-packet, one Opus frame for the speaker, and a state
/// sub-packet that sets the speaker's volume. Sent in 0x32's place, at its cadence, while the
/// speaker plays. Layout and sources in docs/audio.md.
public enum DualSenseSpeakerReport {
    public static let reportID: UInt8 = 0x36
    /// 397 bytes after the id, the CRC32 in the last four.
    public static let length = 398
    /// The speaker's frame: 10 ms of 48 kHz stereo Opus at a constant 160 kbit/s, so exactly 200
    /// bytes. The pad plays it over a report's 10.667 ms: a report's 512 frames of sound are
    /// squeezed into 480 before encoding (played as 480, they would sound 6 % flat).
    public static let opusFrameSamples = 480
    public static let opusPacketLength = 200
    public static let opusBitrate = 160_000
    public static let slotFrames = 512
    /// The speaker's volume the state sub-packet sets: the top of the pad's range (0x3D-0x64);
    /// the game's own level is in the signal.
    public static let speakerVolume: UInt8 = 0x64

    enum Offset {
        static let sequence = 1, controlPacket = 2, counter = 10, statePacket = 11, state = 13
        static let samplePacket = 76, samples = 78, speakerPacket = 142, opus = 144, crc = 394
    }
    /// Sub-packet 0x10: the 63-byte state block of report 0x31 (its 47-byte common part first);
    /// only its first flag byte's speaker-volume bit (0x20) is set, so the pad takes nothing else
    /// from it (the lights and triggers stay as padgate's own reports set them).
    static let statePacketHeader: [UInt8] = [0x90, 0x3F]
    static let stateValidFlag0 = 0, stateSpeakerVolume = 5
    static let speakerVolumeValid: UInt8 = 0x20
    /// Sub-packet 0x13: the speaker (0x16 would be the headset jack).
    static let speakerPacketHeader: [UInt8] = [0x93, UInt8(opusPacketLength)]

    /// The one writer of the layout: `report` (`length` bytes) overwritten whole, CRC last;
    /// `samples` as in `DualSenseHapticsReport.encode`, `opus` one packet (at most 200 bytes,
    /// padded with zeros: a constant-rate frame is exactly 200).
    static func write(into report: inout [UInt8], samples: UnsafeBufferPointer<Int8>, opus: UnsafeBufferPointer<UInt8>, sequence: UInt8, counter: UInt8) {
        precondition(report.count == length)
        report.withUnsafeMutableBufferPointer { out in
            for i in out.indices { out[i] = 0 }
            out[0] = reportID
            out[Offset.sequence] = (sequence & 0x0F) << 4
            let control = DualSenseHapticsReport.controlPacket
            for (i, byte) in control.enumerated() { out[Offset.controlPacket + i] = byte }
            out[Offset.counter] = counter
            out[Offset.statePacket] = statePacketHeader[0]
            out[Offset.statePacket + 1] = statePacketHeader[1]
            out[Offset.state + stateValidFlag0] = speakerVolumeValid
            out[Offset.state + stateSpeakerVolume] = speakerVolume
            out[Offset.samplePacket] = DualSenseHapticsReport.samplePacketHeader[0]
            out[Offset.samplePacket + 1] = DualSenseHapticsReport.samplePacketHeader[1]
            for i in 0..<min(samples.count, DualSenseHapticsReport.framesPerReport * 2) { out[Offset.samples + i] = UInt8(bitPattern: samples[i]) }
            out[Offset.speakerPacket] = speakerPacketHeader[0]
            out[Offset.speakerPacket + 1] = speakerPacketHeader[1]
            for i in 0..<min(opus.count, opusPacketLength) { out[Offset.opus + i] = opus[i] }
        }
        BluetoothCRC.stamp(seed: .output, report: &report)
    }

    /// A report's 512 frames of interleaved stereo squeezed into the 480 its Opus frame holds,
    /// linearly between neighbours (the pad stretches them back as it plays). Pure; no allocation.
    public static func squeeze(_ slot: UnsafeBufferPointer<Int16>, into frame: UnsafeMutableBufferPointer<Int16>) {
        precondition(slot.count >= 2 * slotFrames && frame.count >= 2 * opusFrameSamples)
        for k in 0..<opusFrameSamples {
            // Position k × 512/480 in the slot, in 1/15 steps: 16 slot frames per 15 out.
            let whole = k * 16 / 15, part = k * 16 % 15
            let next = min(whole + 1, slotFrames - 1)
            for c in 0..<2 {
                let a = Int(slot[2 * whole + c]), b = Int(slot[2 * next + c])
                frame[2 * k + c] = Int16(a + (b - a) * part / 15)
            }
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
