/// Byte positions of one Sony input report, in the spirit of the kernel's packed structs
/// (`dualsense_input_report`, `dualshock4_input_report_common`): `base` is where the common
/// part starts after the transport header, every other offset is relative to it.
public struct PlayStationInputLayout: Sendable {
    public var format: InputReportFormat
    public var reportID: UInt8
    public var length: Int
    public var base: Int
    public var checksummed: Bool
    public var leftX: Int, leftY: Int, rightX: Int, rightY: Int
    public var l2: Int, r2: Int
    public var buttons: Int                // three bytes: hat + face, shoulders + sticks, system
    public var buttonMap: [ButtonBit]
    public var sequence: Int?
    public var gyro: Int?                  // three int16 LE, then accel follows in `accel`
    public var accel: Int?
    public var sensorTimestamp: Int?
    public var sensorTimestampIs32Bit: Bool
    public var touchPoints: Int?           // two 4-byte points
    /// The DualShock 4's count of touch reports that follow (`num_touch_reports`). A pad sends at
    /// least 1; hid-playstation (6.2+) reads exactly that many and so drops every touch of a
    /// report saying 0, where hid-sony (6.1) read a 0 as 1.
    public var touchReportCount: Int? = nil
    public var status: Int?
    public var batteryEncoding: BatteryEncoding
    /// Byte 1 of a report with a transport header (`base` ≥ 2): the DualShock 4's Bluetooth 0x11
    /// says 0xC0 there (HID data and CRC present), which SDL's PS4 driver checks; 0 elsewhere.
    public var header: UInt8 = 0

    public enum BatteryEncoding: Sendable { case none, dualSense, dualShock4 }

    /// One past the last byte any field reads, from the report's start: the size check the
    /// kernel makes with `static_assert(sizeof(struct …))`, made by `fitsItsReport`.
    public var fieldsEnd: Int {
        var ends = [leftX, leftY, rightX, rightY, l2, r2].map { $0 + 1 } + [buttons + 3]
        ends += [sequence.map { $0 + 1 }, gyro.map { $0 + 6 }, accel.map { $0 + 6 },
                 sensorTimestamp.map { $0 + (sensorTimestampIs32Bit ? 4 : 2) }, touchPoints.map { $0 + 8 },
                 touchReportCount.map { $0 + 1 }, status.map { $0 + 1 }].compactMap { $0 }
        return base + (ends.max() ?? 0)
    }

    /// Whether every field lies inside the report, before its CRC where it has one.
    public var fitsItsReport: Bool { fieldsEnd <= length - (checksummed ? 4 : 0) }

    /// Every layout the decoder reads, for the size checks.
    public static var all: [PlayStationInputLayout] {
        [PlayStationLayouts.dualSenseUSB(), PlayStationLayouts.dualSenseBluetooth(),
         PlayStationLayouts.dualSenseUSB(buttons: PlayStationLayouts.dualSenseEdgeButtons),
         PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple), PlayStationLayouts.bluetoothSimple(format: .dualShock4BluetoothSimple),
         PlayStationLayouts.dualShock4USB, PlayStationLayouts.dualShock4Bluetooth]
    }
}

public enum PlayStationLayouts {
    static let faceAndShoulders: [ButtonBit] = [
        ButtonBit(byte: 0, mask: 0x10, button: .west), ButtonBit(byte: 0, mask: 0x20, button: .south),
        ButtonBit(byte: 0, mask: 0x40, button: .east), ButtonBit(byte: 0, mask: 0x80, button: .north),
        ButtonBit(byte: 1, mask: 0x01, button: .l1), ButtonBit(byte: 1, mask: 0x02, button: .r1),
        ButtonBit(byte: 1, mask: 0x04, button: .l2), ButtonBit(byte: 1, mask: 0x08, button: .r2),
        ButtonBit(byte: 1, mask: 0x10, button: .create), ButtonBit(byte: 1, mask: 0x20, button: .options),
        ButtonBit(byte: 1, mask: 0x40, button: .l3), ButtonBit(byte: 1, mask: 0x80, button: .r3),
        ButtonBit(byte: 2, mask: 0x01, button: .ps), ButtonBit(byte: 2, mask: 0x02, button: .touchpad),
    ]
    /// DualShock 4 and the short Bluetooth reports keep a counter in the upper bits of byte 2.
    public static let dualShock4Buttons = faceAndShoulders
    public static let dualSenseButtons = faceAndShoulders + [ButtonBit(byte: 2, mask: 0x04, button: .mute)]
    /// Edge extras, as SDL's HIDAPI PS5 driver reads them.
    public static let dualSenseEdgeButtons = dualSenseButtons + [
        ButtonBit(byte: 2, mask: 0x10, button: .fnLeft), ButtonBit(byte: 2, mask: 0x20, button: .fnRight),
        ButtonBit(byte: 2, mask: 0x40, button: .paddleLeft), ButtonBit(byte: 2, mask: 0x80, button: .paddleRight),
    ]

