/// The Switch Pro Controller's reports over Bluetooth, as its descriptor sizes them (the Android
/// CTS registration: inputs 0x21 and 0x30 are 48 bytes after the id, outputs 0x01 and 0x10 too) and
/// as hid-nintendo and SDL read them (dekuNukem's Nintendo_Switch_Reverse_Engineering notes).
public enum SwitchProReports {
    public static let length = 49
    public static let fullReportID: UInt8 = 0x30
    public static let subcommandReplyID: UInt8 = 0x21
    public static let usbReplyID: UInt8 = 0x81
    public static let subcommandOutputID: UInt8 = 0x01
    public static let rumbleOutputID: UInt8 = 0x10
    public static let usbCommandOutputID: UInt8 = 0x80

    public enum Subcommand: UInt8, Sendable {
        case deviceInfo = 0x02, setReportMode = 0x03, spiRead = 0x10, setPlayerLights = 0x30, setHomeLight = 0x38
        case enableIMU = 0x40, enableVibration = 0x48
    }

    /// What the pad reports besides its IMU: bytes 1...12 of every 0x21 and 0x30 report.
    public struct Controls: Hashable, Sendable {
        public var timer: UInt8 = 0
        /// hid-nintendo's bat_con: level in the top three bits (0 empty ... 4 full), charging bit 4.
        public var batteryLevel: UInt8 = 4
        public var charging = false
        public var buttons: GamepadButtons = []
        public var dpad: DPad = .none
        /// 12-bit raw stick counts (x, y); +y up, as the pad reports it.
        public var left: (x: UInt16, y: UInt16) = (2000, 2000)
        public var right: (x: UInt16, y: UInt16) = (2000, 2000)
        public init() {}
        public static func == (a: Controls, b: Controls) -> Bool {
            a.timer == b.timer && a.batteryLevel == b.batteryLevel && a.charging == b.charging && a.buttons == b.buttons && a.dpad == b.dpad
                && a.left == b.left && a.right == b.right
        }
        public func hash(into h: inout Hasher) { h.combine(buttons); h.combine(left.x); h.combine(right.x) }
    }

    /// One IMU sample as the pad sends it: accelerometer then gyro, x y z, raw counts.
    public struct IMUSample: Hashable, Sendable {
        public var accel: (Int16, Int16, Int16) = (0, 0, 0)
        public var gyro: (Int16, Int16, Int16) = (0, 0, 0)
        public init() {}
        public static func == (a: IMUSample, b: IMUSample) -> Bool { a.accel == b.accel && a.gyro == b.gyro }
        public func hash(into h: inout Hasher) { h.combine(accel.0); h.combine(gyro.0) }
    }

    static func writeControls(_ c: Controls, into r: inout [UInt8]) {
        r[1] = c.timer
        r[2] = (min(c.batteryLevel, 4) << 5) | (c.charging ? 0x10 : 0) | 0x0E   // 0x0E: a Pro Controller on its own power
        for bit in SwitchProLayout.buttonMap where c.buttons.contains(bit.button) { r[SwitchProLayout.buttons + bit.byte] |= bit.mask }
        let dpad = c.dpad.axes  // +y down, as on evdev's hat
        if dpad.y > 0 { r[5] |= SwitchProLayout.dpadDown }
        if dpad.y < 0 { r[5] |= SwitchProLayout.dpadUp }
        if dpad.x > 0 { r[5] |= SwitchProLayout.dpadRight }
        if dpad.x < 0 { r[5] |= SwitchProLayout.dpadLeft }
        func stick(_ o: Int, _ x: UInt16, _ y: UInt16) { SwitchProCalibration.pack12(Int32(x), Int32(y), into: &r, at: o) }
        stick(SwitchProLayout.leftStick, c.left.x, c.left.y)
        stick(SwitchProLayout.rightStick, c.right.x, c.right.y)
        // The vibrator byte: non-zero on a pad that vibrates, and hid-nintendo sends queued
        // rumble only after a report that has it.
        r[12] = 0x80
    }

    /// Report 0x30: controls and three IMU samples (the pad samples every ~5 ms, reports every 15).
    public static func fullReport(_ c: Controls, imu: IMUSample) -> [UInt8] {
        var r = [UInt8](repeating: 0, count: length)
        r[0] = fullReportID
        writeControls(c, into: &r)
        for i in 0..<3 {
            let o = SwitchProLayout.imu + i * SwitchProLayout.imuSampleSize
            func put(_ j: Int, _ v: Int16) { SwitchProCalibration.put16(&r, o + 2 * j, v) }
            put(0, imu.accel.0); put(1, imu.accel.1); put(2, imu.accel.2)
            put(3, imu.gyro.0); put(4, imu.gyro.1); put(5, imu.gyro.2)
        }
        return r
    }

    /// Report 0x21: the controls, then ack, the subcommand's id and its reply data.
    public static func subcommandReply(_ c: Controls, ack: UInt8, subcommand: UInt8, data: [UInt8]) -> [UInt8] {
        var r = [UInt8](repeating: 0, count: length)
        r[0] = subcommandReplyID
        writeControls(c, into: &r)
        r[13] = ack; r[14] = subcommand
        for (i, b) in data.prefix(length - 15).enumerated() { r[15 + i] = b }
        return r
    }

    /// Device info (subcommand 0x02): firmware 3.139, a Pro Controller (type 3), its MAC, colours in SPI.
    public static func deviceInfo(mac: [UInt8]) -> [UInt8] { [0x03, 0x8B, 0x03, 0x02] + mac.prefix(6) + [0x01, 0x01] }

