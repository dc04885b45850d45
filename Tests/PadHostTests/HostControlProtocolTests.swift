import Foundation
@testable import PadHost
import XCTest

/// The control socket's protocol (HostControlProtocol.swift): every request and reply survives a
/// round trip, and the keys on the socket and in `padgate host … --json` are exactly those
/// scripts and tests read, nulls included. A renamed key fails here.
final class HostControlProtocolTests: XCTestCase {
    static let session = HostControl.Status.Session(
        session: "1a", client: "alice", paired: true, helloName: "alice-laptop", address: "192.0.2.7:50000", fingerprint: "ab:cd",
        pads: ["1: DualSense (as itself)"], lastHeardMilliseconds: 12, datagramsReceived: 4_000_000_000_000, datagramsRejected: 3,
        datagramsOverBudget: 5, overBudget: ["datagram rate": 5],
        link: HostControl.Status.Link(roundTripMilliseconds: 1.234, jitterMilliseconds: 0.5, lossToHostPercent: 0, lossToClientPercent: 12.5))
    static let unpaired = HostControl.Status.Session(
        session: "2", client: nil, paired: false, helloName: "\u{1b}]0;owned\u{7}", address: "[::1]:1", fingerprint: "ef", pads: [],
        lastHeardMilliseconds: 0, datagramsReceived: 0, datagramsRejected: 0, datagramsOverBudget: 0, overBudget: [:], link: nil)
    static let status = HostControl.Status(
        uptimeSeconds: 42, listening: "port 7373", identity: "12:34", pairingPINArmed: false, pairingArmedBy: nil, pairingExpiresInSeconds: nil,
        sessions: [session, unpaired],
        players: [.init(player: 1, client: "alice", fingerprint: "ab:cd", session: "1a", pad: "1: DualSense (as itself)", absentSeconds: nil),
                  .init(player: 2, client: nil, fingerprint: "ef", session: nil, pad: nil, absentSeconds: 12)],
        messagesDecoded: 100, datagramsRejected: ["replayed": 2], connectionsRefused: ["handshake rate": 1], leaseExpiries: 0)

