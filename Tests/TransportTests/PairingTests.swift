import Foundation
import MonotonicTime
import PadSystem
import XCTest
@testable import Transport

final class PairingTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws { directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-pair-\(UUID())") }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    /// Runs one pairing over loopback TLS: the host with `hostPIN`, the client with `clientPIN`.
    func pair(hostPIN: String, clientPIN: String, approve: @escaping @Sendable () -> String? = { nil }) throws -> (host: Result<PeerName, Error>, client: Result<Void, Error>, clientDone: MonotonicInstant) {
        let hostIdentity = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "host")
        let clientIdentity = try TLSIdentity(directory: directory.appendingPathComponent("client"), commonName: "client")
        let listener = try TLSListener(identity: hostIdentity, address: "127.0.0.1", port: 0)
        let hostResult = LockedBox<Result<PeerName, Error>>(.failure(PairingError.protocolError("not run")))
        let done = expectation(description: "host side")
        Thread.detachNewThread {
            let result = Result {
                let connection = try listener.accept()
                guard case .pairStart(let share, let name) = try ControlMessage(decoding: connection.receive()) else {
                    throw PairingError.protocolError("no pairStart")
                }
                try Pairing.pairAsHost(connection, hostIdentity: hostIdentity, pin: hostPIN, clientShare: share,
                                       deadline: .now + Pairing.exchangeTimeout, approve: approve)
                return name
            }
            hostResult.update { $0 = result }
            done.fulfill()
        }
        let client = try TLSDialer.connect(host: "127.0.0.1", port: listener.port, identity: clientIdentity)
        let clientResult = Result { try Pairing.pairAsClient(client, clientIdentity: clientIdentity, pin: clientPIN, clientName: PeerName(local: "couch")) }
        let clientDone = MonotonicInstant.now
        wait(for: [done], timeout: 30)
        return (hostResult.value, clientResult, clientDone)
    }

    func testTheRightPINPairs() throws {
        let result = try pair(hostPIN: "482913", clientPIN: "482913")
        XCTAssertEqual(try result.host.get().raw, "couch")
        XCTAssertNoThrow(try result.client.get())
    }

    /// The client hears "paired" only once the host's approval (which stores it) has finished, so
    /// a client that reconnects at once is already known.
    func testTheClientHearsPairedOnlyAfterTheHostApproved() throws {
        let approvedAt = LockedBox<MonotonicInstant?>(nil)
        let result = try pair(hostPIN: "482913", clientPIN: "482913") {
            usleep(300_000)
            approvedAt.update { $0 = .now }
            return nil
        }
        XCTAssertNoThrow(try result.client.get())
        XCTAssertLessThanOrEqual(try XCTUnwrap(approvedAt.value), result.clientDone)
        // A host that cannot stand by the pairing says why, and the client is told.
        let refused = try pair(hostPIN: "482913", clientPIN: "482913") { "the host could not store the pairing" }
        XCTAssertThrowsError(try refused.client.get()) { XCTAssertEqual($0 as? PairingError, .refused("the host could not store the pairing")) }
    }

    func testAWrongPINIsRefusedOnBothSides() throws {
        let result = try pair(hostPIN: "482913", clientPIN: "482914")
        XCTAssertThrowsError(try result.client.get()) { XCTAssertEqual($0 as? PairingError, .wrongPIN) }
        XCTAssertThrowsError(try result.host.get()) { XCTAssertEqual($0 as? PairingError, .wrongPIN) }
    }

    /// A host closes a connection whose first frame missed its deadline, or a client's handshake
    /// misses its own (a lossy link's retransmissions): the client connects again and pairs, the
    /// PIN untouched. A host that
    /// closes every connection is given `connectionsPerStep`; a host's answer ends the tries.
    func testAConnectionTheHostClosedUnansweredIsTriedAgain() throws {
        let hostIdentity = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "host")
        let clientIdentity = try TLSIdentity(directory: directory.appendingPathComponent("client"), commonName: "client")
        let pin = "482913"
        /// A host that leaves the first `unanswered` connections unanswered and pairs on the next:
        /// closed after their handshake, unread, or (`silentHandshake`) held without a handshake
        /// until the client gives up on it.
        func run(unanswered: Int, silentHandshake: Bool = false, hostPIN: String = pin) throws -> (client: Result<Void, Error>, connections: Int, retries: [Int]) {
            let listener = try TLSListener(identity: hostIdentity, address: "127.0.0.1", port: 0)
            let accepted = LockedBox(0)
            let done = expectation(description: "host side")
            Thread.detachNewThread {
                defer { done.fulfill() }
                var held: [PendingTCP] = []
                for _ in 0..<unanswered {
                    if silentHandshake {
                        let deadline = MonotonicInstant.now + .seconds(10)
                        while MonotonicInstant.now < deadline {
                            if case .accepted(let pending) = listener.acceptTCP() { held.append(pending); break }
                            usleep(5_000)
                        }
                    } else {
                        guard (try? listener.accept()) != nil else { return }
                    }
                    accepted.update { $0 += 1 }
                }
                guard unanswered < Pairing.connectionsPerStep, let connection = try? listener.accept() else { return }
                accepted.update { $0 += 1 }
                guard case .pairStart(let share, _)? = try? ControlMessage(decoding: connection.receive()) else { return }
                try? Pairing.pairAsHost(connection, hostIdentity: hostIdentity, pin: hostPIN, clientShare: share,
                                        deadline: .now + Pairing.exchangeTimeout, approve: { nil })
            }
            let stretched = try Pairing.stretch(pin: pin, clientFingerprint: clientIdentity.fingerprint, hostFingerprint: hostIdentity.fingerprint)
            var retries: [Int] = []
            let client = Result {
                try Pairing.againIfUnanswered(onRetry: { retries.append($0) }) {
                    let connection = try TLSDialer.connect(host: "127.0.0.1", port: listener.port, identity: clientIdentity,
                                                           timeout: .milliseconds(500))
                    try Pairing.pairAsClient(connection, clientIdentity: clientIdentity, stretchedPIN: stretched, clientName: PeerName(local: "couch"))
                }
            }
            wait(for: [done], timeout: 30)
            return (client, accepted.value, retries)
        }
        let once = try run(unanswered: 1)
        XCTAssertNoThrow(try once.client.get(), "paired on the second connection")
        XCTAssertEqual(once.connections, 2)
        XCTAssertEqual(once.retries, [2])
        let never = try run(unanswered: Pairing.connectionsPerStep)
        XCTAssertThrowsError(try never.client.get()) {
            XCTAssertTrue($0 as? PairingError == .closedBeforeAnswer || $0 as? TLSError == .closed, "\($0)")
        }
        XCTAssertEqual(never.connections, Pairing.connectionsPerStep, "no more connections than the bound")
        let silent = try run(unanswered: 1, silentHandshake: true)
        XCTAssertNoThrow(try silent.client.get(), "a handshake past its deadline is tried again")
        XCTAssertEqual(silent.connections, 2)
        let wrong = try run(unanswered: 0, hostPIN: "111111")
        XCTAssertThrowsError(try wrong.client.get()) { XCTAssertEqual($0 as? PairingError, .wrongPIN) }
        XCTAssertEqual(wrong.retries, [], "an answer ends the tries")
    }

    func testPINsAreSixDigits() {
        let pins = (0..<50).map { _ in Pairing.newPIN() }
        XCTAssertTrue(pins.allSatisfy { $0.count == 6 && $0.allSatisfy(\.isNumber) })
        XCTAssertGreaterThan(Set(pins).count, 45)
    }
}
