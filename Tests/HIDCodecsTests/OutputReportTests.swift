import XCTest
@testable import HIDCodecs

final class OutputReportTests: XCTestCase {
    /// pydualsense's initial state: blue lightbar, player 1 LEDs, brightness low (2), triggers all-zero (mode 0).
    func pydualsenseDefaults() -> DualSenseOutputState {
        var s = DualSenseOutputState()
        s.rumble = .silent
        s.lightbar = RGBColor(red: 0, green: 0, blue: 255)
        s.playerLEDs = PlayerLEDs(mask: 0x04)
        s.ledBrightness = 2
        s.micLED = .off
        s.micMuted = false
        s.rightTrigger = .raw(mode: 0, parameters: [])
        s.leftTrigger = .raw(mode: 0, parameters: [])
        return s
    }

    /// Valid-flag bits pydualsense sets for fields it writes as zero and we do not send at all (report byte: bits).
    /// Byte 1 (valid_flag0) 0xF0: headphone volume, speaker volume, microphone volume, audio control, with volumes 0;
    /// byte 2 (valid_flag1) 0x40: vibration attenuation (dualsensectl's VALID_FLAG1 bit 6) with attenuation 0;
    /// byte 39 (valid_flag2) 0x02: lightbar setup with setup byte 0, which is neither LIGHT_ON (1) nor LIGHT_OUT (2).
    static let pydualsenseOnlyFlags: [Int: UInt8] = [1: 0xF0, 2: 0x40, 39: 0x02]

    /// USB vectors from pydualsense 0.7.5 are golden byte for byte, with two documented differences: pydualsense sets
    /// every valid flag (`pydualsenseOnlyFlags` are the ones for fields we never send), and it pads the report to 64
    /// bytes like the input report, where the kernel and dualsensectl send 63 (DS_OUTPUT_REPORT_USB_SIZE).
    func testUSBReportsMatchPydualsenseByteForByte() throws {
        let json = try Fixture.json("output_vectors/dualsense_output_pydualsense.json")
        var checked = 0
        for vector in json["vectors"] as! [[String: Any]] where vector["bus"] as? String == "usb" {
            let name = vector["name"] as! String
            let golden = Fixture.hex(vector["report_hex"] as! String)
            var state = pydualsenseDefaults()
            switch name {
            case _ where name.hasPrefix("defaults") || name == "player LEDs PLAYER_1=4": break
            case "rumble left=255 right=0": state.rumble = MotorLevels(low: 255, high: 0)
            case "rumble left=0 right=255": state.rumble = MotorLevels(low: 0, high: 255)
            case "rumble left=128 right=64": state.rumble = MotorLevels(low: 128, high: 64)
            case "lightbar red (255,0,0)": state.lightbar = RGBColor(red: 255, green: 0, blue: 0)
            case "lightbar (18,52,86)": state.lightbar = RGBColor(red: 18, green: 52, blue: 86)
            case "brightness high": state.ledBrightness = 0
            case "microphone LED on": state.micLED = .on
            case "microphone mute on": state.micLED = .on; state.micMuted = true
            case "right trigger Rigid forces[0]=0 [1]=255": state.rightTrigger = .simpleFeedback(position: 0, strength: 255)
            case "left trigger Pulse forces 0,200,255": state.leftTrigger = .simpleWeapon(start: 0, end: 200, strength: 255)
            case "right trigger Rigid_AB forces 1..7": state.rightTrigger = .raw(mode: 0x25, parameters: [1, 2, 3, 4, 5, 6, 0, 0, 7])
            case "right trigger Pulse_A forces 10,20,30,40,50,60,70": state.rightTrigger = .raw(mode: 0x22, parameters: [10, 20, 30, 40, 50, 60, 0, 0, 70])
            case "left trigger Calibration":
                XCTAssertEqual(golden[22], 0xFC)
                state.leftTrigger = .raw(mode: 0xFC, parameters: [])
                var encoder = DualSenseOutputEncoder()
                XCTAssertThrowsError(try encoder.encode(state, bus: .usb, changedOnly: false)) {
                    XCTAssertEqual($0 as? OutputStateError, .trigger(.debugMode(0xFC)))
                }
                checked += 1
                continue
            default: XCTFail("unmapped vector \(name)"); continue
            }
            var encoder = DualSenseOutputEncoder()
            let ours = try encoder.encode(state, bus: .usb, changedOnly: false)
            XCTAssertEqual(ours.count, 63)
            XCTAssertEqual(golden.count, 64)
            XCTAssertEqual(golden[63], 0, "\(name): pydualsense's 64th byte is padding")
            for (index, byte) in ours.enumerated() {
                let expected = golden[index] & ~(Self.pydualsenseOnlyFlags[index] ?? 0)
                XCTAssertEqual(byte, expected, "\(name): byte \(index)")
            }
            checked += 1
        }
        XCTAssertEqual(checked, 15)
    }

