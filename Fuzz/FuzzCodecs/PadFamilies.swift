// What the host's family pads make of bytes they did not write (docs/fuzzing.md): a game's output
// reports to the DualShock 4 and the Xbox One S, and the identity reports a client sends with an
// arrival (a DualShock 4's calibration in either form).
import Foundation
import HIDCodecs
import PadDevices
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
    var sequence = WireSequence(0)
    if case .rumble(let lease)? = XboxOneVirtualPad.lease(for: bytes, slot: PadSlot(0), sequence: &sequence) {
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
}
