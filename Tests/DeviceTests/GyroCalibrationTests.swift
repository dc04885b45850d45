import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// `forward`'s continuous gyro calibration end to end against the real drivers: an emulated
/// DualSense whose raw gyro counts carry a known bias and noise is forwarded (read from hidraw,
/// no stored bias) to `padgate serve`; the host's virtual pad, read through hid-playstation's
/// evdev motion node, reads ~0 deg/s once the pad has rested, and a slow pan that follows
/// arrives unchanged.
final class GyroCalibrationTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    /// The physical pad's calibration: 1/16 deg/s a count on both kernels' conventions.
    static let calibration = CalibrateTests.calibration
    static let countsPerDegree = 16
    /// +1.5, −0.75, +0.25 deg/s, in counts; uniform noise of ±3 counts (σ 0.125 deg/s).
    static let bias: [Int16] = [24, -12, 4]
    static let biasDegrees = bias.map { Double($0) / Double(countsPerDegree) }
    /// hid-playstation's gyro resolution on the evdev node (DS_GYRO_RES_PER_DEG_S).
    static let evdevPerDegree = 1024.0
    /// docs/calibration.md: under 0.05 deg/s within 3 s of rest (the evdev average adds a little).
    static let residual = 0.06

    func testARestingPadReadsZeroOnTheHostAndASlowPanArrivesUnchanged() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-gyro-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR"); try? FileManager.default.removeItem(at: state) }
        let physical = try EmulatedPlayStationPad(bus: .usb, calibration: Self.calibration)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        // Turning at 10 deg/s about y until the host is ready: not rest, so nothing is corrected yet.
        let feeder = BiasedMotionFeeder(physical, bias: Self.bias)
        defer { feeder.stop() }
        feeder.turn = [0, Int16(10 * Self.countsPerDegree), 0]

        let port = String(27850 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: HostPadBudget.made) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.motion) }
        }, "the host never created its virtual pad")
        XCTAssertNotNil(forward.waitForLine { $0.contains("gyro calibrated at rest") }, "forward did not say so: \(forward.snapshot())")
        let host = try LivePadReader(pad: virtualPad)

        // Times are the pad's own (its sensor clock, 4 ms a report, which the estimator counts in),
        // not the wall clock: in the test guest the feeder sends more slowly than 250 Hz.
        // Before any rest: the bias arrives as it is (on y, with the turn).
        let early = try XCTUnwrap(mean(host, feeder, reports: 125))
        let expected = [Self.biasDegrees[0], Self.biasDegrees[1] + 10, Self.biasDegrees[2]]
        for axis in 0..<3 { XCTAssertEqual(early[axis], expected[axis], accuracy: 0.1, "uncorrected before rest, axis \(axis): \(early)") }

        // Put down: after 3 s of rest, ~0 on every axis (averaged over the fourth second).
        feeder.turn = [0, 0, 0]
        feeder.wait(reports: 750)
        let rested = try XCTUnwrap(mean(host, feeder, reports: 250))
        for axis in 0..<3 { XCTAssertEqual(rested[axis], 0, accuracy: Self.residual, "at rest, axis \(axis): \(rested) (bias \(Self.biasDegrees))") }

        // A slow pan, 1 deg/s about y for 5 s: arrives as 1 deg/s, the others stay at 0.
        feeder.turn = [0, Int16(Self.countsPerDegree), 0]
        feeder.wait(reports: 250)
        let panned = try XCTUnwrap(mean(host, feeder, reports: 750))
        feeder.turn = [0, 0, 0]
        XCTAssertEqual(panned[1], 1, accuracy: Self.residual, "the pan: \(panned)")
        XCTAssertEqual(panned[0], 0, accuracy: Self.residual, "the pan: \(panned)")
        XCTAssertEqual(panned[2], 0, accuracy: Self.residual, "the pan: \(panned)")

        // At rest again: still ~0 (the pan moved nothing).
        feeder.wait(reports: 375)
        let after = try XCTUnwrap(mean(host, feeder, reports: 250))
        for axis in 0..<3 { XCTAssertEqual(after[axis], 0, accuracy: Self.residual, "after the pan, axis \(axis): \(after)") }
        print("gyro calibration through the host's evdev node (deg/s): first \(early), at rest \(rested), 1 deg/s pan \(panned), after \(after)")
    }

    /// `watch PAD --plot` and `calibrate PAD --plot` on a resting pad: an SVG with its rest window.
    func testWatchAndCalibratePlotARestingPad() throws {
        let physical = try EmulatedPlayStationPad(bus: .usb, calibration: Self.calibration)
        defer { physical.stop() }
        let pad = try XCTUnwrap(padFor(physical, udev: try Udev()))
        let node = try XCTUnwrap(pad.node(.motion)?.path)
        let feeder = BiasedMotionFeeder(physical, bias: Self.bias)
        defer { feeder.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-plot-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        for (name, arguments) in [("watch", ["watch", node, "--json", "--duration", "3"]), ("calibrate", ["calibrate", node, "--no-save", "--seconds", "3"])] {
            let plot = directory.appendingPathComponent("\(name).svg").path
            let run = try padgate(arguments + ["--plot", plot], environment: ["PADGATE_STATE_DIR": directory.path])
            XCTAssertEqual(run.status, 0, "\(name): \(run.stderr)")
            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            XCTAssertTrue(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>\n"), "\(name): \(svg.prefix(200))")
            XCTAssertGreaterThanOrEqual(svg.components(separatedBy: "class=\"rest\"").count - 1, 1, "\(name): no rest window in the plot")
            XCTAssertEqual(svg.components(separatedBy: "<polyline").count - 1, 6, "\(name): 3 axes and 3 bias lines")
        }
    }

    /// The host's evdev gyro (deg/s), averaged over every value it reported while the feeder sent
    /// `reports` more reports.
    func mean(_ reader: LivePadReader, _ feeder: BiasedMotionFeeder, reports: Int) throws -> [Double]? {
        let end = feeder.sent + reports
        let deadline = MonotonicInstant.now + .seconds(Int64(reports / 25 + 10))
        var sum = [0.0, 0.0, 0.0], count = 0
        while feeder.sent < end && MonotonicInstant.now < deadline {
            _ = Poll.wait(reader.descriptors, timeout: .milliseconds(20))
            guard try reader.readAvailable(), let gyro = reader.snapshot().gyro, gyro.count == 3 else { continue }
            for axis in 0..<3 { sum[axis] += Double(gyro[axis]) / Self.evdevPerDegree }
            count += 1
        }
        return count > 20 ? sum.map { $0 / Double(count) } : nil
    }
}

/// Sends the emulated pad a report every 4 ms (its sensor clock in step): gyro = bias + turn +
/// uniform noise of ±3 counts, gravity on y with ±2 counts of noise.
final class BiasedMotionFeeder: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var _turn: [Int16] = [0, 0, 0]
    var turn: [Int16] {
        get { lock.withLock { _turn } }
        set { lock.withLock { _turn = newValue } }
    }
    private var _sent = 0
    /// Reports sent so far: the pad's clock, in 4 ms steps.
    var sent: Int { lock.withLock { _sent } }
    private let done = DispatchSemaphore(value: 0)

    /// Waits until `reports` more reports have been sent (at most 60 s).
    func wait(reports: Int) {
        let end = sent + reports, deadline = MonotonicInstant.now + .seconds(60)
        while sent < end && MonotonicInstant.now < deadline { usleep(2000) }
    }

    init(_ virtual: EmulatedPlayStationPad, bias: [Int16]) {
        let thread = Thread { [self] in
            var input = GamepadState.dualSenseAtRest
            var random = MotionFeeder.Generator(state: 0x6A11)
            func noisy(_ values: [Int16], _ amplitude: Int16) -> Vector3 {
                let v = values.map { $0 + Int16.random(in: -amplitude...amplitude, using: &random) }
                return Vector3(x: v[0], y: v[1], z: v[2])
            }
            while lock.withLock({ running }) {
                let t = turn
                input.motion.first = MotionSample(gyro: noisy(zip(bias, t).map { $0 + $1 }, 3), accel: noisy([0, 8192, 0], 2))
                input.sensorTimestamp &+= 4000 * 3  // 4 ms in 1/3 µs
                try? virtual.send(input)
                lock.withLock { _sent += 1 }
                usleep(4000)
            }
            done.signal()
        }
        thread.start()
    }

    func stop() {
        guard lock.withLock({ () -> Bool in defer { running = false }; return running }) else { return }
        done.wait()
    }
}
