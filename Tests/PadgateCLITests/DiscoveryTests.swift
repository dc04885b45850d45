import Foundation
import MonotonicTime
import PadSystem
import PadgateRunner
import XCTest

/// Finding hosts on a LAN as a person does, with the real avahi-daemon and dbus-daemon on two
/// "machines" (network namespaces joined by a veth pair, tools/lan/rig.sh): the host announces
/// itself, the client finds it, pairs and forwards without typing an address; a host without
/// avahi still serves; a reinstalled host is shown as changed and refused.
final class DiscoveryTests: XCTestCase {
    var rig: LANRig!
    var hostState: ScratchState!
    var clientState: ScratchState!
    let port = 27_800 + Int.random(in: 100..<900)

    override func setUpWithError() throws {
        if let missing = LANRig.missing {
            let message = "SKIPPED LOUDLY: \(missing); the LAN discovery tests need it"
            FileHandle.standardError.write(Data("\(message)\n".utf8))
            throw XCTSkip(message)
        }
        rig = try LANRig()
        hostState = try ScratchState("lan-host")
        clientState = try ScratchState("lan-client")
    }

    override func tearDown() { rig?.down() }

    func serve(_ extra: [String] = [], state: ScratchState? = nil) throws -> RunningPadgate {
        let state = state ?? hostState!
        var environment = state.environment.merging(rig.environment(.host)) { $1 }
        environment["PADGATE_RUNTIME_DIR"] = state.appendingPathComponent("run").path
        return try RunningPadgate(["serve", "--virtual", "in-process", "--port", "\(port)"] + extra, environment: environment, namespace: rig.namespace(.host))
    }

    func client(_ arguments: [String], timeLimit: Duration = .seconds(60)) throws -> PadgateRun {
        try padgate(arguments, environment: clientState.environment.merging(rig.environment(.client)) { $1 }, timeLimit: timeLimit, namespace: rig.namespace(.client))
    }

    struct Found: Decodable { var name: String; var addresses: [String]; var port: Int; var fingerprint: String; var status: String; var pairing: Bool }

    func discover() throws -> [Found] {
        let run = try client(["hosts", "--discover", "--json"])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try JSONDecoder().decode([Found].self, from: Data(run.stdout.utf8))
    }

    static func identity(_ serve: RunningPadgate) -> String? {
        serve.output.components(separatedBy: "identity ").dropFirst().first?.split(separator: "\n").first.map(String.init)
    }

    /// The PIN the host shows now (the latest one it printed).
    static func pin(_ serve: RunningPadgate) -> String? {
        serve.output.components(separatedBy: "PIN ").dropFirst().last.map { String($0.prefix(6)) }.flatMap { $0.allSatisfy(\.isNumber) ? $0 : nil }
    }

    func testAnAnnouncedHostIsFoundPairedAndForwardedToWithoutItsAddress() throws {
        try rig.startAvahi(.host)
        try rig.startAvahi(.client)
        let host = try serve(["--pair"])
        defer { _ = host.stopOutcome(after: SIGTERM) }
        // Ready means announced: the service is established before "listening on" (and the PIN after it).
        XCTAssertTrue(host.waitFor("pairing PIN", timeout: .seconds(30)), host.output)
        let announced = try XCTUnwrap(host.output.range(of: "announced on the LAN"), "ready before announced: \(host.output)")
        XCTAssertLessThan(announced.lowerBound, try XCTUnwrap(host.output.range(of: "listening on")).lowerBound, host.output)
        let identity = try XCTUnwrap(Self.identity(host))

        let found = try discover()
        XCTAssertEqual(found.count, 1, "\(found)")
        let entry = try XCTUnwrap(found.first)
        XCTAssertEqual(entry.port, port)
        XCTAssertEqual(entry.fingerprint, identity)
        XCTAssertEqual(entry.status, "unknown", "found is not trusted")
        XCTAssertTrue(entry.pairing, "the PIN is armed")
        XCTAssertTrue(entry.addresses.contains(rig.hostIPv6) && entry.addresses.contains(rig.hostIPv4), "both families: \(entry.addresses)")
        // Avahi's own tool sees the same service.
        let browsed = try rig.run("/usr/bin/avahi-browse", ["-rpt", "_padgate._udp"], on: .client)
        XCTAssertTrue(browsed.contains(";\(port);") && browsed.contains("id=\(identity)"), browsed)

        let pin = try XCTUnwrap(Self.pin(host))
        let paired = try client(["pair", "--pin", pin])
        XCTAssertEqual(paired.status, 0, paired.stderr + host.output)
        XCTAssertTrue(paired.stderr.contains("found"), paired.stderr)
        XCTAssertEqual(try discover().first?.status, "paired")

        // No pads on this machine: the session itself is what shows forward found and reached the host.
        let forward = try RunningPadgate(["forward", "--quiet"], environment: clientState.environment.merging(rig.environment(.client)) { $1 },
                                         namespace: rig.namespace(.client))
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(forward.waitFor("connected to", timeout: .seconds(30)), forward.output)
        XCTAssertTrue(host.waitFor("connected from", timeout: .seconds(10)), host.output)
        let probe = try client(["probe", "--seconds", "1", "--json"])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        XCTAssertTrue(probe.stdout.contains("\"answered\""), probe.stdout)
    }

