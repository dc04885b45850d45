import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol
import XCTest
@testable import PadClient

/// A receiver's slot (a Steam Controller puck's) is a pad on the host only while a controller is
/// on it: not announced while empty, announced when one comes, removed when it goes.
final class ReceiverSlotTests: XCTestCase {
    final class Slot: PadSource {
        var present = false
        var controls: PadStateSnapshot
        let arrival: PadArrival
        private(set) var silenced = 0
        init() {
            arrival = PadArrival(slot: PadSlot(2), type: .steamController, vendorID: 0x28de, productID: 0x1304, capabilities: [], name: "Steam Controller",
                                 identity: PadIdentity())
            controls = .neutral(PadSlot(2))
        }
        var descriptors: [FileDescriptor] { [] }
        func readInput() throws -> Bool { true }
        var touch: TouchSnapshot { TouchSnapshot(slot: PadSlot(2)) }
        func takeMotion(_ body: (WireMotionSample) -> Void) {}
        func apply(_ lease: RumbleLease) throws {}
        func apply(_ output: HIDOutputMessage) throws {}
        var feedbackDeadline: MonotonicInstant? { nil }
        func pumpFeedback() throws {}
        func silence() { silenced += 1 }
    }

    func testAnEmptySlotIsNotAnnouncedAndAControllerComingAndGoingIsArrivalAndRemoval() {
        let slot = Slot()
        var pad = ForwardedPad(slot)
        let now = MonotonicInstant.now
        XCTAssertEqual(pad.announcement(now: now), [], "an empty slot is no pad")
        XCTAssertNil(pad.presenceChange(now: now))
        var outbox = OutgoingPayloads()
        pad.collect(now: now, into: &outbox)
        pad.resendIfDue(now: now + .seconds(1), into: &outbox)
        XCTAssertTrue(outbox.isEmpty, "nothing of an empty slot goes to the host")
        XCTAssertNil(pad.nextResend)

        slot.present = true
        let came = pad.presenceChange(now: now)
        XCTAssertEqual(came?.first, .arrival(slot.arrival))
        XCTAssertTrue(came?.contains { if case .state = $0 { true } else { false } } ?? false, "its state with it")
        XCTAssertNil(pad.presenceChange(now: now), "said once")
        XCTAssertNotNil(pad.nextResend, "its keep-alives run")

        slot.present = false
        XCTAssertEqual(pad.presenceChange(now: now), [.removal(PadSlot(2))])
        XCTAssertEqual(slot.silenced, 1, "its motors stop with it")
        XCTAssertNil(pad.nextResend)
    }

    /// The puck's slot says so in its reports: a state or a connect report (0x79 or 0x46, 2) puts a
    /// controller on it, a disconnect report (1) takes it off.
    func testThePucksReportsSayWhetherAControllerIsOnTheSlot() throws {
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        XCTAssertEqual(state.link, .unknown)
        try decoder.decode([0x79, 2], into: &state)
        XCTAssertEqual(state.link, .connected)
        var held = SteamControllerReports.Controls()
        held.buttons = [.ps]
        try decoder.decode(SteamControllerReports.state(held, sequence: 1, micros: 0), into: &state)
        XCTAssertEqual(state.buttons, [.ps])
        try decoder.decode([0x46, 1], into: &state)
        XCTAssertEqual(state.link, .disconnected)
        XCTAssertEqual(state.buttons, [], "nothing of the controller that left stays held")
        try decoder.decode(SteamControllerReports.state(.init(), sequence: 1, micros: 0), into: &state)
        XCTAssertEqual(state.link, .connected)
        XCTAssertThrowsError(try decoder.decode([0x79], into: &state), "cut short")
        XCTAssertTrue(PadKind.steamController.isReceiver(product: 0x1304))
        XCTAssertFalse(PadKind.steamController.isReceiver(product: 0x1302), "a wired controller is always there")
    }
}
