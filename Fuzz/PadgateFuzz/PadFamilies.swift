// What the host's family pads make of bytes they did not write (docs/fuzzing.md): a game's output
// reports to the DualShock 4, the Xbox One S and the Switch Pro, and the identity reports a client
// sends with an arrival (a DualShock 4's calibration in either form, a Switch Pro's flash blocks).
import Foundation
import HIDCodecs
import PadDevices
@testable import PadFamilies
import WireProtocol
@testable import PadHost

func fuzzPadFamilies(_ input: UnsafeRawBufferPointer) {
    let bytes = [UInt8](input)
    // A game's report to the host's DualShock 4: feedback only when it decodes, levels in range.
    var translator = GameOutputTranslator(slot: PadSlot(0), kind: .dualShock4)
    for message in translator.messages(for: bytes) {
        if case .hidOutput(let output) = message, output.fields != .lightbar { fatalError("a DS4 report set \(output.fields)") }
    }
    // A game's report to the host's Xbox One S: magnitudes above 100 never make a lease.
    if case .rumble(let lease)? = XboxOneVirtualPad.lease(for: bytes, slot: PadSlot(0)) {
        guard bytes.count >= XboxRumbleReport.length, bytes[2...5].allSatisfy({ $0 <= 100 }) else { fatalError("a lease from \(bytes)") }
        _ = lease
    }
    // A client's DS4 calibration: either form converts to the other and back to itself; the
    // host's identity is the client's report only when that holds, else padgate's default.
    if let bluetooth = try? DualShock4Calibration.bluetoothForm(bytes) {
        guard let usb = try? DualShock4Calibration.usbForm(bluetooth), (try? DualShock4Calibration.bluetoothForm(usb)) == bluetooth else {
            fatalError("a DS4 calibration that does not survive its two forms: \(bytes)")
        }
    }
    guard let report = FeatureReportBytes(bytes.prefix(FeatureReportBytes.capacity)) else { return }
    let arrival = PadArrival(slot: PadSlot(0), type: .dualShock4, vendorID: 0x054c, productID: 0x05c4, capabilities: [], name: "pad",
                             identity: PadIdentity(calibration: report, firmware: report))
    let identity = PlayStationVirtualPad.identity(for: arrival)
    guard identity.calibrationReport == DualShock4IdentityData.bluetoothCalibration
            || identity.calibrationReport == (try? DualShock4Calibration.bluetoothForm(report.bytes)) else {
        fatalError("the host's DS4 answers with a calibration nobody sent: \(identity.calibrationReport)")
    }

    // A game's report to the host's Switch Pro: rumble levels in range, lights in the low nibble.
    var sequence2 = WireSequence(0), levels = MotorLevels.silent, lights: UInt8? = nil
    for message in SwitchProVirtualPad.messages(for: bytes, slot: PadSlot(0), sequence: &sequence2, lastLevels: &levels, lastLights: &lights) {
        if case .hidOutput(let output) = message, output.playerLEDMask > 0x0F { fatalError("lights \(output.playerLEDMask)") }
    }
    // A client's Switch Pro flash blocks: the host uses them only when plausible, and a plausible
    // one turns any wire state into raw counts inside 12 bits without trapping.
    if bytes.count >= 96 {
        let sent = PadArrival(slot: PadSlot(0), type: .switchPro, vendorID: 0x057e, productID: 0x2009, capabilities: [], name: "pad",
                              identity: PadIdentity(calibration: FeatureReportBytes(bytes[0..<48])!, firmware: FeatureReportBytes(bytes[48..<96])!))
        let calibration = SwitchProVirtualPad.calibration(for: sent)
        guard calibration == .defaults || calibration.isPlausible else { fatalError("an implausible calibration was used") }
        var controls = SwitchProReports.Controls()
        let extreme = Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        SwitchProVirtualPad.update(&controls, with: PadStateSnapshot(slot: PadSlot(0), leftX: extreme, leftY: extreme &* -1, rightX: .min, rightY: .max),
                                   sticks: calibration.sticks)
        guard controls.left.x <= 4095, controls.left.y <= 4095, controls.right.x <= 4095, controls.right.y <= 4095 else { fatalError("a stick outside 12 bits") }
        _ = SwitchProVirtualPad.rawIMU(WireMotionSample(gyroX: 4000, gyroY: -4000, accelX: 8, accelZ: -8), axes: calibration.imu)
    }
}
