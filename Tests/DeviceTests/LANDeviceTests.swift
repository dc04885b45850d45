import Foundation
import HIDCodecs
@testable import PadFamilies
import PadgateRunner
import PadSystem
import XCTest
@testable import PadDevices

/// Forwarding a real (emulated, kernel-bound) DualSense over IPv6 and to a host found on the LAN,
/// and the link test against a link that netem makes lossy and slow. Input is read on the host's
/// virtual pad; rumble from its game comes back to the physical pad as an output report.
final class LANDeviceTests: XCTestCase {
    var state: URL!

    override func setUpWithError() throws {
        try requireDeviceAccess()
        state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-lan-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
    }

    override func tearDown() {
        unsetenv("PADGATE_STATE_DIR")
        if let state { try? FileManager.default.removeItem(at: state) }
    }

    func requireLAN() throws {
        if let missing = LANRig.missing { try skipLoudly(missing) }
        try shell("modprobe -a veth sch_netem 2>/dev/null || true")
    }

    /// South and a stick on the physical pad show on the host's virtual pad; a game's rumble there
    /// comes back as the physical pad's output report.
    func assertInputAndFeedbackCross(_ physical: EmulatedPlayStationPad, udev: Udev, file: StaticString = #filePath, line: UInt = #line) throws {
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual DualSense", file: file, line: line)
        let reader = try LivePadReader(pad: virtualPad)
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.south]
        input.leftStick = StickPosition(x: 40, y: 220)
        var seen: LivePadState?
        for _ in 0..<200 where seen == nil {
            input.sensorTimestamp &+= 12_000
            try physical.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(50), expiryIsExpected: true) {
                $0.buttons == ["south"] && $0.left_stick == [40, 220]
            }
        }
        XCTAssertNotNil(seen, "input never crossed: \(reader.snapshot())", file: file, line: line)
        _ = physical.takeOutputs()
        let feedback = PadFeedback(pad: virtualPad)
        defer { feedback.close() }
        try feedback.rumble(MotorLevels(low: 150, high: 70), for: .milliseconds(800))
        let rumble = physical.waitForOutput(timeout: .seconds(10)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.motors == MotorLevels(low: 150, high: 70)
        }
        XCTAssertNotNil(rumble, "the game's rumble never came back", file: file, line: line)
    }

    func testForwardingOverIPv6LoopbackCarriesInputAndFeedback() throws {
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let port = String(27_960 + Int.random(in: 0..<30))
        let serve = try startPairedServe(["--virtual", "dualsense", "--no-announce"], host: "::1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "[::1]:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
        defer { forward.interrupt() }
        try assertInputAndFeedbackCross(physical, udev: udev)
        XCTAssertTrue(serve.snapshot().contains { $0.contains("connected from [::1]") }, "\(serve.snapshot())")
    }

    /// Two machines with no IPv4 at all, each with its own avahi-daemon: the client finds the
    /// host, pairs and forwards without being given an address, over IPv6.
    func testOnAnIPv6OnlyLANTheHostIsFoundPairedAndForwardedToWithoutAnAddress() throws {
        try requireLAN()
        let rig = try LANRig(.ipv6Only)
        defer { rig.down() }
        try rig.startAvahi(.host)
        try rig.startAvahi(.client)
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))

        let serve = try PadgateProcess(["serve", "--pair", "--virtual", "dualsense", "--port", "47990"], namespace: rig.namespace(.host),
                                       includeStandardError: true, environment: rig.environment(.host))
        defer { serve.interrupt() }
        // A ready host's last line is its PIN, after "announced on the LAN" and "listening on".
        XCTAssertNotNil(serve.waitForLine(timeout: .seconds(60)) { $0.contains("pairing PIN") }, "\(serve.snapshot())")
        XCTAssertTrue(serve.snapshot().contains { $0.contains("announced on the LAN") }, "\(serve.snapshot())")
        let pin = try XCTUnwrap(serve.snapshot().compactMap { line in
            line.split(separator: " ").first { $0.count == 6 && $0.allSatisfy(\.isNumber) }
        }.last.map(String.init))
        let pair = try PadgateProcess(["pair", "--pin", pin], namespace: rig.namespace(.client), includeStandardError: true, environment: rig.environment(.client))
        pair.process.waitUntilExit()
        XCTAssertEqual(pair.process.terminationStatus, 0, "\(pair.snapshot()) \(serve.snapshot())")

        let forward = try PadgateProcess(["forward", "--pad", physicalPad.evdev[0].path, "--quiet"], namespace: rig.namespace(.client),
                                         includeStandardError: true, environment: rig.environment(.client))
        defer { forward.interrupt() }
        try assertInputAndFeedbackCross(physical, udev: udev)
        XCTAssertTrue(forward.snapshot().contains { $0.contains("found") }, "\(forward.snapshot())")
        XCTAssertTrue(serve.snapshot().contains { $0.contains("connected from [fd00:78::2]") || $0.contains("connected from [fe80:") }, "\(serve.snapshot())")
    }

    /// netem: 5 % loss each way and 20 ms each way. The link test must read that: loss within two
    /// points of 5 % each way, and a round trip of at least 40 ms.
    func testTheLinkTestReadsNetemsLossAndDelay() throws {
        try requireLAN()
        let rig = try LANRig(.dualStack)
        defer { rig.down() }
        for side in [LANRig.Side.host, .client] {
            try shell("ip netns exec \(rig.namespace(side)) tc qdisc add dev \(rig.interface(side)) root netem loss 5% delay 20ms")
        }
        let serve = try startPairedServe(["--virtual", "in-process", "--no-announce"], host: rig.hostIPv4, port: "47991",
                                         serveNamespace: rig.namespace(.host), clientNamespace: rig.namespace(.client))
        defer { serve.interrupt() }
        let probe = try padgate(["probe", "\(rig.hostIPv4):47991", "--seconds", "10", "--json"], timeLimit: .seconds(120), namespace: rig.namespace(.client))
        XCTAssertEqual(probe.status, 0, probe.stderr)
        struct Report: Decodable {
            struct Loss: Decodable { var to_host: Double; var to_client: Double }
            struct RoundTrip: Decodable { var p50: Double; var p95: Double; var p99: Double }
            var sent: Int; var answered: Int; var loss_percent: Loss; var round_trip_ms: RoundTrip; var verdict: String
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(probe.stdout.utf8))
        print("netem 5 % / 20 ms each way: sent \(report.sent), loss \(report.loss_percent.to_host) % / \(report.loss_percent.to_client) %, "
              + "round trip p50 \(report.round_trip_ms.p50) ms p99 \(report.round_trip_ms.p99) ms, verdict \(report.verdict)")
        XCTAssertGreaterThan(report.sent, 2000, "about 250 a second for 10 s: \(probe.stdout)")
        XCTAssertEqual(report.loss_percent.to_host, 5, accuracy: 2, probe.stdout)
        XCTAssertEqual(report.loss_percent.to_client, 5, accuracy: 2, probe.stdout)
        XCTAssertGreaterThanOrEqual(report.round_trip_ms.p50, 40, probe.stdout)
        XCTAssertNotEqual(report.verdict, "good", "5 % loss is not good for forwarding: \(probe.stdout)")
        // netem's own count agrees that the link dropped datagrams.
        let dropped = try shell("ip netns exec \(rig.namespace(.client)) tc -s qdisc show dev \(rig.interface(.client))")
        XCTAssertFalse(dropped.contains("dropped 0,"), dropped)
    }
}
