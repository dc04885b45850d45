import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import PadgateRunner
import TestDecoders
import XCTest

/// `padgate haptics` on a Bluetooth DualSense bound by the real hid-playstation: the 0x32 reports
/// that reach the pad (through its hidraw node and uhid) are read by a decoder written from the
/// documented layout. The tone arrives at its level and frequency, at the pad's cadence, and the
/// coils end silent, on Ctrl-C too.
final class HapticsDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    struct Arrival { let at: MonotonicInstant; let report: DualSenseHapticsReader.Decoded }

    /// The haptics reports the pad received until `done` holds or `timeout` passes.
    func collect(_ virtual: EmulatedPlayStationPad, timeout: Duration, until done: ([Arrival]) -> Bool) throws -> [Arrival] {
        var arrivals: [Arrival] = []
        let deadline = MonotonicInstant.now + timeout
        while MonotonicInstant.now < deadline, !done(arrivals) {
            _ = Poll.wait([virtual.outputReadyDescriptor], timeout: .milliseconds(50))
            for report in virtual.takeOutputs() where report.first == DualSenseHapticsReader.reportID {
                arrivals.append(Arrival(at: .now, report: try DualSenseHapticsReader.decode(report)))
            }
        }
        return arrivals
    }

    func emulated() throws -> (EmulatedPlayStationPad, String) {
        let virtual = try EmulatedPlayStationPad(bus: .bluetooth)
        XCTAssertTrue(virtual.waitUntilOpened(), "hid-playstation did not open the pad")
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()), "udev never showed the emulated DualSense")
        return (virtual, try XCTUnwrap(pad.hidraw))
    }

    func testAToneArrivesWholeAtThePadsCadenceAndEndsInSilence() throws {
        let (virtual, hidraw) = try emulated()
        defer { virtual.stop() }
        // Read as they arrive, for their timing.
        let haptics = try RunningPadgate(["haptics", "--pad", hidraw, "--tone", "150", "--for", "300ms"])
        // 300 ms is 900 frames at 3 kHz: 28 reports and a short one, then two of silence.
        let arrivals = try collect(virtual, timeout: .seconds(10)) { $0.count >= 31 }
        XCTAssertNotNil(haptics.waitForExit(limit: .seconds(10)), "haptics did not end")
        XCTAssertEqual(arrivals.count, 31, "reports: \(arrivals.count)")
        XCTAssertEqual(arrivals.map(\.report.counter), (0..<31).map { UInt8($0) }, "every report, in order")
        let tone = arrivals.prefix(28).flatMap(\.report.left)
        XCTAssertEqual(tone, arrivals.prefix(28).flatMap(\.report.right))
        XCTAssertGreaterThanOrEqual(tone.map { abs(Int($0)) }.max() ?? 0, 124, "150 Hz at full scale")
        XCTAssertLessThanOrEqual(zip(tone, tone.dropFirst(20)).map { abs(Int($0) - Int($1)) }.max() ?? 99, 1, "period 20 samples: 150 Hz")
        XCTAssertTrue(arrivals.suffix(2).allSatisfy { ($0.report.left + $0.report.right).allSatisfy { $0 == 0 } }, "the last two are silence")
        // The pad's clock is 10.667 ms a report: 28 intervals are 299 ms. Never faster than the
        // pad plays (its buffer would overflow); slower only by what the guest's scheduling adds.
        let span = arrivals[28].at - arrivals[0].at
        XCTAssertGreaterThanOrEqual(span, .milliseconds(280), "sent faster than the pad plays")
        XCTAssertLessThan(span, .seconds(3))
    }

    func testCtrlCSilencesTheCoilsAtOnce() throws {
        let (virtual, hidraw) = try emulated()
        defer { virtual.stop() }
        let haptics = try RunningPadgate(["haptics", "--pad", hidraw, "--tone", "200", "--for", "30s"])
        let playing = try collect(virtual, timeout: .seconds(10)) { $0.count >= 10 }
        XCTAssertEqual(playing.count, 10, "it did not start")
        let stopped = MonotonicInstant.now
        XCTAssertNotNil(haptics.stop(with: SIGINT, limit: .seconds(5)), "haptics did not exit on SIGINT")
        let after = try collect(virtual, timeout: .seconds(2)) { $0.count >= 2 && ($0.last.map { ($0.report.left + $0.report.right).allSatisfy { $0 == 0 } } ?? false) }
        let last = try XCTUnwrap(after.last, "nothing after Ctrl-C")
        XCTAssertTrue((last.report.left + last.report.right).allSatisfy { $0 == 0 }, "the last report is not silence")
        XCTAssertLessThan(last.at - stopped, .seconds(1))
    }
}
