@testable import PadFamilies
import XCTest
import HIDCodecs
import PadDevices
import WireProtocol
@testable import PadHost

/// The host's Switch Pro: which calibration it answers with, how the wire's values become raw
/// counts, and what a game's output reports become.
final class SwitchProVirtualPadTests: XCTestCase {
    func arrival(factory: [UInt8], user: [UInt8], type: PadKind = .switchPro) -> PadArrival {
        PadArrival(slot: PadSlot(1), type: type, vendorID: 0x057e, productID: 0x2009, capabilities: [], name: "Pro Controller",
                   identity: PadIdentity(calibration: FeatureReportBytes(factory)!, firmware: FeatureReportBytes(user)!))
    }

    func testThePadsOwnBlocksAreAnsweredWhenPlausibleAndTheDefaultsOtherwise() {
        var own = SwitchProCalibration.defaults
        own.factory.replaceSubrange(29..<38, with: SwitchProCalibration.packLeft(x: .init(min: 700, center: 2100, max: 3400), y: .init(min: 600, center: 1950, max: 3300)))
        XCTAssertEqual(SwitchProVirtualPad.calibration(for: arrival(factory: own.factory, user: own.user)), own)
        var broken = own
        SwitchProCalibration.put16(&broken.factory, 18, 0)   // gyro x scale = offset: a division by zero
        let refused: [(String, PadArrival)] = [
            ("nothing sent", arrival(factory: [], user: [])),
            ("a block cut short", arrival(factory: Array(own.factory.prefix(47)), user: own.user)),
            ("implausible", arrival(factory: broken.factory, user: broken.user)),
            ("another kind of pad", arrival(factory: own.factory, user: own.user, type: .xbox)),
        ]
        for (why, sent) in refused { XCTAssertEqual(SwitchProVirtualPad.calibration(for: sent), .defaults, why) }
    }

    /// The wire's ends and centre land on the raw counts hid-nintendo reads as ±32767 and 0, y
    /// upside down (the pad's +y is up).
    func testTheWiresSticksBecomeTheRawCountsThatReadAsThem() {
        let calibration = SwitchProCalibration.defaults
        var controls = SwitchProReports.Controls()
        SwitchProVirtualPad.update(&controls, with: PadStateSnapshot(slot: PadSlot(1), buttons: GamepadButtons([.south, .touchpad]).rawValue,
                                                                     leftX: 32767, leftY: -32768, rightX: 0, rightY: 0, l2: 200, r2: 10),
                                   sticks: calibration.sticks)
        XCTAssertEqual(controls.left.x, 3500)
        XCTAssertEqual(controls.left.y, 3500, "wire up (−y) is the pad's +y")
        XCTAssertEqual(controls.right.x, 2000)
        XCTAssertEqual(controls.buttons, [.south, .l2], "no touchpad on a Switch Pro; an analog L2 past half way is ZL")
    }

    func testRumbleFramesAndPlayerLightsBecomeFeedbackOnlyWhenTheyChange() {
        var sequence = WireSequence(0), levels = MotorLevels.silent, lights: UInt8? = nil
        let strong: [UInt8] = [0x10, 0x00, 0x00, 0x01, 0x60, 0x72, 0x00, 0xC8, 0x60, 0x40]
        var messages = SwitchProVirtualPad.messages(for: strong, slot: PadSlot(1), sequence: &sequence, lastLevels: &levels, lastLights: &lights)
        guard case .rumble(let lease)? = messages.first, messages.count == 1 else { return XCTFail("\(messages)") }
        XCTAssertEqual([lease.low, lease.high], [65535, 65535])
        messages = SwitchProVirtualPad.messages(for: strong, slot: PadSlot(1), sequence: &sequence, lastLevels: &levels, lastLights: &lights)
        XCTAssertEqual(messages, [], "the same frame again (the driver repeats it every 50 ms)")

        var subcommand = [UInt8](repeating: 0, count: 12)
        subcommand[0] = 0x01
        subcommand.replaceSubrange(2..<10, with: [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40])
        subcommand[10] = 0x30; subcommand[11] = 0x35   // lights 1 and 3 on, 2 and 1 flashing
        messages = SwitchProVirtualPad.messages(for: subcommand, slot: PadSlot(1), sequence: &sequence, lastLevels: &levels, lastLights: &lights)
        XCTAssertEqual(messages.count, 2, "the neutral frame stops the motors, the lights change")
        guard case .hidOutput(let output)? = messages.last else { return XCTFail("\(messages)") }
        XCTAssertEqual(output.fields, .playerLEDs)
        XCTAssertEqual(output.playerLEDMask, 0x07)
        XCTAssertEqual(SwitchProVirtualPad.messages(for: [0x11, 0x00], slot: PadSlot(1), sequence: &sequence, lastLevels: &levels, lastLights: &lights), [])
    }
}
