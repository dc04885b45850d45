import Foundation
import XCTest
@testable import HIDCodecs

final class MotionMeasurementTests: XCTestCase {
    /// Deterministic Gaussian noise (xorshift64* and Box–Muller), so every run sees the same samples.
    struct Noise {
        var state: UInt64
        mutating func uniform() -> Double {
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return (Double((state &* 0x2545_F491_4F6C_DD1D) >> 11) + 0.5) / Double(1 << 53)
        }
        mutating func gaussian(_ sigma: Double) -> Double {
            sigma * (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
        }
        mutating func vector(_ mean: MotionVector, _ sigma: Double) -> MotionVector {
            MotionVector(x: mean.x + gaussian(sigma), y: mean.y + gaussian(sigma), z: mean.z + gaussian(sigma))
        }
    }

    func measure(samples: Int, gyro: MotionVector, gyroSigma: Double, accel: MotionVector, accelSigma: Double,
                 seed: UInt64 = 0x5eed, disturb: (Int, inout MotionVector) -> Void = { _, _ in }) -> StillnessMeasurement {
        var noise = Noise(state: seed)
        var measurement = StillnessMeasurement()
        for i in 0..<samples {
            var g = noise.vector(gyro, gyroSigma)
            disturb(i, &g)
            measurement.add(gyro: g, accel: noise.vector(accel, accelSigma))
        }
        return measurement
    }

    func testWelfordMatchesTwoPassStatisticsEvenFarFromZero() {
        let cases: [[Double]] = [[2, 4, 4, 4, 5, 5, 7, 9], [1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16], [-3], []]
        for values in cases {
            var stats = RunningStatistics()
            values.forEach { stats.add($0) }
            let mean = values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
            let variance = values.count < 2 ? 0 : values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)
            XCTAssertEqual(stats.count, values.count)
            XCTAssertEqual(stats.mean, mean, accuracy: 1e-9, "\(values)")
            XCTAssertEqual(stats.variance, variance, accuracy: 1e-9, "\(values)")
            XCTAssertEqual(stats.range, (values.max() ?? 0) - (values.min() ?? 0), "\(values)")
        }
    }

    /// 3 s at 250 Hz of a still pad: the bias comes back within 4 standard errors (σ/√n), the noise within 10 %.
    func testKnownBiasAndNoiseAreRecovered() throws {
        let bias = MotionVector(x: 1.5, y: -0.75, z: 0.25), gravity = MotionVector(x: 0.1, y: 0.98, z: -0.2)
        let result = try measure(samples: 750, gyro: bias, gyroSigma: 0.1, accel: gravity, accelSigma: 0.003).result()
        XCTAssertEqual(result.samples, 750)
        let standardError = 0.1 / 750.0.squareRoot()
        for (got, want) in zip(result.gyroBias.all, bias.all) { XCTAssertEqual(got, want, accuracy: 4 * standardError) }
        for got in result.gyroNoise.all { XCTAssertEqual(got, 0.1, accuracy: 0.01) }
        for (got, want) in zip(result.accelMean.all, gravity.all) { XCTAssertEqual(got, want, accuracy: 0.001) }
        XCTAssertEqual(result.gravityMagnitude, gravity.magnitude, accuracy: 0.001)
        XCTAssertEqual(result.gravityError, gravity.magnitude - 1, accuracy: 0.001)
        XCTAssertEqual(result.warnings, [], "gravity is within 0.05 g of 1 g")
    }

    /// Each way a pad can fail to be still, and the error that says so.
    func testMovementAndImplausibleReadingsAreRefused() {
        let still = MotionVector.zero, gravity = MotionVector(x: 0, y: 1, z: 0)
        let cases: [(name: String, measurement: StillnessMeasurement, expected: String)] = [
            ("picked up: a 40 deg/s turn for 0.1 s",
             measure(samples: 750, gyro: still, gyroSigma: 0.1, accel: gravity, accelSigma: 0.003) { i, g in if (300..<325).contains(i) { g.y += 40 } },
             "gyro y swung over"),
            ("held in a trembling hand",
             measure(samples: 750, gyro: still, gyroSigma: 1.2, accel: gravity, accelSigma: 0.003), "std dev; limit 1.000"),
            ("carried without turning",
             measure(samples: 750, gyro: still, gyroSigma: 0.1, accel: gravity, accelSigma: 0.2), "accelerometer"),
            ("on a turntable", measure(samples: 750, gyro: MotionVector(x: 0, y: 0, z: 33), gyroSigma: 0.1, accel: gravity, accelSigma: 0.003),
             "reads a steady 33."),
            ("too short", measure(samples: 12, gyro: still, gyroSigma: 0.1, accel: gravity, accelSigma: 0.003), "only 12 motion samples"),
        ]
        for (name, measurement, expected) in cases {
            XCTAssertThrowsError(try measurement.result(), name) {
                XCTAssertTrue("\($0)".contains(expected), "\(name): \($0)")
            }
        }
        let picked = cases[0].measurement
        XCTAssertTrue(picked.movement?.description.contains("keep it still") ?? false, "the error says what to do")
    }

    func testGravityFarFromOneGIsAWarningNotARefusal() throws {
        let result = try measure(samples: 100, gyro: .zero, gyroSigma: 0.05, accel: MotionVector(x: 0, y: 1.08, z: 0), accelSigma: 0).result()
        XCTAssertEqual(result.warnings.count, 1)
        XCTAssertTrue(result.warnings[0].contains("1.080 g"), result.warnings[0])
    }

    func testCorrectionSubtractsTheBiasAndCodesAsSnakeCaseArrays() throws {
        let result = try measure(samples: 100, gyro: MotionVector(x: 1, y: -2, z: 0.5), gyroSigma: 0, accel: MotionVector(x: 0, y: 1, z: 0), accelSigma: 0).result()
        let correction = MotionCorrection(serial: "aa:bb", result: result, measuredAt: "2025-01-01T00:00:00Z")
        XCTAssertEqual(correction.correctGyro(MotionVector(x: 1, y: -2, z: 0.5)), .zero)
        XCTAssertEqual(correction.correctGyro(MotionVector(x: 11, y: 0, z: 0)), MotionVector(x: 10, y: 2, z: -0.5))

        let data = try JSONEncoder().encode(correction)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["gyro_bias_dps"] as? [Double], [1, -2, 0.5])
        XCTAssertEqual(object["version"] as? Int, 1)
        XCTAssertEqual(Set(object.keys), ["version", "serial", "gyro_bias_dps", "gyro_noise_dps", "gravity_g", "samples", "measured_at"])
        XCTAssertEqual(try JSONDecoder().decode(MotionCorrection.self, from: data), correction)
        XCTAssertThrowsError(try JSONDecoder().decode(MotionVector.self, from: Data("[1, 2]".utf8)))
        XCTAssertThrowsError(try JSONDecoder().decode(MotionVector.self, from: Data("[1, 2, 3, 4]".utf8)))
    }
}
