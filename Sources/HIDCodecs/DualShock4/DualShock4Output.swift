/// DualShock 4 output: rumble and lightbar (hid-playstation's dualshock4_output_report_common).
/// nil means "not part of this report": its valid flag stays clear and the pad keeps what it had,
/// so a lightbar-only report does not stop the motors.
public struct DualShock4OutputState: Hashable, Sendable {
    /// The two output reports: ids, lengths, and where the common block starts in each.
    static let usbReportID: UInt8 = 0x05, bluetoothReportID: UInt8 = 0x11
    static let usbLength = 32, bluetoothLength = 78
    static let usbCommon = 1, bluetoothCommon = 3

    public var rumble: MotorLevels? = nil
    public var lightbar: RGBColor? = nil
    public var lightbarBlink: LightbarBlink? = nil
    public init() {}

    /// valid_flag0 bits (hid-playstation's DS4_OUTPUT_VALID_FLAG0_*, the same in SDL's PS4 driver).
    enum ValidFlag {
        static let motor: UInt8 = 0x01, led: UInt8 = 0x02, ledBlink: UInt8 = 0x04
    }

    /// USB report 0x05 (32 bytes) or Bluetooth report 0x11 (78 bytes, CRC32 seed 0xA2).
    public func encoded(bus: PadBus) -> [UInt8] {
        var common = [UInt8](repeating: 0, count: Self.usbLength - Self.usbCommon)
        if let rumble {
            common[0] |= ValidFlag.motor
            common[3] = rumble.high                    // motor_right
            common[4] = rumble.low                     // motor_left
        }
        if let c = lightbar {
            common[0] |= ValidFlag.led
            common[5] = c.red; common[6] = c.green; common[7] = c.blue
        }
        if let blink = lightbarBlink {
            common[0] |= ValidFlag.ledBlink
            common[8] = blink.on; common[9] = blink.off
        }
        switch bus {
        case .usb:
            return [Self.usbReportID] + common
        case .bluetooth:
            var report = [UInt8](repeating: 0, count: Self.bluetoothLength)
            report[0] = Self.bluetoothReportID
            report[1] = 0xC0                           // DS4_OUTPUT_HWCTL_HID | DS4_OUTPUT_HWCTL_CRC32
            report.replaceSubrange(Self.bluetoothCommon..<Self.bluetoothCommon + common.count, with: common)
            BluetoothCRC.stamp(seed: .output, report: &report)
            return report
        }
    }
}

/// The output reports a game (or a driver) writes to a DualShock 4: USB report 0x05 (32 bytes) or
/// Bluetooth report 0x11 (78 bytes, CRC32 seed 0xA2), the layout `DualShock4OutputState` writes.
/// Only what a valid-flag bit enables is read, as the pad does.
public struct DecodedDualShock4Output: Hashable, Sendable {
    public var bus: PadBus
    public var motors: MotorLevels?
    public var lightbar: RGBColor?
    public var lightbarBlink: LightbarBlink?
    public init(bus: PadBus) { self.bus = bus }
}

public enum DualShock4OutputDecoder {
    typealias Layout = DualShock4OutputState

    /// Errors are the DualSense decoder's: the same four ways a report can be wrong.
    public static func decode(_ report: [UInt8]) throws(DualSenseOutputDecodeError) -> DecodedDualShock4Output {
        guard let id = report.first else { throw .empty }
        let bus: PadBus, common: ArraySlice<UInt8>
        switch id {
        case Layout.usbReportID:
            guard report.count >= Layout.usbLength else { throw .tooShort(reportID: id, length: report.count, needed: Layout.usbLength) }
            bus = .usb; common = report[Layout.usbCommon...]
        case Layout.bluetoothReportID:
            let length = Layout.bluetoothLength
            guard report.count >= length else { throw .tooShort(reportID: id, length: report.count, needed: length) }
            let body = Array(report.prefix(length))
            guard BluetoothCRC.verify(seed: .output, report: body) else {
                let found = body.withUnsafeBytes { $0.loadLittleEndianUInt32(at: length - 4) }
                throw .badCRC(expected: BluetoothCRC.checksum(seed: .output, over: Array(body.prefix(length - 4))), found: found)
            }
            bus = .bluetooth; common = report[Layout.bluetoothCommon...]
        default: throw .unknownReportID(id)
        }
        let c = Array(common)
        var decoded = DecodedDualShock4Output(bus: bus)
        let flags = c[0]
        if flags & DualShock4OutputState.ValidFlag.motor != 0 { decoded.motors = MotorLevels(low: c[4], high: c[3]) }
        if flags & DualShock4OutputState.ValidFlag.led != 0 { decoded.lightbar = RGBColor(red: c[5], green: c[6], blue: c[7]) }
        if flags & DualShock4OutputState.ValidFlag.ledBlink != 0 { decoded.lightbarBlink = LightbarBlink(on: c[8], off: c[9]) }
        return decoded
    }
}
