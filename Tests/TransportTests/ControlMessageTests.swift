import XCTest
@testable import Transport

/// Control frames come from peers nobody has authenticated: every field is checked when decoded.
final class ControlMessageTests: XCTestCase {
    let share = [0x04] + [UInt8](repeating: 7, count: Spake2.messageLength - 1)

    func testEveryMessageSurvivesTheRoundTrip() throws {
        let messages: [ControlMessage] = [
            .hello(version: 1, clientName: PeerName(local: "living room")),
            .welcome(session: 0xDEADBEEF, udpPort: 47800, leaseMillis: 1000, maxPads: 4),
            .refused(reason: "no"),
            .pairStart(share: share, clientName: PeerName(local: "")),
            .pairReply(share: share, confirmation: [UInt8](repeating: 1, count: 32)),
            .pairConfirm(confirmation: []),
            .pairConfirm(confirmation: [UInt8](repeating: 2, count: 32)),
            .pairResult(accepted: true, message: "paired"),
        ]
        for message in messages { XCTAssertEqual(try ControlMessage(decoding: message.encoded()), message) }
    }

    func testWhatNoPadgatePeerSendsIsRefusedWithItsReason() {
        func refused(_ frame: [UInt8]) -> ControlMessage.DecodingError? {
            do { _ = try ControlMessage(decoding: frame); return nil } catch { return error }
        }
        XCTAssertEqual(refused([]), .empty)
        XCTAssertEqual(refused([0x01] + [UInt8](repeating: 0x41, count: ControlMessage.maxFrameBytes)), .tooLong(bytes: ControlMessage.maxFrameBytes + 1))
        XCTAssertEqual(refused([0x7f]), .unknownType(0x7f))
        XCTAssertEqual(refused([0x01, 1] + [UInt8](repeating: 0x41, count: 65)), .badField("a peer name of 65 bytes (at most 64)"))
        XCTAssertEqual(refused([0x01, 1, 0xC3]), .badField("a peer name that is not UTF-8"))
        XCTAssertEqual(refused([0x02, 0, 0, 0, 0, 0xBA, 0xB8, 0x03, 0xE8, 4]), .badField("session 0"))
        XCTAssertEqual(refused([0x02, 0, 0, 0, 1, 0xBA, 0xB8, 0x00, 0x05, 4]), .badField("a state lease of 5 ms"))
        XCTAssertEqual(refused([0x02, 0, 0, 0, 1, 0xBA, 0xB8, 0x03, 0xE8, 200]), .badField("200 pads per client"))
        XCTAssertEqual(refused([0x02, 0, 0, 0, 1]), .truncated(type: 0x02))
        XCTAssertEqual(refused([0x10, 200] + share), .truncated(type: 0x10), "a length beyond the frame")
        XCTAssertEqual(refused([0x10, 3, 4, 4, 4]), .badField("a SPAKE2 share of 3 bytes"))
        XCTAssertEqual(refused([0x11, 65] + share + [1, 2]), .badField("a confirmation of 2 bytes"))
        XCTAssertEqual(refused([0x12, 1]), .badField("a confirmation of 1 bytes"))
        XCTAssertEqual(refused([0x13, 7]), .truncated(type: 0x13))
        XCTAssertEqual(refused([0x03] + [UInt8](repeating: 0x41, count: ControlMessage.maxTextBytes + 1)), .badField("a text of 513 bytes"))
    }

    func testTextsAreCutAtACharacterAndShownWithoutControlCharacters() throws {
        let long = String(repeating: "é", count: ControlMessage.maxTextBytes)
        guard case .refused(let cut) = try ControlMessage(decoding: ControlMessage.refused(reason: long).encoded()) else { return XCTFail() }
        XCTAssertEqual(cut.utf8.count, ControlMessage.maxTextBytes)
        XCTAssertEqual(displayable(peerText: "ok\u{1b}[2Jbye\n"), "ok?[2Jbye?")
    }

    func testPeerNamesAreShownEscapedAndStoredAsOneToken() throws {
        let hostile = try PeerName(wire: Array("a b\n# %\u{1b}[31mé".utf8))
        XCTAssertEqual(hostile.displayed, "a b\\u{a}# %\\u{1b}[31mé")
        XCTAssertFalse(hostile.stored.contains(" ") || hostile.stored.contains("\n") || hostile.stored.contains("#"))
        XCTAssertEqual(PeerName(stored: hostile.stored), hostile)
        XCTAssertEqual(PeerName(stored: PeerName(local: "").stored), PeerName(local: ""))
        XCTAssertNil(PeerName(stored: "%G1"), "not something `stored` writes")
        XCTAssertEqual(PeerName(local: String(repeating: "é", count: 40)).raw.utf8.count, 64, "a local name is cut at a character")
    }
}
