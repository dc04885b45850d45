import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// The DualShock 4 (hid-sony up to 6.1, hid-playstation from 6.2; SDL_hidapi_ps4.c), shown by
/// the host as itself through uhid.
public struct DualShock4Driver: PadDriver {
    public init() {}
    public func lights(for pad: Pad, options: PadFeedback.Options) -> any PadLights {
        PlayStationLights(pad: pad, allowBluetoothFullReports: options.allowBluetoothFullReports,
                          waitForStartupAnimation: options.waitForStartupAnimation)
    }
    public var kinds: [PadKind] { [.dualShock4] }
    public var readsThroughHidraw: Bool { true }
    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? { PlayStationInputCodec.dualShock4 }
    /// Every 4 ms over USB, idle or not (the kernel's and SDL's drivers expect a steady stream).
    public var reportCadence: Duration? { .milliseconds(4) }
    /// No player LEDs: the lightbar in the player's colour.
    public func playerLights(_ number: Int) -> (mask: UInt8?, color: RGBColor?) { (nil, DualShock4PlayerColors.color(player: number)) }

    /// Its calibration in its bus's form (USB answers 0x02, Bluetooth 0x05: hid-playstation's
    /// dualshock4_get_calibration_data) and its 0xa3 version report, which hid-sony reads at probe.
    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        var wire = PadIdentity()
        var calibration = MotionCalibration.nominal
        guard let device = hidraw else { return (calibration, wire) }
        let calibrationReport = calibrationReport(bus: pad.bus ?? .usb)!
        if let report = try? device.featureReport(calibrationReport.id, length: calibrationReport.length),
           let parsed = try? CalibrationParser.dualShock4(report) {
            calibration = parsed.calibration
            wire.calibration = FeatureReportBytes(report) ?? .init()
        }
        if let report = try? device.featureReport(DualShock4IdentityData.versionInfoReportID, length: DualShock4IdentityData.versionInfo.count) {
            wire.firmware = FeatureReportBytes(report) ?? .init()
        }
        return (calibration, wire)
    }

    /// USB pads answer 0x02, Bluetooth ones 0x05 (hid-playstation's dualshock4_get_calibration_data).
    public func calibrationReport(bus: PadBus) -> (id: UInt8, length: Int)? {
        bus == .bluetooth ? (DualShock4Calibration.bluetoothReportID, DualShock4Calibration.bluetoothLength)
                          : (DualShock4Calibration.usbReportID, DualShock4Calibration.usbLength)
    }

    /// The report's id says its bus (its CRC is checked over Bluetooth).
    public func parseCalibration(_ report: [UInt8], convention: CalibrationConvention, bus: PadBus?) throws(CalibrationError) -> CalibrationResult {
        try CalibrationParser.dualShock4(report, convention: convention)
    }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try PlayStationVirtualPad(arrival: arrival, presenting: .dualShock4)
    }

    public var emulatedModels: [EmulatedModel] { [EmulatedModel(name: PadKind.dualShock4.name, kind: .dualShock4)] }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedPlayStationPad(kind: .dualShock4, bus: bus, transport: .uhid, idleRepeat: reportCadence, onOutput: onOutput)
    }

    public func describeOutput(_ report: [UInt8]) -> String {
        do {
            let decoded = try DualShock4OutputDecoder.decode(report)
            var parts: [String] = []
            if let motors = decoded.motors { parts.append("rumble \(motors)") }
            if let color = decoded.lightbar { parts.append("lightbar \(color)") }
            if let blink = decoded.lightbarBlink { parts.append("blink \(blink)") }
            return parts.isEmpty ? "no change" : parts.joined(separator: ", ")
        } catch { return "undecodable: \(error)" }
    }
}
