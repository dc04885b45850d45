import PadDevices
import HIDCodecs

/// What an emulated PlayStation pad of one kind on one bus is to the kernel and SDL: its report
/// descriptor, its input report layout, its sensor clock, and its answers to feature-report reads.
/// One table, so the DualSense and the DualShock 4 differ here and nowhere else.
struct PlayStationPadProfile {
    let kind: PadKind
    let bus: PadBus
    let descriptor: [UInt8]
    let layout: PlayStationInputLayout

    init?(kind: PadKind, bus: PadBus) {
        self.kind = kind
        self.bus = bus
        switch kind {
        case .dualSense, .dualSenseEdge:
            let buttons = kind == .dualSenseEdge ? PlayStationLayouts.dualSenseEdgeButtons : PlayStationLayouts.dualSenseButtons
            descriptor = bus == .usb ? DualSenseIdentityData.usbDescriptor : DualSenseIdentityData.bluetoothDescriptor
            layout = bus == .usb ? PlayStationLayouts.dualSenseUSB(buttons: buttons) : PlayStationLayouts.dualSenseBluetooth(buttons: buttons)
        case .dualShock4:
            descriptor = bus == .usb ? DualShock4IdentityData.usbDescriptor : DualShock4IdentityData.bluetoothDescriptor
            layout = bus == .usb ? PlayStationLayouts.dualShock4USB : PlayStationLayouts.dualShock4Bluetooth
        default:
            return nil
        }
    }

    /// Sensor clock ticks for `micros`: the DualSense counts in 1/3 µs (hid-playstation's
    /// DS_SENSOR_TIMESTAMP units), the DualShock 4 in 16/3 µs (hid-sony's 5.33 µs).
    /// (The inverse of `GamepadState.sensorMicros`.)
    func sensorTicks(micros: UInt32) -> UInt32 { kind.sensorTicks(micros: micros) }

    /// The answer to a GET_REPORT for feature `number`; nil: the pad has no such report (EIO).
    func featureReport(_ number: UInt8, calibration: [UInt8], firmwareInfo: [UInt8], macAddress: [UInt8]) -> [UInt8]? {
        // MACs go least significant byte first in every Sony report that carries one.
        let mac = Array(macAddress.reversed())
        var report: [UInt8]
        switch (kind, number) {
        case (.dualSense, 0x05), (.dualSenseEdge, 0x05): report = calibration
        case (.dualSense, 0x09), (.dualSenseEdge, 0x09): report = [0x09] + mac + [UInt8](repeating: 0, count: 13)
        case (.dualSense, 0x20), (.dualSenseEdge, 0x20): report = firmwareInfo
        // hid-sony reads 0x05 over Bluetooth and 0x02 over USB; SDL reads 0x02 on both buses
        // (over Bluetooth, then 0x05 too), and a real pad answers both.
        case (.dualShock4, DualShock4Calibration.bluetoothReportID) where bus == .bluetooth:
            guard let form = try? DualShock4Calibration.bluetoothForm(calibration) else { return nil }
            return form
        case (.dualShock4, DualShock4Calibration.usbReportID):
            return try? DualShock4Calibration.usbForm(calibration)
        case (.dualShock4, DualShock4IdentityData.versionInfoReportID): return firmwareInfo
        // USB only: hid-sony takes the MAC from 0x81, SDL from 0x12 (and takes a pad that refuses
        // 0x12 for a Bluetooth one, as a Bluetooth pad does).
        case (.dualShock4, 0x81) where bus == .usb: return [0x81] + mac
        case (.dualShock4, 0x12) where bus == .usb: return [0x12] + mac + [UInt8](repeating: 0, count: 9)
        default: return nil
        }
        if bus == .bluetooth { BluetoothCRC.stamp(seed: .feature, report: &report) }
        return report
    }
}