    func testWithoutAvahiTheHostServesSaysDiscoveryIsOffAndAnnouncesOnceADaemonComes() throws {
        let host = try serve(["--pair"])
        defer { _ = host.stopOutcome(after: SIGTERM) }
        // Ready once discovery is known to be off: it is said before "listening on" and the PIN.
        XCTAssertTrue(host.waitFor("pairing PIN", timeout: .seconds(30)), host.output)
        XCTAssertTrue(host.output.contains("discovery is off"), host.output)
        XCTAssertTrue(host.output.contains("listening on"), host.output)
        // It serves as before: pairing and a session by address.
        let pin = try XCTUnwrap(Self.pin(host))
        XCTAssertEqual(try client(["pair", "\(rig.hostIPv4):\(port)", "--pin", pin]).status, 0, host.output)
        let probe = try client(["probe", "\(rig.hostIPv4):\(port)", "--seconds", "1"])
        XCTAssertEqual(probe.status, 0, probe.stderr)
        // The client has no daemon either: it says what is missing.
        let browse = try client(["hosts", "--discover"])
        XCTAssertNotEqual(browse.status, 0)
        XCTAssertTrue(browse.stderr.contains("avahi-daemon"), browse.stderr)

        // A daemon comes: the host announces; it restarts: the host announces again.
        try rig.startAvahi(.host)
        try rig.startAvahi(.client)
        XCTAssertTrue(host.waitFor("announced on the LAN", timeout: .seconds(30)), host.output)
        XCTAssertEqual(try discover().first?.port, port)
        try rig.stopAvahi(.host)
        XCTAssertTrue(host.waitFor("avahi-daemon went away", timeout: .seconds(30)), host.output)
        try rig.startAvahi(.host)
        let announced = { host.output.components(separatedBy: "announced on the LAN").count - 1 }
        let deadline = MonotonicInstant.now + .seconds(30)
        while announced() < 2, MonotonicInstant.now < deadline { usleep(50_000) }
        XCTAssertEqual(announced(), 2, host.output)
        XCTAssertEqual(try discover().first?.status, "paired")
        XCTAssertEqual(host.output.components(separatedBy: "discovery is off").count - 1, 1, "said once: \(host.output)")
    }

    func testAReinstalledHostIsShownAsChangedAndRefused() throws {
        try rig.startAvahi(.host)
        try rig.startAvahi(.client)
        let first = try serve(["--pair"])
        // The PIN is the last line of a ready host: announced, listening, then the PIN.
        XCTAssertTrue(first.waitFor("pairing PIN", timeout: .seconds(30)), first.output)
        XCTAssertTrue(first.output.contains("announced on the LAN"), first.output)
        XCTAssertEqual(try client(["pair", "--pin", try XCTUnwrap(Self.pin(first))]).status, 0, first.output)
        XCTAssertEqual(try client(["pair", "\(rig.hostIPv4):\(port)", "--pin", try XCTUnwrap(Self.pin(first))]).status, 0, "and by address too")
        _ = first.stopOutcome(after: SIGTERM)

        // The same machine, its state wiped: a new identity under the same name and address.
        let reinstalled = try serve(["--pair"], state: try ScratchState("lan-reinstalled"))
        defer { _ = reinstalled.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(reinstalled.waitFor("pairing PIN", timeout: .seconds(30)), reinstalled.output)
        XCTAssertTrue(reinstalled.output.contains("announced on the LAN"), reinstalled.output)
        var found = try discover()
        // The old advert may linger in the client's cache for a moment after the goodbye.
        let newIdentity = try XCTUnwrap(Self.identity(reinstalled))
        let deadline = MonotonicInstant.now + .seconds(10)
        while found.first(where: { $0.fingerprint == newIdentity }) == nil || found.count > 1, MonotonicInstant.now < deadline { found = try discover() }
        XCTAssertEqual(found.map(\.status), ["changed"], "\(found)")
        let listed = try client(["hosts", "--discover"])
        XCTAssertTrue(listed.stdout.contains("CHANGED identity"), listed.stdout)

        let automatic = try client(["forward", "--duration", "5", "--quiet"])
        XCTAssertNotEqual(automatic.status, 0)
        XCTAssertTrue(automatic.stderr.contains("no paired padgate host"), "a changed host is never picked: \(automatic.stderr)")
        let typed = try client(["forward", "\(rig.hostIPv4):\(port)", "--duration", "5", "--quiet"])
        XCTAssertTrue(typed.stderr.contains("has changed") && typed.stderr.contains("padgate hosts forget"), typed.stderr)
        XCTAssertFalse(reinstalled.output.contains("connected from"), reinstalled.output)
    }

    // MARK: Strangers on the LAN (issue 31)

    static func randomFingerprint() -> String { (0..<32).map { _ in String(format: "%02x", Int.random(in: 0...255)) }.joined(separator: ":") }

    /// Characters a terminal acts on, that a record may carry past the advert's own checks.
    static func terminalControls(_ text: String) -> [UInt32] {
        text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || (0x7f...0x9f).contains($0.value) || (0x202a...0x202e).contains($0.value) }.map(\.value)
    }

