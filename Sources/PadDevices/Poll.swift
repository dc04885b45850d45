import Glibc

/// poll(2) over a few descriptors: the one place padgate waits for devices, so that an idle pad
/// costs no wake-ups.
public enum Poll {
    public struct Readiness: Equatable, Sendable {
        public var readable: Bool
        public var hungUp: Bool
    }

    /// Waits until one of `descriptors` is readable or hung up, or `timeout` passes (nil: forever).
    public static func wait(_ descriptors: [Int32], timeout: Duration?) -> [Readiness] {
        var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // Rounded up: waking a fraction of a millisecond early would make a timed loop spin.
        // A past deadline polls once: poll(2) would read a negative timeout as "forever".
        let ms: Int32 = timeout.map { Int32(clamping: max(0, ($0 + .nanoseconds(999_999)).milliseconds)) } ?? -1
        while true {
            let n = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), ms) }
            if n < 0 && errno == EINTR { continue }
            break
        }
        return fds.map {
            Readiness(readable: $0.revents & Int16(POLLIN) != 0,
                      hungUp: $0.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0)
        }
    }
}
