import Feedback
import HIDCodecs
import PadFamilies
import XCTest
@testable import PadDevices

/// Each family's driver reads its own reports: the codec it gives decodes the family's kind, pads
/// read through hidraw have one, and a family read through its descriptor needs one to have a codec.
final class DriverCodecTests: XCTestCase {
    func testEveryDriverGivesItsOwnKindsCodecAndHidrawReadersHaveOne() {
        for driver in PadDrivers.all {
            for kind in driver.kinds {
                let codec = driver.inputCodec(for: kind, descriptor: nil)
                if let codec { XCTAssertEqual(codec.kind, kind, "\(type(of: driver))") }
                if driver.readsThroughHidraw && !driver.decodesThroughDescriptor {
                    XCTAssertNotNil(codec, "\(type(of: driver)) reads \(kind) through hidraw without a codec")
                }
                if driver.decodesThroughDescriptor { XCTAssertNil(codec, "\(kind) has no layout without its descriptor") }
            }
        }
    }

    func testTheRegistryGivesTheFamiliesWithFixedLayoutsACodecAndTheGenericPadNone() {
        for kind in [PadKind.dualSense, .dualSenseEdge, .dualShock4, .switchPro] {
            XCTAssertEqual(PadDrivers.inputCodec(kind, nil)?.kind, kind)
        }
        XCTAssertNil(PadDrivers.inputCodec(.generic, nil))
        XCTAssertNil(PadDrivers.inputCodec(.xbox, nil))
        // A DualSense report refused by the DualShock 4's codec, by length, and the reverse.
        var dualSense = ControllerInputDecoder(PadDrivers.inputCodec(.dualSense, nil)!)
        var state = GamepadState()
        XCTAssertThrowsError(try dualSense.decode([0x01] + [UInt8](repeating: 0, count: 20), into: &state))
        XCTAssertEqual(dualSense.rejectedTruncated, 1)
    }

    /// A pad whose hardware stops its motors by itself (the Steam Controller's, within 50 ms) gets
    /// segments no longer than that, re-armed before it: a held level never gaps.
    func testAPadThatHoldsALevelBrieflyIsReArmedWithinIt() {
        func feedback(_ kind: PadKind) -> PadFeedback {
            PadFeedback(pad: Pad(id: "test", kind: kind, kernelBus: 3, vendorID: 0x28de, productID: 0x1302, name: "pad", uniq: "",
                                 hidraw: nil, evdev: [], capabilities: []))
        }
        let held = feedback(.steamController).renderer.configuration
        XCTAssertEqual(held.segment, .milliseconds(50))
        XCTAssertEqual(held.rearmMargin, .milliseconds(20), "re-armed every 30 ms")
        XCTAssertEqual(feedback(.steamDeck).renderer.configuration.segment, RumbleRenderer.Configuration().segment, "the Deck holds a level")
    }
}