    func testStrangersAdvertsNeitherCrowdOutNorImpersonateNorBlockThePairedHost() throws {
        try rig.startAvahi(.host)
        try rig.startAvahi(.client)
        let host = try serve(["--pair"])
        defer { _ = host.stopOutcome(after: SIGTERM) }
        // Ready means announced: the service is established before "listening on" (and the PIN after it).
        XCTAssertTrue(host.waitFor("pairing PIN", timeout: .seconds(30)), host.output)
        let announced = try XCTUnwrap(host.output.range(of: "announced on the LAN"), "ready before announced: \(host.output)")
        XCTAssertLessThan(announced.lowerBound, try XCTUnwrap(host.output.range(of: "listening on")).lowerBound, host.output)
        let identity = try XCTUnwrap(Self.identity(host))
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "padgate"

        // 100 records beside the real one: a copy of its identity at another port, an impostor
        // under its name, and 98 strangers (half with a PIN armed), named to act on a terminal.
        var records = [
            LANRig.Record(instance: "padgate on \(name) (copy)", port: port + 1, txt: ["v=1", "id=\(identity)", "pin=1", "name=\(name)"]),
            LANRig.Record(instance: "padgate on \(name) (impostor)", port: port + 2, txt: ["v=1", "id=\(Self.randomFingerprint())", "pin=1", "name=\(name)"]),
        ]
        for index in 0..<98 {
            records.append(LANRig.Record(instance: "padgate \u{9b}2J stranger \(index) \u{202e}", port: 40_000 + index,
                                         txt: ["v=1", "id=\(Self.randomFingerprint())", "pin=\(index % 2)", "name=stranger\u{9b}31m\u{202e}\(index)"]))
        }
        try rig.publish(records, on: .host)

        // Pairing without an address: the strangers' armed PINs and the copy do not get in the way.
        let pin = try XCTUnwrap(Self.pin(host))
        let paired = try client(["pair", "--pin", pin])
        XCTAssertEqual(paired.status, 0, paired.stderr)
        XCTAssertTrue(paired.stdout.contains(identity), paired.stdout)

        // Listed: the real host as paired (its identity checked), the copy as unverified, the
        // strangers bounded and escaped.
        let found = try discover()
        XCTAssertEqual(found.filter { $0.status == "paired" }.map(\.port), [port], "\(found.map { ($0.port, $0.status) })")
        XCTAssertEqual(found.first { $0.port == port + 1 }?.status, "unverified", "a copied identity is not called paired")
        XCTAssertEqual(found.first { $0.port == port + 2 }?.status, "changed", "an impostor under the paired name")
        XCTAssertLessThanOrEqual(found.count, 2 + 64, "strangers are bounded")
        let listed = try client(["hosts", "--discover"])
        XCTAssertEqual(Self.terminalControls(listed.stdout), [], listed.stdout)
        let json = try client(["hosts", "--discover", "--json"])
        XCTAssertEqual(Self.terminalControls(json.stdout), [], "JSON escapes them too")

        // Forwarding and probing without an address reach the real host, and only it.
        let forward = try RunningPadgate(["forward", "--quiet"], environment: clientState.environment.merging(rig.environment(.client)) { $1 },
                                         namespace: rig.namespace(.client))
        XCTAssertTrue(forward.waitFor("connected to", timeout: .seconds(60)), forward.output)
        XCTAssertEqual(Self.terminalControls(forward.output), [], forward.output)
        _ = forward.stopOutcome(after: SIGTERM)
        let probe = try client(["probe", "--seconds", "1", "--json"])
        XCTAssertEqual(probe.status, 0, probe.stderr)

        // A client that paired with nothing is told so truthfully, after the whole window, briefly.
        let stranger = try ScratchState("lan-stranger")
        let started = MonotonicInstant.now
        let lost = try padgate(["forward", "--duration", "5", "--quiet"], environment: stranger.environment.merging(rig.environment(.client)) { $1 },
                               timeLimit: .seconds(60), namespace: rig.namespace(.client))
        XCTAssertNotEqual(lost.status, 0)
        XCTAssertGreaterThanOrEqual(MonotonicInstant.now - started, .seconds(2), "'within 2 s' must be true: \(lost.stderr)")
        XCTAssertTrue(lost.stderr.contains("no paired padgate host answered on the LAN within 2 s"), lost.stderr)
        XCTAssertTrue(lost.stderr.contains("pair with one first"), lost.stderr)
        XCTAssertLessThanOrEqual(lost.stderr.split(separator: "\n").count, 12, "the error stays short: \(lost.stderr)")
        XCTAssertEqual(Self.terminalControls(lost.stderr), [], lost.stderr)
    }
}

