import Foundation
import Glibc
import MonotonicTime

extension MonotonicInstant {
    /// Now on CLOCK_MONOTONIC: clock_gettime through the vDSO, no system call. The same clock
    /// poll(2) and timerfd count, so a deadline converts to their timeouts exactly.
    @inlinable
    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec))
    }
}

extension NSCondition {
    /// Waits for a signal until a monotonic deadline. Foundation's own `wait(until:)` takes a wall-clock
    /// `Date`, which a clock step (NTP, a person setting the time) would stretch or cut short.
    public func wait(until deadline: MonotonicInstant) -> Bool {
        let left = deadline - .now
        return left > .zero && wait(until: Date(timeIntervalSinceNow: left.seconds))
    }
}
