/// A DualSense that has just connected over Bluetooth plays a lightbar animation and ignores
/// lightbar commands until it ends. SDL waits until the pad's own sensor clock (input report,
/// `sensor_timestamp`, units of 1/3 µs since power-on) reaches 10 200 000, about 3.4 s.
public enum DualSenseStartupAnimation {
    public static let endsAtSensorTicks: UInt32 = 10_200_000

    /// The sensor timestamp of a full input report (USB 0x01, 64 bytes; Bluetooth 0x31, 78 bytes);
    /// nil for anything else, e.g. the 10-byte Bluetooth short report, which has no clock.
    public static func sensorTimestamp(inputReport r: [UInt8]) -> UInt32? {
        // dualsense_input_report: sticks/triggers 6, seq 1, buttons 4, reserved 4, gyro 6, accel 6 → timestamp at 27.
        let start: Int
        switch (r.first, r.count) {
        case (0x01?, 64...): start = 1 + 27
        case (0x31?, 78...): start = 2 + 27
        default: return nil
        }
        return UInt32(r[start]) | UInt32(r[start + 1]) << 8 | UInt32(r[start + 2]) << 16 | UInt32(r[start + 3]) << 24
    }

    /// True once the animation is over; nil when the report cannot tell.
    public static func isOver(inputReport: [UInt8]) -> Bool? {
        sensorTimestamp(inputReport: inputReport).map { $0 >= endsAtSensorTicks }
    }
}
