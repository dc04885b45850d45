import Foundation
import Glibc
import MonotonicTime
import PadSystem
import XCTest

final class MonotonicClockTests: XCTestCase {
    /// `now` is CLOCK_MONOTONIC itself (what poll(2) and timerfd count), not CLOCK_BOOTTIME or a private origin.
    func testNowReadsClockMonotonic() {
        var before = timespec(), after = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        let now = MonotonicInstant.now
        clock_gettime(CLOCK_MONOTONIC, &after)
        XCTAssertGreaterThanOrEqual(now.nanoseconds, Int64(before.tv_sec) * 1_000_000_000 + Int64(before.tv_nsec))
        XCTAssertLessThanOrEqual(now.nanoseconds, Int64(after.tv_sec) * 1_000_000_000 + Int64(after.tv_nsec))
    }

    func testConditionWaitEndsAtAMonotonicDeadline() {
        let condition = NSCondition()
        let started = MonotonicInstant.now
        condition.lock()
        let signalled = condition.wait(until: started + .milliseconds(30))
        condition.unlock()
        XCTAssertFalse(signalled, "nobody signalled")
        XCTAssertGreaterThanOrEqual(MonotonicInstant.now - started, .milliseconds(30), "not before its deadline")
        condition.lock()
        XCTAssertFalse(condition.wait(until: started), "a deadline already past returns at once")
        condition.unlock()
    }

    func testConditionWaitWakesWhenSignalled() {
        let condition = NSCondition()
        condition.lock()
        // The other thread can take the lock only once wait has released it: its signal comes while we wait.
        Thread.detachNewThread { condition.lock(); condition.signal(); condition.unlock() }
        let deadline = MonotonicInstant.now + .seconds(30)
        let woke = condition.wait(until: deadline)
        condition.unlock()
        XCTAssertTrue(woke)
        XCTAssertLessThan(MonotonicInstant.now, deadline)
    }
}
