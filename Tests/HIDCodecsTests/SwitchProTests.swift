import Foundation
import XCTest
@testable import HIDCodecs

/// The Switch Pro's flash calibration, reports and HD rumble, against the CTS registration and
/// key vectors and against hid-nintendo's arithmetic worked by hand (drivers/hid/hid-nintendo.c:
/// joycon_read_stick_calibration, joycon_map_stick_val, joycon_parse_imu_report).
final class SwitchProTests: XCTestCase {
    static func cts(_ path: String) throws -> Any {
        let text = try Fixture.text(path)
        let hex = try NSRegularExpression(pattern: "0x([0-9a-fA-F]+)")
        var decimal = text
        for match in hex.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            decimal.replaceSubrange(Range(match.range, in: decimal)!, with: String(Int(String(text[Range(match.range(at: 1), in: text)!]), radix: 16)!))
        }
        return try JSONSerialization.jsonObject(with: Data(decimal.utf8))
    }

    /// Every output report the CTS registration answers, as the driver sends it: the subcommands
    /// parse to the id their description names (the SPI read: 0x10 at 0x603d, 18 bytes), and the
    /// USB handshake is no subcommand.
    func testTheCTSSubcommandsParseAsTheDriverSendsThem() throws {
        let registration = try XCTUnwrap(try Self.cts("android_cts/nintendo_switchpro_register.json") as? [String: Any])
        let outputs = try XCTUnwrap(registration["outputs"] as? [[String: Any]])
        var parsed = 0
        for entry in outputs {
            let bytes = try XCTUnwrap(entry["output"] as? [Int]).map(UInt8.init)
            let description = entry["description"] as? String ?? ""
            guard bytes.first == SwitchProReports.subcommandOutputID else {
                XCTAssertNil(SwitchProReports.output(bytes), description)
                continue
            }
            let output = try XCTUnwrap(SwitchProReports.output(bytes), description)
            let id = try XCTUnwrap(output.subcommand)
            XCTAssertTrue(description.contains("(\(id))") || description.contains("(0x\(String(id, radix: 16)))") || description.contains("rumble command"), description)
            if id == SwitchProReports.Subcommand.spiRead.rawValue { XCTAssertEqual(output.arguments, [0x3d, 0x60, 0x00, 0x00, 0x12]) }
            parsed += 1
        }
        XCTAssertGreaterThanOrEqual(parsed, 10)
        XCTAssertNil(SwitchProReports.output([0x01, 0, 0, 0]), "cut short")
    }

    /// The CTS key vectors: byte 3 = 0x04 is BUTTON_A... of Android's layout, which is the B
    /// button, south (Android swaps Nintendo's labels to positions); 0x08 BUTTON_B, A, east.
    func testTheCTSKeyVectorsAreReadByPosition() throws {
        let cases = try XCTUnwrap(try Self.cts("android_cts/nintendo_switchpro_keyeventtests.json") as? [[String: Any]])
        var decoder = try XCTUnwrap(ControllerInputDecoder(kind: .switchPro))
        let expected: [String: GamepadButtons] = ["BUTTON_A": .south, "BUTTON_B": .east]
        for entry in cases {
            let reports = try XCTUnwrap(entry["reports"] as? [[Int]]).map { $0.map(UInt8.init) }
            let key = try XCTUnwrap((entry["events"] as? [[String: String]])?.first?["keycode"])
            var state = GamepadState()
            try decoder.decode(reports[0], into: &state)
            XCTAssertEqual(state.buttons, try XCTUnwrap(expected[key]), key)
            // The same buttons through padgate's own report: what the host's pad sends.
            var controls = SwitchProReports.Controls()
            controls.buttons = state.buttons
            var again = GamepadState()
            try decoder.decode(SwitchProReports.fullReport(controls, imu: .init()), into: &again)
            XCTAssertEqual(again.buttons, state.buttons)
        }
    }

    /// hid-nintendo reads the left stick's 9 bytes as max-above, centre, min-below (12-bit pairs),
    /// the right stick's as centre, min-below, max-above.
    func testStickCalibrationUnpacksAsTheDriverReadsIt() throws {
        var c = SwitchProCalibration.defaults
        // Left, factory: x above 0x5DC (1500), y above 0x5DD; centre 0x7D0 (2000), 0x7D1; below 0x5DE, 0x5DF.
        c.factory.replaceSubrange(29..<38, with: [0xDC, 0xD5, 0x5D, 0xD0, 0x17, 0x7D, 0xDE, 0xF5, 0x5D])
        let left = c.sticks
        XCTAssertEqual(left.leftX, .init(min: 2000 - 0x5DE, center: 2000, max: 2000 + 1500))
        XCTAssertEqual(left.leftY, .init(min: 2001 - 0x5DF, center: 2001, max: 2001 + 0x5DD))
        // User calibration wins only behind its magic.
        c.user.replaceSubrange(2..<11, with: SwitchProCalibration.packLeft(x: .init(min: 100, center: 2000, max: 4000), y: .init(min: 50, center: 1000, max: 3000)))
        XCTAssertEqual(c.sticks.leftX.center, 2000)
        XCTAssertEqual(c.sticks.leftX.max, 3500, "no magic yet: still the factory calibration")
        c.user.replaceSubrange(0..<2, with: [0xB2, 0xA1])
        XCTAssertEqual(c.sticks.leftX, .init(min: 100, center: 2000, max: 4000))
        XCTAssertEqual(c.sticks.leftY, .init(min: 50, center: 1000, max: 3000))
        // The pad's flash, as a reader sees it: the blocks where they are, erased elsewhere, at most 0x1D bytes a read.
        XCTAssertEqual(c.spiRead(address: 0x603D, length: 9), Array(c.factory[29..<38]))
        XCTAssertEqual(c.spiRead(address: 0x8010, length: 2), [0xB2, 0xA1])
        XCTAssertEqual(c.spiRead(address: 0x6000, length: 4), [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertNil(c.spiRead(address: 0x6020, length: 0x1E))
    }

    /// joycon_map_stick_val: (raw − centre) × 32767 / (max − centre) above, (centre − raw) × −32767 /
    /// (centre − min) below, truncated and clamped; the inverse finds the raw count that reads as a value.
    func testStickArithmeticAndItsInverse() {
        let cal = SwitchProCalibration.Stick(min: 600, center: 1950, max: 3300)
        XCTAssertEqual(SwitchProMath.stick(3300, cal), 32767)
        XCTAssertEqual(SwitchProMath.stick(2000, cal), 50 * 32767 / 1350)        // 1213
        XCTAssertEqual(SwitchProMath.stick(1900, cal), 50 * -32767 / 1350)       // −1213
        XCTAssertEqual(SwitchProMath.stick(4000, cal), 32767, "clamped")
        for raw in Int32(600)...3300 {
            XCTAssertEqual(SwitchProMath.stick(Int32(SwitchProMath.rawStick(SwitchProMath.stick(raw, cal), cal)), cal), SwitchProMath.stick(raw, cal))
        }
    }

    /// joycon_parse_imu_report: gyro mult_frac(1000 × (raw − offset), scale, scale − offset); accel
    /// raw × scale / (scale − offset), no offset subtracted.
    func testIMUArithmeticAndItsInverse() {
        let gyro = SwitchProCalibration.IMUAxis(offset: 14, scale: 13300), accel = SwitchProCalibration.IMUAxis(offset: -120, scale: 16390)
        let x: Int32 = 1_200_000, divisor: Int32 = 13286   // 1000 × (1214 − 14), 13300 − 14
        let quotient: Int32 = x / divisor, remainder: Int32 = x % divisor
        XCTAssertEqual(SwitchProMath.gyro(1214, gyro), quotient * 13300 + remainder * 13300 / divisor)
        XCTAssertEqual(SwitchProMath.accel(4100, accel), 4100 * 16390 / 16510)
        for raw in stride(from: Int16(-32000), through: 32000, by: 97) {
            XCTAssertEqual(SwitchProMath.rawGyro(SwitchProMath.gyro(raw, gyro), gyro), raw)
            let value = SwitchProMath.accel(raw, accel)
            XCTAssertEqual(SwitchProMath.accel(SwitchProMath.rawAccel(value, accel), accel), value)
        }
    }

    /// A flash a host may not trust: a stick whose centre is not between its ends, an IMU scale
    /// equal to its offset (hid-nintendo would divide by zero), one far from nominal.
    func testImplausibleCalibrationsAreRefused() {
        XCTAssertTrue(SwitchProCalibration.defaults.isPlausible)
        var stick = SwitchProCalibration.defaults
        stick.factory.replaceSubrange(29..<38, with: SwitchProCalibration.packLeft(x: .init(min: 2500, center: 2000, max: 3500), y: .init(min: 500, center: 2000, max: 3500)))
        XCTAssertFalse(stick.isPlausible)
        var zero = SwitchProCalibration.defaults
        SwitchProCalibration.put16(&zero.factory, 18, 0)
        XCTAssertFalse(zero.isPlausible)
        var far = SwitchProCalibration.defaults
        SwitchProCalibration.put16(&far.factory, 6, 5000)
        XCTAssertFalse(far.isPlausible)
        XCTAssertNil(SwitchProCalibration(factory: [UInt8](repeating: 0, count: 47), user: [UInt8](repeating: 0, count: 48)))
    }

    /// HD rumble as dekuNukem's notes lay it out: high band amplitude code in byte 1 (× 2, the
    /// frequency's low bit beside it), low band's in byte 3 (0x40 + code / 2) with its low bit in
    /// byte 2's top bit. A neutral frame (00 01 40 40) is silence.
    func testHDRumbleFramesReadAsTwoMotors() {
        XCTAssertEqual(SwitchHDRumble.levels([0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40]), .silent)
        // Left low band code 100 (0x40 + 50 = 0x72, bit 0 clear), right high band code 100 (0xC8).
        XCTAssertEqual(SwitchHDRumble.levels([0x00, 0x01, 0x60, 0x72, 0x00, 0xC8, 0x60, 0x40]), MotorLevels(low: 255, high: 255))
        // Left low band code 51 (0x40 + 25 = 0x59, low bit in byte 2's top), right high band code 20 (0x28).
        XCTAssertEqual(SwitchHDRumble.levels([0x00, 0x01, 0xE0, 0x59, 0x00, 0x29, 0x60, 0x40]), MotorLevels(low: 130, high: 51))
        XCTAssertNil(SwitchHDRumble.levels([0x00, 0x01]))
    }

    // MARK: HD rumble encoding

    /// Rows of dekuNukem/Nintendo_Switch_Reverse_Engineering's rumble_data_table.md (commit
    /// ac8093c8; hid-nintendo's joycon_rumble_frequencies agree): frequency to the high band's
    /// 2 bytes and the low band's byte.
    static let frequencyRows: [(hz: Double, high: [UInt8]?, low: UInt8?)] = [
        (40.875885, nil, 0x01), (81.75177, [0x04, 0x00], 0x21), (149.933411, [0x74, 0x00], 0x3d),
        (160, [0x80, 0x00], 0x40), (320, [0x00, 0x01], 0x60), (626.286133, [0x7c, 0x01], 0x7f), (1252.572266, [0xfc, 0x01], nil),
    ]
    /// The same table's amplitude rows: the high band's byte, the low band's two (byte 2's added bit, byte 3).
    static let amplitudeRows: [(amplitude: Double, high: UInt8, low: [UInt8])] = [
        (0, 0x00, [0x00, 0x40]), (0.007843, 0x02, [0x80, 0x40]), (0.117471, 0x20, [0x00, 0x48]),
        (0.501433, 0x88, [0x00, 0x62]), (1.002867, 0xc8, [0x00, 0x72]),
    ]

    func testHDRumbleFrequenciesEncodeAsThePublishedTable() {
        for row in Self.frequencyRows {
            if let high = row.high {
                let side = SwitchHDRumble.encode(.init(highFrequency: row.hz))
                XCTAssertEqual([side[0], side[1] & 0x01], high, "\(row.hz) Hz, high band")
            }
            if let low = row.low {
                XCTAssertEqual(SwitchHDRumble.encode(.init(lowFrequency: row.hz))[2] & 0x7f, low, "\(row.hz) Hz, low band")
            }
        }
        // Outside a band: its nearest end, never a wrapped code.
        XCTAssertEqual(Array(SwitchHDRumble.encode(.init(lowFrequency: 5, highFrequency: 5000)).prefix(3)), [0xfc, 0x01, 0x01])
        XCTAssertEqual(SwitchHDRumble.encode(.init(lowFrequency: 2000, highFrequency: 10))[0...2], [0x04, 0x00, 0x7f])
    }

    func testHDRumbleAmplitudesEncodeAsThePublishedTable() {
        for row in Self.amplitudeRows {
            let side = SwitchHDRumble.encode(.init(lowAmplitude: row.amplitude, highAmplitude: row.amplitude))
            XCTAssertEqual(side[1] & 0xfe, row.high, "amplitude \(row.amplitude), high band")
            XCTAssertEqual([side[2] & 0x80, side[3]], row.low, "amplitude \(row.amplitude), low band")
        }
        // Above the safe maximum: the maximum (byte 1's low bit is 320 Hz's ninth bit).
        XCTAssertEqual(SwitchHDRumble.encode(.init(lowAmplitude: 1.8, highAmplitude: 7))[1...3], [0xc9, 0x40, 0x72])
        // The neutral frame is the pads' own (hid-nintendo's and SDL's): 00 01 40 40 on each side.
        XCTAssertEqual(SwitchHDRumble.frame(left: .neutral, right: .neutral), [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40])
        // What the decoder reads back: codes 100 and 68 on the bands it names.
        let frame = SwitchHDRumble.frame(left: .init(lowAmplitude: 1), right: .init(highAmplitude: 0.501433))
        XCTAssertEqual(SwitchHDRumble.levels(frame), MotorLevels(low: 255, high: 173))
    }
}