    /// A subcommand a host received: id and arguments, and the rumble frame that came with it.
    public struct Output: Hashable, Sendable {
        public var rumble: [UInt8]?
        public var subcommand: UInt8?
        public var arguments: [UInt8]
    }

    /// Output 0x01 (rumble + subcommand) or 0x10 (rumble only); nil for anything else or too short.
    public static func output(_ report: [UInt8]) -> Output? {
        guard report.count >= 10, report[0] == subcommandOutputID || report[0] == rumbleOutputID else { return nil }
        let rumble = Array(report[2..<10])
        guard report[0] == subcommandOutputID else { return Output(rumble: rumble, subcommand: nil, arguments: []) }
        guard report.count >= 11 else { return nil }
        return Output(rumble: rumble, subcommand: report[10], arguments: Array(report[11...]))
    }
}

/// An HD rumble frame (8 bytes: the left actuator's 4, then the right's): each side a high band
/// and a low band, each with a frequency and an amplitude code 0...100 (dekuNukem's notes, the
/// encoding hid-nintendo and SDL write). padgate's two motors read it as SDL writes it (low =
/// the low band, high = the high band) and hid-nintendo (left actuator = strong, right = weak)
/// alike: low is the left side's low band, high the right side's high band.
public enum SwitchHDRumble {
    public static let maximumAmplitudeCode: UInt8 = 100

    /// The high band's amplitude code of one side's 4 bytes.
    static func highCode(_ d: ArraySlice<UInt8>) -> UInt8 { (d[d.startIndex + 1] & 0xFE) >> 1 }
    /// The low band's: the last byte (0x40 + code / 2) and the top bit of the third (code's low bit).
    static func lowCode(_ d: ArraySlice<UInt8>) -> UInt8 {
        let last = d[d.startIndex + 3]
        guard last >= 0x40 else { return 0 }
        return ((last - 0x40) << 1) | (d[d.startIndex + 2] >> 7)
    }

    /// The motors a frame asks for; codes above 100 (outside the encoding) count as 100.
    public static func levels(_ frame: [UInt8]) -> MotorLevels? {
        guard frame.count == 8 else { return nil }
        func level(_ code: UInt8) -> UInt8 { UInt8((UInt32(min(code, maximumAmplitudeCode)) * 255 + 50) / 100) }
        return MotorLevels(low: level(lowCode(frame[0..<4])), high: level(highCode(frame[4..<8])))
    }

    /// One actuator's two bands: frequencies in Hz (each clamped to its band), amplitudes 0-1
    /// (clamped to 1.0, the notes' safe maximum).
    public struct Side: Sendable, Equatable {
        public var lowFrequency: Double, lowAmplitude: Double
        public var highFrequency: Double, highAmplitude: Double
        public init(lowFrequency: Double = defaultLowFrequency, lowAmplitude: Double = 0,
                    highFrequency: Double = defaultHighFrequency, highAmplitude: Double = 0) {
            self.lowFrequency = lowFrequency; self.lowAmplitude = lowAmplitude
            self.highFrequency = highFrequency; self.highAmplitude = highAmplitude
        }
        /// Both bands at their default frequencies, silent: the pad's neutral frame.
        public static let neutral = Side()
    }

    /// The bands' resting frequencies (hid-nintendo's JC_RUMBLE_DFLT_LOW_FREQ and _HIGH_FREQ).
    public static let defaultLowFrequency = 160.0, defaultHighFrequency = 320.0

    /// log2 from the exponent and 16 bits of the significand's (by repeated squaring): the codes
    /// need 1/64 of an octave, and the codecs take no maths library.
    static func log2(_ x: Double) -> Double {
        var result = Double(x.exponent), m = x.significand, bit = 0.5
        for _ in 0..<16 {
            m *= m
            if m >= 2 { m /= 2; result += bit }
            bit /= 2
        }
        return result
    }

    /// A frequency's code: 32 steps an octave from 10 Hz (dekuNukem's rumble_data_table.md).
    static func frequencyCode(_ hz: Double) -> Int { Int((log2(max(hz, 10) / 10) * 32).rounded()) }

    /// An amplitude's code 0...100: the notes' two logarithmic pieces above 0.12, and below
    /// that the table's rows, which are linear (code 1 is 0.0078, code 16 is 0.1175).
    static func amplitudeCode(_ amplitude: Double) -> Int {
        let a = min(amplitude, 1.0)
        guard a > 0 else { return 0 }
        if a > 0.23 { return min(Int(maximumAmplitudeCode), Int((log2(a * 8.7) * 32).rounded())) }
        if a > 0.12 { return Int((log2(a * 17) * 16).rounded()) }
        return max(1, Int((a / 0.117471 * 16).rounded()))
    }

    /// One side's 4 bytes: the high band's 9-bit frequency across byte 0 and byte 1's low bit,
    /// its amplitude code doubled in byte 1; the low band's 7-bit frequency in byte 2, its
    /// amplitude code halved on 0x40 in byte 3, the code's low bit in byte 2's top bit.
    public static func encode(_ side: Side) -> [UInt8] {
        let high = (min(max(frequencyCode(side.highFrequency), 0x61), 0xDF) - 0x60) * 4
        let low = min(max(frequencyCode(side.lowFrequency), 0x41), 0xBF) - 0x40
        let highAmplitude = amplitudeCode(side.highAmplitude), lowAmplitude = amplitudeCode(side.lowAmplitude)
        return [UInt8(high & 0xFF), UInt8(2 * highAmplitude + (high >> 8)),
                UInt8(low | (lowAmplitude & 1) << 7), UInt8(0x40 + lowAmplitude >> 1)]
    }

    /// A frame: the left actuator's side, then the right's.
    public static func frame(left: Side, right: Side) -> [UInt8] { encode(left) + encode(right) }
}