/// IPv6 alone: a LAN with no IPv4 address at all, not even on loopback. Pairing, the sealed
/// datagrams and the link test work over a unique-local and a link-local (`%scope`) address.
final class IPv6OnlyLinkTests: XCTestCase {
    func testPairingForwardingAndTheLinkTestWorkWithoutIPv4() throws {
        if let missing = LANRig.missing {
            let message = "SKIPPED LOUDLY: \(missing); the IPv6-only link test needs it"
            FileHandle.standardError.write(Data("\(message)\n".utf8))
            throw XCTSkip(message)
        }
        let rig = try LANRig(.ipv6Only)
        defer { rig.down() }
        for side in [LANRig.Side.host, .client] {
            XCTAssertEqual(try rig.shell(["-n", rig.namespace(side), "-4", "-o", "addr", "show"]).trimmingCharacters(in: .whitespacesAndNewlines), "",
                           "no IPv4 address on the \(side) side")
        }
        let hostState = try ScratchState("v6-host"), clientState = try ScratchState("v6-client")
        let port = 27_800 + Int.random(in: 100..<900)
        var environment = hostState.environment
        environment["PADGATE_RUNTIME_DIR"] = hostState.appendingPathComponent("run").path
        let host = try RunningPadgate(["serve", "--virtual", "in-process", "--port", "\(port)", "--pair", "--no-announce"],
                                      environment: environment, namespace: rig.namespace(.host))
        defer { _ = host.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(host.waitFor("pairing PIN", timeout: .seconds(30)), host.output)
        XCTAssertTrue(host.output.contains("listening on [::]:\(port)"), host.output)
        let pin = try XCTUnwrap(DiscoveryTests.pin(host))
        func client(_ arguments: [String]) throws -> PadgateRun {
            try padgate(arguments, environment: clientState.environment, timeLimit: .seconds(60), namespace: rig.namespace(.client))
        }
        let paired = try client(["pair", "[\(rig.hostIPv6)]:\(port)", "--pin", pin])
        XCTAssertEqual(paired.status, 0, paired.stderr + host.output)

        let linkLocal = try rig.hostLinkLocal()
        let probe = try client(["probe", "[\(linkLocal)]:\(port)", "--seconds", "1", "--json"])
        XCTAssertEqual(probe.status, 0, probe.stderr + host.output)
        struct Report: Decodable { var sent: Int; var answered: Int }
        let report = try JSONDecoder().decode(Report.self, from: Data(probe.stdout.utf8))
        XCTAssertGreaterThan(report.answered, report.sent / 2, probe.stdout)
        XCTAssertTrue(host.output.contains("connected from [fe80::"), "the session ran over the link-local address: \(host.output)")
        // One host, reached two ways: one known-hosts entry.
        let hosts = try client(["hosts", "--json"])
        XCTAssertEqual(hosts.stdout.components(separatedBy: "\"fingerprint\"").count - 1, 1, hosts.stdout)
    }
}
