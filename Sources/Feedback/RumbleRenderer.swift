import HIDCodecs
import MonotonicTime

/// Turns a lossy, reordering stream of rumble messages into motor writes whose divergence from
/// the sender's intent is bounded (see docs/feedback.md):
///
/// - newest message wins (by sequence number); late, duplicated and stale messages are dropped;
/// - the same level repeated renews the lease but writes nothing;
/// - a motor going to zero is written at once; non-zero changes at most once per motor per `throttle`;
/// - every non-zero write is a finite segment, re-armed while the level holds, so a pad whose
///   writer dies (lost stop, crashed process) falls silent by itself within one segment;
/// - a lease that lapses without renewal silences the pad;
/// - an underlay (the host's haptics on a pad without voice coils, `HapticsEnvelope`) plays
///   while the messages ask for silence: the game's rumble wins. It has a lease of its own.
///
/// It never reads a clock: callers pass `now`, so tests and the benchmark drive it with simulated time.
public struct RumbleRenderer: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// Minimum time between two non-zero changes of one motor.
        public var throttle: Duration = .milliseconds(25)
        /// Length of each armed segment: the longest the motors run after padgate stops writing.
        public var segment: Duration = .milliseconds(200)
        /// Re-arm when this much of the segment is left, so a held level never gaps.
        public var rearmMargin: Duration = .milliseconds(100)
        /// Leases longer than this are shortened: a sender cannot make the pad rumble unattended for long.
        public var maximumTimeToLive: Duration = .seconds(2)
        public init() {}
        public init(throttle: Duration, segment: Duration, rearmMargin: Duration, maximumTimeToLive: Duration) {
            self.throttle = throttle; self.segment = segment; self.rearmMargin = rearmMargin; self.maximumTimeToLive = maximumTimeToLive
        }
    }

    public let configuration: Configuration
    /// What the sink was last told to run (silent after a stop).
    public private(set) var applied = MotorLevels.silent
    /// What the newest live message asks for (silent once its lease lapses).
    public private(set) var target = MotorLevels.silent
    /// The underlay's levels and when they lapse.
    public private(set) var underlay = MotorLevels.silent
    public private(set) var underlayEnds: MonotonicInstant?
    public private(set) var newestSequence: UInt64?
    public private(set) var leaseEnds: MonotonicInstant?
    public private(set) var segmentEnds: MonotonicInstant?
    public private(set) var isShutDown = false
    /// Counters for logs and the benchmark.
    public private(set) var droppedStale = 0, droppedDuplicates = 0, leaseLapses = 0

    private var inbox: [(message: RumbleMessage, arrived: MonotonicInstant)] = []
    private var lastAccepted: MonotonicInstant?
    private var lastChange: [MotorLevels.Motor: MonotonicInstant] = [:]

    public init(configuration: Configuration = Configuration()) {
        precondition(configuration.rearmMargin < configuration.segment, "the re-arm margin must be shorter than the segment")
        self.configuration = configuration
    }

    /// Queues a message; it takes effect at the next `step`.
    public mutating func receive(_ message: RumbleMessage, at now: MonotonicInstant) {
        inbox.append((message, now))
    }

    /// Levels below the messages' until `until` (each call replaces the last); they take effect at
    /// the next `step`.
    public mutating func receiveUnderlay(_ levels: MotorLevels, until: MonotonicInstant) {
        guard !isShutDown else { return }
        underlay = levels
        underlayEnds = levels.isSilent ? nil : until
    }

    /// What the motors should run at: the messages' target, or while that is silent the underlay.
    var wanted: MotorLevels { target.isSilent ? underlay : target }

    /// Drains the inbox, then says what the sink must do now (often nothing).
    public mutating func step(now: MonotonicInstant) -> [RumbleAction] {
        guard !isShutDown else { inbox.removeAll(); return [] }
        drainInbox()
        if let ends = leaseEnds, now >= ends {
            // Nobody renewed the lease: the sender is gone or the channel is dead.
            leaseEnds = nil
            target = .silent
            leaseLapses += 1
        }
        if let ends = underlayEnds, now >= ends {
            underlayEnds = nil
            underlay = .silent
        }
        let target = wanted
        var next = applied
        for motor in MotorLevels.Motor.allCases where target[motor] != applied[motor] {
            if target[motor] == 0 {
                next[motor] = 0
            } else if let last = lastChange[motor], now - last < configuration.throttle {
                continue  // keep the change for when the throttle window ends (see nextDeadline)
            } else {
                next[motor] = target[motor]
                lastChange[motor] = now
            }
        }
        if next.isSilent {
            let wasRunning = !applied.isSilent
            applied = .silent
            segmentEnds = nil
            return wasRunning ? [.stop] : []
        }
        let needsRearm = segmentEnds.map { $0 - now <= configuration.rearmMargin } ?? true
        guard next != applied || needsRearm else { return [] }
        applied = next
        segmentEnds = now + configuration.segment
        return [.play(next, segment: configuration.segment)]
    }

    /// When `step` must run next even if no message arrives: a throttled change, a re-arm or a lease end.
    public var nextDeadline: MonotonicInstant? {
        guard !isShutDown else { return nil }
        var deadlines: [MonotonicInstant] = []
        if let lease = leaseEnds { deadlines.append(lease) }
        if let lease = underlayEnds { deadlines.append(lease) }
        let target = wanted
        if let segment = segmentEnds { deadlines.append(segment - configuration.rearmMargin) }
        for motor in MotorLevels.Motor.allCases where target[motor] != applied[motor] && target[motor] != 0 {
            if let last = lastChange[motor] { deadlines.append(last + configuration.throttle) }
        }
        return deadlines.min()
    }

    /// The process is leaving (exit, signal, pad removal): silence the motors and accept nothing more.
    public mutating func shutdown() -> [RumbleAction] {
        isShutDown = true
        inbox.removeAll()
        target = .silent
        underlay = .silent
        applied = .silent
        segmentEnds = nil
        leaseEnds = nil
        underlayEnds = nil
        return [.stop]
    }

    private mutating func drainInbox() {
        guard !inbox.isEmpty else { return }
        let batch = inbox
        inbox.removeAll(keepingCapacity: true)
        for (message, arrived) in batch {
            if let newest = newestSequence {
                if message.sequence == newest { droppedDuplicates += 1; continue }
                // A lower number is stale (reordered), unless the sender has been quiet for longer than any
                // lease: then it restarted and began counting again.
                let quietForLong = lastAccepted.map { arrived - $0 > configuration.maximumTimeToLive } ?? true
                if message.sequence < newest && !quietForLong { droppedStale += 1; continue }
            }
            newestSequence = message.sequence
            lastAccepted = arrived
            target = message.levels
            let ttl = min(message.timeToLive, configuration.maximumTimeToLive)
            leaseEnds = message.levels.isSilent ? nil : arrived + ttl
        }
    }
}
