/// The Xbox One S over Bluetooth (045e:02fd) as padgate presents it through uhid: its own report
/// descriptor (the Android CTS registration) and these reports, as hid-microsoft and SDL's HIDAPI
/// Xbox One driver (SDL_hidapi_xboxone.c, the 17-byte report) read them. Every Xbox pad over
/// Bluetooth arrives on the host as this one, with its own product id where hid-microsoft knows it.
public enum XboxOneSBluetooth {
    public static let stateReportID: UInt8 = 0x01
    public static let stateLength = 17
    public static let batteryReportID: UInt8 = 0x04
    public static let rumbleReportID: UInt8 = 0x03

    /// Report 0x01: four 16-bit sticks (0...65535, +y down), two 10-bit triggers, a hat (1 up,
    /// clockwise to 8; 0 none), then Button 1...15 in bytes 14-15 and AC Back in byte 16's bit 0.
    /// View is AC Back on the One S's firmware the CTS recorded (Android's BUTTON_SELECT; SDL's
    /// evdev mapping and hid-microsoft's KEY_BACK), Button 11 on pads whose AC Back is Share.
    static let buttonBits: [ButtonBit] = [
        ButtonBit(byte: 14, mask: 0x01, button: .south), ButtonBit(byte: 14, mask: 0x02, button: .east),
        ButtonBit(byte: 14, mask: 0x08, button: .west), ButtonBit(byte: 14, mask: 0x10, button: .north),
        ButtonBit(byte: 14, mask: 0x40, button: .l1), ButtonBit(byte: 14, mask: 0x80, button: .r1),
        ButtonBit(byte: 15, mask: 0x08, button: .options),
        ButtonBit(byte: 15, mask: 0x10, button: .ps), ButtonBit(byte: 15, mask: 0x20, button: .l3),
        ButtonBit(byte: 15, mask: 0x40, button: .r3),
    ]
    static let viewAsACBack = ButtonBit(byte: 16, mask: 0x01, button: .create)
    static let viewAsButton11 = ButtonBit(byte: 15, mask: 0x04, button: .create)
    /// Share on the Series pads: SDL reads it in byte 16 for their product ids.
    static let shareAsACBack = ButtonBit(byte: 16, mask: 0x01, button: .capture)
    public static let triggerMaximum: UInt16 = 1023

    /// The state report for `state`: sticks as 0...65535 with 32768 at rest (the inverse of
    /// reading them through the descriptor), triggers from 0...65535 to 0...1023 rounded to nearest.
    public static func stateReport(buttons: GamepadButtons, dpad: DPad, leftX: Int16, leftY: Int16, rightX: Int16, rightY: Int16,
                                   l2: UInt8, r2: UInt8, hasShareButton: Bool = false) -> [UInt8] {
        stateReport(buttons: buttons, dpad: dpad, leftX: leftX, leftY: leftY, rightX: rightX, rightY: rightY,
                    l2Wide: UInt16(l2) * 257, r2Wide: UInt16(r2) * 257, hasShareButton: hasShareButton)
    }

    /// `hasShareButton`: the presented pad is a Series pad, whose AC Back bit is Share and View Button 11.
    public static func stateReport(buttons: GamepadButtons, dpad: DPad, leftX: Int16, leftY: Int16, rightX: Int16, rightY: Int16,
                                   l2Wide: UInt16, r2Wide: UInt16, hasShareButton: Bool = false) -> [UInt8] {
        var r = [UInt8](repeating: 0, count: stateLength)
        r[0] = stateReportID
        func put16(_ offset: Int, _ value: UInt16) { r[offset] = UInt8(truncatingIfNeeded: value); r[offset + 1] = UInt8(truncatingIfNeeded: value >> 8) }
        func stick(_ v: Int16) -> UInt16 { UInt16(bitPattern: v) ^ 0x8000 }
        func trigger(_ v: UInt16) -> UInt16 { UInt16((UInt32(v) * UInt32(triggerMaximum) + 32767) / 65535) }
        put16(1, stick(leftX)); put16(3, stick(leftY)); put16(5, stick(rightX)); put16(7, stick(rightY))
        put16(9, trigger(l2Wide)); put16(11, trigger(r2Wide))
        r[13] = dpad == .none ? 0 : dpad.rawValue + 1
        for bit in buttonBits where buttons.contains(bit.button) { r[bit.byte] |= bit.mask }
        // View's place, and whether Share has one, depend on the presented pad.
        func set(_ bit: ButtonBit) { if buttons.contains(bit.button) { r[bit.byte] |= bit.mask } }
        if hasShareButton { set(viewAsButton11); set(shareAsACBack) } else { set(viewAsACBack) }
        return r
    }

