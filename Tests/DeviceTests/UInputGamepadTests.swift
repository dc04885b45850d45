import Foundation
import MonotonicTime
import PadClient
import PadFamilies
import PadSystem
import PadgateRunner
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

    /// pid.codes' test ids belong to no vendor: `list` and `watch` treat the pad as a generic gamepad.
    func testGenericGamepadThroughTheCommandLine() throws {
        let virtual = try UInputGamepad(identity: .generic)
        struct Listed: Decodable { var type: String; var vendor_id: String; var hidraw: String?; var evdev: [EvdevNode]; var capabilities: [String] }
        let listed = try XCTUnwrap(eventually {
            (try? JSONDecoder().decode([Listed].self, from: Data(padgate(["list", "--json"]).stdout.utf8)))?.first { $0.vendor_id == "1209" }
        }, "the generic pad was not listed")
        XCTAssertEqual(listed.type, "generic")
        XCTAssertNil(listed.hidraw)
        XCTAssertEqual(listed.evdev.map(\.role), [.gamepad])
        XCTAssertTrue(listed.capabilities.contains("rumble"))

        let watch = try PadgateProcess(["watch", listed.evdev[0].path, "--json", "--duration", "20"])
        defer { watch.interrupt() }
        XCTAssertNotNil(watch.waitForLine { $0.contains("\"event\":\"arrived\"") })
        try virtual.emit(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_WEST, value: 1)
        try virtual.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_RZ, value: 200)
        try virtual.sync()
        XCTAssertNotNil(watch.waitForLine { $0.contains("\"buttons\":[\"west\"]") && $0.contains("\"r2\":200") },
                        "watch did not show the press; saw \(watch.snapshot().suffix(3))")
    }

    /// `emulate xbox` answers a program's rumble uploads (or it would block for 30 s) and prints them.
    func testEmulatedXboxPadPrintsTheRumbleAProgramPlays() throws {
        let emulate = try PadgateProcess(["emulate", "xbox", "--json", "--duration", "30"])
        defer { emulate.interrupt() }
        let pad = try XCTUnwrap(eventually { try? Udev().pads().first { $0.name == UInputGamepad.Identity.xbox360.name } })
        let started = MonotonicInstant.now
        let run = try padgate(["rumble", "120", "60", "--for", "500ms", "--pad", try XCTUnwrap(pad.gamepadNode?.path)])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertLessThan(MonotonicInstant.now - started, .seconds(10), "the rumble command waited on unanswered uploads")
        XCTAssertNotNil(emulate.waitForLine { $0.contains("\"event\":\"rumble_uploaded\"") && $0.contains("\"low\":120") && $0.contains("\"high\":60") },
                        "no upload printed; saw \(emulate.snapshot().suffix(3))")
        XCTAssertNotNil(emulate.waitForLine { $0.contains("\"event\":\"rumble_played\"") })
    }

    /// More events than the reader's buffer holds: the kernel drops them and says SYN_DROPPED;
    /// the reader resynchronises to the device's real state instead of keeping a stale one.
    func testReaderResynchronisesAfterDroppedEvents() throws {
        let virtual = try UInputGamepad(name: "padgate flood pad")
        let pad = try XCTUnwrap(eventually { try? Udev().pads().first { $0.name == "padgate flood pad" } })
        let device = try EvdevDevice(path: try XCTUnwrap(pad.gamepadNode?.path))
        // ABS_Z has no fuzz: the input core passes every value on unfiltered.
        let finalZ = Int32(2000 % 250 + 1)
        for step in 1...2000 {
            try virtual.emit(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z, value: Int32(step % 250 + 1))
            try virtual.sync()
        }
        try virtual.emit(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH, value: 1)
        try virtual.sync()
        let settled = eventually { () -> Bool? in
            _ = try? device.readAvailable { _ in }
            return device.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z) == finalZ
                && device.value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH) == 1 ? true : nil
        }
        XCTAssertGreaterThan(device.droppedSyncs, 0, "2000 frames unread should overflow the evdev buffer")
        XCTAssertNotNil(settled, "after the drop the reader holds ABS_Z \(device.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z)), not \(finalZ)")
    }
}

/// The host's uinput pads carry padgate's mark where udev shows it, so `forward` on the host never
/// forwards them (which looped: each forwarded pad made another) and `list` says who made them.
final class HostVirtualPadMarkTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UInputGamepad.path]) }

    /// Steam Input's own virtual pad (its ids and name as a Steam Deck lists them) is listed as
    /// Steam's and never forwarded: the controller it mirrors is forwarded itself.
    func testSteamInputsVirtualPadIsListedAsSteamsAndNotForwarded() throws {
        let steam = try UInputGamepad(identity: .init(name: "Microsoft X-Box 360 pad 0", vendorID: 0x28de, productID: 0x11ff), phys: "")
        let node = try XCTUnwrap(eventually { steam.devnode })
        struct Listed: Decodable { var evdev: [EvdevNode]; var made_by: String?; var made_by_padgate: String? }
        let listed = try XCTUnwrap(eventually {
            (try? JSONDecoder().decode([Listed].self, from: Data(padgate(["list", "--json"]).stdout.utf8)))?.first { $0.evdev.contains { $0.path == node } }
        }, "not listed")
        XCTAssertEqual(listed.made_by, "Steam Input")
        XCTAssertNil(listed.made_by_padgate)
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually { udev.pads().first { $0.evdev.contains { $0.path == node } } })
        XCTAssertFalse(HotPlugPolicy().forwards(pad, at: 0))
    }

    func testTheHostsUInputPadIsMarkedAndListedAsPadgates() throws {
        let virtual = try UInputGamepad(identity: .xbox360, phys: PadPhys.hostVirtual)
        let node = try XCTUnwrap(eventually { virtual.devnode })
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually { udev.pads().first { $0.evdev.contains { $0.path == node } } }, "not listed")
        XCTAssertTrue(pad.isHostVirtualPad, "phys seen through udev: '\(pad.phys)'")
        XCTAssertEqual(pad.name, "Microsoft X-Box 360 pad", "xpad's name, whole")
        struct Listed: Decodable { var evdev: [EvdevNode]; var made_by_padgate: String? }
        let listed = try JSONDecoder().decode([Listed].self, from: Data(padgate(["list", "--json"]).stdout.utf8))
        XCTAssertEqual(listed.first { $0.evdev.contains { $0.path == node } }?.made_by_padgate, "host")
    }
}
