import CLinuxInput
import Glibc

/// A timerfd: a descriptor that becomes readable every `interval`, so a timed source sits in the
/// same poll(2) as the sockets instead of needing a thread.
public final class PeriodicTimer {
    public let fileDescriptor: Int32

    public init(interval: Duration) throws {
        fileDescriptor = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fileDescriptor >= 0 else { throw DeviceError.systemCall("timerfd_create", path: "(timer)", errno: errno) }
        let nanos = Int(interval / .nanoseconds(1))
        let period = timespec(tv_sec: nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        var spec = itimerspec(it_interval: period, it_value: period)
        timerfd_settime(fileDescriptor, 0, &spec, nil)
    }

    deinit { close(fileDescriptor) }

    /// How many periods passed since the last call (0 when none).
    public func takeExpirations() -> UInt64 {
        var count: UInt64 = 0
        return read(fileDescriptor, &count, 8) == 8 ? count : 0
    }
}
