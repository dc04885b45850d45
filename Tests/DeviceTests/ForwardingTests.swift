import Foundation
import XCTest
import HIDCodecs
import Feedback
@testable import PadDevices

/// End to end against the real kernel: an emulated physical DualSense → `padgate forward` →
/// `padgate serve` → a virtual DualSense (uhid, hid-playstation) whose evdev nodes show the same
/// input; feedback played on the virtual pad arrives back at the physical one.
final class ForwardingTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-fwd-\(UUID())") }

    func testInputFeedbackAndReleaseAcrossTheLink() throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let physical = try VirtualDualSense(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))

        let port = String(47900 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"])
        defer { forward.interrupt() }

        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(15)) {
            udev.pads().first { $0.isHostVirtualPad && $0.evdev.count == 3 && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual DualSense")
        XCTAssertEqual(virtualPad.kind, .dualSense)
        let reader = try LivePadReader(pad: virtualPad)

        // Input: buttons, sticks, triggers, touch, motion.
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.south, .r1]
        input.dpad = .left
        input.leftStick = StickPosition(x: 255, y: 0)
        input.l2 = 200
        input.apply(.touch(slot: 0, x: 640, y: 360))
        input.motion.first.gyro = Vector3(x: 1477, y: 0, z: 0)
        var seen: LivePadState?
        for _ in 0..<200 where seen == nil {
            input.sensorTimestamp &+= 12_000  // 4 ms in the pad's 1/3 µs ticks
            try physical.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(50)) {
                $0.buttons.contains("south") && $0.buttons.contains("r1") && $0.dpad == "left" && $0.left_stick == [255, 0]
                    && $0.l2 == 200 && $0.touch.contains { $0.x == 640 && $0.y == 360 }
            }
        }
        XCTAssertNotNil(seen, "the virtual pad never showed the physical pad's input: \(reader.snapshot())")
        // Motion: the kernel reports gyro in 1/1024 deg/s on both pads, so the same rotation must
        // read the same on both sides (a mis-scaled gyro would be off by a constant factor).
        let physicalReader = try LivePadReader(pad: physicalPad)
        var gyros: (virtual: Int32, physical: Int32)?
        for _ in 0..<100 where gyros == nil {
            input.sensorTimestamp &+= 12_000
            try physical.send(input)
            _ = Poll.wait(physicalReader.fileDescriptors + reader.fileDescriptors, timeout: .milliseconds(30))
            _ = try physicalReader.readAvailable()
            _ = try reader.readAvailable()
            if let g0 = physicalReader.snapshot().gyro?[0], let g1 = reader.snapshot().gyro?[0], g0 > 80_000, abs(g1 - g0) < 256 {
                gyros = (g1, g0)
            }
        }
        XCTAssertNotNil(gyros, "gyro x: virtual \(reader.snapshot().gyro ?? []), physical \(physicalReader.snapshot().gyro ?? [])")

        // Feedback: a game's lightbar (through the LED class device) and rumble (force feedback)
        // on the virtual pad come back to the physical pad as output reports.
        _ = physical.takeOutputs()
        let leds = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/leds")) ?? []
        let hidName = virtualPad.id.split(separator: "/").last.map(String.init) ?? "?"
        let rgb = try XCTUnwrap(leds.filter { $0.hasSuffix(":rgb:indicator") }.map { "/sys/class/leds/" + $0 }
            .first { (try? FileManager.default.destinationOfSymbolicLink(atPath: $0))?.contains(hidName) ?? false })
        try "10 200 30".write(toFile: rgb + "/multi_intensity", atomically: false, encoding: .ascii)
        try "255".write(toFile: rgb + "/brightness", atomically: false, encoding: .ascii)
        let lightbar = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.lightbar == RGBColor(red: 10, green: 200, blue: 30)
        }
        XCTAssertNotNil(lightbar, "the game's lightbar never reached the physical pad")

        let feedback = PadFeedback(pad: virtualPad)
        try feedback.rumble(MotorLevels(low: 180, high: 90), for: .milliseconds(600))
        let rumble = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.motors == DualSenseMotors(left: 180, right: 90)
        }
        XCTAssertNotNil(rumble, "the game's rumble never reached the physical pad")
        feedback.close()
        let stopped = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.motors == DualSenseMotors(left: 0, right: 0)
        }
        XCTAssertNotNil(stopped, "the stop never reached the physical pad")

        // A killed client: the host releases everything within its state lease and removes the pad.
        input.buttons = [.east]
        for _ in 0..<20 { try physical.send(input); usleep(10_000) }
        XCTAssertNotNil(try waitForState(reader) { $0.buttons == ["east"] })
        kill(forward.process.processIdentifier, SIGKILL)
        let released = try waitForState(reader, timeout: .seconds(4)) { $0.buttons.isEmpty && $0.left_stick == [128, 128] }
        XCTAssertNotNil(released, "a killed client left a button held on the host")
        XCTAssertNotNil(eventually(timeout: .seconds(5)) { udev.pads().contains { $0.isHostVirtualPad } ? nil : true },
                        "the virtual pad was not removed")
    }
}
