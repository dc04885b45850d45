import Glibc

/// CLOCK_MONOTONIC as plain nanoseconds, for loops that keep their times as integers
/// (`ContinuousClock.Instant` is resilient: each use of one is a call into the runtime).
public enum MonotonicClock {
    /// clock_gettime through the vDSO: no system call.
    @inlinable
    public static var nanoseconds: Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}