    /// Bluetooth layout from the kernel's `struct dualsense_output_report_bt` (hid-playstation.c, also dualsensectl):
    /// report id 0x31, seq_tag (sequence in the high nibble), tag 0x10, the 47-byte common block at byte 3,
    /// CRC32 over 0xA2 + bytes 0..73 in bytes 74..77 (LE). pydualsense puts the common block at byte 2, so its
    /// BT vectors are deliberately NOT golden here; we only check that we differ from it where it is off by one.
    func testBluetoothReportFollowsKernelLayout() throws {
        var state = DualSenseOutputState()
        state.lightbar = RGBColor(red: 0x12, green: 0x34, blue: 0x56)
        var encoder = DualSenseOutputEncoder()
        let first = try encoder.encode(state, bus: .bluetooth)
        XCTAssertEqual(first.count, 78)
        XCTAssertEqual(Array(first[0...2]), [0x31, 0x00, 0x10])
        XCTAssertEqual(first[3 + 1], 0x04, "valid_flag1 LIGHTBAR_CONTROL_ENABLE")
        XCTAssertEqual(Array(first[47...49]), [0x12, 0x34, 0x56], "lightbar RGB at common offset 44")
        XCTAssertTrue(BluetoothCRC.verify(seed: .output, report: first))
        let second = try encoder.encode(state, bus: .bluetooth)
        XCTAssertEqual(second[1], 0x10, "sequence advances in the high nibble")
        XCTAssertEqual(second[4], 0x00, "unchanged lightbar is not re-flagged")
        for _ in 0..<14 { _ = try encoder.encode(state, bus: .bluetooth) }
        XCTAssertEqual(try encoder.encode(state, bus: .bluetooth)[1], 0x00, "sequence wraps after 16")

        let json = try Fixture.json("output_vectors/dualsense_output_pydualsense.json")
        let pyBT = (json["vectors"] as! [[String: Any]]).first { $0["bus"] as? String == "bt" && $0["name"] as? String == "lightbar (18,52,86)" }!
        let py = Fixture.hex(pyBT["report_hex"] as! String)
        XCTAssertEqual(Array(py[46...48]), [0x12, 0x34, 0x56], "pydualsense writes RGB one byte early")
        XCTAssertNotEqual(Array(first[46...48]), Array(py[46...48]))
    }

    func testValidFlagsFollowWhatChanged() throws {
        var encoder = DualSenseOutputEncoder()
        var state = DualSenseOutputState()
        state.rumble = MotorLevels(low: 10, high: 20)
        var report = try encoder.encode(state, bus: .usb)
        XCTAssertEqual(report[1], 0x03)
        XCTAssertEqual(report[2], 0x00)
        state.playerLEDs = try PlayerLEDs(player: 3, instant: true)
        state.rightTrigger = .feedback(position: 3, strength: 5)
        report = try encoder.encode(state, bus: .usb)
        XCTAssertEqual(report[1], 0x04, "rumble unchanged, right trigger new")
        XCTAssertEqual(report[2], 0x10)
        XCTAssertEqual(report[44], 0x15 | 0x20)
        XCTAssertEqual(report[11], 0x21)
        state.ledBrightness = 3
        XCTAssertThrowsError(try encoder.encode(state, bus: .usb))
        XCTAssertThrowsError(try PlayerLEDs(player: 8))
    }

    /// DualShock 4 layouts from hid-playstation (`dualshock4_output_report_usb/_bt`): USB id 0x05, 32 bytes;
    /// BT id 0x11, hw_control 0xC0, common block at byte 3, CRC seed 0xA2, 78 bytes.
    func testDualShock4OutputReports() {
        var ds4 = DualShock4OutputState()
        ds4.rumble = MotorLevels(low: 200, high: 100)
        ds4.lightbar = RGBColor(red: 1, green: 2, blue: 3)
        let usb = ds4.encoded(bus: .usb)
        XCTAssertEqual(usb.count, 32)
        XCTAssertEqual(Array(usb[0...8]), [0x05, 0x03, 0x00, 0x00, 100, 200, 1, 2, 3])
        let bt = ds4.encoded(bus: .bluetooth)
        XCTAssertEqual(bt.count, 78)
        XCTAssertEqual(Array(bt[0...11]), [0x11, 0xC0, 0x00, 0x03, 0x00, 0x00, 100, 200, 1, 2, 3, 0])
        XCTAssertTrue(BluetoothCRC.verify(seed: .output, report: bt))
    }

    /// hid-playstation's dualshock4_output_worker sets DS4_OUTPUT_VALID_FLAG0_MOTOR (0x01), _LED (0x02) and
    /// _LED_BLINK (0x04) only for what it updates: with the motor flag set, a lightbar change would also set both
    /// motors to the report's zeros and stop a running rumble.
    func testDualShock4FlagsOnlyWhatTheReportCarries() {
        var lightbarOnly = DualShock4OutputState()
        lightbarOnly.lightbar = RGBColor(red: 0, green: 0, blue: 255)
        for bus in PadBus.allCases {
            let report = lightbarOnly.encoded(bus: bus)
            let common = bus == .usb ? 1 : 3
            XCTAssertEqual(report[common], 0x02, "\(bus): LED only, motors untouched")
            XCTAssertEqual(Array(report[common + 5...common + 7]), [0, 0, 255])
        }
        var rumbleOnly = DualShock4OutputState()
        rumbleOnly.rumble = MotorLevels(low: 0, high: 0)
        XCTAssertEqual(rumbleOnly.encoded(bus: .usb)[1], 0x01, "stopping the motors is a motor update")
        var blink = DualShock4OutputState()
        blink.lightbarBlink = LightbarBlink(on: 50, off: 25)
        XCTAssertEqual(Array(blink.encoded(bus: .usb)[1...10]), [0x04, 0, 0, 0, 0, 0, 0, 0, 50, 25])
        XCTAssertEqual(DualShock4OutputState().encoded(bus: .usb)[1], 0x00)
    }
}
