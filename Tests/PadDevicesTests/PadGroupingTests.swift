import Foundation
import XCTest
@testable import PadDevices

/// Grouping and classification, on udev data recorded from a real kernel (see Fixtures/README.md).
final class PadGroupingTests: XCTestCase {
    func recorded() throws -> [UdevRecord] {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "guest-udev-records", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode([UdevRecord].self, from: Data(contentsOf: url))
    }

    func testRecordedGuestGroupsIntoThreePads() throws {
        let pads = PadGrouping.pads(from: try recorded())
        XCTAssertEqual(pads.map(\.kind), [.dualSense, .dualSense, .xbox])
        XCTAssertEqual(pads.map(\.bus), [.usb, .bluetooth, .usb])

        for sony in pads.prefix(2) {
            XCTAssertEqual(sony.evdev.map(\.role), [.gamepad, .touchpad, .motion])
            XCTAssertEqual(sony.evdev[1].name, "Sony Interactive Entertainment DualSense Wireless Controller Touchpad")
            XCTAssertEqual(sony.evdev[2].name, "Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors")
            XCTAssertNotNil(sony.hidraw)
            XCTAssertEqual(sony.vidpid, "054c:0ce6")
            XCTAssertEqual(sony.uniq.count, 17, "uniq is the pad's MAC address")
            XCTAssertEqual(Set(sony.capabilities.names),
                           ["rumble", "lightbar", "player-leds", "adaptive-triggers", "touchpad", "motion", "battery"])
        }
        XCTAssertNotEqual(pads[0].hidraw, pads[1].hidraw)

        let generic = pads[2]
        XCTAssertNil(generic.hidraw)
        XCTAssertEqual(generic.evdev.map(\.role), [.gamepad])
        XCTAssertEqual(generic.name, "padgate virtual Xbox 360 pad")
        XCTAssertEqual(generic.capabilities, [.rumble], "FF_RUMBLE from capabilities/ff, nothing else")
    }

    func testNodesWithoutAJoystickAreNotPads() throws {
        // Drop the gamepad nodes: touchpad and motion nodes alone do not make a pad.
        let withoutJoysticks = try recorded().filter { $0.properties["ID_INPUT_JOYSTICK"] != "1" }
        XCTAssertTrue(PadGrouping.pads(from: withoutJoysticks).isEmpty)
    }

    func testAPadWhoseNodesCameLateIsReportedAsChangedNotReplugged() throws {
        let complete = PadGrouping.pads(from: try recorded())
        var partial = complete
        partial[0].evdev.removeLast()
        let changes = PadMonitor.diff(old: partial, new: complete)
        XCTAssertEqual(changes, [.changed(old: partial[0], new: complete[0])])
        XCTAssertEqual(PadMonitor.diff(old: complete, new: Array(complete.dropFirst())), [.removed(complete[0])])
        XCTAssertEqual(PadMonitor.diff(old: complete, new: complete), [])
    }


    func testSysfsCapabilityBitmap() {
        // capabilities/ff of a DualSense: FF_RUMBLE (0x50) and the FF_PERIODIC family bits.
        XCTAssertTrue(EvdevBitmap(sysfs: "107030000 0").contains(0x50))
        XCTAssertFalse(EvdevBitmap(sysfs: "0").contains(0x50))
        XCTAssertTrue(EvdevBitmap(sysfs: "1 0").contains(64))
    }

    func testSelectors() throws {
        let pads = PadGrouping.pads(from: try recorded())
        XCTAssertEqual(try PadSelector.select(PadSelector("1"), from: pads), pads[1])
        XCTAssertEqual(try PadSelector.select(PadSelector(pads[2].evdev[0].path), from: pads), pads[2])
        XCTAssertEqual(try PadSelector.select(PadSelector(try XCTUnwrap(pads[1].hidraw)), from: pads), pads[1])
        XCTAssertEqual(try PadSelector.select(PadSelector("045e:028e"), from: pads), pads[2])
        XCTAssertEqual(try PadSelector.select(nil, from: pads), pads[0])
        XCTAssertThrowsError(try PadSelector.select(PadSelector("7"), from: pads)) {
            XCTAssertTrue("\($0)".contains("padgate list"), "\($0)")
        }
        XCTAssertThrowsError(try PadSelector("dualsense"))
        XCTAssertThrowsError(try PadSelector.select(nil, from: [])) { XCTAssertTrue("\($0)".contains("plug one in")) }
    }
}
