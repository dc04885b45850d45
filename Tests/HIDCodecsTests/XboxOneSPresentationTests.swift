import Foundation
import XCTest
@testable import HIDCodecs

/// What the host's Xbox One S sends and takes, held to the pad's own report descriptor (the
/// Android CTS registration, read by padgate's descriptor decoder and by hid-tools) and to the
/// rumble report hid-microsoft and SDL_hidapi_xboxone.c write.
final class XboxOneSPresentationTests: XCTestCase {
    func descriptor() throws -> ReportDescriptor {
        try ReportDescriptor(bytes: Fixture.bytes("descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin"))
    }

    /// hid-tools' reading of the descriptor: report 0x01 is 17 bytes with the id.
    func testTheStateReportHasTheDescriptorsSize() throws {
        let json = try Fixture.json("descriptors/xboxone_s_02fd_bt_android_cts.hidtools.json")
        let inputs = try XCTUnwrap((json["reports"] as? [String: Any])?["input"] as? [[String: Any]])
        let report1 = try XCTUnwrap(inputs.first { $0["report_id"] as? Int == 1 })
        XCTAssertEqual(report1["size_bytes"] as? Int, XboxOneSBluetooth.stateLength)
        let outputs = try XCTUnwrap((json["reports"] as? [String: Any])?["output"] as? [[String: Any]])
        XCTAssertEqual(outputs.first { $0["report_id"] as? Int == 3 }?["size_bytes"] as? Int, XboxRumbleReport.length)
    }

    /// Every control the host writes reads back the same through the descriptor.
    func testEveryControlReadsBackThroughThePadsDescriptor() throws {
        var decoder = try XCTUnwrap(ControllerInputDecoder(kind: .xbox, descriptor: try descriptor()))
        let buttons: [GamepadButtons] = [.south, .east, .west, .north, .l1, .r1, .create, .options, .ps, .l3, .r3, [.south, .r3, .ps]]
        for button in buttons {
            for dpad in DPad.allCases {
                var state = GamepadState()
                try decoder.decode(XboxOneSBluetooth.stateReport(buttons: button, dpad: dpad, leftX: -32768, leftY: 32767, rightX: 5, rightY: -6,
                                                                 l2: 1, r2: 254), into: &state)
                XCTAssertEqual(state.buttons, button)
                XCTAssertEqual(state.dpad, dpad)
                XCTAssertEqual([state.leftStick.x, state.leftStick.y, state.rightStick.x, state.rightStick.y], [0, 65535, 32773, 32762])
                XCTAssertEqual([state.l2, state.r2], [1, 254])
            }
        }
        for level in UInt8.min...UInt8.max {
            var state = GamepadState()
            try decoder.decode(XboxOneSBluetooth.stateReport(buttons: [], dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0, l2: level, r2: 255 - level), into: &state)
            XCTAssertEqual([state.l2, state.r2], [level, 255 - level], "triggers survive 8 → 10 → 8 bits")
        }
        // Every 10-bit raw value comes back through the full-resolution triggers.
        for raw in UInt16(0)...1023 {
            var report = XboxOneSBluetooth.stateReport(buttons: [], dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0, l2: 0, r2: 0)
            report[9] = UInt8(raw & 0xff); report[10] = UInt8(raw >> 8)
            var read = GamepadState()
            try decoder.decode(report, into: &read)
            let again = XboxOneSBluetooth.stateReport(buttons: [], dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0,
                                                      l2Wide: try XCTUnwrap(read.l2Fine), r2Wide: 0)
            XCTAssertEqual(UInt16(again[9]) | UInt16(again[10]) << 8, raw)
        }
        // View as the One S sends it (AC Back) and as a Series pad does (Button 11): View either way.
        for share in [false, true] {
            var read = GamepadState()
            try decoder.decode(XboxOneSBluetooth.stateReport(buttons: .create, dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0,
                                                             l2: 0, r2: 0, hasShareButton: share), into: &read)
            XCTAssertEqual(read.buttons, .create, "share button: \(share)")
        }
        var state = GamepadState()
        try decoder.decode(XboxOneSBluetooth.batteryReport(percent: 50), into: &state)
        XCTAssertEqual(state.battery?.percent, 50)
    }

    /// SDL's Bluetooth rumble packet (enable 0x0F, left trigger, right trigger, low, high, 0xFF,
    /// 0x00, 0xEB) and hid-microsoft's (enable weak | strong = 0x03, duration and loops 255).
    func testTheRumbleReportsOfSDLAndTheKernelDecode() throws {
        let sdl = try XboxRumbleReport(decoding: [0x03, 0x0F, 20, 80, 100, 50, 0xFF, 0x00, 0xEB])
        XCTAssertEqual(sdl.enable, .all)
        XCTAssertEqual([sdl.leftTrigger, sdl.rightTrigger, sdl.strong, sdl.weak], [20, 80, 100, 50])
        let levels = sdl.wireLevels
        XCTAssertEqual([levels.leftTrigger, levels.rightTrigger, levels.low, levels.high], [13107, 52428, 65535, 32768])

        let kernel = try XboxRumbleReport(decoding: [0x03, 0x03, 0, 0, 70, 35, 0xFF, 0x00, 0xFF])
        XCTAssertEqual(kernel.enable, [.weak, .strong])
        XCTAssertEqual(kernel.wireLevels.leftTrigger, 0)
        // A disabled actuator's magnitude is not played.
        let masked = try XboxRumbleReport(decoding: [0x03, 0x02, 90, 90, 70, 35, 10, 0, 0])
        XCTAssertEqual([masked.wireLevels.low, masked.wireLevels.high, masked.wireLevels.leftTrigger], [45875, 0, 0])
    }

    func testReportsOutsideTheDescriptorAreRefused() {
        XCTAssertThrowsError(try XboxRumbleReport(decoding: [0x03, 0x0F, 101, 0, 0, 0, 0, 0, 0])) {
            XCTAssertEqual($0 as? XboxRumbleReport.DecodeError, .magnitudeOutOfRange(101))
        }
        XCTAssertThrowsError(try XboxRumbleReport(decoding: [0x03, 0x0F, 1, 2, 3]))
        XCTAssertThrowsError(try XboxRumbleReport(decoding: [0x02, 0x0F, 1, 2, 3, 4, 5, 6, 7]))
        XCTAssertThrowsError(try XboxRumbleReport(decoding: []))
    }

    /// Every magnitude the pad takes survives the host (0...100 to 16 bits), the wire and the
    /// client's renderer (16 to 8 bits) and back to 0...100 on the physical pad.
    func testEveryMagnitudeSurvivesTheTripToThePhysicalPad() throws {
        for m in UInt8(0)...100 {
            let host = try XboxRumbleReport(decoding: [0x03, 0x0F, m, 100 - m, m, 100 - m, 0xFF, 0, 0xEB]).wireLevels
            let levels = MotorLevels(low: UInt8(host.low >> 8), high: UInt8(host.high >> 8),
                                     leftTrigger: UInt8(host.leftTrigger >> 8), rightTrigger: UInt8(host.rightTrigger >> 8))
            let physical = XboxRumbleReport(levels: levels, segment: .milliseconds(200))
            XCTAssertEqual([physical.leftTrigger, physical.rightTrigger, physical.strong, physical.weak], [m, 100 - m, m, 100 - m])
            XCTAssertEqual(physical.duration10ms, 20)
            XCTAssertEqual(physical.enable, .all)
        }
    }
}
