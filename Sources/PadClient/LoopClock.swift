import Glibc
import WireProtocol

extension LoopInstant {
    /// Now on CLOCK_MONOTONIC (clock_gettime through the vDSO: no system call).
    public static var now: LoopInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return LoopInstant(nanoseconds: Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec))
    }
}
