import MonotonicTime

/// The allowance a playout starts a stream with, measured instead of assumed: how far apart the
/// blocks of one stream arrive against their own pace (the link's jitter and the host's capture
/// jitter together), the spread of the last few seconds plus a margin, between a floor
/// and a ceiling (docs/haptics.md, "The allowance").
///
/// A block's transit is its arrival less its place in the sender's numbering (`number × block`):
/// on a steady path every block has the same transit, and the spread between the earliest and the
/// latest transit is what a playout must wait for. Spreads are measured within a stream (the
/// sender's numbering may pause between streams) and within a window of `window`; a spike in one
/// window is forgiven, one in two is remembered for `windows × window` and then forgotten; after a
/// quiet spell longer than that, the spread last measured stands.
///
/// Pure: callers pass `now`; no clock read, no allocation after `init`.
public struct JitterEstimate: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Before anything is measured.
        public var initial: Duration
        /// The least allowance: a wake-up's worth on a busy machine, where nothing measured says more.
        public var floor: Duration
        /// The most a stream starts with (a late block may still grow it, up to the playout's largest).
        public var ceiling: Duration
        /// Added to the measured spread.
        public var margin: Duration
        public init(initial: Duration = .milliseconds(20), floor: Duration = .milliseconds(2),
                    ceiling: Duration = .milliseconds(100), margin: Duration = .milliseconds(1)) {
            self.initial = initial; self.floor = floor; self.ceiling = ceiling; self.margin = margin
        }
    }

    /// How long one window of spreads covers, and how many are kept (8 s of memory).
    public static let window: Duration = .seconds(1)
    public static let windows = 8

    public let configuration: Configuration
    /// How long one numbered block lasts on the sender's clock.
    let block: Duration
    /// The spread measured in each window (zero: none), ring-indexed by window number.
    private var spreads: [Duration]
    private var windowOf: [Int64]
    /// This stream's earliest and latest transit in the window `spanWindow`.
    private var earliest: Duration?
    private var latest: Duration = .zero
    private var spanWindow: Int64 = .min
    /// Whether `earliest` is the transit of a stream's or burst's first block (`startStream`),
    /// which later ones are measured against; in a window the stream runs on into, the earliest.
    private var anchored = false
    private var measured = false
    /// The spread of the latest window measured: what a stream starts with after a quiet spell
    /// longer than the memory (the link as last seen, rather than the floor or the initial guess).
    private var lastSpread: Duration = .zero
    /// What the link's own pings say before any block was measured (`seed`).
    private var seeded: Duration?

    public init(block: Duration, configuration: Configuration = Configuration()) {
        self.block = block
        self.configuration = configuration
        spreads = [Duration](repeating: .zero, count: Self.windows)
        windowOf = [Int64](repeating: .min, count: Self.windows)
    }

    /// Before the first stream is measured, the link's jitter as its pings measured it (the median
    /// of the latest changes between successive round trips): a stream's spread is about four of them (a round
    /// trip's changes are both directions', a stream's spread the extremes of a second's worth),
    /// instead of `initial`. The host pad's own capture jitter is not in it: the floor covers a
    /// wake-up's worth, and a late block still grows the playout's allowance.
    /// The pings only ever lower `initial`: their first few at a connection's start (the TLS
    /// handshake, the host making its pad) are no stream's jitter, and one stall among them put
    /// a first burst at the ceiling; a stream's own blocks raise it.
    public mutating func seed(linkJitter: Duration) { seeded = linkJitter * 4 }

    /// A new stream or burst, placed at its first block's arrival: its transits are not compared
    /// with the last one's, and within the window it starts in they are measured against its
    /// first block's, not the earliest. A block that comes early against the first needs no
    /// allowance (the burst plays from its first block), and a game's audio starting on the host
    /// pad makes just that: the stream's first milliseconds reach the host at once (the card's
    /// queue filled at the start), the rest at the card's pace, so a click at the start and the
    /// host's silent block after it measured 7-15 ms apart and the next second's clicks waited it.
    public mutating func startStream() { earliest = nil }

    /// Block `number` (unwrapped, of the current stream) arrived at `now`.
    public mutating func observe(_ number: Int64, at now: MonotonicInstant) {
        // Transit on a scale where only differences matter: arrival less the block's place in
        // the numbering. Wrapping arithmetic: hostile numbers only make a large spread, which the
        // ceiling bounds.
        let transit = Duration.nanoseconds(now.nanoseconds &- number &* block.wholeNanoseconds)
        let w = now.nanoseconds / Self.window.wholeNanoseconds
        // Compared within a window only: two machines' clocks drift apart over a long stream
        // (tens of µs a second), which is the playout's to follow, not jitter to wait for.
        guard let first = earliest, w == spanWindow else {
            // A stream's first block (`startStream` cleared `earliest`), or a new window of one.
            anchored = earliest == nil
            earliest = transit
            latest = transit
            spanWindow = w
            return
        }
        if transit < first && !anchored { earliest = transit }
        if transit > latest { latest = transit }
        let spread = latest - earliest!
        let slot = Int(w.magnitude % UInt64(Self.windows))
        if windowOf[slot] != w { windowOf[slot] = w; spreads[slot] = .zero }
        if spread > spreads[slot] { spreads[slot] = spread }
        lastSpread = spreads[slot]
        measured = true
    }

    /// The allowance for a stream starting at `now`: the second largest spread of the remembered
    /// windows (the largest while only one was measured) plus the margin, within the floor and
    /// ceiling; `initial` before anything was measured. One window's spike is forgiven: it made a
    /// block or two late, which the playout plays whole by going back to them, where holding it
    /// for the memory's 8 s delayed every burst after it (an idle guest's single 8 ms spread set
    /// a click train's median past 15 ms). A spike in two windows of eight is the link's.
    public func allowance(at now: MonotonicInstant) -> Duration {
        guard measured else { return seeded.map { min(clamped($0), configuration.initial) } ?? configuration.initial }
        let w = now.nanoseconds / Self.window.wholeNanoseconds
        var largest: Duration?
        var second: Duration?
        for slot in 0..<Self.windows where windowOf[slot] > w - Int64(Self.windows) && windowOf[slot] <= w {
            let spread = spreads[slot]
            if let top = largest, spread <= top {
                if second.map({ spread > $0 }) ?? true { second = spread }
            } else {
                second = largest
                largest = spread
            }
        }
        return clamped(second ?? largest ?? lastSpread)
    }

    /// A spread plus the margin, within the floor and the ceiling.
    private func clamped(_ spread: Duration) -> Duration {
        min(max(spread + configuration.margin, configuration.floor), configuration.ceiling)
    }
}
