import MonotonicTime
import XCTest
@testable import PadHost

/// The control thread's accept budgets, on simulated time: what bounds the TLS handshakes strangers can start.
final class AcceptThrottleTests: XCTestCase {
    let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
    var limits: PadServer.Limits {
        var limits = PadServer.Limits()
        limits.handshakesPerSecond = 10
        limits.handshakesPerSecondPerAddress = 2
        return limits
    }

    func testAnAddressOverItsOwnRateCannotSpendTheOverallBudget() {
        var throttle = AcceptThrottle(limits: limits, now: t0)
        // Its burst is twice its rate: 4 at once, then nothing until a token refills (500 ms).
        XCTAssertEqual((0..<6).map { _ in throttle.takeHandshake(from: "203.0.113.9", now: t0) }, [true, true, true, true, false, false])
        // The overall budget (10) lost only the 4 it granted: six other addresses still get theirs.
        XCTAssertEqual((0..<6).map { throttle.takeHandshake(from: "198.51.100.\($0)", now: t0) }, Array(repeating: true, count: 6))
        XCTAssertFalse(throttle.takeHandshake(from: "198.51.100.99", now: t0), "the overall budget is spent")
        XCTAssertTrue(throttle.takeHandshake(from: "203.0.113.9", now: t0 + .milliseconds(500)), "a token each for it and overall by then")
    }

    func testOutOfHandshakesPausesAcceptingUntilOneRefills() {
        var throttle = AcceptThrottle(limits: limits, now: t0)
        for i in 0..<10 { XCTAssertTrue(throttle.takeHandshake(from: "192.0.2.\(i)", now: t0)) }
        XCTAssertFalse(throttle.mayAccept(now: t0))
        XCTAssertEqual(throttle.pausedUntil, t0 + .milliseconds(100), "one token refills in 1/10 s")
        XCTAssertTrue(throttle.isPaused(now: t0 + .milliseconds(99)))
        XCTAssertFalse(throttle.isPaused(now: t0 + .milliseconds(100)))
        XCTAssertNil(throttle.pausedUntil)
        XCTAssertTrue(throttle.mayAccept(now: t0 + .milliseconds(100)))
    }

    func testTheResourcePauseDoublesWithinItsRangeAndResetsOnAnAccept() {
        var throttle = AcceptThrottle(limits: limits, now: t0)
        let pauses = (0..<8).map { _ in throttle.outOfResources(now: t0) }
        XCTAssertEqual(pauses.first, AcceptThrottle.backoffRange.lowerBound)
        XCTAssertEqual(pauses[1], AcceptThrottle.backoffRange.lowerBound * 2)
        XCTAssertEqual(pauses.last, AcceptThrottle.backoffRange.upperBound, "never longer than the range allows")
        XCTAssertEqual(throttle.pausedUntil, t0 + AcceptThrottle.backoffRange.upperBound)
        throttle.accepted()
        XCTAssertEqual(throttle.outOfResources(now: t0), AcceptThrottle.backoffRange.lowerBound)
    }

    func testMemoryStaysBoundedBeyondTheTrackedNumberOfAddresses() {
        var throttle = AcceptThrottle(limits: limits, now: t0)
        // More distinct addresses than are tracked, one handshake each, 100 ms apart.
        var now = t0
        for i in 0..<(AcceptThrottle.trackedAddresses + 100) {
            now = now + .milliseconds(100)  // keeps the overall budget in tokens
            XCTAssertTrue(throttle.takeHandshake(from: "addr-\(i)", now: now), "address \(i)")
        }
        XCTAssertLessThanOrEqual(throttle.trackedCount, AcceptThrottle.trackedAddresses)
        // And an address that spent its burst lately is one of those still remembered.
        let greedy = "203.0.113.77"
        XCTAssertEqual((0..<5).map { _ in throttle.takeHandshake(from: greedy, now: now) }, [true, true, true, true, false])
        XCTAssertTrue(throttle.takeHandshake(from: "one-more", now: now + .milliseconds(100)))
        XCTAssertFalse(throttle.takeHandshake(from: greedy, now: now + .milliseconds(200)), "its spent budget was kept, not forgotten as full")
    }
}
