import MonotonicTime
import XCTest

final class MonotonicInstantTests: XCTestCase {
    let t = MonotonicInstant(nanoseconds: 7_000_000_123)

    func testArithmeticIsExactToTheNanosecond() {
        XCTAssertEqual((t + .milliseconds(3)).nanoseconds, 7_003_000_123)
        XCTAssertEqual((t - .microseconds(1)).nanoseconds, 7_000_000_123 - 1_000)
        XCTAssertEqual(t + .nanoseconds(5) - t, .nanoseconds(5))
        XCTAssertEqual(t - (t + .seconds(2)), .seconds(-2))
        XCTAssertEqual(t.advanced(byNanoseconds: 877), MonotonicInstant(nanoseconds: 7_000_001_000))
        var u = t
        u += .seconds(1)
        u -= .milliseconds(500)
        XCTAssertEqual(u - t, .milliseconds(500))
    }

    func testOrderAndTheStandardInstantProtocol() {
        XCTAssertLessThan(t, t + .nanoseconds(1))
        XCTAssertGreaterThan(t, t - .nanoseconds(1))
        XCTAssertEqual(t.duration(to: t + .seconds(3)), .seconds(3))
        XCTAssertEqual(t.advanced(by: .seconds(1)), t + .seconds(1))
        XCTAssertEqual([t + .seconds(1), t, .origin].sorted(), [.origin, t, t + .seconds(1)])
    }

    func testDurationConversionsRoundDownAndSaturate() {
        XCTAssertEqual(Duration.nanoseconds(1_999_999).milliseconds, 1, "poll(2) timeouts round down here; callers round up")
        XCTAssertEqual(Duration.seconds(3).milliseconds, 3000)
        XCTAssertEqual(Duration.milliseconds(1500).seconds, 1.5)
        XCTAssertEqual(Duration.nanoseconds(1_234_567_891).wholeNanoseconds, 1_234_567_891)
        XCTAssertEqual(Duration.seconds(Int64.max).wholeNanoseconds, .max, "beyond ±292 years it saturates, never wraps")
        XCTAssertEqual(Duration.seconds(Int64.min).wholeNanoseconds, .min)
    }
}
