import Foundation
import XCTest
@testable import HIDCodecs

/// The continuous gyro calibration against traces whose truth is known: synthetic ones (the bias
/// and noise are what the test put in) and real idle recordings (the truth computed from their
/// bytes by tools/rest-truth.py, Fixtures/recordings/rest_truth.json). The bounds are the ones
/// docs/calibration.md states.
final class GyroBiasEstimatorTests: XCTestCase {
    typealias Noise = MotionMeasurementTests.Noise

    /// The stated bounds (docs/calibration.md, "Continuous calibration").
    static let residual = 0.05          // deg/s, within `convergence` of rest
    static let convergence = 3.0        // seconds of rest
    static let panShift = 0.05          // deg/s a held pan may move the estimate

    /// A synthetic pad lying flat: gyro = bias + turn + Gaussian noise, accelerometer = gravity as the
    /// turn rotates it in the pad's frame (a turn about y, the vertical, leaves it) + noise, stamped by a sensor clock at `rate` Hz (wrapping as a DualSense's does).
    struct Pad {
        var bias: SIMD3<Double>
        var gyroSigma = 0.1
        var accelSigma = 0.003
        var rate = 250.0
        var noise = Noise(state: 0x5eed)
        var estimator: GyroBiasEstimator
        var time = 0.0
        var micros: UInt32 = 4_000_000_000  // wraps within the first minute
        var gravity = SIMD3<Double>(0, 1, 0) // in the pad's frame: y is up
        var windows: [GyroBiasEstimator.RestWindow] = []

        init(bias: SIMD3<Double>, start: MotionVector? = nil, rate: Double = 250, gyroSigma: Double = 0.1, seed: UInt64 = 0x5eed) {
            self.bias = bias
            self.rate = rate
            self.gyroSigma = gyroSigma
            noise = Noise(state: seed)
            estimator = GyroBiasEstimator(bias: start)
        }

        /// `seconds` of samples turning at `turn` deg/s (x: pitch and z: roll, which move gravity;
        /// y: yaw, about gravity, which does not); `each` sees every sample's time and the estimator.
        mutating func run(_ seconds: Double, turn: SIMD3<Double> = .zero, gyroSigma sigma: Double? = nil,
                          each: (Double, GyroBiasEstimator) -> Void = { _, _ in }) {
            let dt = 1 / rate
            for _ in 0..<Int((seconds * rate).rounded()) {
                time += dt
                micros &+= UInt32(dt * 1e6)
                // The world's gravity seen from a frame turning at ω: dg/dt = −ω × g.
                let w = turn * (.pi / 180)
                let g = gravity
                let cx: Double = w.y * g.z - w.z * g.y
                let cy: Double = w.z * g.x - w.x * g.z
                let cz: Double = w.x * g.y - w.y * g.x
                gravity -= SIMD3(cx, cy, cz) * dt
                gravity /= (gravity * gravity).sum().squareRoot()
                let s = sigma ?? gyroSigma
                let gyro = bias + turn + SIMD3(noise.gaussian(s), noise.gaussian(s), noise.gaussian(s))
                let accel = gravity + SIMD3(noise.gaussian(accelSigma), noise.gaussian(accelSigma), noise.gaussian(accelSigma))
                if let w = estimator.add(gyro: gyro, accel: accel, timestampMicros: micros) { windows.append(w) }
                each(time, estimator)
            }
        }

        /// deg/s: the largest axis error of what is subtracted now.
        var residual: Double { pointwiseMax(estimator.applied - bias, bias - estimator.applied).max() }
        var estimateError: Double { pointwiseMax(estimator.target - bias, bias - estimator.target).max() }
    }

    /// Seconds from `start` after which `residual` stays below `bound` (nil: never).
    static func settled(_ trace: [(t: Double, residual: Double)], below bound: Double, from start: Double) -> Double? {
        guard let last = trace.lastIndex(where: { $0.residual >= bound }) else { return 0 }
        return last + 1 < trace.count ? trace[last + 1].t - start : nil
    }

