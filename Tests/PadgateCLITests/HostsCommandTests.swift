import Foundation
import PadgateRunner
import XCTest

/// `padgate hosts` and `hosts forget`, as OpenSSH's known_hosts and `ssh-keygen -R` are used: a
/// reinstalled host (a new identity on the same address) is refused with the command that forgets
/// it, and after forgetting, pairing pins the new identity.
final class HostsCommandTests: XCTestCase {
    /// A host on `port` with its own state, showing a PIN; returns it with the PIN and identity.
    private func pairingHost(_ state: ScratchState, port: Int) throws -> (RunningPadgate, pin: String, identity: String) {
        let serve = try RunningPadgate(["serve", "--pair", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", "in-process"],
                                       environment: state.environment)
        XCTAssertTrue(serve.waitFor("pairing PIN", timeout: .seconds(30)), serve.output)
        let pin = try XCTUnwrap(serve.output.split(whereSeparator: { $0 == " " || $0 == "\n" }).first { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        let identity = try XCTUnwrap(serve.output.components(separatedBy: "identity ").dropFirst().first?.split(separator: "\n").first)
        return (serve, String(pin), String(identity))
    }

    func testAReinstalledHostIsRefusedWithTheWayOutAndForgettingItLetsItBePairedAgain() throws {
        let client = try ScratchState("hosts-client")
        let port = 28_100 + Int.random(in: 0..<300)
        let first = try ScratchState("hosts-first")
        let (host, pin, identity) = try pairingHost(first, port: port)
        let paired = try padgate(["pair", "127.0.0.1:\(port)", "--pin", pin], environment: client.environment, timeLimit: .seconds(30))
        XCTAssertEqual(paired.status, 0, paired.stderr)
        _ = host.stopOutcome(after: SIGTERM)

        let listed = try padgate(["hosts", "--json"], environment: client.environment)
        struct Entry: Decodable, Equatable { var host: String; var fingerprint: String }
        XCTAssertEqual(try JSONDecoder().decode([Entry].self, from: Data(listed.stdout.utf8)), [Entry(host: "127.0.0.1:\(port)", fingerprint: identity)])
        XCTAssertTrue(try padgate(["hosts"], environment: client.environment).stdout.contains("127.0.0.1:\(port)  \(identity)"))

        // The same address, a new identity: refused, and told how to accept it.
        let second = try ScratchState("hosts-second")
        let (reinstalled, newPIN, newIdentity) = try pairingHost(second, port: port)
        defer { _ = reinstalled.stopOutcome(after: SIGTERM) }
        XCTAssertNotEqual(identity, newIdentity)
        let refused = try padgate(["forward", "127.0.0.1:\(port)", "--duration", "5", "--quiet"], environment: client.environment, timeLimit: .seconds(30))
        XCTAssertTrue(refused.stderr.contains("has changed"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("padgate hosts forget 127.0.0.1:\(port)"), "the refusal names the way out: \(refused.stderr)")

        let forgot = try padgate(["hosts", "forget", "127.0.0.1:\(port)"], environment: client.environment)
        XCTAssertEqual(forgot.status, 0, forgot.stderr)
        XCTAssertEqual(try padgate(["hosts", "--json"], environment: client.environment).stdout.trimmingCharacters(in: .whitespacesAndNewlines), "[]")
        let again = try padgate(["hosts", "forget", "127.0.0.1:\(port)"], environment: client.environment)
        XCTAssertNotEqual(again.status, 0, "forgetting twice says there is nothing to forget")
        XCTAssertTrue(again.stderr.contains("no pinned host"), again.stderr)

        let repaired = try padgate(["pair", "127.0.0.1:\(port)", "--pin", newPIN], environment: client.environment, timeLimit: .seconds(30))
        XCTAssertEqual(repaired.status, 0, repaired.stderr)
        XCTAssertTrue(try padgate(["hosts"], environment: client.environment).stdout.contains(newIdentity))
    }

    /// What a person typed is echoed escaped and at most 40 characters long (docs/command-line.md).
    func testForgetEchoesWhatItRefusesEscapedAndShort() throws {
        let client = try ScratchState("hosts-echo")
        let newline = try padgate(["hosts", "forget", "\n"], environment: client.environment, timeLimit: .seconds(30))
        XCTAssertNotEqual(newline.status, 0)
        XCTAssertEqual(newline.stderr.split(separator: "\n").count, 1, newline.stderr)
        XCTAssertTrue(newline.stderr.contains("'\\u{a}'"), newline.stderr)
        let escape = try padgate(["hosts", "forget", "\u{1b}[2J" + String(repeating: "y", count: 80)], environment: client.environment, timeLimit: .seconds(30))
        XCTAssertFalse(escape.stderr.contains("\u{1b}"), escape.stderr)
        XCTAssertTrue(escape.stderr.contains("\\u{1b}[2J"), escape.stderr)
        XCTAssertFalse(escape.stderr.contains(String(repeating: "y", count: 37)), "at most 40 characters: \(escape.stderr)")
    }

    /// Trust comes from pairing alone: a link test to a host this client never paired with, even
    /// one that lets it in, pins nothing.
    func testProbeOfAnUnpairedHostPinsNothing() throws {
        let client = try ScratchState("hosts-probe")
        let state = try ScratchState("hosts-probe-host")
        let port = 28_100 + Int.random(in: 300..<400)
        for open in [false, true] {
            let serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", "in-process"]
                                           + (open ? ["--accept-unpaired-clients"] : []), environment: state.environment)
            defer { _ = serve.stopOutcome(after: SIGTERM) }
            XCTAssertTrue(serve.waitFor("listening on", timeout: .seconds(30)), serve.output)
            let probe = try padgate(["probe", "127.0.0.1:\(port)", "--seconds", "1", "--json"], environment: client.environment, timeLimit: .seconds(60))
            XCTAssertEqual(probe.status, open ? 0 : 1, probe.stderr)
            XCTAssertTrue(probe.stderr.contains("not a host this client paired with"), probe.stderr)
            let hosts = try padgate(["hosts", "--json"], environment: client.environment)
            XCTAssertEqual(hosts.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "[]", "probe pinned the host (accepting unpaired: \(open))")
            _ = serve.stopOutcome(after: SIGTERM)
        }
    }
}
