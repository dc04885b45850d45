/// DualShock 4 output: rumble and lightbar (hid-playstation's dualshock4_output_report_common).
/// nil means "not part of this report": its valid flag stays clear and the pad keeps what it had,
/// so a lightbar-only report does not stop the motors.
/// The lightbar colour of each player, as a PlayStation 4 and hid-playstation
/// (`dualshock4_set_default_lightbar_colors`) show it: blue, red, green, pink, then round again.
public enum DualShock4PlayerColors {
    public static let colors = [RGBColor(red: 0x00, green: 0x00, blue: 0x40), RGBColor(red: 0x40, green: 0x00, blue: 0x00),
                                RGBColor(red: 0x00, green: 0x40, blue: 0x00), RGBColor(red: 0x20, green: 0x00, blue: 0x20)]
    /// Player `number` (from 1).
    public static func color(player number: Int) -> RGBColor { colors[(max(number, 1) - 1) % colors.count] }
}

public struct DualShock4OutputState: Hashable, Sendable {
    /// The two output reports: ids, lengths, and where the common block starts in each.
    static let usbReportID: UInt8 = 0x05, bluetoothReportID: UInt8 = 0x11
    static let usbLength = 32, bluetoothLength = 78
    static let usbCommon = 1, bluetoothCommon = 3

    public var rumble: MotorLevels? = nil
    public var lightbar: RGBColor? = nil
    public var lightbarBlink: LightbarBlink? = nil
    public init() {}

    /// Byte offsets in the common block (hid-playstation's `struct dualshock4_output_report_common`,
    /// 31 bytes: the USB report after its id), read and written here only.
    enum Common {
        static let validFlags = 0, motorRight = 3, motorLeft = 4, red = 5, green = 6, blue = 7, blinkOn = 8, blinkOff = 9
        /// The struct's size; both reports hold it whole (DualShock4LayoutTests checks, as the kernel's static_assert does).
        static let size = 31
    }

    /// valid_flag0 bits (hid-playstation's DS4_OUTPUT_VALID_FLAG0_*, the same in SDL's PS4 driver).
    enum ValidFlag {
        static let motor: UInt8 = 0x01, led: UInt8 = 0x02, ledBlink: UInt8 = 0x04
    }

    /// USB report 0x05 (32 bytes) or Bluetooth report 0x11 (78 bytes, CRC32 seed 0xA2).
    public func encoded(bus: PadBus) -> [UInt8] {
        var common = [UInt8](repeating: 0, count: Common.size)
        if let rumble {
            common[Common.validFlags] |= ValidFlag.motor
            common[Common.motorRight] = rumble.high
            common[Common.motorLeft] = rumble.low
        }
        if let c = lightbar {
            common[Common.validFlags] |= ValidFlag.led
            common[Common.red] = c.red; common[Common.green] = c.green; common[Common.blue] = c.blue
        }
        if let blink = lightbarBlink {
            common[Common.validFlags] |= ValidFlag.ledBlink
            common[Common.blinkOn] = blink.on; common[Common.blinkOff] = blink.off
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
        let c = Array(common.prefix(Layout.Common.size)), at = Layout.Common.self, valid = Layout.ValidFlag.self
        var decoded = DecodedDualShock4Output(bus: bus)
        let flags = c[at.validFlags]
        if flags & valid.motor != 0 { decoded.motors = MotorLevels(low: c[at.motorLeft], high: c[at.motorRight]) }
        if flags & valid.led != 0 { decoded.lightbar = RGBColor(red: c[at.red], green: c[at.green], blue: c[at.blue]) }
        if flags & valid.ledBlink != 0 { decoded.lightbarBlink = LightbarBlink(on: c[at.blinkOn], off: c[at.blinkOff]) }
        return decoded
    }
}
