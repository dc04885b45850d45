@testable import PadFamilies
import XCTest
import HIDCodecs
import PadDevices
import WireProtocol
@testable import PadHost

/// The host's Xbox One S: which product it presents, and what a game's report 0x03 becomes.
final class XboxOneVirtualPadTests: XCTestCase {
    func arrival(vendor: UInt16 = 0x045e, product: UInt16) -> PadArrival {
        PadArrival(slot: PadSlot(2), type: .xbox, vendorID: vendor, productID: product, capabilities: [], name: "pad")
    }

    func testAPadHidMicrosoftKnowsKeepsItsProductIDAndOthersAreTheOneS() {
        XCTAssertEqual(XboxOneVirtualPad.presentedProductID(for: arrival(product: 0x0b13)), 0x0b13)
        XCTAssertEqual(XboxOneVirtualPad.presentedProductID(for: arrival(product: 0x02fd)), 0x02fd)
        XCTAssertEqual(XboxOneVirtualPad.presentedProductID(for: arrival(product: 0x028e)), 0x02fd, "an Xbox 360 pad over USB")
        XCTAssertEqual(XboxOneVirtualPad.presentedProductID(for: arrival(vendor: 0x24c6, product: 0x0b13)), 0x02fd, "another vendor")
    }

    func testAGamesRumbleReportBecomesALeaseWithAllFourMotors() throws {
        let message = XboxOneVirtualPad.lease(for: [0x03, 0x0F, 20, 80, 100, 50, 0xFF, 0x00, 0xEB], slot: PadSlot(2))
        guard case .rumble(let lease) = message else { return XCTFail("\(String(describing: message))") }
        XCTAssertEqual([lease.low, lease.high, lease.leftTrigger, lease.rightTrigger], [65535, 32768, 13107, 52428])
        XCTAssertEqual(lease.slot, PadSlot(2))
        XCTAssertEqual(lease.sequence, .unnumbered, "ClientPads numbers every lease")
        XCTAssertEqual(lease.ttlMillis, GameOutputTranslator.rumbleLeaseMillis)
        // Anything else a game writes gives nothing.
        XCTAssertNil(XboxOneVirtualPad.lease(for: [0x03, 0x0F, 200, 0, 0, 0, 0, 0, 0], slot: PadSlot(2)))
        XCTAssertNil(XboxOneVirtualPad.lease(for: [0x01, 0, 0], slot: PadSlot(2)))
    }
}
