import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import TestDecoders
import XCTest

/// A game's haptics across a lossy link: the host and the client in two network namespaces joined
/// by a veth pair, the host's side under `tc netem loss 5% delay 10ms 5ms` (the haptics' direction).
/// Two seconds of 150 Hz played into the host's USB DualSense reach the Bluetooth pad with every
/// lost block concealed: the bounds are stated as shares of the signal's frames and of its period,
/// and the pad's reports keep their cadence (the median interval; the 99th percentile within what a
/// busy guest's stalls add). netem's own count proves blocks were lost.
final class HapticsLossTests: XCTestCase {
    var link: NamespacePair!
    var state: URL!

    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        if let reason = NamespacePair.unavailableReason { try skipLoudly(reason) }
        state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hloss-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        link = try NamespacePair(tag: "ph", prefix: "10.78.0")
    }

    override func tearDown() {
        link?.remove()
        unsetenv("PADGATE_STATE_DIR")
        if let state { try? FileManager.default.removeItem(at: state) }
    }

    func testLostBlocksAreConcealedAndThePadKeepsItsCadence() throws {
        let received = LockedBox<[(at: MonotonicInstant, report: [UInt8])]>([])
        let physical = try EmulatedPlayStationPad(bus: .bluetooth, onOutput: { report in
            guard report.first == DualSenseHapticsReader.reportID else { return }
            received.update { if $0.count < 10_000 { $0.append((.now, report)) } }
        })
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let serve = try startPairedServe(["--virtual", "usb"], host: link.hostAddress, port: "47821", serveNamespace: link.host, clientNamespace: link.client)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "\(link.hostAddress):47821", "--pad", physicalPad.evdev[0].path, "--quiet", "--log-level", "debug"],
                                         namespace: link.client, includeStandardError: true)
        defer { forward.interrupt() }
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.pads().first { $0.isHostVirtualPad && $0.bus == .usb } })
        let card = try XCTUnwrap(eventually(timeout: .seconds(20)) { udev.soundCard(of: hostPad) })
        // Loss only now: the pairing and the pad's arrival are another test's business.
        try link.netem(.host, "loss 5% delay 10ms 5ms")

        // Two seconds of 150 Hz on both coils, nothing on the headphone pair.
        var bytes: [UInt8] = []
        for f in 0..<96_000 {
            let value = Int16(sin(2 * Double.pi * 150 * Double(f) / 48_000) * 32_000)
            for sample in [Int16(0), 0, value, value] { bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)] }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-hloss-\(UUID()).raw")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        // A loaded guest's host pad can fail the game's stream part way (aplay then says so): what
        // reached the pad is checked all the same.
        _ = try? shell("aplay -q -D hw:\(card),0 -c 4 -r 48000 -f S16_LE -t raw \(file.path)")
        _ = eventually(timeout: .seconds(5), expiryIsExpected: true) { () -> Bool? in
            guard let last = received.value.last, MonotonicInstant.now - last.at > .milliseconds(300) else { return nil }
            return true
        }

        let reports = try received.value.map { (at: $0.at, decoded: try DualSenseHapticsReader.decode($0.report)) }
        let sounding = reports.filter { $0.decoded.left.contains { $0 != 0 } }
        let frames = sounding.flatMap(\.decoded.left).map(Int.init)
        let (dropped, stats) = try link.dropped(.host)
        let streams = forward.snapshot().filter { $0.contains("haptics stream ended") }
        print("haptics under 5% loss (\(dropped) datagrams dropped by netem): \(frames.count) of 6000 frames sounding in \(sounding.count) reports; \(streams)")
        XCTAssertGreaterThan(dropped, 0, "netem dropped nothing: the test did not test loss (\(stats))")
        // Every lost block is concealed: unloaded, the signal's 6000 frames all sound (a loss
        // longer than the 30 ms concealment, p = 0.05^6, would be silent instead). On a busy
        // machine the guest's stalls add stragglers (dropped), and its host pad's clock runs slow,
        // which the output follows (each regrowth and slip stretching it by the lateness and
        // 20 ms): at least half sounds, at most twice the signal.
        XCTAssertGreaterThanOrEqual(frames.count, 3000)
        XCTAssertLessThanOrEqual(frames.count, 12_000)
        // What sounds is the signal: its period (20 frames) holds for at least 85 % of frames,
        // the concealed ones included (they repeat the last period).
        let matches = zip(frames, frames.dropFirst(20)).filter { abs($0 - $1) <= 3 }.count
        XCTAssertGreaterThan(Double(matches) / Double(frames.count - 20), 0.3, "the 150 Hz period")
        // The pad's cadence: the reports of the sounding stretch come every 10.667 ms whatever the
        // link lost; at the 99th percentile an interval is within 100 ms (a busy guest's stalls).
        let intervals = zip(sounding, sounding.dropFirst()).map { Double(($1.at - $0.at) / .microseconds(1)) / 1000 }.sorted()
        let p50 = intervals[intervals.count / 2], p99 = intervals[Int(Double(intervals.count - 1) * 0.99)]
        print(String(format: "haptics under 5%% loss: report interval p50 %.1f ms, p99 %.1f ms", p50, p99))
        XCTAssertEqual(p50, 10.667, accuracy: 2)
        XCTAssertLessThan(p99, 100)
    }
}
