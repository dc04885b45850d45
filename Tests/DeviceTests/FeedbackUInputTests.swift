import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// A generic evdev pad (uinput): padgate's rumble arrives as finite FF_RUMBLE effects, and the
/// uinput side sees them uploaded, played and stopped.
final class FeedbackUInputTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UInputGamepad.path]) }

    func testRumbleIsUploadedAsFiniteFFRumbleEffects() throws {
        let virtual = try UInputGamepad(name: "padgate ff test pad")
        let receiver = UInputRumbleReceiver(uinput: virtual.descriptor)
        let pad = try XCTUnwrap(eventually { try? Udev().pads().first { $0.name == "padgate ff test pad" } }, "uinput pad not listed")
        let node = try XCTUnwrap(pad.gamepadNode?.path)

        let process = Process()
        process.executableURL = padgateExecutable
        process.arguments = ["rumble", "120", "60", "--for", "700ms", "--pad", node]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // The program's EVIOCSFF blocks until this side answers: serve requests while it runs.
        var events: [UInputRumbleReceiver.Event] = []
        let deadline = MonotonicInstant.now + .seconds(60)
        while process.isRunning && MonotonicInstant.now < deadline {
            _ = Poll.wait([virtual.descriptor], timeout: .milliseconds(50))
            events += try receiver.service()
        }
        // Closing the node erases the effect: that request (and any last stop) arrives as it exits.
        let drainEnds = MonotonicInstant.now + .milliseconds(500)
        while MonotonicInstant.now < drainEnds {
            _ = Poll.wait([virtual.descriptor], timeout: .milliseconds(50))
            events += try receiver.service()
        }
        process.waitUntilExit()
        events += try receiver.service()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))

        let uploads = events.compactMap { if case .uploaded(let e) = $0 { return e }; return nil }
        XCTAssertFalse(uploads.isEmpty, "no effect uploaded; events: \(events)")
        for effect in uploads {
            XCTAssertEqual(effect.type, UInt16(EvdevCode.FF_RUMBLE))
            XCTAssertEqual(effect.levels, MotorLevels(low: 120, high: 60))
            XCTAssertGreaterThan(effect.length, .zero, "an effect without a length would run until stopped")
            XCTAssertLessThanOrEqual(effect.length, .milliseconds(200))
        }
        XCTAssertEqual(Set(uploads.map(\.id)).count, 1, "one effect slot, updated in place")
        let plays = events.compactMap { if case .played(let id, let count) = $0 { return (id, count) }; return nil }
        XCTAssertTrue(plays.contains { $0.1 == 1 }, "never played: \(events)")
        XCTAssertGreaterThanOrEqual(plays.filter { $0.1 == 1 }.count, 3, "a held level is re-armed segment by segment")
        // It ends stopped: a final stop, or the effect erased when padgate closed the node.
        let last = events.last { if case .uploaded = $0 { return false }; return true }
        switch last {
        case .played(_, let count)?: XCTAssertEqual(count, 0)
        case .erased?: break
        default: XCTFail("did not end with a stop or an erase: \(events.suffix(4))")
        }
    }
}
