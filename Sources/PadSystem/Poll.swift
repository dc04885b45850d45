import Glibc
import MonotonicTime

/// What a poll(2) waits for on a descriptor.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
}

/// poll(2) over a few descriptors: the one place padgate waits for devices and sockets, so that
/// an idle pad costs no wake-ups.
public enum Poll {
    public struct Readiness: Equatable, Sendable {
        public var readable: Bool
        public var writable: Bool = false
        public var hungUp: Bool
    }

    /// Waits until one of `descriptors` is readable or hung up, or `timeout` passes (nil: forever).
    /// For waits off the hot path; loops that wait per report keep a `PollSet`.
    public static func wait(_ descriptors: [FileDescriptor], timeout: Duration?) -> [Readiness] {
        var set = PollSet<Int>()
        for (index, descriptor) in descriptors.enumerated() { set.add(descriptor, index) }
        var readiness = [Readiness](repeating: Readiness(readable: false, hungUp: false), count: descriptors.count)
        set.wait(timeout: timeout) { index, ready in readiness[index] = ready }
        return readiness
    }

    /// Waits for `events` on one descriptor until `deadline`: true when they came (or the
    /// descriptor failed, which the next call on it reports), false at the deadline or at the
    /// first SIGINT/SIGTERM once `SignalTrap` is installed (`SignalTrap.fired` tells which). These
    /// are the waits for a remote peer (connect, handshake, a control frame), seconds long: a
    /// command asked to stop must not sit them out.
    public static func wait(for events: PollEvents, on descriptor: FileDescriptor, until deadline: MonotonicInstant) -> Bool {
        var set = PollSet<Bool>()
        set.add(descriptor, true, events: events)
        set.addSignalTrap(false)
        while !SignalTrap.fired {
            let left = deadline - .now
            guard left > .zero else { return false }
            var happened = false
            set.wait(timeout: left) { isPeer, _ in happened = happened || isPeer }
            if happened { return true }
        }
        return false
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

    /// Wakes the wait at the first SIGINT/SIGTERM, with `token`, once a command installed the
    /// trap (before that, signals keep their default). Every loop that must stop promptly adds it.
    public mutating func addSignalTrap(_ token: Token) {
        if SignalTrap.installed { add(SignalTrap.descriptor, token) }
    }

    public mutating func add(_ descriptor: FileDescriptor, _ token: Token, events: PollEvents = .readable) {
        entries.append(pollfd(fd: descriptor.rawValue, events: events.rawValue, revents: 0))
        tokens.append(token)
    }

    /// Waits until a descriptor is ready or hung up, or `timeout` passes (nil: forever), then
    /// calls `ready` for each such descriptor's token, in the order they were added.
    public mutating func wait(timeout: Duration?, _ ready: (Token, Poll.Readiness) throws -> Void) rethrows {
        // Rounded up: waking a fraction of a millisecond early would make a timed loop spin.
        // A past deadline polls once: poll(2) would read a negative timeout as "forever".
        let ms: Int32 = timeout.map { Int32(clamping: max(0, ($0 + .nanoseconds(999_999)).milliseconds)) } ?? -1
        // poll(2) fails only on a bad set (EFAULT, EINVAL) or ENOMEM: the loop comes round again.
        let n = (try? SystemCall.retrying("poll") { entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), ms) } }) ?? 0
        guard n > 0 else { return }
        for index in entries.indices where entries[index].revents != 0 {
            let revents = entries[index].revents
            entries[index].revents = 0
            let readiness = Poll.Readiness(readable: revents & Int16(POLLIN) != 0,
                                           writable: revents & Int16(POLLOUT) != 0,
                                           hungUp: revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0)
            guard readiness.readable || readiness.writable || readiness.hungUp else { continue }
            try ready(tokens[index], readiness)
        }
    }
}
