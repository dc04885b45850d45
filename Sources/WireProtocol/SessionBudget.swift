import MonotonicTime

/// What one client's session may send the host, enforced on each authentic datagram before any
/// per-message work (docs/security.md, "Fairness"): a flood from one paired client is dropped
/// and counted for the price of opening it, and costs the other clients nothing measurable.
///
/// Sized from what a real client sends, with room to spare: a pad reports at most every 4 ms
/// (a USB DualSense, 250 Hz) and `forward` sends at most one datagram per report, carrying its
/// state, touch, motion and battery (4 messages); beside that, pings at probe rate (250/s) and the
/// microphone's 5 ms frames (200/s), and re-sends after loss.
public struct SessionBudget: Sendable {
    public struct Limits: Equatable, Sendable {
        /// Datagrams per second, sustained; `burst` seconds' worth may come at once.
        public var datagramsPerSecond: Int
        /// Messages per second, sustained, over every datagram.
        public var messagesPerSecond: Int
        /// Messages one datagram may carry.
        public var messagesPerDatagram: Int
        /// Bytes of one datagram's opened payload.
        public var bytesPerDatagram: Int
        /// How much of a second's budget may be spent at once (a pass that woke late sends what it owes).
        public var burst: Duration = .milliseconds(250)

        /// A pad's reports per second at most (USB DualSense), and the messages each carries.
        public static let reportsPerSecond = 250
        public static let messagesPerReport = 4
        /// Pings (probe rate), microphone frames and re-sends: per session, beside the pads.
        public static let sessionDatagramsPerSecond = 250 + 200 + 50

        /// Twice what `pads` pads at full rate and the session's own traffic send.
        public static func forPads(_ pads: Int, bytesPerDatagram: Int) -> Limits {
            let datagrams = pads * reportsPerSecond + sessionDatagramsPerSecond
            return Limits(datagramsPerSecond: 2 * datagrams,
                          messagesPerSecond: 2 * (pads * reportsPerSecond * messagesPerReport + sessionDatagramsPerSecond),
                          messagesPerDatagram: 2 * (pads * messagesPerReport + 2),
                          bytesPerDatagram: bytesPerDatagram)
        }

        public init(datagramsPerSecond: Int, messagesPerSecond: Int, messagesPerDatagram: Int, bytesPerDatagram: Int) {
            self.datagramsPerSecond = datagramsPerSecond; self.messagesPerSecond = messagesPerSecond
            self.messagesPerDatagram = messagesPerDatagram; self.bytesPerDatagram = bytesPerDatagram
        }
    }

    /// Why a datagram was dropped.
    public enum Excess: String, CaseIterable, Sendable {
        case datagramRate = "datagram rate", messageRate = "message rate"
        case messagesPerDatagram = "messages per datagram", bytesPerDatagram = "bytes per datagram"
    }

    public let limits: Limits
    /// Datagrams dropped, by reason; what was admitted.
    public private(set) var dropped: [Excess: Int] = [:]
    public private(set) var admitted = 0
    public var droppedTotal: Int { dropped.values.reduce(0, +) }

    /// Token buckets in millionths of a datagram and of a message, refilled by elapsed time: a
    /// rate per second is then exactly that many millionths per microsecond.
    private var datagramTokens: Int64
    private var messageTokens: Int64
    private var refilledAt: MonotonicInstant

    public init(limits: Limits, now: MonotonicInstant) {
        self.limits = limits
        datagramTokens = Self.capacity(limits.datagramsPerSecond, limits.burst)
        messageTokens = Self.capacity(limits.messagesPerSecond, limits.burst)
        refilledAt = now
    }

    static let token: Int64 = 1_000_000

    static func capacity(_ perSecond: Int, _ burst: Duration) -> Int64 {
        max(token, Int64(perSecond) * max(0, Int64(burst / .microseconds(1))))
    }

    /// Whether the datagram's payload may be decoded. Reads only its message headers, at most
    /// `messagesPerDatagram + 1` of them: a datagram that carries more is dropped unread.
    public mutating func admit(_ payload: UnsafeRawBufferPointer, now: MonotonicInstant) -> Bool {
        guard payload.count <= limits.bytesPerDatagram else { return drop(.bytesPerDatagram) }
        refill(now: now)
        guard datagramTokens >= Self.token else { return drop(.datagramRate) }
        let messages = Self.messageCount(payload, upTo: limits.messagesPerDatagram + 1)
        guard messages <= limits.messagesPerDatagram else { return drop(.messagesPerDatagram) }
        guard messageTokens >= Int64(messages) * Self.token else { return drop(.messageRate) }
        datagramTokens -= Self.token
        messageTokens -= Int64(messages) * Self.token
        admitted += 1
        return true
    }

    private mutating func drop(_ why: Excess) -> Bool {
        dropped[why, default: 0] += 1
        return false
    }

    private mutating func refill(now: MonotonicInstant) {
        guard now > refilledAt else { return }
        let micros = min(Int64((now - refilledAt) / .microseconds(1)), 10_000_000)
        guard micros > 0 else { return }
        refilledAt = micros == 10_000_000 ? now : refilledAt + .microseconds(micros)
        datagramTokens = min(Self.capacity(limits.datagramsPerSecond, limits.burst), datagramTokens + micros * Int64(limits.datagramsPerSecond))
        messageTokens = min(Self.capacity(limits.messagesPerSecond, limits.burst), messageTokens + micros * Int64(limits.messagesPerSecond))
    }

    /// The messages of a payload (`version u8`, then `type u8 | length u16 | body` each), counted
    /// by their headers alone, up to `limit`; a truncated tail counts as one more.
    public static func messageCount(_ payload: UnsafeRawBufferPointer, upTo limit: Int) -> Int {
        var offset = 1, count = 0
        while offset < payload.count && count < limit {
            count += 1
            guard offset + 3 <= payload.count else { break }
            let length = Int(payload[offset + 1]) << 8 | Int(payload[offset + 2])
            offset += 3 + length
        }
        return count
    }
}