    private func roundTrip<T: Codable & Equatable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try HostControl.decode(T.self, from: HostControl.encode(value)), value, file: file, line: line)
        XCTAssertEqual(try HostControl.decode(T.self, from: HostControl.encodePretty(value)), value, "--json reads back", file: file, line: line)
    }

    private func object(_ value: some Encodable) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: HostControl.encode(value)) as? [String: Any])
    }

    func testEveryRequestAndReplyRoundTrips() throws {
        for request in [HostControl.Request.status, .clients, .pair, .revoke(client: "bob")] { try roundTrip(request) }
        try roundTrip(HostControl.Failure("permission denied"))
        try roundTrip(Self.status)
        var armed = Self.status
        armed.pairingPINArmed = true; armed.pairingArmedBy = "serve --pair"; armed.pairingExpiresInSeconds = 90
        try roundTrip(armed)
        try roundTrip(HostControl.Clients(clients: [
            .init(name: "alice", fingerprint: "ab", pairedAt: "2024-01-01T00:00:00Z", lastSeen: nil, connected: true, pads: ["1: x"]),
            .init(name: "bob", fingerprint: "cd", pairedAt: nil, lastSeen: nil, connected: false, pads: []),
        ]))
        try roundTrip(HostControl.Clients(clients: []))
        try roundTrip(HostControl.Revoked(revoked: "alice", fingerprint: "ab", sessionsEnded: 1))
        for reply in [HostControl.PairReply.armed(pin: "123456", expiresInSeconds: 120), .newPIN(pin: "654321", reason: "too many wrong PINs"),
                      .paired(name: "alice", fingerprint: "ab"), .replaced(by: "'padgate host pair' (uid 0, pid 1)"), .expired, .cancelled] {
            try roundTrip(reply)
        }
    }

    func testTheStatusKeysAreExactlyTodays() throws {
        let status = try object(Self.status)
        XCTAssertEqual(status.keys.sorted(), ["connections_refused", "datagrams_rejected", "identity", "lease_expiries", "listening", "messages_decoded",
                                              "pairing_armed_by", "pairing_expires_in_seconds", "pairing_pin_armed", "players", "sessions", "uptime_seconds"])
        XCTAssertTrue(status["pairing_armed_by"] is NSNull, "null, not left out")
        XCTAssertTrue(status["pairing_expires_in_seconds"] is NSNull)
        XCTAssertEqual(status["pairing_pin_armed"] as? Bool, false)
        XCTAssertEqual(status["connections_refused"] as? [String: Int], ["handshake rate": 1])
        XCTAssertEqual(status["datagrams_rejected"] as? [String: Int], ["replayed": 2], "reasons are kept as they are, not key-converted")
        let sessions = try XCTUnwrap(status["sessions"] as? [[String: Any]])
        XCTAssertEqual(sessions.count, 2)
        for session in sessions {
            XCTAssertEqual(session.keys.sorted(), ["address", "client", "datagrams_over_budget", "datagrams_received", "datagrams_rejected", "fingerprint",
                                                   "hello_name", "last_heard_ms", "link", "over_budget", "pads", "paired", "session"])
        }
        XCTAssertEqual(sessions[0]["datagrams_received"] as? UInt64, 4_000_000_000_000)
        XCTAssertEqual(sessions[0]["over_budget"] as? [String: Int], ["datagram rate": 5])
        let link = try XCTUnwrap(sessions[0]["link"] as? [String: Any])
        XCTAssertEqual(link.keys.sorted(), ["jitter_ms", "loss_to_client_percent", "loss_to_host_percent", "round_trip_ms"])
        XCTAssertEqual(link["round_trip_ms"] as? Double, 1.234)
        XCTAssertTrue(sessions[1]["client"] is NSNull)
        XCTAssertTrue(sessions[1]["link"] is NSNull)
        XCTAssertEqual(sessions[1]["paired"] as? Bool, false)
        let players = try XCTUnwrap(status["players"] as? [[String: Any]])
        for player in players { XCTAssertEqual(player.keys.sorted(), ["absent_seconds", "client", "fingerprint", "pad", "player", "session"]) }
        XCTAssertEqual(players.map { $0["player"] as? Int }, [1, 2])
        XCTAssertTrue(players[0]["absent_seconds"] is NSNull, "a pad that is here")
        XCTAssertEqual(players[1]["absent_seconds"] as? Int, 12)
        XCTAssertTrue(players[1]["pad"] is NSNull, "a number waiting for its pad")
    }

    func testTheOtherRepliesKeys() throws {
        let clients = try object(HostControl.Clients(clients: [.init(name: "a", fingerprint: "b", pairedAt: nil, lastSeen: nil, connected: false, pads: [])]))
        XCTAssertEqual(clients.keys.sorted(), ["clients"])
        let client = try XCTUnwrap((clients["clients"] as? [[String: Any]])?.first)
        XCTAssertEqual(client.keys.sorted(), ["connected", "fingerprint", "last_seen", "name", "pads", "paired_at"])
        XCTAssertTrue(client["paired_at"] is NSNull)
        XCTAssertTrue(client["last_seen"] is NSNull)
        XCTAssertEqual(try object(HostControl.Revoked(revoked: "a", fingerprint: "b", sessionsEnded: 2)).keys.sorted(), ["fingerprint", "revoked", "sessions_ended"])
        XCTAssertEqual(try object(HostControl.Failure("no")).keys.sorted(), ["error"])
        XCTAssertEqual(String(decoding: try HostControl.encode(HostControl.Request.revoke(client: "x")), as: UTF8.self), #"{"client":"x","command":"revoke"}"#)
        XCTAssertEqual(String(decoding: try HostControl.encode(HostControl.Request.status), as: UTF8.self), #"{"command":"status"}"#)
        let pair: [(HostControl.PairReply, String)] = [
            (.armed(pin: "123456", expiresInSeconds: 120), #"{"expires_in_seconds":120,"pin":"123456"}"#),
            (.newPIN(pin: "1", reason: "r"), #"{"pin":"1","reason":"r"}"#),
            (.paired(name: "a", fingerprint: "b"), #"{"fingerprint":"b","paired":"a"}"#),
            (.replaced(by: "w"), #"{"by":"w","replaced":true}"#),
            (.expired, #"{"expired":true}"#),
            (.cancelled, #"{"cancelled":true}"#),
        ]
        for (reply, json) in pair { XCTAssertEqual(String(decoding: try HostControl.encode(reply), as: UTF8.self), json) }
    }

    /// What the host refuses, with the answers it has always given; and a reply that lacks a field
    /// is an error that names it, never a crash or a silent default.
    func testBadRequestsAndRepliesLackingAFieldAreClearErrors() throws {
        func request(_ json: String) -> Error? {
            do { _ = try HostControl.decode(HostControl.Request.self, from: Data(json.utf8)); return nil } catch { return error }
        }
        XCTAssertEqual((request(#"{"command":"reboot"}"#) as? HostControl.Request.Refusal).map { "\($0)" }, "unknown command; the commands are status, clients, revoke, pair")
        XCTAssertNotNil(request(#"{}"#) as? HostControl.Request.Refusal)
        XCTAssertEqual((request(#"{"command":"revoke"}"#) as? HostControl.Request.Refusal).map { "\($0)" }, "revoke needs a client name or fingerprint")
        XCTAssertNotNil(request(#"{"command":"revoke","client":""}"#) as? HostControl.Request.Refusal)
        XCTAssertTrue(request("[1]") is DecodingError, "not an object: the malformed-request answer")
        XCTAssertTrue(request("{") is DecodingError)

        var broken = try XCTUnwrap(JSONSerialization.jsonObject(with: HostControl.encode(Self.status)) as? [String: Any])
        var sessions = try XCTUnwrap(broken["sessions"] as? [[String: Any]])
        sessions[1]["link"] = nil
        broken["sessions"] = sessions
        let lacking = try JSONSerialization.data(withJSONObject: broken)
        XCTAssertThrowsError(try HostControl.decode(HostControl.Status.self, from: lacking)) {
            XCTAssertEqual(HostControl.explain($0), "no field 'sessions[1].link'")
        }
        broken["pairing_armed_by"] = nil
        XCTAssertThrowsError(try HostControl.decode(HostControl.Status.self, from: JSONSerialization.data(withJSONObject: broken))) {
            XCTAssertEqual(HostControl.explain($0), "no field 'pairing_armed_by'")
        }
        XCTAssertThrowsError(try HostControl.decode(HostControl.Status.self, from: Data(#"{"uptime_seconds":"soon"}"#.utf8))) {
            XCTAssertEqual(HostControl.explain($0), "'uptime_seconds' is not Int")
        }
        XCTAssertThrowsError(try HostControl.decode(HostControl.Revoked.self, from: Data("not json".utf8))) {
            XCTAssertEqual(HostControl.explain($0), "not JSON")
        }
        XCTAssertThrowsError(try HostControl.decode(HostControl.PairReply.self, from: Data(#"{"pin":"123456"}"#.utf8))) {
            XCTAssertEqual(HostControl.explain($0), "no field 'expires_in_seconds'")
        }
        XCTAssertThrowsError(try HostControl.decode(HostControl.PairReply.self, from: Data(#"{}"#.utf8)))
        // An error reply is not mistaken for any answer.
        XCTAssertThrowsError(try HostControl.decode(HostControl.Status.self, from: HostControl.encode(HostControl.Failure("busy"))))
        XCTAssertThrowsError(try HostControl.decode(HostControl.Failure.self, from: HostControl.encode(Self.status)))
    }
}
