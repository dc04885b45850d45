import Foundation
import XCTest
@testable import PadDevices

/// A generic evdev gamepad (uinput, no HID parent) is found, grouped alone, and read.
final class UInputGamepadTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UInputGamepad.path]) }

    func testGenericUInputPadIsListedAndWatched() throws {
        let virtual = try UInputGamepad(name: "padgate test pad")
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually { udev.pads().first { $0.name == "padgate test pad" } },
                                "uinput pad not listed (is udev tagging it ID_INPUT_JOYSTICK?)")
        XCTAssertEqual(pad.kind, .xbox)
        XCTAssertNil(pad.hidraw)
        XCTAssertEqual(pad.evdev.map(\.role), [.gamepad])
        XCTAssertTrue(pad.capabilities.contains(.rumble))

        let reader = try LivePadReader(pad: pad)
        try virtual.emit(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_EAST, value: 1)
        try virtual.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X, value: -20000)
        try virtual.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0Y, value: 1)
        try virtual.sync()
        let state = try waitForState(reader) { $0.buttons == ["east"] && $0.left_stick[0] == -20000 && $0.dpad == "down" }
        XCTAssertNotNil(state, "state seen: \(reader.snapshot())")
    }
}
