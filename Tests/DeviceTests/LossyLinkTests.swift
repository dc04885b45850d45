import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import WireProtocol
import XCTest
@testable import PadDevices

/// The client and the host in two network namespaces joined by a veth pair, both directions under
/// `tc netem loss 20% delay 30ms 10ms` (which also reorders): after every change the host's
/// virtual pad converges within the bound docs/wire.md states, and a killed client leaves no
/// button held. Needs root for namespaces; runs in the test guest.
final class LossyLinkTests: XCTestCase {
    var link: NamespacePair!
    var host: String { link.host }
    var client: String { link.client }
    var state: URL!

    override func setUpWithError() throws {
        try requireDeviceAccess()
        if let reason = NamespacePair.unavailableReason { try skipLoudly(reason) }
        state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-netem-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        link = try NamespacePair(tag: "pg", prefix: "10.77.0")
        try link.netem(.host, "loss 20% delay 30ms 10ms")
        try link.netem(.client, "loss 20% delay 30ms 10ms")
    }

    override func tearDown() {
        link?.remove()
        unsetenv("PADGATE_STATE_DIR")
        if let state { try? FileManager.default.removeItem(at: state) }
    }

    func testTheHostConvergesWithinTheBoundUnderLossAndAKilledClientLeavesNothingHeld() throws {
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "10.77.0.1", port: "47811", serveNamespace: host, clientNamespace: client)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "10.77.0.1:47811", "--pad", physicalPad.evdev[0].path, "--quiet"], namespace: client)
        defer { forward.interrupt() }
        // The handshake crosses the lossy link too (TCP retransmits lost segments): give it time.
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual DualSense across the lossy link")
        let reader = try LivePadReader(pad: virtualPad)

        // The documented bound: the 7th send of a state (p^7 = 1.3e-5 at 20% loss), plus netem's
        // worst one-way delay, plus 100 ms for this emulated machine's own scheduling.
        let schedule = SnapshotSender.Schedule.standard
        let seventhSend = (0..<6).map { $0 < schedule.afterChange.count ? schedule.afterChange[$0] : schedule.keepAlive }.reduce(.zero, +)
        let bound = seventhSend + .milliseconds(40) + .milliseconds(100)

        var input = GamepadState.dualSenseAtRest
        var latencies: [Duration] = []
        let buttonSets: [GamepadButtons] = [.south, .east, [.north, .l1], [], .west, [.r1, .r2], .options, [], [.south, .east], .l3]
        for round in 0..<20 {
            input.buttons = buttonSets[round % buttonSets.count]
            input.leftStick = StickPosition(x: UInt16(round * 12), y: UInt16(255 - round * 12))
            input.sensorTimestamp &+= 12_000
            // One report per change: convergence rests on the client's re-sends, not on the pad repeating itself.
            try physical.send(input)
            let changed = MonotonicInstant.now
            let expected = input.buttons.names.sorted()
            let seen = try waitForState(reader, timeout: .seconds(5)) {
                $0.buttons.sorted() == expected && $0.left_stick == [Int32(round * 12), Int32(255 - round * 12)]
            }
            XCTAssertNotNil(seen, "change \(round) never reached the host: \(reader.snapshot())")
            latencies.append(MonotonicInstant.now - changed)
            usleep(UInt32.random(in: 50_000...250_000))
        }
        let sorted = latencies.sorted()
        // Proof that the link really lost datagrams: netem's own count on the client's side.
        let (dropped, stats) = try link.dropped(.client)
        XCTAssertGreaterThan(dropped, 0, "netem dropped nothing: the test did not test loss (\(stats))")
        let report = "convergence under 20% loss, 30±10 ms (\(dropped) datagrams dropped by netem): p50 \(sorted[sorted.count / 2]), worst \(sorted.last!), bound \(bound)"
        print(report)
        XCTAssertLessThanOrEqual(sorted.last!, bound, report)

        // A held button, then the client dies: the host's state lease releases it.
        input.buttons = [.r1]
        try physical.send(input)
        XCTAssertNotNil(try waitForState(reader, timeout: .seconds(5)) { $0.buttons == ["r1"] })
        kill(forward.process.processIdentifier, SIGKILL)
        let killed = MonotonicInstant.now
        let released = try waitForState(reader, timeout: .seconds(4)) { $0.buttons.isEmpty && $0.left_stick == [128, 128] }
        XCTAssertNotNil(released, "a killed client left a button held on the host: \(reader.snapshot())")
        print("killed client: host released everything after \(MonotonicInstant.now - killed)")
    }


    /// A lossy LAN loses ARP probes too, and then connect(2) says "No route to host" though the
    /// host is there: `pair` must keep trying until its deadline rather than give up.
    func testPairingWaitsOutLostARPProbes() throws {
        try link.netem(.client, "loss 100%")
        let serve = try PadgateProcess(["serve", "--pair", "--virtual", "dualsense", "--address", "10.77.0.1", "--port", "47812"],
                                       namespace: host, includeStandardError: true)
        defer { serve.interrupt() }
        let pinLine = try XCTUnwrap(serve.waitForLine(timeout: .seconds(15)) { $0.contains("pairing PIN") }, "serve printed no PIN")
        let pin = try XCTUnwrap(pinLine.split(separator: " ").first { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        let pair = try PadgateProcess(["pair", "10.77.0.1:47812", "--pin", String(pin)], namespace: client, includeStandardError: true,
                                      environment: ["PADGATE_LOG_LEVEL": "debug"])
        // Three unanswered ARP probes, one a second, put the neighbour entry in FAILED.
        Thread.sleep(forTimeInterval: 4)
        XCTAssertTrue(pair.process.isRunning, "pair gave up while the link was down: \(pair.snapshot())")
        try link.netem(.client, "loss 0%")
        pair.process.waitUntilExit()
        XCTAssertEqual(pair.process.terminationStatus, 0, "pairing failed once the link came back: \(pair.snapshot()); serve said \(serve.snapshot().suffix(12))")
    }
}
