import XCTest
@testable import HIDCodecs

final class OutputDecoderTests: XCTestCase {
    /// A USB report laid out by hand from hid-playstation's structs (not by our encoder).
    private func kernelUSBReport(_ set: (inout [UInt8]) -> Void) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: 63)
        report[0] = 0x02
        set(&report)
        return report
    }

    /// dualsense_output_worker, firmware before 2.21: valid_flag0 = COMPATIBLE_VIBRATION | HAPTICS_SELECT (0x03),
    /// valid_flag1 = 0, then motor_right, motor_left.
    func testKernelRumbleReportVibrationV1() throws {
        let report = kernelUSBReport { $0[1] = 0x03; $0[2] = 0x00; $0[3] = 0x40; $0[4] = 0xC0 }
        let decoded = try DualSenseOutputDecoder.decode(report)
        XCTAssertEqual(decoded.transport, .usb)
        XCTAssertEqual(decoded.motors, DualSenseMotors(left: 0xC0, right: 0x40))
        XCTAssertEqual(decoded.rumbleFlavour, .compatible)
        XCTAssertNil(decoded.lightbar)
        XCTAssertNil(decoded.rightTrigger)
        XCTAssertEqual(decoded.summary, "rumble left=192 right=64")
    }

    /// Firmware 2.21+ and the Edge: HAPTICS_SELECT in valid_flag0 and COMPATIBLE_VIBRATION2 in valid_flag2 (byte 38 of common).
    func testKernelRumbleReportVibrationV2() throws {
        let report = kernelUSBReport { $0[1] = 0x02; $0[1 + 38] = 0x04; $0[3] = 0; $0[4] = 0 }
        let decoded = try DualSenseOutputDecoder.decode(report)
        XCTAssertEqual(decoded.motors, DualSenseMotors(left: 0, right: 0))
        XCTAssertEqual(decoded.rumbleFlavour, .compatibleV2)
    }

    /// dualsense_reset_leds: valid_flag2 LIGHTBAR_SETUP_CONTROL_ENABLE (bit 1), lightbar_setup LIGHT_OUT (2).
    func testKernelLightbarResetReport() throws {
        let decoded = try DualSenseOutputDecoder.decode(kernelUSBReport { $0[39] = 0x02; $0[42] = 0x02 })
        XCTAssertEqual(decoded.lightbarSetup, .fadeOut)
        XCTAssertNil(decoded.motors)
        var state = DualSenseOutputState()
        decoded.apply(to: &state)
        XCTAssertEqual(state.lightbarEnabled, false)
    }

    /// Bluetooth: id 0x31, seq_tag (sequence << 4), tag 0x10, common at byte 3, CRC32 over 0xA2 + bytes 0..73.
    func testBluetoothReportIsCRCCheckedAndTyped() throws {
        var report = [UInt8](repeating: 0, count: 78)
        report[0] = 0x31; report[1] = 0x70; report[2] = 0x10
        report[3 + 1] = 0x04                                  // valid_flag1 LIGHTBAR_CONTROL_ENABLE
        report[3 + 44] = 1; report[3 + 45] = 2; report[3 + 46] = 3
        BluetoothCRC.stamp(seed: .output, report: &report)
        let decoded = try DualSenseOutputDecoder.decode(report)
        XCTAssertEqual(decoded.transport, .bt)
        XCTAssertEqual(decoded.sequence, 7)
        XCTAssertEqual(decoded.tag, 0x10)
        XCTAssertEqual(decoded.lightbar, RGBColor(red: 1, green: 2, blue: 3))

        var corrupt = report
        corrupt[50] ^= 0x01
        XCTAssertThrowsError(try DualSenseOutputDecoder.decode(corrupt)) { error in
            guard case .badCRC? = error as? DualSenseOutputDecodeError else { return XCTFail("\(error)") }
        }
        // A CRC made with the input seed (0xA1) is not an output report's CRC.
        var wrongSeed = report
        BluetoothCRC.stamp(seed: .input, report: &wrongSeed)
        XCTAssertThrowsError(try DualSenseOutputDecoder.decode(wrongSeed))
    }

    func testMalformedReportsAreTypedErrors() {
        let cases: [([UInt8], DualSenseOutputDecodeError)] = [
            ([], .empty),
            ([0x05, 0, 0], .unknownReportID(0x05)),
            ([0x02] + [UInt8](repeating: 0, count: 10), .tooShort(reportID: 0x02, length: 11, needed: 48)),
            ([0x31] + [UInt8](repeating: 0, count: 40), .tooShort(reportID: 0x31, length: 41, needed: 78)),
        ]
        for (bytes, expected) in cases {
            XCTAssertThrowsError(try DualSenseOutputDecoder.decode(bytes)) { XCTAssertEqual($0 as? DualSenseOutputDecodeError, expected) }
        }
    }

    /// Whatever the encoder writes decodes to the same state, over both transports.
    func testEncoderOutputDecodesToTheSameState() throws {
        var state = DualSenseOutputState()
        state.rumble = (200, 17)
        state.lightbar = RGBColor(red: 9, green: 8, blue: 7)
        state.lightbarEnabled = true
        state.playerLEDs = try PlayerLEDs(player: 3, instant: true)
        state.ledBrightness = 1
        state.micLED = .pulse
        state.micMuted = true
        state.rightTrigger = .weapon(start: 2, end: 6, strength: 8)
        state.leftTrigger = .vibration(position: 1, amplitude: 4, frequency: 30)
        for transport in Transport.allCases {
            var encoder = DualSenseOutputEncoder()
            let decoded = try DualSenseOutputDecoder.decode(try encoder.encode(state, transport: transport))
            var roundTrip = DualSenseOutputState()
            decoded.apply(to: &roundTrip)
            XCTAssertEqual(roundTrip, state, "\(transport)")
            XCTAssertEqual(decoded.motors, DualSenseMotors(left: 200, right: 17))
            XCTAssertEqual(decoded.rightTrigger, .weapon(start: 2, end: 6, strength: 8))
        }
        // A delta report (only the lightbar changed) carries only the lightbar.
        var encoder = DualSenseOutputEncoder()
        _ = try encoder.encode(state, transport: .usb)
        state.lightbar = RGBColor(red: 1, green: 1, blue: 1)
        let delta = try DualSenseOutputDecoder.decode(try encoder.encode(state, transport: .usb))
        XCTAssertEqual(delta.lightbar, RGBColor(red: 1, green: 1, blue: 1))
        XCTAssertNil(delta.motors, "a lightbar change must not re-send (or clobber) rumble")
        XCTAssertNil(delta.rightTrigger)
    }

    /// pydualsense 0.7.5's USB reports (64 bytes, every flag set) decode to the values their names state.
    func testPydualsenseUSBVectors() throws {
        let json = try Fixture.json("output_vectors/dualsense_output_pydualsense.json")
        var checked = 0
        for vector in json["vectors"] as! [[String: Any]] where vector["bus"] as? String == "usb" {
            let name = vector["name"] as! String
            let decoded = try DualSenseOutputDecoder.decode(Fixture.hex(vector["report_hex"] as! String))
            let expectedMotors: DualSenseMotors
            switch name {
            case "rumble left=255 right=0": expectedMotors = DualSenseMotors(left: 255, right: 0)
            case "rumble left=0 right=255": expectedMotors = DualSenseMotors(left: 0, right: 255)
            case "rumble left=128 right=64": expectedMotors = DualSenseMotors(left: 128, right: 64)
            default: expectedMotors = DualSenseMotors(left: 0, right: 0)
            }
            XCTAssertEqual(decoded.motors, expectedMotors, name)
            XCTAssertEqual(decoded.rumbleFlavour, .compatible, name)
            switch name {
            case "lightbar red (255,0,0)": XCTAssertEqual(decoded.lightbar, RGBColor(red: 255, green: 0, blue: 0))
            case "lightbar (18,52,86)": XCTAssertEqual(decoded.lightbar, RGBColor(red: 18, green: 52, blue: 86))
            default: XCTAssertEqual(decoded.lightbar, RGBColor(red: 0, green: 0, blue: 255), name)
            }
            XCTAssertEqual(decoded.ledBrightness, name == "brightness high" ? 0 : 2, name)
            XCTAssertEqual(decoded.playerLEDs, PlayerLEDs(mask: 0x04), name)
            XCTAssertEqual(decoded.micLED, name.hasPrefix("microphone") ? .on : .off, name)
            XCTAssertEqual(decoded.micMuted, name == "microphone mute on", name)
            switch name {
            case "right trigger Rigid forces[0]=0 [1]=255": XCTAssertEqual(decoded.rightTrigger, .simpleFeedback(position: 0, strength: 255))
            case "left trigger Pulse forces 0,200,255": XCTAssertEqual(decoded.leftTrigger, .simpleWeapon(start: 0, end: 200, strength: 255))
            case "left trigger Calibration":
                // A debug mode is reported verbatim, not refused.
                XCTAssertEqual(decoded.leftTrigger, .raw(mode: 0xFC, parameters: [UInt8](repeating: 0, count: 10)))
            default: break
            }
            checked += 1
        }
        XCTAssertEqual(checked, 15)
    }
}
