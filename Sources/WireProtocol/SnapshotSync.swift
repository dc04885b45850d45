import MonotonicTime

/// Snapshot-diff on a lossy channel. The client sends a pad's state when it changes, re-sends it
/// on a schedule that starts fast and settles at the keep-alive; with independent loss p per
/// datagram, the host holds the client's state once k sends have gone out with probability
/// 1 - p^k (docs/wire.md, "Convergence after loss").
public struct SnapshotSender: Sendable {
    /// When to send the latest state again: quickly after a change, so that a lost datagram costs
    /// tens of milliseconds, then slowly as the host's keep-alive (docs/wire.md, "Convergence").
    public struct Schedule: Sendable, Equatable {
        /// Gaps between the re-sends that follow a change.
        public var afterChange: [Duration]
        /// The gap once those are spent: the keep-alive, well inside the host's state lease.
        public var keepAlive: Duration
        public init(afterChange: [Duration], keepAlive: Duration) { self.afterChange = afterChange; self.keepAlive = keepAlive }

        public static let standard = Schedule(afterChange: [.milliseconds(20), .milliseconds(40), .milliseconds(80), .milliseconds(160)],
                                              keepAlive: .milliseconds(200))
        /// A fixed interval, for comparison and tests.
        public static func every(_ interval: Duration) -> Schedule { Schedule(afterChange: [], keepAlive: interval) }

        func gap(after resends: Int) -> Duration { resends < afterChange.count ? afterChange[resends] : keepAlive }

        /// How many times a state has been sent by `elapsed` after it changed (the change itself included).
        public func sends(within elapsed: Duration) -> Int {
            var at: Duration = .zero, count = 1
            while true {
                at += gap(after: count - 1)
                guard at <= elapsed else { return count }
                count += 1
            }
        }
    }

    public let slot: PadSlot
    public let schedule: Schedule
    /// The schedule's gaps in nanoseconds, worked out once: `nextResend` runs every pass.
    private let gapNanoseconds: [Int64]
    private let keepAliveNanoseconds: Int64
    public private(set) var latest: PadStateSnapshot
    private var lastSentAt: MonotonicInstant?
    private var resendsSinceChange = 0

    public init(slot: PadSlot, schedule: Schedule = .standard) {
        self.slot = slot
        self.schedule = schedule
        gapNanoseconds = schedule.afterChange.map(\.wholeNanoseconds)
        keepAliveNanoseconds = schedule.keepAlive.wholeNanoseconds
        latest = .neutral(slot)
    }

    /// The snapshot to send now, if the controls changed.
    public mutating func update(_ controls: PadStateSnapshot, now: MonotonicInstant) -> PadStateSnapshot? {
        guard lastSentAt == nil || !controls.sameControls(as: latest) else { return nil }
        var next = controls
        next.slot = slot
        next.sequence = latest.sequence.next
        latest = next
        lastSentAt = now
        resendsSinceChange = 0
        return next
    }

    /// The latest snapshot again, if the schedule says it is time.
    public mutating func resendIfDue(now: MonotonicInstant) -> PadStateSnapshot? {
        guard let due = nextResend, now >= due else { return nil }
        lastSentAt = now
        resendsSinceChange += 1
        return latest
    }

    /// When `resendIfDue` will next have something: the sender's only timer.
    public var nextResend: MonotonicInstant? {
        guard let lastSentAt else { return nil }
        let gap = resendsSinceChange < gapNanoseconds.count ? gapNanoseconds[resendsSinceChange] : keepAliveNanoseconds
        return lastSentAt.advanced(byNanoseconds: gap)
    }
}

/// The host's side: keeps the newest snapshot per pad, and knows when the client went silent.
public struct SnapshotReceiver: Sendable {
    public private(set) var current: PadStateSnapshot?
    public private(set) var lastHeard: MonotonicInstant?
    public private(set) var staleDropped = 0
    /// With no snapshot for this long, the host releases every control (docs/wire.md).
    public var lease: Duration

    public init(lease: Duration = .milliseconds(1000)) { self.lease = lease }

    /// The pad was announced: its lease runs from now, and the first state is taken whatever its
    /// sequence (a client that has been sending for a while is far from 0).
    public mutating func start(now: MonotonicInstant) { lastHeard = now }

    /// True when `snapshot` changes what the virtual pad should show.
    public mutating func accept(_ snapshot: PadStateSnapshot, now: MonotonicInstant) -> Bool {
        if let current, !snapshot.sequence.isNewer(than: current.sequence) {
            if snapshot.sequence == current.sequence { lastHeard = now } else { staleDropped += 1 }
            return false
        }
        lastHeard = now
        let changed = current.map { !$0.sameControls(as: snapshot) } ?? true
        current = snapshot
        return changed
    }

    public func leaseExpired(now: MonotonicInstant) -> Bool {
        guard let lastHeard else { return false }
        return now - lastHeard > lease
    }
}
