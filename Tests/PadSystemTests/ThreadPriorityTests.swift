import CLinuxInput
import Foundation
import PadSystem
import XCTest

final class ThreadPriorityTests: XCTestCase {
    func policy() -> (policy: Int32, priority: Int32) {
        var priority: Int32 = 0
        let policy = padgate_get_thread_scheduler(&priority)
        return (policy, priority)
    }

    /// The input loops run SCHED_FIFO where the process may, and a caller's thread gets its own
    /// policy back afterwards (tests run the forwarder on XCTest's main thread).
    func testInputRunsRealTimeWherePermittedAndTheThreadGetsItsPolicyBack() {
        let before = policy()
        let permitted = geteuid() == 0
        let inside = ThreadPriority.raisedForInput { policy() }
        if permitted {
            XCTAssertEqual(inside.policy & ~0x4000_0000, 1, "SCHED_FIFO inside (reset-on-fork flag aside)")
            XCTAssertEqual(inside.priority, ThreadPriority.input)
        } else {
            XCTAssertEqual(inside.policy, before.policy, "unprivileged: unchanged")
        }
        let after = policy()
        XCTAssertEqual(after.policy, before.policy)
        XCTAssertEqual(after.priority, before.priority)
    }
}
