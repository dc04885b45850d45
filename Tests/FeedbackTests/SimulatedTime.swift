import MonotonicTime

/// Simulated time for the schedulers under test, written as the offset from the clock's origin:
/// `now: .milliseconds(300)` reads as "300 ms in".
extension MonotonicInstant {
    static let zero = MonotonicInstant.origin
    static func milliseconds(_ count: Int) -> MonotonicInstant { .origin + .milliseconds(count) }
    static func seconds(_ count: Int) -> MonotonicInstant { .origin + .seconds(count) }
}
