import Foundation
import MonotonicTime
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices
import HIDCodecs

/// Against the real hid-playstation driver: the emulated DualSense is bound, grouped, read and
/// unplugged the way a real one would be.
final class EmulatedDualSenseTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testUSBDualSenseIsOnePadWithHidrawAndItsEvdevNodes() throws {
        let virtual = try EmulatedPlayStationPad(bus: .usb)
        defer { virtual.stop() }
        XCTAssertTrue(virtual.waitUntilOpened(), "hid-playstation did not open the device")
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()), "udev never showed the DualSense with its nodes")
        XCTAssertEqual(pad.kind, .dualSense)
        XCTAssertEqual(pad.bus, .usb)
        XCTAssertEqual(pad.vendorID, 0x054c)
        XCTAssertEqual(pad.productID, 0x0ce6)
        // A headset jack node too from 6.18 (KernelVersion.evdevRoles), and `list` names it.
        XCTAssertEqual(pad.evdev.map(\.role), KernelVersion.evdevRoles(kind: .dualSense, bus: .usb), "kernel \(KernelVersion.running)")
        XCTAssertTrue(pad.hidraw?.hasPrefix("/dev/hidraw") ?? false)
        XCTAssertTrue(pad.capabilities.isSuperset(of: [.rumble, .lightbar, .playerLEDs, .adaptiveTriggers, .touchpad, .motion, .battery]),
                      "capabilities: \(pad.capabilities.names)")
    }

    func testInputReportsReachEvdev() throws {
        let virtual = try EmulatedPlayStationPad(bus: .usb)
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        let reader = try LivePadReader(pad: pad)
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.south, .l1]
        input.dpad = .upRight
        input.leftStick = StickPosition(x: 200, y: 50)
        input.r2 = 180
        input.apply(.touch(slot: 0, x: 500, y: 300))
        input.motion.first = MotionSample(gyro: Vector3(x: 100, y: -200, z: 300), accel: Vector3(x: 10, y: 8000, z: -20))
        let expected: (LivePadState) -> Bool = {
            $0.buttons.contains("south") && $0.buttons.contains("l1") && $0.dpad == "up-right"
                && $0.left_stick == [200, 50] && $0.r2 == 180 && $0.touch.first.map { $0.x == 500 && $0.y == 300 } == true
        }
        var seen: LivePadState?
        for _ in 0..<100 where seen == nil {
            try virtual.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(100), expiryIsExpected: true, expected)
        }
        let state = try XCTUnwrap(seen, "evdev never showed the fed report: \(reader.snapshot())")
        XCTAssertFalse(state.buttons.contains("east"))
        XCTAssertNotNil(state.gyro)
    }

    func testBluetoothDualSenseChecksInputCRC() throws {
        let virtual = try EmulatedPlayStationPad(bus: .bluetooth)
        defer { virtual.stop() }
        XCTAssertTrue(virtual.waitUntilOpened(), "hid-playstation did not accept the Bluetooth probe replies (CRC?)")
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        XCTAssertEqual(pad.bus, .bluetooth)
        let reader = try LivePadReader(pad: pad)
        let encoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseBluetooth())
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.north]
        // A corrupted CRC: the driver must drop the report.
        var corrupt = encoder.encode(input)
        corrupt[corrupt.count - 1] ^= 0xff
        for _ in 0..<5 { try virtual.send(corrupt) }
        XCTAssertNil(try waitForState(reader, timeout: .milliseconds(500), expiryIsExpected: true) { $0.buttons.contains("north") },
                     "a report with a bad CRC reached evdev")
        var seen: LivePadState?
        for _ in 0..<50 where seen == nil {
            try virtual.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(100), expiryIsExpected: true) { $0.buttons.contains("north") }
        }
        XCTAssertNotNil(seen, "a valid Bluetooth report never reached evdev")
    }

    func testUnplugIsReportedWithinOneSecondAndReplugIsFound() throws {
        let monitor = try PadMonitor()
        let mac: [UInt8] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]
        var virtual: EmulatedPlayStationPad? = try EmulatedPlayStationPad(bus: .usb, macAddress: mac)
        let arrived = try XCTUnwrap(waitForArrival(monitor, uniq: virtual!.uniq), "arrival not reported")
        XCTAssertEqual(arrived.kind, .dualSense)

        let unplugged = MonotonicInstant.now
        virtual?.stop()
        virtual = nil
        var removedAfter: Duration?
        while removedAfter == nil, MonotonicInstant.now - unplugged < .seconds(3) {
            for case .removed(let pad) in monitor.waitForChanges(timeout: .seconds(1)) where pad.id == arrived.id {
                removedAfter = MonotonicInstant.now - unplugged
            }
        }
        let elapsed = try XCTUnwrap(removedAfter, "removal never reported")
        XCTAssertLessThan(elapsed, .seconds(1), "removal took \(elapsed)")

        let again = try EmulatedPlayStationPad(bus: .usb, macAddress: mac)
        defer { again.stop() }
        XCTAssertNotNil(waitForArrival(monitor, uniq: again.uniq), "re-plugged pad not found again")
    }

    func testOutputReportsFromTheDriverArriveAtTheEmulatedPad() throws {
        let virtual = try EmulatedPlayStationPad(bus: .usb)
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        _ = virtual.takeOutputs()  // the driver's own start-up reports (lightbar reset, player LED)
        // The lightbar through the kernel's LED class device becomes an output report 0x02.
        let led = try XCTUnwrap(ledDirectory(of: pad, suffix: ":rgb:indicator"), "no rgb LED class device")
        try "255 16 32".write(toFile: led + "/multi_intensity", atomically: false, encoding: .ascii)
        try "255".write(toFile: led + "/brightness", atomically: false, encoding: .ascii)
        // struct dualsense_output_report_common at offset 1: valid_flag1 bit 2 = lightbar, RGB at 45..47.
        let report = virtual.waitForOutput(timeout: .seconds(3)) { $0.first == 0x02 && $0[2] & 0x04 != 0 }
        let lightbar = try XCTUnwrap(report, "no lightbar output report")
        XCTAssertEqual(Array(lightbar[45...47]), [255, 16, 32])
    }

    private func waitForArrival(_ monitor: PadMonitor, uniq: String) -> Pad? {
        if let pad = monitor.pads.first(where: { $0.uniq == uniq && $0.hasItsInputNodes }) { return pad }
        let deadline = MonotonicInstant.now + .seconds(10)
        while MonotonicInstant.now < deadline {
            // A pad may first appear with some nodes and be completed by a `changed` event.
            for change in monitor.waitForChanges(timeout: .seconds(1)) {
                if case .removed = change { continue }
                if change.pad.uniq == uniq && change.pad.hasItsInputNodes { return change.pad }
            }
        }
        return nil
    }

    private func ledDirectory(of pad: Pad, suffix: String) -> String? {
        let leds = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/leds")) ?? []
        return leds.filter { $0.hasSuffix(suffix) }
            .map { "/sys/class/leds/" + $0 }
            .first { (try? FileManager.default.destinationOfSymbolicLink(atPath: $0))?.contains(pad.id.split(separator: "/").last.map(String.init) ?? "?") ?? false }
    }
}
