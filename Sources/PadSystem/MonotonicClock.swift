import Foundation
import Glibc
import MonotonicTime

extension MonotonicInstant {
    /// Now on CLOCK_MONOTONIC: clock_gettime through the vDSO, no system call. The clock poll(2)
    /// and timerfd count, so a deadline becomes their timeout with no second clock in between.
    @inlinable
    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec))
    }
}

extension NSCondition {
    /// Waits for a signal until a monotonic deadline; false only once that deadline has passed.
    /// Foundation's own `wait(until:)` takes a wall-clock `Date`, which a clock step (NTP, a person
    /// setting the time) would stretch or cut short: each slice of the wait is short, and the
    /// deadline is checked on the monotonic clock between them.
    public func wait(until deadline: MonotonicInstant) -> Bool {
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            if wait(until: Date(timeIntervalSinceNow: min(left, Self.wallClockSlice).seconds)) { return true }
        }
    }

    private static let wallClockSlice: Duration = .milliseconds(100)
}
