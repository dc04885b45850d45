import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// padgate's feedback commands against an emulated DualSense bound by the real hid-playstation:
/// what reaches the pad is decoded and checked field by field, over USB and Bluetooth.
final class FeedbackDualSenseTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    /// Runs padgate to completion; returns its exit status and standard error.
    @discardableResult
    private func padgate(_ arguments: [String], timeout: Duration = .seconds(60)) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = padgateExecutable
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = MonotonicInstant.now + timeout
        while process.isRunning && MonotonicInstant.now < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }

    private func emulated(_ bus: PadBus) throws -> (EmulatedPlayStationPad, Pad) {
        let virtual = try EmulatedPlayStationPad(bus: bus)
        XCTAssertTrue(virtual.waitUntilOpened(), "hid-playstation did not open the \(bus) pad")
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()), "udev never showed the emulated \(bus) DualSense")
        usleep(300_000)                 // let the driver's start-up reports (LED reset, player LEDs) arrive
        _ = virtual.takeOutputs()
        return (virtual, pad)
    }

    /// The next output report (decoded) for which `match` holds.
    private func nextDecoded(_ virtual: EmulatedPlayStationPad, timeout: Duration = .seconds(20),
                             _ match: (DecodedDualSenseOutput) -> Bool) -> DecodedDualSenseOutput? {
        var found: DecodedDualSenseOutput?
        _ = virtual.waitForOutput(timeout: timeout) { report in
            guard let decoded = try? DualSenseOutputDecoder.decode(report), match(decoded) else { return false }
            found = decoded
            return true
        }
        return found
    }

    func testLightsAndTriggersReachThePadFieldByFieldOverUSBAndBluetooth() throws {
        for bus in PadBus.allCases {
            let (virtual, pad) = try emulated(bus)
            defer { virtual.stop() }
            let hidraw = try XCTUnwrap(pad.hidraw)

            let (lightbarStatus, lightbarErrors) = try padgate(["lightbar", "255", "16", "32", "--pad", hidraw])
            XCTAssertEqual(lightbarStatus, 0, lightbarErrors)
            let lightbar = try XCTUnwrap(nextDecoded(virtual) { $0.lightbar != nil }, "\(bus): no lightbar report")
            XCTAssertEqual(lightbar.bus, bus)
            XCTAssertEqual(lightbar.lightbar, RGBColor(red: 255, green: 16, blue: 32))
            XCTAssertNil(lightbar.motors, "\(bus): a lightbar report must not touch the motors")
            XCTAssertNil(lightbar.rightTrigger)
            XCTAssertNil(lightbar.leftTrigger)
            if bus == .bluetooth { XCTAssertEqual(lightbar.tag, 0x10) }

            XCTAssertEqual(try padgate(["trigger", "right", "weapon", "2", "6", "8", "--pad", hidraw]).0, 0)
            let trigger = try XCTUnwrap(nextDecoded(virtual) { $0.rightTrigger != nil }, "\(bus): no trigger report")
            XCTAssertEqual(trigger.rightTrigger, .weapon(start: 2, end: 6, strength: 8))
            XCTAssertNil(trigger.leftTrigger)
            XCTAssertNil(trigger.lightbar, "\(bus): a trigger report must not re-send (clobber) the lightbar")

            XCTAssertEqual(try padgate(["trigger", "both", "feedback", "3", "5", "--pad", hidraw]).0, 0)
            let both = try XCTUnwrap(nextDecoded(virtual) { $0.leftTrigger != nil })
            XCTAssertEqual(both.leftTrigger, .feedback(position: 3, strength: 5))
            XCTAssertEqual(both.rightTrigger, .feedback(position: 3, strength: 5))

            XCTAssertEqual(try padgate(["player-leds", "3", "instant", "--pad", hidraw]).0, 0)
            let leds = try XCTUnwrap(nextDecoded(virtual) { $0.playerLEDs != nil }, "\(bus): no player LED report")
            XCTAssertEqual(leds.playerLEDs, PlayerLEDs(mask: 0x15, instant: true))
        }
    }

    /// Rumble goes through hid-playstation's force feedback (the kernel writes the report), and the
    /// hidraw path (padgate writes it); both end with the motors at zero.
    func testRumbleReachesThePadThroughEvdevAndHidrawAndEndsSilent() throws {
        for bus in PadBus.allCases {
            for path in ["evdev", "hidraw"] {
                let (virtual, pad) = try emulated(bus)
                defer { virtual.stop() }
                let hidraw = try XCTUnwrap(pad.hidraw)
                let (status, errors) = try padgate(["rumble", "200", "100", "--for", "600ms", "--rumble-path", path, "--pad", hidraw])
                XCTAssertEqual(status, 0, errors)
                let on = nextDecoded(virtual, timeout: .seconds(5)) { $0.motors == MotorLevels(low: 200, high: 100) }
                XCTAssertNotNil(on, "\(bus)/\(path): the motors never ran at 200/100")
                let off = nextDecoded(virtual, timeout: .seconds(5)) { $0.motors == MotorLevels(low: 0, high: 0) }
                XCTAssertNotNil(off, "\(bus)/\(path): the motors were not stopped at the end")
            }
        }
    }

    /// A DualSense holds the last motor level it was sent; it has no timeout of its own. So "silent
    /// after padgate is killed" needs something outside the process: the kernel. padgate's default
    /// path uploads a finite FF effect on the evdev node; when the process dies the kernel closes the
    /// node, erases the effects that file uploaded, and hid-playstation sends motors 0. Even if that
    /// did not happen, the effect's replay.length (one 200 ms segment) ends it.
    func testKilledRumbleToolLeavesThePadSilentWithinOneSegment() throws {
        let (virtual, pad) = try emulated(.usb)
        defer { virtual.stop() }
        let process = try PadgateProcess(["rumble", "255", "255", "--for", "60s", "--pad", try XCTUnwrap(pad.hidraw)])
        let running = nextDecoded(virtual, timeout: .seconds(20)) { $0.motors == MotorLevels(low: 255, high: 255) }
        XCTAssertNotNil(running, "the motors never ran")
        usleep(500_000)   // mid-rumble, several re-armed segments in
        _ = virtual.takeOutputs()
        kill(process.process.processIdentifier, SIGKILL)
        let killedAt = MonotonicInstant.now
        process.process.waitUntilExit()
        let silent = nextDecoded(virtual, timeout: .seconds(3)) { $0.motors == MotorLevels(low: 0, high: 0) }
        XCTAssertNotNil(silent, "after SIGKILL the pad never got motors 0")
        let elapsed = MonotonicInstant.now - killedAt
        // One 200 ms segment, plus the guest's slow CPU for the report to travel through uhid.
        XCTAssertLessThan(elapsed, .milliseconds(1500), "silence took \(elapsed)")
        FileHandle.standardError.write(Data("FeedbackDualSenseTests: silent \(elapsed) after SIGKILL\n".utf8))
        // Nothing restarts them afterwards.
        XCTAssertNil(nextDecoded(virtual, timeout: .milliseconds(600)) { ($0.motors?.low ?? 0) > 0 })
    }
}
