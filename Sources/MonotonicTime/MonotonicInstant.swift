/// A point on CLOCK_MONOTONIC, in nanoseconds: the one type for "when" in padgate.
///
/// An integer rather than `ContinuousClock.Instant`, which is resilient (every comparison and
/// addition is a call into the runtime) and which reads CLOCK_BOOTTIME on Linux, while poll(2)
/// and timerfd count CLOCK_MONOTONIC. Reading the clock (`now`) is
/// the system layer's job (PadSystem); this module stays pure so codecs, the wire format and the
/// rumble scheduler take their time as a parameter and are tested with any instant they like.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's zero (boot, for CLOCK_MONOTONIC): where simulated time in tests and benchmarks starts.
    public static let origin = MonotonicInstant(nanoseconds: 0)

    @inlinable public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }
    @inlinable public static func + (t: Self, d: Duration) -> Self { Self(nanoseconds: t.nanoseconds &+ d.wholeNanoseconds) }
    @inlinable public static func - (t: Self, d: Duration) -> Self { Self(nanoseconds: t.nanoseconds &- d.wholeNanoseconds) }
    @inlinable public static func - (a: Self, b: Self) -> Duration { .nanoseconds(a.nanoseconds &- b.nanoseconds) }
    @inlinable public static func += (t: inout Self, d: Duration) { t = t + d }
    @inlinable public static func -= (t: inout Self, d: Duration) { t = t - d }

    /// Plain nanoseconds on the hot path: no `Duration` in between.
    @inlinable public func advanced(byNanoseconds n: Int64) -> Self { Self(nanoseconds: nanoseconds &+ n) }

    public var description: String { "\(Double(nanoseconds) / 1e9) s" }
}

extension MonotonicInstant: InstantProtocol {
    @inlinable public func advanced(by duration: Duration) -> Self { self + duration }
    @inlinable public func duration(to other: Self) -> Duration { other - self }
}

/// The conversions syscalls, timers and printed figures want, in one place.
extension Duration {
    /// Whole nanoseconds, rounded down; saturates beyond ±292 years.
    @inlinable public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
    /// Whole milliseconds, rounded down (poll(2), hidapi, FF replay lengths).
    public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    /// Seconds as a floating-point number (Foundation's sleeps and dates, printed times).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