    // MARK: Synthetic traces

    /// +0.7 deg/s (and two other axes) with 0.1 deg/s of Gaussian noise, no stored value: under
    /// 0.05 deg/s within 3 s of rest, at the DualSense's 250 Hz, a USB pad's 1 kHz and evdev's 100 Hz.
    func testARestingPadConvergesWithinThreeSeconds() {
        for rate in [250.0, 1000, 100] {
            var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2), rate: rate)
            var trace: [(t: Double, residual: Double)] = []
            let bias = pad.bias
            pad.run(10) { t, e in trace.append((t, pointwiseMax(e.applied - bias, bias - e.applied).max())) }
            let converged = Self.settled(trace, below: Self.residual, from: 0)
            XCTAssertNotNil(converged, "\(rate) Hz: never converged")
            XCTAssertLessThanOrEqual(converged ?? 99, Self.convergence, "\(rate) Hz: residual under \(Self.residual) only after \(converged ?? -1) s")
            XCTAssertLessThan(pad.residual, 0.02, "\(rate) Hz: after 10 s of rest")
            XCTAssertEqual(pad.estimator.restWindows, 1)
            print("synthetic \(Int(rate)) Hz, bias 0.7 deg/s, noise 0.1: residual < 0.05 after \(converged ?? -1) s; after 10 s \(pad.residual) deg/s")
        }
    }

    /// Converged, then a steady 1 deg/s pan held for 10 s about each axis: no rest is taken and the
    /// estimate moves by less than 0.05 deg/s; once the pan stops, the pad is at rest again.
    func testASlowPanHeldTenSecondsDoesNotMoveTheEstimate() {
        for axis in 0..<3 {
            var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2))
            pad.run(5)
            let before = pad.estimator.target
            var turn = SIMD3<Double>.zero
            turn[axis] = 1
            var rested = false
            pad.run(10, turn: turn) { _, e in rested = rested || e.isResting && e.time > 5.5 }
            let moved = pointwiseMax(pad.estimator.target - before, before - pad.estimator.target).max()
            XCTAssertLessThan(moved, Self.panShift, "axis \(axis): a 1 deg/s pan moved the estimate by \(moved)")
            XCTAssertFalse(rested, "axis \(axis): a 1 deg/s pan was taken for rest")
            pad.run(3)
            XCTAssertTrue(pad.estimator.isResting, "axis \(axis): at rest again after the pan")
            XCTAssertLessThan(pad.residual, Self.residual)
        }
    }

    /// The slowest steady turn never taken for rest. Once converged, the gate: from 0.25 deg/s about
    /// any axis (slower turns may be, and then move the estimate by at most their rate). Before any
    /// rest (no stored bias, so the gate is wide): only gravity tells, for pitch and roll from
    /// 0.25 deg/s; a steady yaw turn about gravity is then indistinguishable from bias.
    func testTheSlowestTurnNotMistakenForRest() {
        func shift(rate: Double, axis: Int, seed: UInt64, converged: Bool) -> Double {
            var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2), seed: seed)
            if converged { pad.run(5) }
            let before = pad.estimator.target
            var turn = SIMD3<Double>.zero
            turn[axis] = rate
            pad.run(10, turn: turn)
            if !converged { return pad.estimator.restWindows > 0 ? rate : 0 }
            return pointwiseMax(pad.estimator.target - before, before - pad.estimator.target).max()
        }
        var lines: [String] = []
        for (converged, axis, name, slowest) in [(true, 1, "yaw", 0.3), (true, 0, "pitch", 0.3), (false, 0, "pitch", 0.3), (false, 2, "roll", 0.3)] {
            var row: [String] = []
            for rate in [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 1, 2, 5] {
                let worst = (1...5).map { shift(rate: rate, axis: axis, seed: UInt64($0) * 7919, converged: converged) }.max()!
                row.append("\(rate): \(String(format: "%.3f", worst))")
                if rate >= slowest { XCTAssertLessThan(worst, Self.panShift, "\(name) at \(rate) deg/s moved the estimate by \(worst)") }
                XCTAssertLessThanOrEqual(worst, rate + 0.02, "\(name) at \(rate) deg/s moved the estimate further than the turn")
            }
            lines.append("\(converged ? "converged" : "no rest yet"): \(name) pan rate deg/s: worst estimate shift over 5 seeds after 10 s — " + row.joined(separator: ", "))
        }
        print(lines.joined(separator: "\n"))
    }

    /// A pad held in hands (gyro noise 0.5 deg/s and up) is never at rest, whatever its mean.
    func testAHandHeldPadIsNeverAtRest() {
        for sigma in [0.5, 1.0, 2.0] {
            var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2), gyroSigma: sigma)
            var rested = false
            pad.run(60) { _, e in rested = rested || e.isResting }
            XCTAssertFalse(rested, "noise \(sigma) deg/s taken for rest")
            XCTAssertEqual(pad.estimator.target, .zero)
        }
    }

    /// Play, then the pad put down: the noise floor learnt on the desk is not lost to the play,
    /// and the estimate converges within 3 s of the pad lying still.
    func testRestAfterPlayConverges() {
        var pad = Pad(bias: SIMD3(-0.3, 0.6, 0.1))
        pad.run(5)                                         // on the desk: learns the floor and the bias
        pad.bias = SIMD3(-0.35, 0.65, 0.12)                // warmed up in the hands
        pad.run(30, turn: SIMD3(3, -2, 1), gyroSigma: 1)   // play
        XCTAssertFalse(pad.estimator.isResting)
        var trace: [(t: Double, residual: Double)] = []
        let bias = pad.bias, start = pad.time
        pad.run(6) { t, e in trace.append((t, pointwiseMax(e.applied - bias, bias - e.applied).max())) }
        let converged = Self.settled(trace, below: 0.02, from: start)
        XCTAssertLessThanOrEqual(converged ?? 99, Self.convergence, "put down after play: converged after \(converged ?? -1) s")
    }

    /// The stored bias (`padgate calibrate`) is applied from the first sample, and a rest refines it.
    func testStartsFromTheStoredBias() {
        var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2), start: MotionVector(x: 0.68, y: -0.41, z: 0.22))
        XCTAssertEqual(pad.estimator.correction, MotionVector(x: 0.68, y: -0.41, z: 0.22))
        pad.run(0.5, turn: SIMD3(0, 20, 0), gyroSigma: 1)
        XCTAssertLessThan(pad.residual, 0.03)
        pad.run(4)
        XCTAssertLessThan(pad.residual, 0.015)
        // A stored value far from the truth (another kernel's convention): the gate is narrower
        // than with no value, but a real rest still wins once the uncertainty has grown.
        var stale = Pad(bias: SIMD3(0.7, -0.4, 0.2), start: MotionVector(x: 0, y: 0, z: 0))
        stale.run(4)
        XCTAssertFalse(stale.estimator.isResting, "0.7 deg/s from a stored 0 is outside the first gate")
    }

    /// A sensor that repeats one value (frozen, or an emulated pad without noise) is never rest.
    func testAFrozenSensorIsNeverRest() {
        var estimator = GyroBiasEstimator()
        for i in 0..<5000 {
            _ = estimator.add(gyro: SIMD3(0.5, 0, 0), accel: SIMD3(0, 1, 0), timestampMicros: UInt32(i * 4000))
        }
        XCTAssertFalse(estimator.isResting)
        XCTAssertEqual(estimator.correction, .zero)
    }

    /// The bias drifts (a pad warming up: 0.3 deg/s over 10 minutes) while the pad is put down now
    /// and then: each rest follows it, within the residual.
    func testFollowsADriftingBiasAcrossRests() {
        var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2))
        for minute in 0..<10 {
            pad.run(50, turn: SIMD3(2, 5, -1), gyroSigma: 0.8)
            pad.bias += SIMD3(0.03, 0.01, -0.01)
            pad.run(10)
            XCTAssertLessThan(pad.residual, Self.residual, "minute \(minute)")
        }
        XCTAssertEqual(pad.estimator.restWindows, 10)
    }

    /// Rest windows are reported with their span, bias and gravity.
    func testReportsRestWindows() throws {
        var pad = Pad(bias: SIMD3(0.7, -0.4, 0.2))
        pad.run(4)
        pad.run(2, turn: SIMD3(30, 0, 0), gyroSigma: 1)
        pad.run(3)
        if let last = pad.estimator.finishCopy() { pad.windows.append(last) }
        XCTAssertEqual(pad.windows.count, 2)
        let first = try XCTUnwrap(pad.windows.first)
        XCTAssertEqual(first.start, 0, accuracy: 0.3)
        XCTAssertEqual(first.end, 3.75, accuracy: 0.3, "ends a block before the movement")
        XCTAssertEqual(first.gyroMean.x, 0.7, accuracy: 0.02)
        XCTAssertEqual(first.gyroNoise.x, 0.1, accuracy: 0.02)
        XCTAssertEqual(first.gravity, 1, accuracy: 0.01)
        XCTAssertEqual(pad.windows[1].start, 6, accuracy: 0.3)
    }

    // MARK: Real recordings

    struct Truth {
        var file: String, feature: [UInt8], span: ClosedRange<Double>, firstTouch: Double?
        var bias: SIMD3<Double>, noise: SIMD3<Double>, gravity: Double
    }

    static func truths() throws -> [Truth] {
        let root = try Fixture.json("recordings/rest_truth.json")
        return try XCTUnwrap(root["recordings"] as? [[String: Any]]).map { r in
            func v(_ key: String) -> SIMD3<Double> { let a = r[key] as! [Double]; return SIMD3(a[0], a[1], a[2]) }
            let span = r["span_s"] as! [Double]
            return Truth(file: r["file"] as! String, feature: Fixture.hex(r["feature05"] as! String), span: span[0]...span[1],
                         firstTouch: r["first_touch_s"] as? Double, bias: v("gyro_bias_dps"), noise: v("gyro_noise_dps"), gravity: r["gravity_g"] as! Double)
        }
    }

    /// An idle DualSense (44 s, 250 Hz, its own factory calibration): the estimate is within 0.05
    /// deg/s of the recording's mean within 3 s, and the whole recording is one rest window.
    func testAnIdleDualSenseRecording() throws {
        let truth = try XCTUnwrap(Self.truths().first { $0.file.hasPrefix("dualsense_usb") })
        let recording = try HIDRecording(text: Fixture.text("recordings/" + truth.file))
        let calibration = try CalibrationParser.dualSense(truth.feature).calibration
        let run = try RecordedGyroCalibration(recording: recording, codecs: TestCodecs.catalogue, calibration: calibration, keepPoints: true)
        XCTAssertEqual(run.kind, .dualSense)
        let trace = run.points.map { p in (t: p.time, residual: pointwiseMax(p.correction.simd - truth.bias, truth.bias - p.correction.simd).max()) }
        let converged = try XCTUnwrap(Self.settled(trace, below: Self.residual, from: 0), "never within \(Self.residual)")
        XCTAssertLessThanOrEqual(converged, Self.convergence)
        let at10 = try XCTUnwrap(trace.first { $0.t >= 10 }).residual
        let final = pointwiseMax(run.estimate.simd - truth.bias, truth.bias - run.estimate.simd).max()
        XCTAssertLessThan(final, 0.02)
        // Rest nearly throughout: a few noise bursts may split it.
        let rested = run.restWindows.map(\.duration).reduce(0, +)
        XCTAssertGreaterThan(rested, 0.9 * run.seconds, "\(run.restWindows)")
        let window = try XCTUnwrap(run.restWindows.first)
        XCTAssertLessThan(window.start, 0.5)
        XCTAssertEqual(window.gravity, truth.gravity, accuracy: 0.002)
        print("idle DualSense (\(truth.file)): residual < 0.05 after \(converged) s; at 10 s \(at10); at the end \(final) deg/s; "
              + "estimate \(run.estimate), truth \(truth.bias); noise floor \(run.gyroNoiseFloor); rested \(rested) of \(run.seconds) s; windows \(run.restWindows.map { ($0.start, $0.end) }); refusals \(run.refusals)")
    }

    /// The DualSense Edge recording: still for its first second, then a finger on the touchpad. The
    /// rest window it finds ends before the touch, with the bias of that first second.
    func testTheEdgeRecordingsRestEndsBeforeTheTouch() throws {
        let truth = try XCTUnwrap(Self.truths().first { $0.file.hasPrefix("dualsense_edge") })
        let recording = try HIDRecording(text: Fixture.text("recordings/" + truth.file))
        let calibration = try CalibrationParser.dualSense(truth.feature).calibration
        let run = try RecordedGyroCalibration(recording: recording, codecs: TestCodecs.catalogue, calibration: calibration)
        XCTAssertEqual(run.kind, .dualSenseEdge)
        let first = try XCTUnwrap(run.restWindows.first, "no rest window: \(run.refusals)")
        XCTAssertLessThan(first.end, try XCTUnwrap(truth.firstTouch))
        let error = pointwiseMax(first.gyroMean.simd - truth.bias, truth.bias - first.gyroMean.simd).max()
        XCTAssertLessThan(error, 0.02, "window bias \(first.gyroMean) vs \(truth.bias)")
        XCTAssertEqual(first.gravity, truth.gravity, accuracy: 0.002)
        print("idle Edge (\(truth.file)): windows \(run.restWindows.map { ($0.start, $0.end) }), bias error \(error) deg/s; refusals \(run.refusals)")
    }

    /// Without its feature report, a recording is read with the family's nominal scale.
    func testNominalCalibrationWithoutAFeatureReport() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let run = try RecordedGyroCalibration(recording: recording, codecs: TestCodecs.catalogue)
        XCTAssertEqual(run.calibration, .nominal)
        XCTAssertFalse(run.restWindows.isEmpty)
        XCTAssertThrowsError(try RecordedGyroCalibration(recording: HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid")), codecs: TestCodecs.catalogue)) {
            XCTAssertEqual($0 as? RecordedCalibrationError, .noPad)
        }
        XCTAssertThrowsError(try RecordedGyroCalibration(recording: HIDRecording(text: Fixture.text("recordings/dualsense_bt_djm00n_simple01.hid")), codecs: TestCodecs.catalogue)) {
            XCTAssertEqual($0 as? RecordedCalibrationError, .noMotion(.dualSense))
        }
    }

    /// A recording without ids is known by the longest kind's name its device name holds, among
    /// the kinds whose reports carry a motion clock: an Edge is no plain DualSense, a Deck is found
    /// by its name too, and a pad read without a clock is no pad here.
    func testARecordingWithoutIdsIsKnownByTheLongestKindNameItsNameHolds() {
        func kind(_ name: String) -> PadKind? {
            RecordedGyroCalibration.pad(in: HIDRecording(devices: [RecordedDevice(index: 0, name: name)], events: []), codecs: TestCodecs.catalogue)?.1
        }
        XCTAssertEqual(kind("Sony Interactive Entertainment DualSense Edge Wireless Controller"), .dualSenseEdge)
        XCTAssertEqual(kind("Sony Interactive Entertainment DualSense Wireless Controller"), .dualSense)
        XCTAssertEqual(kind("Valve Software Steam Deck Controller"), .steamDeck)
        XCTAssertNil(kind("Xbox Wireless Controller"))
        XCTAssertNil(kind("Gamepad"))
    }
}

extension GyroBiasEstimator {
    /// `finish()` on a copy: the window open now, if it would be reported.
    func finishCopy() -> RestWindow? { var copy = self; return copy.finish() }
}
