import Foundation
import HIDCodecs
import MonotonicTime
import PadClient
@testable import PadFamilies
import PadSystem
import PadgateRunner
import WireProtocol
import XCTest
@testable import PadDevices

/// `padgate calibrate PAD` against the real hid-playstation driver: an emulated DualSense whose
/// motion reports carry a known gyro bias and noise is measured as a person would run it, and
/// `forward`'s pad source applies what is stored.
final class CalibrateTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    // The emulated pad's feature report 0x05, with round numbers and no factory gyro bias, so the
    // kernel's two conventions (6.1 subtracts the blob's gyro bias, 6.2+ ignores it) read the same:
    //   gyro  ±8192 counts for ±512 deg/s  → 1/16 deg/s a count
    //   accel ±8192 counts for ±1 g, centred → 1/8192 g a count
    static let calibration = dualSenseCalibrationReport(gyroPlus: [8192, 8192, 8192], gyroMinus: [-8192, -8192, -8192], speedPlus: 512, speedMinus: 512,
                                                        accelPlus: [8192, 8192, 8192], accelMinus: [-8192, -8192, -8192])
    static let degreesPerSecondPerCount = 1.0 / 16
    static let gPerCount = 1.0 / 8192

    // What the pad "measures" at rest, in raw counts: a gyro bias of +1.5, −0.75, +0.25 deg/s,
    // uniform noise of ±3 counts (standard deviation exactly 2 counts = 0.125 deg/s: for integers
    // uniform on −k...k it is √(((2k+1)² − 1) / 12)), and gravity slightly tilted and 0.5 % high.
    static let gyroBias: [Int16] = [24, -12, 4]
    static let gyroNoise = 3
    static let gyroNoiseStandardDeviation = 2.0 * degreesPerSecondPerCount
    static let gravity: [Int16] = [820, 8028, -1640]
    static let accelNoise = 2

    /// Stated tolerances (docs/calibration.md): bias ±0.05 deg/s, noise ±25 %, gravity ±0.02 g.
    static let biasTolerance = 0.05, noiseTolerance = 0.25, gravityTolerance = 0.02

    func testCalibrateRecoversAKnownBiasAndNoiseStoresItBySerialAndRefusesAMovingPad() throws {
        let virtual = try EmulatedPlayStationPad(bus: .usb, calibration: Self.calibration)
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()), "udev never showed the emulated DualSense")
        let node = try XCTUnwrap(pad.node(.motion)?.path)
        let feeder = MotionFeeder(virtual)
        defer { feeder.stop() }
        let state = try temporaryDirectory()
        let environment = ["PADGATE_STATE_DIR": state.path]

        let run = try padgate(["calibrate", node, "--json", "--seconds", "2"], environment: environment)
        XCTAssertEqual(run.status, 0, "calibrate failed: \(run.stderr)")
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stdout)

        let bias = try XCTUnwrap(report["gyro_bias_dps"] as? [Double])
        let noise = try XCTUnwrap(report["gyro_noise_dps"] as? [Double])
        let accel = try XCTUnwrap(report["accel_mean_g"] as? [Double])
        let gravityMagnitude = try XCTUnwrap(report["gravity_g"] as? Double)
        let fedBias = Self.gyroBias.map { Double($0) * Self.degreesPerSecondPerCount }
        let fedAccel = Self.gravity.map { Double($0) * Self.gPerCount }
        let fedMagnitude = fedAccel.map { $0 * $0 }.reduce(0, +).squareRoot()
        for axis in 0..<3 {
            XCTAssertEqual(bias[axis], fedBias[axis], accuracy: Self.biasTolerance, "gyro bias axis \(axis)")
            XCTAssertEqual(noise[axis], Self.gyroNoiseStandardDeviation, accuracy: Self.noiseTolerance * Self.gyroNoiseStandardDeviation, "gyro noise axis \(axis)")
            XCTAssertEqual(accel[axis], fedAccel[axis], accuracy: Self.gravityTolerance, "accel axis \(axis)")
        }
        XCTAssertEqual(gravityMagnitude, fedMagnitude, accuracy: Self.gravityTolerance)
        let samples = try XCTUnwrap(report["samples"] as? Int)
        XCTAssertGreaterThan(samples, 60, "2 s of a pad sending every 8 ms")
        print("calibrate recovered in \(samples) samples: bias error \(zip(bias, fedBias).map { $0 - $1 }) deg/s, "
              + "noise \(noise) vs \(Self.gyroNoiseStandardDeviation) deg/s, gravity \(gravityMagnitude) vs \(fedMagnitude) g")

        // The factory calibration was read through hidraw: the kernel convention of the test's own blob.
        let factory = try XCTUnwrap(report["factory_calibration"] as? [String: Any], "no factory calibration in \(run.stdout)")
        XCTAssertEqual(factory["gyro"] as? [[String: Int]], Array(repeating: ["bias": 0, "numer": 1024 * 1024, "denom": 16384], count: 3))

        // Stored under the pad's serial, with the bias it reported.
        let file = state.appendingPathComponent("calibration/\(virtual.uniq).json")
        XCTAssertEqual(report["saved"] as? String, file.path)
        let stored = try Data(contentsOf: file)
        let correction = try XCTUnwrap(JSONSerialization.jsonObject(with: stored) as? [String: Any])
        XCTAssertEqual(correction["serial"] as? String, virtual.uniq)
        XCTAssertEqual(correction["gyro_bias_dps"] as? [Double], bias)

        // Picked up: refused, saying what to do, and the stored correction is left as it was.
        feeder.moving = true
        let moved = try padgate(["calibrate", node, "--json", "--seconds", "2"], environment: environment)
        XCTAssertNotEqual(moved.status, 0, "a moving pad was measured: \(moved.stdout)")
        XCTAssertTrue(moved.stderr.contains("the pad moved") && moved.stderr.contains("keep it still"), moved.stderr)
        XCTAssertEqual(try Data(contentsOf: file), stored)

        let reset = try padgate(["calibrate", node, "--reset"], environment: environment)
        XCTAssertEqual(reset.status, 0, reset.stderr)
        XCTAssertTrue(reset.stdout.contains("removed"), reset.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: file.path))
    }

    /// What `forward` sends: the pad's motion less the stored bias; without a correction, as the kernel reports it.
    func testForwardPadSourceSubtractsTheStoredGyroBias() throws {
        let virtual = try EmulatedPlayStationPad(bus: .usb, calibration: Self.calibration)
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()))
        let feeder = MotionFeeder(virtual)
        defer { feeder.stop() }
        let store = MotionCorrectionStore(directory: try temporaryDirectory())
        let fedBias = MotionVector(x: 1.5, y: -0.75, z: 0.25)
        try store.save(MotionCorrection(serial: virtual.uniq, result: StillnessResult(
            samples: 100, gyroBias: fedBias, gyroNoise: .zero, accelMean: .zero, accelNoise: .zero, warnings: []), measuredAt: ""))
        let correction = try XCTUnwrap(store.correction(for: pad) { XCTFail($0) })

        for (applied, expected) in [(correction, MotionVector.zero), (nil, fedBias)] {
            let source = try EvdevPadSource(pad: pad, slot: PadSlot(0), motionCorrection: applied)
            defer { source.silence() }
            var gyro = MotionStatistics()
            let deadline = MonotonicInstant.now + .seconds(10)
            while gyro.axes[0].count < 100 && MonotonicInstant.now < deadline {
                _ = Poll.wait(source.descriptors, timeout: .milliseconds(100))
                _ = try source.readInput()
                source.takeMotion { sample in
                    gyro.add(MotionVector(x: Double(sample.gyroX), y: Double(sample.gyroY), z: Double(sample.gyroZ)))
                }
            }
            XCTAssertGreaterThanOrEqual(gyro.axes[0].count, 100, "motion samples from the pad source")
            for (got, want) in zip(gyro.mean.all, expected.all) {
                XCTAssertEqual(got, want, accuracy: Self.biasTolerance, applied == nil ? "uncorrected" : "corrected")
            }
        }
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-calibrate-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}

