/// A moment on the client loop's monotonic clock, in nanoseconds. The per-report code keeps its
/// times in this plain integer because `ContinuousClock.Instant` is a resilient type: every
/// comparison, sum or optional of one is a call into the runtime, about 30 ns a report in all.
/// Durations in the API stay `Duration`, converted once where a policy is made.
public struct LoopInstant: Comparable, Hashable, Sendable {
    public var nanoseconds: Int64
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (t: Self, d: Duration) -> Self { Self(nanoseconds: t.nanoseconds &+ d.wholeNanoseconds) }
    public static func - (t: Self, d: Duration) -> Self { Self(nanoseconds: t.nanoseconds &- d.wholeNanoseconds) }
    public static func - (a: Self, b: Self) -> Duration { .nanoseconds(a.nanoseconds &- b.nanoseconds) }
    /// Plain nanoseconds on the hot path: no `Duration` in between.
    @inline(__always) func advanced(byNanoseconds n: Int64) -> Self { Self(nanoseconds: nanoseconds &+ n) }
}

extension Duration {
    /// Whole nanoseconds, rounded down; saturates beyond ±292 years.
    public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
