import Glibc

/// poll(2) over a few descriptors: the one place padgate waits for devices, so that an idle pad
/// costs no wake-ups.
public enum Poll {
    public struct Readiness: Equatable, Sendable {
        public var readable: Bool
        public var hungUp: Bool
    }

    /// Waits until one of `descriptors` is readable or hung up, or `timeout` passes (nil: forever).
    /// For waits off the hot path; loops that wait per report keep a `PollSet`.
    public static func wait(_ descriptors: [Int32], timeout: Duration?) -> [Readiness] {
        var set = PollSet<Int>()
        for (index, descriptor) in descriptors.enumerated() { set.add(descriptor, index) }
        var readiness = [Readiness](repeating: Readiness(readable: false, hungUp: false), count: descriptors.count)
        set.wait(timeout: timeout) { index, ready in readiness[index] = ready }
        return readiness
    }
}

/// A poll(2) set kept between waits: descriptors are added once, each with the token the caller
/// wants back, and `wait` hands back the tokens of the ready ones. No allocation per wait once the
/// set has grown to its size; rebuild it (`removeAll`, `add`) when the descriptors change.
public struct PollSet<Token> {
    private var entries: [pollfd] = []
    private var tokens: [Token] = []

    public init() {}

    public var count: Int { entries.count }

    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        tokens.removeAll(keepingCapacity: true)
    }

    public mutating func add(_ descriptor: Int32, _ token: Token) {
        entries.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        tokens.append(token)
    }

    /// Waits until a descriptor is readable or hung up, or `timeout` passes (nil: forever), then
    /// calls `ready` for each such descriptor's token, in the order they were added.
    public mutating func wait(timeout: Duration?, _ ready: (Token, Poll.Readiness) throws -> Void) rethrows {
        // Rounded up: waking a fraction of a millisecond early would make a timed loop spin.
        // A past deadline polls once: poll(2) would read a negative timeout as "forever".
        let ms: Int32 = timeout.map { Int32(clamping: max(0, ($0 + .nanoseconds(999_999)).milliseconds)) } ?? -1
        while true {
            let n = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), ms) }
            if n < 0 && errno == EINTR { continue }
            break
        }
        for index in entries.indices where entries[index].revents != 0 {
            let revents = entries[index].revents
            entries[index].revents = 0
            let readiness = Poll.Readiness(readable: revents & Int16(POLLIN) != 0,
                                           hungUp: revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0)
            guard readiness.readable || readiness.hungUp else { continue }
            try ready(tokens[index], readiness)
        }
    }
}