/// Sends the emulated pad a report every 8 ms: at rest with the test's bias and noise, or, once
/// `moving`, turning back and forth at ±40 deg/s.
final class MotionFeeder: Sendable {
    private let running = LockedBox(true)
    private let isMoving = LockedBox(false)
    var moving: Bool {
        get { isMoving.value }
        set { isMoving.update { $0 = newValue } }
    }
    private let done = DispatchSemaphore(value: 0)

    /// Knuth's MMIX LCG: a fixed seed gives the same noise every run (`random(in:using:)` takes the
    /// high bits, the LCG's good ones).
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return state }
    }

    init(_ virtual: EmulatedPlayStationPad) {
        let thread = Thread { [self] in
            var input = GamepadState.dualSenseAtRest
            var random = Generator(state: 0x5EED)
            var tick = 0
            func noisy(_ values: [Int16], _ amplitude: Int) -> Vector3 {
                let v = values.map { $0 + Int16.random(in: Int16(-amplitude)...Int16(amplitude), using: &random) }
                return Vector3(x: v[0], y: v[1], z: v[2])
            }
            while running.value {
                var gyro = CalibrateTests.gyroBias
                if moving { gyro[1] += (tick / 25) % 2 == 0 ? 640 : -640 }
                input.motion.first = MotionSample(gyro: noisy(gyro, CalibrateTests.gyroNoise), accel: noisy(CalibrateTests.gravity, CalibrateTests.accelNoise))
                input.sensorTimestamp &+= 8000 * 3  // 0.33 µs units
                try? virtual.send(input)
                tick += 1
                usleep(8000)
            }
            done.signal()
        }
        thread.start()
    }

    func stop() {
        guard running.withLock({ running in defer { running = false }; return running }) else { return }
        done.wait()
    }
}
