/// The DualShock 4's IMU calibration report in its two forms. Over USB the pad answers feature
/// 0x02 (37 bytes, gyro plus and minus interleaved per axis); over Bluetooth feature 0x05 (41
/// bytes, all gyro plus values then all minus values, CRC32 with seed 0xA3 in the last four).
/// The values are the same; only their order differs (hid-sony's and hid-playstation's
/// dualshock4_get_calibration_data, SDL_hidapi_ps4.c). A virtual pad on one bus answering for a
/// physical pad on the other converts between them.
public enum DualShock4Calibration {
    public static let usbReportID: UInt8 = 0x02
    public static let bluetoothReportID: UInt8 = 0x05
    public static let usbLength = 37
    public static let bluetoothLength = 41

    /// Gyro plus/minus byte offsets, by form: (pitch+, pitch−, yaw+, yaw−, roll+, roll−).
    static let usbGyroOrder = [7, 9, 11, 13, 15, 17]
    static let bluetoothGyroOrder = [7, 13, 9, 15, 11, 17]

    /// Either form, checked (id, length, Bluetooth CRC) and returned in the other or the same form.
    /// Refused: anything `CalibrationParser.dualShock4` refuses.
    public static func bluetoothForm(_ report: [UInt8]) throws(CalibrationError) -> [UInt8] {
        try convert(report, to: bluetoothReportID)
    }

    public static func usbForm(_ report: [UInt8]) throws(CalibrationError) -> [UInt8] {
        try convert(report, to: usbReportID)
    }

    private static func convert(_ report: [UInt8], to id: UInt8) throws(CalibrationError) -> [UInt8] {
        _ = try CalibrationParser.dualShock4(report)
        let needed = report[0] == usbReportID ? usbLength : bluetoothLength
        guard report.count >= needed else { throw .tooShort(got: report.count, need: needed) }
        let from = report[0] == usbReportID ? usbGyroOrder : bluetoothGyroOrder
        let to = id == usbReportID ? usbGyroOrder : bluetoothGyroOrder
        var out = [UInt8](repeating: 0, count: id == usbReportID ? usbLength : bluetoothLength)
        out[0] = id
        for i in 1..<7 { out[i] = report[i] }                 // gyro biases
        for (source, target) in zip(from, to) { out[target] = report[source]; out[target + 1] = report[source + 1] }
        for i in 19..<37 { out[i] = report[i] }               // speeds, accelerometer, two reserved bytes
        if id == bluetoothReportID { BluetoothCRC.stamp(seed: .feature, report: &out) }
        return out
    }
}
