/// Snapshot-diff on a lossy channel. The client sends a pad's state when it changes and re-sends
/// the latest one every `resendInterval` while nothing changes; the re-send doubles as the
/// host's lease keep-alive. With independent loss p per datagram, the host holds the client's
/// state within `latency + k * resendInterval` with probability 1 - p^k (docs/wire.md).
public struct SnapshotSender: Sendable {
    public let slot: PadSlot
    public var resendInterval: Duration
    public private(set) var latest: PadStateSnapshot
    private var lastSentAt: ContinuousClock.Instant?

    public init(slot: PadSlot, resendInterval: Duration = .milliseconds(100)) {
        self.slot = slot
        self.resendInterval = resendInterval
        latest = .neutral(slot)
    }

    /// The snapshot to send now, if the controls changed.
    public mutating func update(_ controls: PadStateSnapshot, now: ContinuousClock.Instant) -> PadStateSnapshot? {
        guard lastSentAt == nil || !controls.sameControls(as: latest) else { return nil }
        var next = controls
        next.slot = slot
        next.sequence = latest.sequence.next
        latest = next
        lastSentAt = now
        return next
    }

    /// The latest snapshot again, if it has not been sent for `resendInterval`.
    public mutating func resendIfDue(now: ContinuousClock.Instant) -> PadStateSnapshot? {
        guard let sent = lastSentAt, now - sent >= resendInterval else { return nil }
        lastSentAt = now
        return latest
    }

    /// When `resendIfDue` will next have something: the sender's only timer.
    public var nextResend: ContinuousClock.Instant? { lastSentAt.map { $0 + resendInterval } }
}

/// The host's side: keeps the newest snapshot per pad, and knows when the client went silent.
public struct SnapshotReceiver: Sendable {
    public private(set) var current: PadStateSnapshot?
    public private(set) var lastHeard: ContinuousClock.Instant?
    public private(set) var staleDropped = 0
    /// With no snapshot for this long, the host releases every control (docs/wire.md).
    public var lease: Duration

    public init(lease: Duration = .milliseconds(1000)) { self.lease = lease }

    /// True when `snapshot` changes what the virtual pad should show.
    public mutating func accept(_ snapshot: PadStateSnapshot, now: ContinuousClock.Instant) -> Bool {
        if let current, !snapshot.sequence.isNewer(than: current.sequence) {
            if snapshot.sequence == current.sequence { lastHeard = now } else { staleDropped += 1 }
            return false
        }
        lastHeard = now
        let changed = current.map { !$0.sameControls(as: snapshot) } ?? true
        current = snapshot
        return changed
    }

    public func leaseExpired(now: ContinuousClock.Instant) -> Bool {
        guard let lastHeard else { return false }
        return now - lastHeard > lease
    }
}
