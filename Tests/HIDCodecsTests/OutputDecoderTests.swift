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
        XCTAssertEqual(decoded.bus, .usb)
        XCTAssertEqual(decoded.motors, MotorLevels(low: 0xC0, high: 0x40))
        XCTAssertEqual(decoded.rumbleFlavour, .compatible)
        XCTAssertNil(decoded.lightbar)
        XCTAssertNil(decoded.rightTrigger)
        XCTAssertEqual(decoded.summary, "rumble left=192 right=64")
    }

    /// Firmware 2.21+ and the Edge: HAPTICS_SELECT in valid_flag0 and COMPATIBLE_VIBRATION2 in valid_flag2 (byte 38 of common).
    func testKernelRumbleReportVibrationV2() throws {
        let report = kernelUSBReport { $0[1] = 0x02; $0[1 + 38] = 0x04; $0[3] = 0; $0[4] = 0 }
        let decoded = try DualSenseOutputDecoder.decode(report)
        XCTAssertEqual(decoded.motors, MotorLevels(low: 0, high: 0))
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
        XCTAssertEqual(decoded.bus, .bluetooth)
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

    /// Whatever the encoder writes decodes to the same state, over both buses.
    func testEncoderOutputDecodesToTheSameState() throws {
        var state = DualSenseOutputState()
        state.rumble = MotorLevels(low: 200, high: 17)
        state.lightbar = RGBColor(red: 9, green: 8, blue: 7)
        state.lightbarEnabled = true
        state.playerLEDs = try PlayerLEDs(player: 3, instant: true)
        state.ledBrightness = 1
        state.micLED = .pulse
        state.micMuted = true
        state.rightTrigger = .weapon(start: 2, end: 6, strength: 8)
        state.leftTrigger = .vibration(position: 1, amplitude: 4, frequency: 30)
        for bus in PadBus.allCases {
            var encoder = DualSenseOutputEncoder()
            let decoded = try DualSenseOutputDecoder.decode(try encoder.encode(state, bus: bus))
            var roundTrip = DualSenseOutputState()
            decoded.apply(to: &roundTrip)
            XCTAssertEqual(roundTrip, state, "\(bus)")
            XCTAssertEqual(decoded.motors, MotorLevels(low: 200, high: 17))
            XCTAssertEqual(decoded.rightTrigger, .weapon(start: 2, end: 6, strength: 8))
        }
        // A delta report (only the lightbar changed) carries only the lightbar.
        var encoder = DualSenseOutputEncoder()
        _ = try encoder.encode(state, bus: .usb)
        state.lightbar = RGBColor(red: 1, green: 1, blue: 1)
        let delta = try DualSenseOutputDecoder.decode(try encoder.encode(state, bus: .usb))
        XCTAssertEqual(delta.lightbar, RGBColor(red: 1, green: 1, blue: 1))
        XCTAssertNil(delta.motors, "a lightbar change must not re-send (or clobber) rumble")
        XCTAssertNil(delta.rightTrigger)
    }

    /// pydualsense 0.7.5's reports (every flag set) decode to the values their names state: USB (64
    /// bytes), and Bluetooth in the untagged layout SDL 2 uses too (`31 02`, settings from byte 2).
    func testPydualsenseVectorsOverUSBAndBluetooth() throws {
        let json = try Fixture.json("output_vectors/dualsense_output_pydualsense.json")
        var checked = 0
        for vector in json["vectors"] as! [[String: Any]] {
            let name = "\(vector["bus"]!) \(vector["name"]!)"
            let decoded = try DualSenseOutputDecoder.decode(Fixture.hex(vector["report_hex"] as! String))
            if vector["bus"] as? String == "bt" { XCTAssertEqual(decoded.bluetoothLayout, .untagged, name) }
            let expectedMotors: MotorLevels
            switch vector["name"] as! String {
            case "rumble left=255 right=0": expectedMotors = MotorLevels(low: 255, high: 0)
            case "rumble left=0 right=255": expectedMotors = MotorLevels(low: 0, high: 255)
            case "rumble left=128 right=64": expectedMotors = MotorLevels(low: 128, high: 64)
            default: expectedMotors = MotorLevels(low: 0, high: 0)
            }
            XCTAssertEqual(decoded.motors, expectedMotors, name)
            XCTAssertEqual(decoded.rumbleFlavour, .compatible, name)
            switch vector["name"] as! String {
            case "lightbar red (255,0,0)": XCTAssertEqual(decoded.lightbar, RGBColor(red: 255, green: 0, blue: 0))
            case "lightbar (18,52,86)": XCTAssertEqual(decoded.lightbar, RGBColor(red: 18, green: 52, blue: 86))
            default: XCTAssertEqual(decoded.lightbar, RGBColor(red: 0, green: 0, blue: 255), name)
            }
            XCTAssertEqual(decoded.ledBrightness, name.hasSuffix(" brightness high") ? 0 : 2, name)
            XCTAssertEqual(decoded.playerLEDs, PlayerLEDs(mask: 0x04), name)
            XCTAssertEqual(decoded.micLED, (vector["name"] as! String).hasPrefix("microphone") ? .on : .off, name)
            XCTAssertEqual(decoded.micMuted, name.hasSuffix(" microphone mute on"), name)
            switch vector["name"] as! String {
            case "right trigger Rigid forces[0]=0 [1]=255": XCTAssertEqual(decoded.rightTrigger, .simpleFeedback(position: 0, strength: 255))
            case "left trigger Pulse forces 0,200,255": XCTAssertEqual(decoded.leftTrigger, .simpleWeapon(start: 0, end: 200, strength: 255))
            case "left trigger Calibration":
                // A debug mode is reported verbatim, not refused.
                XCTAssertEqual(decoded.leftTrigger, .raw(mode: 0xFC, parameters: [UInt8](repeating: 0, count: 10)))
            default: break
            }
            checked += 1
        }
        XCTAssertEqual(checked, 30)
    }

    // SDL 2.26's PS5 driver (src/joystick/hidapi/SDL_hidapi_ps5.c, HIDAPI_DriverPS5_UpdateEffects):
    // a 47-byte effects block (EnableBits1, EnableBits2, RumbleRight, RumbleLeft, ... EnableBits3 at
    // 38, PadLights 43, RGB 44-46) sent as `02 + effects` (48 bytes) over USB and `31 02 + effects`
    // with a CRC over Bluetooth. Laid out here by hand from that struct.
    private func sdlReport(bluetooth: Bool, _ set: (inout [UInt8]) -> Void) -> [UInt8] {
        var effects = [UInt8](repeating: 0, count: 47)
        set(&effects)
        guard bluetooth else { return [0x02] + effects }
        var report = [0x31, 0x02] + effects + [UInt8](repeating: 0, count: 78 - 49)
        BluetoothCRC.stamp(seed: .output, report: &report)
        return report
    }

    func testSDLsRumbleAndItsStopOverBothBuses() throws {
        for bluetooth in [false, true] {
            // Firmware 2.24+: EnableBits1 0x02 (audio haptics off), EnableBits3 0x04 (improved rumble).
            let on = try DualSenseOutputDecoder.decode(sdlReport(bluetooth: bluetooth) { $0[0] = 0x02; $0[38] = 0x04; $0[2] = 64; $0[3] = 127 })
            XCTAssertEqual(on.motors, MotorLevels(low: 127, high: 64), "bluetooth: \(bluetooth)")
            XCTAssertEqual(on.rumbleFlavour, .compatibleV2)
            // Older firmware: EnableBits1 0x01 | 0x02, values halved by SDL.
            let old = try DualSenseOutputDecoder.decode(sdlReport(bluetooth: bluetooth) { $0[0] = 0x03; $0[2] = 32; $0[3] = 63 })
            XCTAssertEqual(old.motors, MotorLevels(low: 63, high: 32))
            // SDL_JoystickRumble(0, 0): every bit clear. The pad's motors stop at once.
            let stop = try DualSenseOutputDecoder.decode(sdlReport(bluetooth: bluetooth) { _ in })
            XCTAssertEqual(stop.motors, MotorLevels(low: 0, high: 0), "SDL's stop is a stop")
            XCTAssertEqual(stop.rumbleFlavour, .audioHaptics)
            XCTAssertEqual(stop.summary, "rumble off (audio haptics)")
            var state = DualSenseOutputState()
            on.apply(to: &state)
            stop.apply(to: &state)
            XCTAssertEqual(state.rumble?.low, 0); XCTAssertEqual(state.rumble?.high, 0)
        }
    }

    func testSDLsBluetoothLightsAreReadFromByteTwo() throws {
        // EnableBits2 0x04 (LED colour) and 0x10 (pad lights); player 2 is 0x0A | 0x20 (instant).
        let report = sdlReport(bluetooth: true) { $0[1] = 0x04 | 0x10; $0[43] = 0x2A; $0[44] = 255; $0[45] = 128; $0[46] = 1 }
        let decoded = try DualSenseOutputDecoder.decode(report)
        XCTAssertEqual(decoded.bluetoothLayout, .untagged)
        XCTAssertNil(decoded.tag)
        XCTAssertEqual(decoded.lightbar, RGBColor(red: 255, green: 128, blue: 1))
        XCTAssertEqual(decoded.playerLEDs, PlayerLEDs(mask: 0x0A, instant: true))
        XCTAssertNil(decoded.motors, "a lights report is not a stop")
        XCTAssertNil(decoded.rightTrigger, "the colour is not a trigger block")
    }

    /// The kernel's lightbar-only report leaves valid_flag0 clear too; it means "lights only", and the
    /// motors keep running.
    func testTheKernelsLightbarReportLeavesTheMotorsAlone() throws {
        let decoded = try DualSenseOutputDecoder.decode(kernelUSBReport { $0[2] = 0x04; $0[45] = 9 })
        XCTAssertNil(decoded.motors)
        XCTAssertEqual(decoded.lightbar, RGBColor(red: 9, green: 0, blue: 0))
    }

    /// An encoder with nothing new to say produces an all-clear report, which the pad would take
    /// for SDL's stop: `flagsNothing` is how senders know not to send it.
    func testAReportWithNothingChangedIsMarkedSoNobodySendsIt() throws {
        for bus in PadBus.allCases {
            var encoder = DualSenseOutputEncoder()
            var state = DualSenseOutputState()
            state.rumble = MotorLevels(low: 120, high: 30)
            let first = try encoder.encode(state, bus: bus)
            XCTAssertFalse(DualSenseOutputEncoder.flagsNothing(first))
            let again = try encoder.encode(state, bus: bus)
            XCTAssertTrue(DualSenseOutputEncoder.flagsNothing(again), "\(bus)")
            XCTAssertEqual(try DualSenseOutputDecoder.decode(again).rumbleFlavour, .audioHaptics, "which the pad reads as a stop")
            state.lightbar = RGBColor(red: 1, green: 2, blue: 3)
            XCTAssertFalse(DualSenseOutputEncoder.flagsNothing(try encoder.encode(state, bus: bus)))
        }
    }
}
