import XCTest
@testable import HIDCodecs

final class CalibrationTests: XCTestCase {
    func published(_ json: [String: Any]) -> (gyro: [AxisCalibration], accel: [AxisCalibration]) {
        func axes(_ sensor: String) -> [AxisCalibration] {
            let s = json[sensor] as! [String: [String: Int]]
            return ["x", "y", "z"].map { AxisCalibration(bias: Int32(s[$0]!["bias"]!), numerator: Int32(s[$0]!["numer"]!), denominator: Int32(s[$0]!["denom"]!)) }
        }
        return (axes("gyro"), axes("accel"))
    }

    /// calibration/*.json carry the values the kernel selftests publish (dumped from hid-playstation).
    func testKernelConventionReproducesPublishedValues() throws {
        let ds = try Fixture.json("calibration/dualsense_feature_0x05.json")
        for blob in ds["blobs"] as! [[String: Any]] {
            let result = try CalibrationParser.dualSense(Fixture.hex(blob["hex"] as! String), convention: .kernel,
                                                         bus: blob["id"] as? String == "A_bt" ? .bluetooth : .usb)
            let expected = published(blob["expected_published"] as! [String: Any])
            XCTAssertEqual(result.calibration.gyro.all, expected.gyro, blob["id"] as! String)
            XCTAssertEqual(result.calibration.accel.all, expected.accel, blob["id"] as! String)
            XCTAssertTrue(result.warnings.isEmpty)
        }
        let ds4 = try Fixture.json("calibration/ds4_feature_calibration.json")
        let expected = published(ds4["expected_published"] as! [String: Any])
        for blob in ds4["blobs"] as! [[String: Any]] {
            let result = try CalibrationParser.dualShock4(Fixture.hex(blob["hex"] as! String))
            XCTAssertEqual(result.calibration.gyro.all, expected.gyro, blob["id"] as! String)
            XCTAssertEqual(result.calibration.accel.all, expected.accel, blob["id"] as! String)
        }
    }

    /// Legacy (SDL, kernels before ~6.2): gyro bias is the blob's bias, denominator plus - minus. The fixture notes say
    /// the denominators coincide for these blobs and only the bias differs; biases are read from the blob bytes 1...6.
    func testLegacyConventionSubtractsGyroBias() throws {
        let ds = try Fixture.json("calibration/dualsense_feature_0x05.json")
        let blob = Fixture.hex((ds["blobs"] as! [[String: Any]])[0]["hex"] as! String)
        let kernel = try CalibrationParser.dualSense(blob, convention: .kernel).calibration
        let legacy = try CalibrationParser.dualSense(blob, convention: .legacy).calibration
        let biases = [1, 3, 5].map { Int32(Int16(bitPattern: UInt16(blob[$0]) | UInt16(blob[$0 + 1]) << 8)) }
        XCTAssertEqual(legacy.gyro.all.map(\.bias), biases)
        XCTAssertEqual(legacy.gyro.all.map(\.denominator), kernel.gyro.all.map(\.denominator))
        XCTAssertEqual(legacy.accel, kernel.accel)
        XCTAssertEqual(legacy.convention, .legacy)
    }

    func testZeroDenominatorFallsBackWithWarning() throws {
        var blob = [UInt8](repeating: 0, count: 41)
        blob[0] = 0x05
        let result = try CalibrationParser.dualSense(blob)
        XCTAssertEqual(result.calibration.gyro.x, MotionCalibration.nominalGyro)
        XCTAssertEqual(result.calibration.accel.z, MotionCalibration.nominalAccel)
        XCTAssertEqual(result.warnings.count, 6)
        XCTAssertEqual(result.calibration.accel.x.apply(100), MotionCalibration.nominalAccel.apply(100))
    }

