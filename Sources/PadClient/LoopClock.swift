import PadSystem
import WireProtocol

extension LoopInstant {
    /// Now on CLOCK_MONOTONIC (clock_gettime through the vDSO: no system call).
    @inline(__always)
    public static var now: LoopInstant { LoopInstant(nanoseconds: MonotonicClock.nanoseconds) }
}