    /// `struct dualsense_input_report` after report id 0x01 (USB, 64 bytes).
    public static func dualSenseUSB(buttons: [ButtonBit] = dualSenseButtons) -> PlayStationInputLayout {
        PlayStationInputLayout(format: .dualSenseUSB, reportID: 0x01, length: 64, base: 1, checksummed: false,
                               leftX: 0, leftY: 1, rightX: 2, rightY: 3, l2: 4, r2: 5, buttons: 7, buttonMap: buttons,
                               sequence: 6, gyro: 15, accel: 21, sensorTimestamp: 27, sensorTimestampIs32Bit: true,
                               touchPoints: 32, status: 52, batteryEncoding: .dualSense)
    }

    /// Bluetooth 0x31: report id, a sequence/tag byte, then the same struct; CRC32 (seed 0xA1) in the last 4 bytes.
    public static func dualSenseBluetooth(buttons: [ButtonBit] = dualSenseButtons) -> PlayStationInputLayout {
        var layout = dualSenseUSB(buttons: buttons)
        layout.format = .dualSenseBluetooth
        layout.reportID = 0x31
        layout.length = 78
        layout.base = 2
        layout.checksummed = true
        return layout
    }

    /// The 10-byte report a Sony pad sends over Bluetooth before it is switched to full reports.
    public static func bluetoothSimple(format: InputReportFormat) -> PlayStationInputLayout {
        PlayStationInputLayout(format: format, reportID: 0x01, length: 10, base: 1, checksummed: false,
                               leftX: 0, leftY: 1, rightX: 2, rightY: 3, l2: 7, r2: 8, buttons: 4, buttonMap: dualShock4Buttons,
                               sequence: nil, gyro: nil, accel: nil, sensorTimestamp: nil, sensorTimestampIs32Bit: false,
                               touchPoints: nil, status: nil, batteryEncoding: .none)
    }

    /// `struct dualshock4_input_report_usb`: common part at 1, touch report 0's points at common+34.
    public static let dualShock4USB = PlayStationInputLayout(
        format: .dualShock4USB, reportID: 0x01, length: 64, base: 1, checksummed: false,
        leftX: 0, leftY: 1, rightX: 2, rightY: 3, l2: 7, r2: 8, buttons: 4, buttonMap: dualShock4Buttons,
        sequence: nil, gyro: 12, accel: 18, sensorTimestamp: 9, sensorTimestampIs32Bit: false,
        touchPoints: 34, touchReportCount: 32, status: 29, batteryEncoding: .dualShock4)

    /// `struct dualshock4_input_report_bt`: report id 0x11, two header bytes, common part at 3, CRC32 trailer.
    public static let dualShock4Bluetooth: PlayStationInputLayout = {
        var layout = dualShock4USB
        layout.format = .dualShock4Bluetooth
        layout.reportID = 0x11
        layout.length = 78
        layout.base = 3
        layout.checksummed = true
        layout.header = 0xC0
        return layout
    }()
}

extension InputReportFormat {
    // A DualSense's sensor clock counts 1/3 µs (hid-playstation divides by 3); a DualShock 4's
    // 16-bit clock steps 16/3 µs (5.33 µs units, hid-playstation's DS4 timestamp).
    public static let dualSenseUSB = InputReportFormat(name: "dualSenseUSB", stickBits: 8, microsPerTick: (1, 3))
    public static let dualSenseBluetooth = InputReportFormat(name: "dualSenseBluetooth", stickBits: 8, microsPerTick: (1, 3))
    public static let dualSenseBluetoothSimple = InputReportFormat(name: "dualSenseBluetoothSimple", stickBits: 8, microsPerTick: (1, 3))
    public static let dualShock4USB = InputReportFormat(name: "dualShock4USB", stickBits: 8, microsPerTick: (16, 3))
    public static let dualShock4Bluetooth = InputReportFormat(name: "dualShock4Bluetooth", stickBits: 8, microsPerTick: (16, 3))
    public static let dualShock4BluetoothSimple = InputReportFormat(name: "dualShock4BluetoothSimple", stickBits: 8, microsPerTick: (16, 3))
}
