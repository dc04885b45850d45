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

    /// A Bluetooth pad whose 0x32 reports are kept with the moment its driver end received each
    /// (the pump thread's, not a poll loop's that takes several at once).
    final class Pad: Sendable {
        let virtual: EmulatedPlayStationPad
        let received = LockedBox<[(at: MonotonicInstant, report: [UInt8])]>([])
        init() throws {
            let received = received
            virtual = try EmulatedPlayStationPad(bus: .bluetooth, onOutput: { report in
                guard report.first == DualSenseHapticsReader.reportID else { return }
                received.update { if $0.count < 10_000 { $0.append((.now, report)) } }
            })
        }
        /// Takes what arrived so far.
        func take() -> [(at: MonotonicInstant, report: [UInt8])] { received.withLock { taken in defer { taken.removeAll() }; return taken } }
    }

    /// The haptics reports the pad received until `done` holds or `timeout` passes, each decoded
    /// by the test's own reader (a layout or CRC error fails the test).
    func collect(_ pad: Pad, timeout: Duration, until done: ([Arrival]) -> Bool) throws -> [Arrival] {
        var arrivals: [Arrival] = []
        let deadline = MonotonicInstant.now + timeout
        while MonotonicInstant.now < deadline, !done(arrivals) {
            usleep(10_000)
            for (at, report) in pad.take() { arrivals.append(Arrival(at: at, report: try DualSenseHapticsReader.decode(report))) }
        }
        return arrivals
    }

    func emulated() throws -> (Pad, String) {
        let pad = try Pad()
        XCTAssertTrue(pad.virtual.waitUntilOpened(), "hid-playstation did not open the pad")
        let node = try XCTUnwrap(padFor(pad.virtual, udev: try Udev()), "udev never showed the emulated DualSense")
        return (pad, try XCTUnwrap(node.hidraw))
    }

    func testAToneArrivesWholeAtThePadsCadenceAndEndsInSilence() throws {
        let (virtual, hidraw) = try emulated()
        defer { virtual.virtual.stop() }
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
        // The typical interval is the pad's (a loaded guest delays single reports, never the median).
        let intervals = zip(arrivals.prefix(29), arrivals.prefix(29).dropFirst()).map { Double(($1.at - $0.at) / .microseconds(1)) / 1000 }.sorted()
        XCTAssertEqual(intervals[intervals.count / 2], 10.667, accuracy: 1.5, "the reports' median interval (ms): \(intervals)")
        let span = arrivals[28].at - arrivals[0].at
        XCTAssertLessThan(span, .seconds(3))
    }

    func testCtrlCSilencesTheCoilsAtOnce() throws {
        let (virtual, hidraw) = try emulated()
        defer { virtual.virtual.stop() }
        let haptics = try RunningPadgate(["haptics", "--pad", hidraw, "--tone", "200", "--for", "30s"])
        // A budget for the process's start on the emulated guest (CI's loaded run once saw none in 10 s).
        let playing = try collect(virtual, timeout: .seconds(30)) { $0.count >= 10 }
        XCTAssertGreaterThanOrEqual(playing.count, 10, "it did not start")
        let stopped = MonotonicInstant.now
        XCTAssertNotNil(haptics.stop(with: SIGINT, limit: .seconds(5)), "haptics did not exit on SIGINT")
        let after = try collect(virtual, timeout: .seconds(2)) { $0.count >= 2 && ($0.last.map { ($0.report.left + $0.report.right).allSatisfy { $0 == 0 } } ?? false) }
        let last = try XCTUnwrap(after.last, "nothing after Ctrl-C")
        XCTAssertTrue((last.report.left + last.report.right).allSatisfy { $0 == 0 }, "the last report is not silence")
        XCTAssertLessThan(last.at - stopped, .seconds(1))
    }

    /// Over USB the coils are channels 2 and 3 of the pad's own sound card: what `padgate haptics`
    /// plays through ALSA arrives in the pad's isochronous OUT transfers, 16-bit at 48 kHz, the
    /// headphone pair silent, whole and at real-time pace, and the stream then ends in silence.
    func testOverUSBTheToneArrivesOnTheCoilChannelsOfThePadsAudio() throws {
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        let audio = LockedBox<(bytes: [UInt8], first: MonotonicInstant?, last: MonotonicInstant?)>(([], nil, nil))
        let virtual = try EmulatedPlayStationPad(kind: .dualSense, transport: .usb, idleRepeat: DualSenseDriver().reportCadence,
                                                 onAudioOut: { bytes in
            audio.update { state in
                guard state.bytes.count < 8 << 20 else { return }
                // Arrival times of sound, not of the silence snd-usb-audio starts the stream with.
                if bytes.contains(where: { $0 != 0 }) { state.first = state.first ?? .now; state.last = .now }
                state.bytes += bytes
            }
        })
        defer { virtual.stop() }
        let pad = try XCTUnwrap(padFor(virtual, udev: try Udev()), "hid-playstation never bound the USB DualSense")
        XCTAssertNotNil(eventually(timeout: .seconds(20)) { try? Udev().soundCard(of: pad) }, "snd-usb-audio made no card")
        let run = try padgate(["haptics", "--pad", try XCTUnwrap(pad.hidraw), "--tone", "150", "--for", "300ms"])
        XCTAssertEqual(run.status, 0, run.stderr)
        func frames(_ bytes: [UInt8]) -> [Int16] {
            stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        }
        let captured = audio.value
        let samples = frames(captured.bytes)
        let frames = samples.count / 4
        func channel(_ c: Int) -> [Int16] { (0..<frames).map { samples[4 * $0 + c] } }
        XCTAssertTrue(channel(0).allSatisfy { $0 == 0 } && channel(1).allSatisfy { $0 == 0 }, "the headphone pair is silent")
        let left = channel(2), right = channel(3)
        XCTAssertEqual(left, right, "the tone plays on both coils")
        let sounding = left.enumerated().filter { $0.element != 0 }.map(\.offset)
        let start = try XCTUnwrap(sounding.first, "no sound reached the coils (\(frames) frames)")
        // 300 ms at 48 kHz, whole: 14400 frames (a zero crossing may fall on either end).
        XCTAssertEqual(sounding.last! - start + 1, 14_400, accuracy: 2)
        XCTAssertGreaterThanOrEqual(left.map { abs(Int($0)) }.max() ?? 0, 32_700, "full scale")
        // A tone cut short has failed above; what follows would read past the frames it has.
        guard left.count >= start + 14_000 else { return }
        let tone = Array(left[start..<start + 14_000])
        XCTAssertLessThanOrEqual(zip(tone, tone.dropFirst(320)).map { abs(Int($0) - Int($1)) }.max() ?? 99, 2, "period 320 frames: 150 Hz")
        XCTAssertGreaterThan(frames, sounding.last! + 1, "the stream ends in silence, not in the tone: \(frames) frames, sound \(start)...\(sounding.last!)")
        // The pad takes 48 frames a millisecond: 300 ms of sound cannot arrive in much less.
        let span = try XCTUnwrap(captured.last) - XCTUnwrap(captured.first)
        XCTAssertGreaterThanOrEqual(span, .milliseconds(250), "faster than real time")
    }
}
