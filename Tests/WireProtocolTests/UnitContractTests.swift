import HIDCodecs
import XCTest
@testable import WireProtocol

/// The wire's units are a contract (docs/wire.md): these pin them with values from outside padgate.
final class UnitContractTests: XCTestCase {
    /// DualSense feature report 0x05 of a real pad (Android CTS sony_dualsense_usb_register.json,
    /// Apache-2.0), whose processed values the kernel selftests publish: gyro x numer 1105920,
    /// denom 17727, in hid-playstation's 1024 counts per deg/s.
    static let calibrationBlob = "05fffff2ff04009d225edd922252ddba2251dd1c021c02fb1f05e0831f99df0720fcdf050000000000"

    func calibration() throws -> MotionCalibration {
        try CalibrationParser.dualSense(try Hex.decode(Self.calibrationBlob)).calibration
    }

    func testGyroArrivesInDegreesPerSecond() throws {
        // 1477 raw counts × 1105920 / 17727 = 92145 kernel units = 89.99 deg/s.
        let sample = MotionSample(gyro: Vector3(x: 1477, y: 0, z: 0), accel: .zero)
        let wire = PadSnapshots.motion(sample, timestampMicros: 0, calibration: try calibration())
        XCTAssertEqual(wire.gyroX, 1477 * 1105920 / 17727 / 1024, accuracy: 0.01)
        XCTAssertEqual(wire.gyroX, 90, accuracy: 0.1, "a pad turning at 90 deg/s must say 90 deg/s")
    }

    func testAccelerometerArrivesInG() throws {
        // Published accel y: bias -114, numer 16384, denom 16362 (8192 counts per g): a pad lying
        // flat reads about 1 g on y.
        let raw = Int16((8192 * 16362 / 16384) - 114)
        let wire = PadSnapshots.motion(MotionSample(gyro: .zero, accel: Vector3(x: 0, y: raw, z: 0)),
                                       timestampMicros: 0, calibration: try calibration())
        XCTAssertEqual(wire.accelY, 1, accuracy: 0.002)
    }

    func testSticksAreSigned16BitCentredAtZeroWithYDown() {
        var s = GamepadState()
        s.leftStick = StickPosition(x: 0, y: 255)
        s.rightStick = StickPosition(x: 128, y: 128)
        let snapshot = PadSnapshots.controls(s, slot: PadSlot(0))
        XCTAssertEqual([snapshot.leftX, snapshot.leftY, snapshot.rightX, snapshot.rightY], [-32768, 32767, 0, 0])

        var switchPad = GamepadState()
        switchPad.format = .switchProFull
        switchPad.leftStick = StickPosition(x: 4095, y: 4095)  // right and up on a Switch stick
        let converted = PadSnapshots.controls(switchPad, slot: PadSlot(0))
        XCTAssertEqual(converted.leftX, 32767)
        XCTAssertEqual(converted.leftY, -32767, "Switch +y is up; the wire's is down")
    }

    func testDualSenseSensorClockIsThirdsOfAMicrosecond() {
        var s = GamepadState()
        s.sensorTimestamp = 3_000_000
        XCTAssertEqual(s.sensorMicros, 1_000_000)
    }

    /// A stick value that crosses the link comes back as itself: a 12 on the pad is a 12 on the
    /// host (the evdev path once turned it into 13), for every raw range padgate meets.
    func testStickValuesSurviveTheRoundTripExactly() {
        for (low, high) in [(Int32(0), Int32(255)), (0, 4095), (-32768, 32767), (-512, 511), (0, 1023)] {
            let scale = StickScale(minimum: low, maximum: high)
            for raw in stride(from: low, through: high, by: high - low > 5000 ? 7 : 1) {
                XCTAssertEqual(scale.raw(scale.wire(raw)), raw, "\(raw) in \(low)...\(high)")
            }
            XCTAssertEqual(scale.wire(low), -32768)
            XCTAssertEqual(scale.wire(high), 32767)
        }
        XCTAssertEqual(StickScale(minimum: 0, maximum: 255).wire(128), 0, "a DualSense's centre is the wire's 0")
        // The 8-bit fast path (constant divisors) is the same mapping.
        for raw in UInt16(0)...255 {
            XCTAssertEqual(PadSnapshots.StickRange.eightBit.signed(raw), StickScale(minimum: 0, maximum: 255).wire(Int32(raw)), "\(raw)")
        }
    }
}
