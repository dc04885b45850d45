import HIDCodecs
@testable import PadFamilies
@testable import PadHost
import WireProtocol
import XCTest

/// `host status` names each pad, how games reach it, why when that is not as itself, and what the
/// physical pad can do (the capabilities its client sent, which the host reads nowhere else).
final class HostStatusPadLineTests: XCTestCase {
    func arrival(_ capabilities: WireCapabilities) -> PadArrival {
        PadArrival(slot: PadSlot(1), type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: capabilities, name: "pad")
    }

    func testALineSaysThePadItsPathAndWhatThePhysicalPadCanDo() {
        let pad = InProcessPad(arrival: arrival([.rumble, .rgbLED, .adaptiveTriggers]))
        XCTAssertEqual(HostAdministration.padLine((PadSlot(1), pad)),
                       "slot 1: DualSense (in-process); the pad has rumble, lightbar, adaptive triggers")
        XCTAssertEqual(HostAdministration.padLine((PadSlot(1), InProcessPad(arrival: arrival([])))), "slot 1: DualSense (in-process)")
        // Bits no version of padgate defines are not named (a newer client's, or a hostile one's).
        XCTAssertEqual(WireCapabilities(rawValue: 0xFFFF_F000).names, [])
    }

    func testAFallbackSaysWhyAndPassesEverythingThrough() throws {
        let inner = InProcessPad(arrival: arrival([.rumble]))
        let pad = FallbackPad(inner, reason: "the DualSense could not be made: hid-playstation did not bind")
        XCTAssertEqual(pad.presentation, "in-process; fallback: the DualSense could not be made: hid-playstation did not bind")
        var state = PadStateSnapshot.neutral(PadSlot(1))
        state.buttons = GamepadButtons.south.rawValue
        try pad.apply(state)
        XCTAssertEqual(inner.state.buttons, GamepadButtons.south.rawValue)
        pad.remove()
        XCTAssertTrue(inner.removed)
    }
}
