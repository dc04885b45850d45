/// Switch Pro Controller standard full report 0x30 (layout as documented by dekuNukem's
/// Nintendo_Switch_Reverse_Engineering and read by SDL_hidapi_switch.c).
public enum SwitchProLayout {
    public static let reportID: UInt8 = 0x30
    public static let minimumLength = 49
    public static let buttons = 3          // right, shared, left bytes
    public static let leftStick = 6        // 3 bytes, two packed 12-bit values
    public static let rightStick = 9
    public static let imu = 13             // 3 samples of accel xyz, gyro xyz (int16 LE)
    public static let imuSampleSize = 12

    public static let buttonMap: [ButtonBit] = [
        ButtonBit(byte: 0, mask: 0x01, button: .west),   // Y
        ButtonBit(byte: 0, mask: 0x02, button: .north),  // X
        ButtonBit(byte: 0, mask: 0x04, button: .south),  // B
        ButtonBit(byte: 0, mask: 0x08, button: .east),   // A
        ButtonBit(byte: 0, mask: 0x40, button: .r1),     // R
        ButtonBit(byte: 0, mask: 0x80, button: .r2),     // ZR
        ButtonBit(byte: 1, mask: 0x01, button: .create), // Minus
        ButtonBit(byte: 1, mask: 0x02, button: .options),// Plus
        ButtonBit(byte: 1, mask: 0x04, button: .r3),
        ButtonBit(byte: 1, mask: 0x08, button: .l3),
        ButtonBit(byte: 1, mask: 0x10, button: .ps),     // Home
        ButtonBit(byte: 1, mask: 0x20, button: .capture),
        ButtonBit(byte: 2, mask: 0x40, button: .l1),     // L
        ButtonBit(byte: 2, mask: 0x80, button: .l2),     // ZL
    ]
    /// D-pad bits of the left byte: down, up, right, left.
    public static let dpadDown: UInt8 = 0x01, dpadUp: UInt8 = 0x02, dpadRight: UInt8 = 0x04, dpadLeft: UInt8 = 0x08
}

/// The Switch Pro Controller's standard full report (0x30): buttons, 12-bit sticks, three IMU
/// samples a report.
public struct SwitchProInputCodec: PadInputCodec {
    public let kind = PadKind.switchPro
    public init() {}

    public func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        guard let id = report.first else { throw .empty }
        guard id == SwitchProLayout.reportID else { throw .unknownReport(id: id, length: report.count, kind: kind) }
        try Self.decodeSwitchPro(report, into: &state)
    }

    static func decodeSwitchPro(_ r: UnsafeRawBufferPointer, into s: inout GamepadState) throws(InputReportError) {
        guard r.count >= SwitchProLayout.minimumLength else {
            throw .tooShort(id: r[0], got: r.count, need: SwitchProLayout.minimumLength)
        }
        s.format = .switchProFull
        s.sequence = r[1]
        // Byte 2: battery level in the high nibble (0 empty ... 8 full), bit 4 charging.
        let batteryNibble = r[2] >> 4
        s.battery = BatteryStatus(percent: UInt8(min(Int(batteryNibble & 0x0E) * 100 / 8, 100)),
                                  state: batteryNibble & 0x01 != 0 ? .charging : .discharging)
        s.buttons = ReportFields.buttons(r, at: SwitchProLayout.buttons, map: SwitchProLayout.buttonMap)
        let left = r[SwitchProLayout.buttons + 2]
        let up = left & SwitchProLayout.dpadUp != 0, down = left & SwitchProLayout.dpadDown != 0
        let right = left & SwitchProLayout.dpadRight != 0, leftPressed = left & SwitchProLayout.dpadLeft != 0
        switch (up, right, down, leftPressed) {
        case (true, false, _, false): s.dpad = .up
        case (true, true, _, _): s.dpad = .upRight
        case (false, true, false, _): s.dpad = .right
        case (_, true, true, _): s.dpad = .downRight
        case (_, false, true, false): s.dpad = .down
        case (_, _, true, true): s.dpad = .downLeft
        case (false, _, false, true): s.dpad = .left
        case (true, _, _, true): s.dpad = .upLeft
        default: s.dpad = .none
        }
        func stick(_ o: Int) -> StickPosition {
            StickPosition(x: UInt16(r[o]) | UInt16(r[o + 1] & 0x0F) << 8, y: UInt16(r[o + 1] >> 4) | UInt16(r[o + 2]) << 4)
        }
        s.leftStick = stick(SwitchProLayout.leftStick)
        s.rightStick = stick(SwitchProLayout.rightStick)
        s.l2 = s.buttons.contains(.l2) ? 255 : 0
        s.r2 = s.buttons.contains(.r2) ? 255 : 0
        func sample(_ i: Int) -> MotionSample {
            let o = SwitchProLayout.imu + i * SwitchProLayout.imuSampleSize
            return MotionSample(gyro: ReportFields.vector(r, at: o + 6), accel: ReportFields.vector(r, at: o))
        }
        s.hasMotion = true
        s.motion.first = sample(0)
        s.motion.second = sample(1)
        s.motion.third = sample(2)
        s.motion.count = 3
        s.hasTouch = false
        s.headphonesConnected = false
        s.microphoneConnected = false
    }
}

extension InputReportFormat {
    /// The full report (0x30): 12-bit sticks.
    public static let switchProFull = InputReportFormat(name: "switchProFull", stickBits: 12, microsPerTick: (1, 3))
}
