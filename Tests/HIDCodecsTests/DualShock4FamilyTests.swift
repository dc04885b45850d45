import Foundation
import XCTest
@testable import HIDCodecs

/// The DualShock 4's two calibration forms and its output reports, against data nobody here wrote:
/// hid-tools' USB 0x02 and Bluetooth 0x05 blobs of one calibration (the Bluetooth one with its
/// CRC), the Android CTS registrations and key-event vectors, and the output layout hid-sony and
/// SDL_hidapi_ps4.c write.
final class DualShock4FamilyTests: XCTestCase {
    func blob(_ id: String) throws -> [UInt8] {
        let json = try Fixture.json("calibration/ds4_feature_calibration.json")
        let blobs = try XCTUnwrap(json["blobs"] as? [[String: Any]])
        return Fixture.hex(try XCTUnwrap(blobs.first { $0["id"] as? String == id }?["hex"] as? String))
    }

    /// The CTS files write numbers as 0x.. literals.
    static func ctsJSON(_ path: String) throws -> Any {
        let text = try Fixture.text(path)
        let hex = try NSRegularExpression(pattern: "0x([0-9a-fA-F]+)")
        var decimal = text
        for match in hex.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            let digits = String(text[Range(match.range(at: 1), in: text)!])
            decimal.replaceSubrange(Range(match.range, in: decimal)!, with: String(Int(digits, radix: 16)!))
        }
        return try JSONSerialization.jsonObject(with: Data(decimal.utf8))
    }

    static func ctsFeatureReport(_ path: String, id: Int) throws -> [UInt8] {
        let json = try XCTUnwrap(try ctsJSON(path) as? [String: Any])
        let reports = try XCTUnwrap(json["feature_reports"] as? [[String: Any]])
        return try XCTUnwrap(reports.first { $0["id"] as? Int == id }?["data"] as? [Int]).map(UInt8.init)
    }

    func testEachFormConvertsIntoTheOtherByteForByteCRCIncluded() throws {
        let usb = try blob("ds4_usb_0x02"), bt = try blob("ds4_bt_0x05")
        XCTAssertEqual(try DualShock4Calibration.bluetoothForm(usb), bt)
        XCTAssertEqual(try DualShock4Calibration.usbForm(bt), usb)
        XCTAssertEqual(try DualShock4Calibration.bluetoothForm(bt), bt)
        XCTAssertEqual(try DualShock4Calibration.usbForm(usb), usb)
    }

    func testTheCTSPadsCalibrationKeepsItsValuesInTheOtherForm() throws {
        let usb = try Self.ctsFeatureReport("android_cts/sony_dualshock4_usb_register.json", id: 0x02)
        let bt = try Self.ctsFeatureReport("android_cts/sony_dualshock4_bluetooth_register.json", id: 0x05)
        XCTAssertTrue(BluetoothCRC.verify(seed: .feature, report: bt), "the CTS Bluetooth report's own CRC")
        for report in [usb, bt] {
            for convention in CalibrationConvention.allCases {
                XCTAssertEqual(try CalibrationParser.dualShock4(DualShock4Calibration.bluetoothForm(report), convention: convention).calibration,
                               try CalibrationParser.dualShock4(report, convention: convention).calibration)
                XCTAssertEqual(try CalibrationParser.dualShock4(DualShock4Calibration.usbForm(report), convention: convention).calibration,
                               try CalibrationParser.dualShock4(report, convention: convention).calibration)
            }
        }
    }

    func testBrokenReportsAreRefused() throws {
        var bt = try blob("ds4_bt_0x05")
        bt[10] ^= 0x01
        XCTAssertThrowsError(try DualShock4Calibration.usbForm(bt)) { XCTAssertEqual($0 as? CalibrationError, .badChecksum(reportID: 0x05)) }
        let usb = try blob("ds4_usb_0x02")
        XCTAssertThrowsError(try DualShock4Calibration.bluetoothForm(Array(usb.prefix(30))))
        XCTAssertThrowsError(try DualShock4Calibration.bluetoothForm(Array(usb.prefix(36))), "cut inside the reserved bytes")
        XCTAssertThrowsError(try DualShock4Calibration.bluetoothForm([0x20] + usb.dropFirst()))
        XCTAssertThrowsError(try DualShock4Calibration.bluetoothForm([]))
    }

    /// Android maps the DS4's cross to BUTTON_A and square to BUTTON_X: south and west.
    func testTheCTSKeyEventVectorsDecodeToTheirButtons() throws {
        let cases = try XCTUnwrap(try Self.ctsJSON("android_cts/sony_dualshock4_keyeventtests.json") as? [[String: Any]])
        let expected: [String: GamepadButtons] = ["BUTTON_A": .south, "BUTTON_X": .west]
        XCTAssertEqual(cases.count, 2)
        for entry in cases {
            let reports = try XCTUnwrap(entry["reports"] as? [[Int]]).map { $0.map(UInt8.init) }
            let events = try XCTUnwrap(entry["events"] as? [[String: String]])
            let button = try XCTUnwrap(expected[try XCTUnwrap(events.first?["keycode"])])
            var decoder = try XCTUnwrap(ControllerInputDecoder(kind: .dualShock4))
            var state = GamepadState()
            try decoder.decode(reports[0], into: &state)
            XCTAssertEqual(state.buttons, button, "\(entry["name"] ?? "")")
            XCTAssertEqual(state.dpad, .none)
            try decoder.decode(reports[1], into: &state)
            XCTAssertEqual(state.buttons, [], "\(entry["name"] ?? "") released")
        }
    }

    /// hid-playstation (6.2+) reads `num_touch_reports` touch reports and no more: USB byte 33 and
    /// Bluetooth byte 35 (`struct dualshock4_input_report_usb`/`_bt`, after the 32-byte common
    /// part). A report saying 0 loses its touches and its touchpad click; a pad says at least 1.
    func testInputReportsSayTheyCarryOneTouchReport() throws {
        var state = GamepadState()
        state.touch0 = TouchPoint(id: 1, active: true, x: 1500, y: 800)
        let usb = PlayStationInputEncoder(layout: PlayStationLayouts.dualShock4USB).encode(state)
        XCTAssertEqual(usb.count, 64)
        XCTAssertEqual(usb[33], 1, "num_touch_reports")
        XCTAssertEqual(usb[35] & 0x80, 0, "the first point is active")
        XCTAssertEqual(Int(usb[36]) | Int(usb[37] & 0x0f) << 8, 1500)
        let bt = PlayStationInputEncoder(layout: PlayStationLayouts.dualShock4Bluetooth).encode(state)
        XCTAssertEqual(bt.count, 78)
        XCTAssertEqual(bt[35], 1, "num_touch_reports")
        XCTAssertEqual(Int(bt[38]) | Int(bt[39] & 0x0f) << 8, 1500)
    }

    /// hid-sony's dualshock4_send_output_report over Bluetooth: 0x11, 0xC0 | poll interval, 0,
    /// flags 0x07, two bytes, right (weak) motor, left (strong) motor, red, green, blue, blink on/off;
    /// CRC32 (seed 0xA2) in the last four of 78 bytes. SDL writes the same with flags 0x03.
    func testBluetoothAndUSBOutputReportsDecodeAsTheDriversAndSDLWriteThem() throws {
        var bt = [UInt8](repeating: 0, count: 78)
        bt[0] = 0x11; bt[1] = 0xC4; bt[3] = 0x07
        bt[6] = 0x40; bt[7] = 0xF0; bt[8] = 1; bt[9] = 2; bt[10] = 3; bt[11] = 9; bt[12] = 10
        let crc = BluetoothCRC.checksum(seed: .output, over: Array(bt.prefix(74)))
        for i in 0..<4 { bt[74 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
        let decoded = try DualShock4OutputDecoder.decode(bt)
        XCTAssertEqual(decoded.bus, .bluetooth)
        XCTAssertEqual(decoded.motors, MotorLevels(low: 0xF0, high: 0x40))
        XCTAssertEqual(decoded.lightbar, RGBColor(red: 1, green: 2, blue: 3))
        XCTAssertEqual(decoded.lightbarBlink, LightbarBlink(on: 9, off: 10))

        // USB 0x05 (32 bytes): flags at 1, motors at 4 and 5; rumble only.
        var usb = [UInt8](repeating: 0, count: 32)
        usb[0] = 0x05; usb[1] = 0x01; usb[4] = 7; usb[5] = 200; usb[6] = 99
        let plain = try DualShock4OutputDecoder.decode(usb)
        XCTAssertEqual(plain.motors, MotorLevels(low: 200, high: 7))
        XCTAssertNil(plain.lightbar, "the LED flag is clear: the colour bytes mean nothing")
    }

    func testOutputReportsThatAreNotADualShock4sAreRefused() throws {
        // SDL's Bluetooth "tickle": 0x11, 0xC0 and no CRC, which a pad ignores.
        var tickle = [UInt8](repeating: 0, count: 78)
        tickle[0] = 0x11; tickle[1] = 0xC0
        XCTAssertThrowsError(try DualShock4OutputDecoder.decode(tickle))
        XCTAssertThrowsError(try DualShock4OutputDecoder.decode([0x05, 0x01, 0, 0]))
        XCTAssertThrowsError(try DualShock4OutputDecoder.decode([0x02] + [UInt8](repeating: 0, count: 47)))
        XCTAssertThrowsError(try DualShock4OutputDecoder.decode([]))
    }
}
