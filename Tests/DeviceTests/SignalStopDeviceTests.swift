import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// Each long-running command that needs a pad, signalled once while it works, against the real
/// drivers: it is gone within a second, through its own loops (not the watchdog), with no motor
/// left running and no virtual pad left behind.
final class SignalStopDeviceTests: XCTestCase {
    /// A second on hardware. The test guest emulates its CPU 10-25 times slower, so there
    /// test-devices.sh gives the watchdog PADGATE_STOP_LIMIT_MS (3 s) and the bound follows it:
    /// what is held there is the orderly stop (the watchdog never needed), no leftovers.
    static let stopLimit: Duration = {
        guard let emulated = ProcessInfo.processInfo.environment["PADGATE_STOP_LIMIT_MS"].flatMap(Int.init) else { return .seconds(1) }
        return .milliseconds(emulated) + .milliseconds(200)
    }()
    /// Start-up under software emulation on a loaded machine.
    static let startLimit: Duration = .seconds(60)

    var state: ScratchState!
    var environment: [String: String] { state.environment }

    override func setUpWithError() throws {
        try requireDeviceAccess()
        state = try ScratchState("signal")
    }

    override func tearDown() { state = nil }

    private func assertStops(_ running: RunningPadgate, with signal: Int32 = SIGTERM, _ what: String, line: UInt = #line) {
        let outcome = running.stopOutcome(after: signal)
        XCTAssertTrue(outcome.orderly(within: Self.stopLimit), "\(what): \(outcome)", line: line)
        FileHandle.standardError.write(Data("SignalStopDeviceTests: \(what) stopped \(outcome.took.map { "\($0)" } ?? "never") after the signal\n".utf8))
    }

