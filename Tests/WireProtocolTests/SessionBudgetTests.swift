import MonotonicTime
import XCTest
@testable import WireProtocol

/// The per-session budget in simulated time: a real client's traffic is never dropped; a flood
/// is dropped by the reason it broke, and what gets through is the budget's rate.
final class SessionBudgetTests: XCTestCase {
    let limits = SessionBudget.Limits.forPads(4, bytesPerDatagram: OutgoingPayloads.payloadCapacity)

    func payload(messages: Int, bodyBytes: Int = 0) -> [UInt8] {
        [wireVersion] + (0..<messages).flatMap { _ in [0xEE, UInt8(bodyBytes >> 8), UInt8(bodyBytes & 0xFF)] + [UInt8](repeating: 0, count: bodyBytes) }
    }

    func admit(_ budget: inout SessionBudget, _ bytes: [UInt8], at time: MonotonicInstant) -> Bool {
        bytes.withUnsafeBytes { budget.admit($0, now: time) }
    }

    /// Four pads reporting every 4 ms, each datagram with every pad's state, touch, motion and
    /// battery, a ping every 4 ms in its own datagram (a probe), microphone frames every 5 ms: 10 s.
    func testARealClientAtFullRateIsNeverDropped() {
        var budget = SessionBudget(limits: limits, now: .origin)
        let report = payload(messages: SessionBudget.Limits.messagesPerReport, bodyBytes: 20)
        let everyPad = payload(messages: 4 * SessionBudget.Limits.messagesPerReport, bodyBytes: 20)
        let single = payload(messages: 1, bodyBytes: 30)
        for us in stride(from: 0, to: 10_000_000, by: 1000) {
            let at = MonotonicInstant.origin + .microseconds(us)
            // One datagram per pad report (they need not coincide), a ping, a microphone frame.
            if us % 4000 == 0 { for _ in 0..<4 { XCTAssertTrue(admit(&budget, report, at: at)) } }
            // Now and then a pass that carries every pad's report in one datagram, and a re-send.
            if us % 100_000 == 1000 { XCTAssertTrue(admit(&budget, everyPad, at: at)); XCTAssertTrue(admit(&budget, everyPad, at: at)) }
            if us % 4000 == 2000 { XCTAssertTrue(admit(&budget, single, at: at)) }
            if us % 5000 == 0 { XCTAssertTrue(admit(&budget, single, at: at)) }
        }
        XCTAssertEqual(budget.droppedTotal, 0, "\(budget.dropped)")
    }

    func testAPackedDatagramIsDroppedUnreadAndAFloodGetsTheBudgetsRate() {
        var budget = SessionBudget(limits: limits, now: .origin)
        XCTAssertFalse(admit(&budget, payload(messages: 466), at: .origin))
        XCTAssertEqual(budget.dropped[.messagesPerDatagram], 1)
        XCTAssertFalse(admit(&budget, payload(messages: 1, bodyBytes: 2000), at: .origin))
        XCTAssertEqual(budget.dropped[.bytesPerDatagram], 1)
        // A flood of small datagrams, 100 per millisecond for 2 s.
        for ms in 0..<2000 {
            for _ in 0..<100 { _ = admit(&budget, payload(messages: 1), at: .origin + .milliseconds(ms)) }
        }
        let burst = Double(limits.datagramsPerSecond) * (limits.burst / .seconds(1))
        let expected = Double(limits.datagramsPerSecond) * 2 + burst
        XCTAssertLessThanOrEqual(Double(budget.admitted), expected + 1)
        XCTAssertGreaterThanOrEqual(Double(budget.admitted), expected * 0.95, "the budget's own rate gets through")
        XCTAssertGreaterThan(budget.dropped[.datagramRate] ?? 0, 150_000)
    }

    func testMessagesAreBudgetedAcrossDatagrams() {
        var budget = SessionBudget(limits: limits, now: .origin)
        // The largest datagram allowed, sent at the datagram rate: the message rate binds first.
        let full = payload(messages: limits.messagesPerDatagram)
        for ms in 0..<1000 { for _ in 0..<3 { _ = admit(&budget, full, at: .origin + .milliseconds(ms)) } }
        XCTAssertGreaterThan(budget.dropped[.messageRate] ?? 0, 0)
        let messages = budget.admitted * limits.messagesPerDatagram
        XCTAssertLessThanOrEqual(Double(messages), Double(limits.messagesPerSecond) * (1 + limits.burst / .seconds(1)) + Double(limits.messagesPerDatagram))
    }

    func testHeadersAreCountedWithoutTrustingThem() {
        func count(_ bytes: [UInt8], _ limit: Int = 100) -> Int { bytes.withUnsafeBytes { SessionBudget.messageCount($0, upTo: limit) } }
        XCTAssertEqual(count([wireVersion]), 0)
        XCTAssertEqual(count(payload(messages: 3, bodyBytes: 5)), 3)
        XCTAssertEqual(count([wireVersion, 0x01]), 1, "a truncated header is one more")
        XCTAssertEqual(count([wireVersion, 0x01, 0xFF, 0xFF, 0]), 1, "a length past the end ends the walk")
        XCTAssertEqual(count(payload(messages: 466), 41), 41, "the walk stops at its limit")
    }
}
