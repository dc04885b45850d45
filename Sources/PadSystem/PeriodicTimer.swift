import CLinuxInput
import Glibc

/// A timerfd: a descriptor that becomes readable every `interval`, so a timed source sits in the
/// same poll(2) as the sockets instead of needing a thread.
public final class PeriodicTimer {
    private let owned: OwnedDescriptor

    public init(interval: Duration) throws(SystemCallError) {
        owned = try OwnedDescriptor("timerfd_create") { timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC)) }
        let nanos = Int(interval / .nanoseconds(1))
        let period = timespec(tv_sec: nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        var spec = itimerspec(it_interval: period, it_value: period)
        _ = try SystemCall.retrying("timerfd_settime") { timerfd_settime(owned.rawValue, 0, &spec, nil) }
    }

    public var descriptor: FileDescriptor { owned.descriptor }

    /// How many periods passed since the last call (0 when none).
    public func takeExpirations() -> UInt64 {
        var count: UInt64 = 0
        let n = (try? withUnsafeMutableBytes(of: &count) { (bytes) throws(SystemCallError) in try owned.descriptor.read(into: bytes) }) ?? 0
        return n == 8 ? count : 0
    }
}
