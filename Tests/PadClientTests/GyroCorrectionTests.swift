import HIDCodecs
import PadClient
import WireProtocol
import XCTest

/// `forward`'s report path (`DecodedReportInput`, as HidrawPadSource uses it) with each
/// `--gyro-calibration` mode: DualSense USB reports whose raw gyro counts carry a known bias and
/// noise, decoded, calibrated, corrected; what would go on the wire is checked against the truth.
final class GyroCorrectionTests: XCTestCase {
    /// Nominal calibration: 2048 deg/s over 32767 counts, so 1 deg/s is 16.0 counts.
    static let countsPerDegree = 32767.0 / 2048
    static let bias = SIMD3<Double>(0.7, -0.4, 0.25)   // deg/s

    /// Reports at 250 Hz on the sensor clock: bias + `turn` + noise (σ 0.1 deg/s), gravity on y.
    struct Reports {
        var state = GamepadState()
        var seed: UInt64 = 0x9e3779b97f4a7c15
        let encoder = PlayStationInputEncoder(layout: PlayStationLayouts.dualSenseUSB())
        init() { state.format = .dualSenseUSB; state.hasMotion = true }

        mutating func gaussian() -> Double {
            func uniform() -> Double {
                seed ^= seed >> 12; seed ^= seed << 25; seed ^= seed >> 27
                return (Double((seed &* 0x2545_F491_4F6C_DD1D) >> 11) + 0.5) / Double(1 << 53)
            }
            return (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        }

        mutating func next(turn: SIMD3<Double> = .zero) -> [UInt8] {
            let g = (GyroCorrectionTests.bias + turn) * GyroCorrectionTests.countsPerDegree
            func count(_ v: Double) -> Int16 { Int16((v + 1.6 * gaussian()).rounded()) }   // 1.6 counts = 0.1 deg/s
            state.motion.first = MotionSample(gyro: Vector3(x: count(g.x), y: count(g.y), z: count(g.z)),
                                              accel: Vector3(x: Int16((25 * gaussian()).rounded()), y: 8192 + Int16((25 * gaussian()).rounded()), z: 0))
            state.sensorTimestamp &+= 4000 * 3
            return encoder.encode(state)
        }
    }

    func run(_ mode: GyroCalibrationMode, stored: MotionCorrection? = nil, seconds: Double, turn: SIMD3<Double> = .zero,
             input: inout DecodedReportInput, reports: inout Reports) -> [WireMotionSample] {
        var out: [WireMotionSample] = []
        for _ in 0..<Int(seconds * 250) {
            let report = reports.next(turn: turn)
            XCTAssertTrue(report.withUnsafeBytes { input.ingest($0) })
            input.takeMotion { out.append($0) }
        }
        return out
    }

    static func mean(_ samples: ArraySlice<WireMotionSample>) -> SIMD3<Double> {
        samples.reduce(SIMD3<Double>.zero) { $0 + SIMD3(Double($1.gyroX), Double($1.gyroY), Double($1.gyroZ)) } / Double(samples.count)
    }

    func input(_ mode: GyroCalibrationMode, stored: MotionCorrection? = nil) -> DecodedReportInput {
        DecodedReportInput(decoder: ControllerInputDecoder(PlayStationInputCodec.dualSense), slot: PadSlot(0), calibration: .nominal,
                           motionCorrection: stored, gyroCalibration: mode)
    }

    /// Continuous: a resting pad reads ~0 deg/s within 3 s, and a slow pan after it arrives unchanged.
    func testContinuousCorrectsARestingPadAndLeavesASlowPan() {
        var reports = Reports()
        var input = input(.continuous)
        let rest = run(.continuous, seconds: 4, input: &input, reports: &reports)
        let settled = Self.mean(rest[(3 * 250)...])
        XCTAssertLessThan(pointwiseMax(settled, -settled).max(), 0.05, "a resting pad after 3 s: \(settled)")
        XCTAssertEqual(input.gyroCorrection.current.x, Self.bias.x, accuracy: 0.03)

        let turn = SIMD3<Double>(0, 1, 0)
        let pan = run(.continuous, seconds: 10, turn: turn, input: &input, reports: &reports)
        let panned = Self.mean(pan[...])
        XCTAssertEqual(panned.y, 1, accuracy: 0.05, "a 1 deg/s pan arrives as 1 deg/s: \(panned)")
        XCTAssertLessThan(abs(panned.x) + abs(panned.z), 0.1)
    }

    /// Stored: exactly the stored bias, never more; off: the gyro as calibrated.
    func testStoredAndOff() {
        let stored = MotionCorrection(serial: "aa:bb:cc:dd:ee:ff", result: StillnessResult(
            samples: 750, gyroBias: MotionVector(x: 0.5, y: -0.5, z: 0), gyroNoise: .zero, accelMean: .zero, accelNoise: .zero, warnings: []), measuredAt: "")
        for (mode, expected) in [(GyroCalibrationMode.stored, Self.bias - SIMD3(0.5, -0.5, 0)), (.off, Self.bias)] {
            var reports = Reports()
            var input = input(mode, stored: stored)
            let samples = run(mode, seconds: 6, input: &input, reports: &reports)
            let late = Self.mean(samples[(3 * 250)...])
            XCTAssertLessThan(pointwiseMax(late - expected, expected - late).max(), 0.03, "\(mode): \(late) vs \(expected)")
            XCTAssertEqual(input.motionCorrection == nil, mode == .off)
        }
    }

    /// Continuous from the stored bias: corrected from the first sample.
    func testContinuousStartsFromTheStoredBias() {
        let stored = MotionCorrection(serial: "aa:bb:cc:dd:ee:ff", result: StillnessResult(
            samples: 750, gyroBias: MotionVector(x: 0.7, y: -0.4, z: 0.25), gyroNoise: MotionVector(x: 0.1, y: 0.1, z: 0.1),
            accelMean: .zero, accelNoise: .zero, warnings: []), measuredAt: "")
        var reports = Reports()
        var input = input(.continuous, stored: stored)
        let first = run(.continuous, seconds: 0.5, turn: SIMD3(0, 30, 0), input: &input, reports: &reports)
        let m = Self.mean(first[...])
        XCTAssertEqual(m.x, 0, accuracy: 0.03)
        XCTAssertEqual(m.y, 30, accuracy: 0.05)
    }
}