    /// Report 0x04: Battery Strength, 0...255 (read as the charge, as the client reads it).
    public static func batteryReport(percent: UInt8) -> [UInt8] {
        [batteryReportID, UInt8((UInt32(min(percent, 100)) * 255 + 50) / 100)]
    }
}

/// Report 0x03, the rumble an Xbox One or Series pad takes over Bluetooth (hid-microsoft's
/// xb1s_ff_report, SDL's Bluetooth rumble packet, the descriptor's PID block): which actuators
/// to drive, four magnitudes 0...100 (left trigger, right trigger, strong, weak), then duration
/// and start delay in 10 ms and a loop count.
public struct XboxRumbleReport: Hashable, Sendable {
    public struct Actuators: OptionSet, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let weak = Actuators(rawValue: 1 << 0)
        public static let strong = Actuators(rawValue: 1 << 1)
        public static let rightTrigger = Actuators(rawValue: 1 << 2)
        public static let leftTrigger = Actuators(rawValue: 1 << 3)
        public static let all: Actuators = [.weak, .strong, .rightTrigger, .leftTrigger]
    }
    public static let length = 9
    public static let maximumMagnitude: UInt8 = 100

    public var enable: Actuators
    public var leftTrigger: UInt8, rightTrigger: UInt8, strong: UInt8, weak: UInt8
    public var duration10ms: UInt8, startDelay10ms: UInt8, loopCount: UInt8

    public init(enable: Actuators, leftTrigger: UInt8, rightTrigger: UInt8, strong: UInt8, weak: UInt8,
                duration10ms: UInt8, startDelay10ms: UInt8 = 0, loopCount: UInt8 = 0) {
        self.enable = enable
        self.leftTrigger = leftTrigger; self.rightTrigger = rightTrigger; self.strong = strong; self.weak = weak
        self.duration10ms = duration10ms; self.startDelay10ms = startDelay10ms; self.loopCount = loopCount
    }

    /// All four motors at `levels` for one renderer segment (played once, then the pad falls
    /// silent by itself unless renewed).
    public init(levels: MotorLevels, segment: Duration) {
        let tens = min(255, max(1, segment / .milliseconds(10)))
        self.init(enable: .all, leftTrigger: Self.magnitude(levels.leftTrigger), rightTrigger: Self.magnitude(levels.rightTrigger),
                  strong: Self.magnitude(levels.low), weak: Self.magnitude(levels.high), duration10ms: UInt8(tens))
    }

    public var bytes: [UInt8] {
        [XboxOneSBluetooth.rumbleReportID, enable.rawValue, leftTrigger, rightTrigger, strong, weak, duration10ms, startDelay10ms, loopCount]
    }

    public enum DecodeError: Error, Equatable, Sendable {
        case notARumbleReport(length: Int, id: UInt8?)
        case magnitudeOutOfRange(UInt8)
    }

    /// A report a game or driver wrote; magnitudes above 100 (outside the descriptor's range) are refused.
    public init(decoding report: [UInt8]) throws(DecodeError) {
        guard report.count >= Self.length, report[0] == XboxOneSBluetooth.rumbleReportID else {
            throw .notARumbleReport(length: report.count, id: report.first)
        }
        for m in report[2...5] where m > Self.maximumMagnitude { throw .magnitudeOutOfRange(m) }
        self.init(enable: Actuators(rawValue: report[1] & Actuators.all.rawValue), leftTrigger: report[2], rightTrigger: report[3],
                  strong: report[4], weak: report[5], duration10ms: report[6], startDelay10ms: report[7], loopCount: report[8])
    }

    /// The enabled actuators' magnitudes in the wire's 16-bit scale (0...65535, rounded to
    /// nearest, so 0...100 survives the trip to 8 bits and back exactly); disabled ones are 0.
    public var wireLevels: (low: UInt16, high: UInt16, leftTrigger: UInt16, rightTrigger: UInt16) {
        func level(_ m: UInt8, _ actuator: Actuators) -> UInt16 {
            enable.contains(actuator) ? UInt16((UInt32(min(m, Self.maximumMagnitude)) * 65535 + 50) / 100) : 0
        }
        return (level(strong, .strong), level(weak, .weak), level(leftTrigger, .leftTrigger), level(rightTrigger, .rightTrigger))
    }

    /// 0...255 to the pad's 0...100, rounded to nearest.
    public static func magnitude(_ level: UInt8) -> UInt8 { UInt8((UInt32(level) * 100 + 127) / 255) }
}