    /// A pad the test owns, with motion flowing as a real pad's does.
    private func livePad() throws -> (EmulatedPlayStationPad, MotionFeeder, Pad) {
        let virtual = try EmulatedPlayStationPad(bus: .usb, calibration: CalibrateTests.calibration)
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev(), timeout: Self.startLimit), "udev never showed the emulated DualSense")
        return (virtual, MotionFeeder(virtual), pad)
    }

    func testReadingCommandsStopOnTheFirstSignal() throws {
        let (virtual, feeder, pad) = try livePad()
        defer { feeder.stop(); virtual.stop() }
        let hidraw = try XCTUnwrap(pad.hidraw)
        let motion = try XCTUnwrap(pad.node(.motion)?.path)
        let file = state.appendingPathComponent("pad.hid")
        func recorded() -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        // Each command, and what shows it is at work: its output, or the file it writes.
        let cases: [(arguments: [String], working: (RunningPadgate) -> Bool, signal: Int32)] = [
            (["watch", hidraw, "--json"], { $0.output.contains("\"event\":\"state\"") }, SIGINT),
            (["record", hidraw, "-o", file.path], { _ in recorded().contains("\nE: ") }, SIGTERM),
            (["record", hidraw], { $0.output.contains("\nE: ") }, SIGINT),
            (["inspect", hidraw, "--json"], { $0.output.contains("report_id") }, SIGTERM),
            (["inspect", "054c:0ce6"], { $0.output.contains("report_id=") }, SIGINT),
            (["calibrate", motion, "--seconds", "60", "--no-save"], { $0.output.contains("keep the pad still") }, SIGTERM),
        ]
        for item in cases {
            let running = try RunningPadgate(item.arguments, environment: environment)
            let what = "padgate " + item.arguments.joined(separator: " ")
            XCTAssertNotNil(eventually(timeout: Self.startLimit) { item.working(running) ? true : nil },
                            "\(what) never got to work: \(running.output.suffix(300))")
            assertStops(running, with: item.signal, what)
        }
        let lines = recorded().split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("E: ") }, "record -o kept what it read before the signal")
        XCTAssertNoThrow(try HIDRecording(text: recorded()), "what record -o wrote up to the signal reads back whole")
    }

    func testRumbleStopsOnTheFirstSignalWithTheMotorsAtZero() throws {
        let (virtual, feeder, pad) = try livePad()
        defer { feeder.stop(); virtual.stop() }
        for path in [try XCTUnwrap(pad.hidraw), try XCTUnwrap(pad.gamepadNode?.path)] {
            _ = virtual.takeOutputs()
            let rumble = try RunningPadgate(["rumble", "--pad", path, "200", "100", "--for", "60s"], environment: environment)
            let running = virtual.waitForOutput(timeout: Self.startLimit) { (try? DualSenseOutputDecoder.decode($0))?.motors == MotorLevels(low: 200, high: 100) }
            XCTAssertNotNil(running, "rumble through \(path) never ran the motors: \(rumble.output)")
            assertStops(rumble, "rumble through \(path)")
            let motors = virtual.takeOutputs().compactMap { (try? DualSenseOutputDecoder.decode($0))?.motors }
            XCTAssertEqual(motors.last, MotorLevels(low: 0, high: 0), "the last motor levels the pad got from \(path): \(motors.suffix(3))")
        }
    }

    func testEmulatedPadsAreUnpluggedOnTheFirstSignal() throws {
        for (model, ready) in [("dualsense", "is up"), ("xbox", "is up"), ("gamepad", "is up")] {
            let before = try Udev().pads().count
            let emulate = try RunningPadgate(["emulate", model], environment: environment)
            XCTAssertTrue(emulate.waitFor(ready, timeout: Self.startLimit), emulate.output)
            XCTAssertNotNil(eventually(timeout: Self.startLimit) { try? Udev().pads().count > before ? true : nil }, "the emulated \(model) never appeared")
            assertStops(emulate, "emulate \(model)")
            XCTAssertNotNil(eventually(timeout: .seconds(10)) { try? Udev().pads().count == before ? true : nil },
                            "the emulated \(model) was left behind")
        }
    }

    /// The kernel demo and a serve with a live forwarded pad: their virtual pads go with them.
    func testHostsRemoveTheirVirtualPadsOnTheFirstSignal() throws {
        let demo = try RunningPadgate(["demo", "--devices", "kernel", "--duration", "600"], environment: environment)
        XCTAssertTrue(demo.waitFor("padgate demo: host on", timeout: Self.startLimit), demo.output)
        XCTAssertNotNil(eventually(timeout: Self.startLimit) { try? Udev().pads().contains(where: \.isHostVirtualPad) ? true : nil },
                        "the demo's host pad never appeared: \(demo.output.suffix(300))")
        assertStops(demo, with: SIGINT, "demo --devices kernel")
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { try? Udev().pads().isEmpty ? true : nil },
                        "the demo left pads behind: \((try? Udev().pads().map(\.name)) ?? [])")

        let (virtual, feeder, _) = try livePad()
        defer { feeder.stop(); virtual.stop() }
        let port = String(27_900 + Int.random(in: 0..<90))
        setenv("PADGATE_STATE_DIR", state.path, 1)  // serve, pair and forward share it
        defer { unsetenv("PADGATE_STATE_DIR") }
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(port)", "--pad", "054c:0ce6", "--quiet"])
        XCTAssertNotNil(eventually(timeout: Self.startLimit) { try? Udev().pads().contains(where: \.isHostVirtualPad) ? true : nil },
                        "the host never made the forwarded pad: \(forward.output.suffix(300))")
        assertStops(forward, with: SIGTERM, "forward with a live pad")
        let sent = MotorLevels(low: 0, high: 0)
        let motors = virtual.takeOutputs().compactMap { (try? DualSenseOutputDecoder.decode($0))?.motors }
        XCTAssertTrue(motors.isEmpty || motors.last == sent, "forward left the motors at \(motors.suffix(3))")
        let stopped = serve.process
        kill(stopped.processIdentifier, SIGTERM)
        let signalled = MonotonicInstant.now
        stopped.waitUntilExit()
        XCTAssertLessThan(MonotonicInstant.now - signalled, Self.stopLimit, "serve took too long to stop")
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { try? Udev().pads().contains(where: \.isHostVirtualPad) ? nil : true },
                        "serve left its virtual pad behind")
    }
}