    /// A real blob with one gyro and one accel axis made absurd: gyro x plus = 1, minus = -1 (denominator 2, a scale
    /// 8640× nominal) and accel z plus = minus + 1 (denominator 1). Those axes fall back with a warning naming the
    /// factor; a 2× scale (a plausible different sensor range) and the untouched axes keep the blob's values.
    func testAbsurdScaleFallsBackWithWarning() throws {
        let ds = try Fixture.json("calibration/dualsense_feature_0x05.json")
        let usb = (ds["blobs"] as! [[String: Any]])[0]
        let expected = published(usb["expected_published"] as! [String: Any])
        var blob = Fixture.hex(usb["hex"] as! String)
        func put(_ value: Int16, at offset: Int) {
            blob[offset] = UInt8(truncatingIfNeeded: value); blob[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        }
        func get(_ offset: Int) -> Int16 { Int16(bitPattern: UInt16(blob[offset]) | UInt16(blob[offset + 1]) << 8) }
        put(1, at: 7); put(-1, at: 9)                       // gyro x (pitch) plus / minus
        put(get(15) / 2, at: 15); put(get(17) / 2, at: 17)  // gyro z: half the travel, twice the scale
        put(get(33) + 1, at: 31)                            // accel z plus = minus + 1

        let result = try CalibrationParser.dualSense(blob)
        XCTAssertEqual(result.calibration.gyro.x, MotionCalibration.nominalGyro)
        XCTAssertEqual(result.calibration.accel.z, MotionCalibration.nominalAccel)
        XCTAssertEqual(result.calibration.gyro.y, expected.gyro[1])
        XCTAssertEqual(result.calibration.accel.x, expected.accel[0])
        XCTAssertEqual(result.calibration.gyro.z.numerator, expected.gyro[2].numerator)
        XCTAssertEqual(Double(result.calibration.gyro.z.denominator), Double(expected.gyro[2].denominator) / 2, accuracy: 1)
        XCTAssertEqual(result.warnings.count, 2, "\(result.warnings)")
        XCTAssertTrue(result.warnings[0].hasPrefix("gyro x: calibration scale is 8640× the nominal one"), result.warnings[0])
        XCTAssertTrue(result.warnings[1].hasPrefix("accel z: calibration scale is "), result.warnings[1])
        XCTAssertTrue(result.warnings.allSatisfy { $0.contains("using nominal scale") })

        // Both sides of the bound: a quarter of the nominal scale is kept, a little less is not.
        let nominal = MotionCalibration.nominalAccel
        XCTAssertTrue(AxisCalibration(bias: 0, numerator: nominal.numerator, denominator: nominal.denominator * 4).isPlausible(nominal: nominal))
        XCTAssertFalse(AxisCalibration(bias: 0, numerator: nominal.numerator, denominator: nominal.denominator * 4 + 1).isPlausible(nominal: nominal))
        XCTAssertFalse(AxisCalibration(bias: 0, numerator: nominal.numerator * 4 + 1, denominator: nominal.denominator).isPlausible(nominal: nominal))
    }

    func testBadInputIsRefused() {
        XCTAssertThrowsError(try CalibrationParser.dualSense([0x05, 1, 2])) { XCTAssertEqual($0 as? CalibrationError, .tooShort(got: 3, need: 35)) }
        XCTAssertThrowsError(try CalibrationParser.dualSense([UInt8](repeating: 0, count: 41))) { XCTAssertEqual($0 as? CalibrationError, .unexpectedReportID(0, expected: [5])) }
        var bt = [UInt8](repeating: 1, count: 41); bt[0] = 0x05
        XCTAssertThrowsError(try CalibrationParser.dualSense(bt, bus: .bluetooth)) { XCTAssertEqual($0 as? CalibrationError, .badChecksum(reportID: 5)) }
    }

    /// DualSense feature 0x05 is 41 bytes over USB and Bluetooth: `.auto` takes a zero trailer as USB and a valid
    /// CRC as Bluetooth, and refuses a trailer that is neither (a Bluetooth report with a corrupted CRC).
    func testWithNoBusGivenTheTrailerTells() throws {
        let ds = try Fixture.json("calibration/dualsense_feature_0x05.json")
        let blobs = (ds["blobs"] as! [[String: Any]]).map { Fixture.hex($0["hex"] as! String) }
        let usb = blobs[0], bluetooth = blobs[1]
        XCTAssertEqual(usb.count, bluetooth.count)
        XCTAssertNoThrow(try CalibrationParser.dualSense(usb))
        XCTAssertNoThrow(try CalibrationParser.dualSense(bluetooth))
        var corrupted = bluetooth
        corrupted[40] ^= 0x01
        XCTAssertThrowsError(try CalibrationParser.dualSense(corrupted)) {
            XCTAssertEqual($0 as? CalibrationError, .unverifiableTrailer(reportID: 0x05))
        }
        XCTAssertThrowsError(try CalibrationParser.dualSense(corrupted, bus: .bluetooth)) {
            XCTAssertEqual($0 as? CalibrationError, .badChecksum(reportID: 0x05))
        }
        XCTAssertNoThrow(try CalibrationParser.dualSense(corrupted, bus: .usb))
        XCTAssertThrowsError(try CalibrationParser.dualSense(usb, bus: .bluetooth))
        XCTAssertNoThrow(try CalibrationParser.dualSense(Array(bluetooth.prefix(35))), "no trailer, nothing to check")
    }

    func testJSONShape() throws {
        let ds = try Fixture.json("calibration/dualsense_feature_0x05.json")
        let blob = Fixture.hex((ds["blobs"] as! [[String: Any]])[0]["hex"] as! String)
        let text = CalibrationParser.json(try CalibrationParser.dualSense(blob)).serialized()
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(parsed["convention"] as? String, "kernel")
        XCTAssertEqual((parsed["gyro"] as? [[String: Int]])?.first?["denom"], 17727)
        XCTAssertEqual((parsed["accel"] as? [[String: Int]])?[1]["bias"], -114)
    }

    /// `apply` keeps the kernel's mult_frac arithmetic (include/linux/math.h) with its quotient
    /// and remainder worked out ahead, also after the scale is changed in place.
    func testApplyIsTheKernelsMultFracForAnyScale() {
        func multFrac(_ x: Int64, _ n: Int64, _ d: Int64) -> Int64 { (x / d) * n + ((x % d) * n) / d }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var axis = AxisCalibration(bias: Int32.random(in: -500...500, using: &generator),
                                       numerator: Int32.random(in: 1...4_000_000, using: &generator),
                                       denominator: Int32.random(in: -70_000...70_000, using: &generator))
            if Bool.random(using: &generator) { axis.numerator = Int32.random(in: -4_000_000...4_000_000, using: &generator) }
            if Bool.random(using: &generator) { axis.denominator = Int32.random(in: 1...70_000, using: &generator) }
            let raw = Int16.random(in: .min ... .max, using: &generator)
            let expected = axis.denominator == 0 ? Int64(raw)
                : multFrac(Int64(axis.numerator), Int64(raw) - Int64(axis.bias), Int64(axis.denominator))
            XCTAssertEqual(Int64(axis.apply(raw)), Int64(Int32(truncatingIfNeeded: expected)), "\(axis) raw \(raw)")
        }
        // Remainder × (raw − bias) beyond 32 bits either way: the 64-bit division's side of `apply`.
        for (numerator, denominator, bias, raw) in [(Int32(69_999), Int32(70_000), Int32(-500), Int16.max), (-69_999, 70_000, 500, .min),
                                                     (139_999, -70_000, -500, .max)] {
            let axis = AxisCalibration(bias: bias, numerator: numerator, denominator: denominator)
            XCTAssertNil(Int32(exactly: Int64(numerator % denominator) * (Int64(raw) - Int64(bias))), "the case must leave 32 bits")
            XCTAssertEqual(Int64(axis.apply(raw)), multFrac(Int64(numerator), Int64(raw) - Int64(bias), Int64(denominator)), "\(axis) raw \(raw)")
        }
    }
}
