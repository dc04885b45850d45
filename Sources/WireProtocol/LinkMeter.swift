/// Reads the link from pings and their pongs (docs/link-test.md): round trip, jitter, loss each
/// way, reordering and duplicates. `padgate probe`, `forward`'s status line and (through the
/// figures each ping carries) `host status` all use this one reckoning.
public struct LinkMeter: Sendable {
    /// Round trips kept for the percentiles: the latest ones, so a long run costs a bound. Kept
    /// in storage made once, so that answering a pong allocates nothing.
    public let keptSamples: Int
    private var roundTrips: [UInt32] = []
    /// TCP's smoothed round trip (RFC 6298, gain 1/8): what the live figures show.
    private var smoothedRoundTrip: Double?
    private var next = 0
    private var firstID: UInt32?
    public private(set) var sent = 0
    private var pongs = 0
    /// The host's tally in the pong with the highest ordinal so far.
    private var latestTally = PingTally()
    private var reorderedToClient = 0
    /// Differences between consecutive round trips: one per pong after the first.
    private var jitterSum: Double = 0
    private var jitterCount: Int { max(0, pongs - 1) }
    private var lastRoundTrip: UInt32?
    /// The latest changes between consecutive round trips, ring-indexed: `recentJitter`'s median.
    public static let recentChanges = 16
    private var changes = [UInt32](repeating: 0, count: LinkMeter.recentChanges)

    public init(keptSamples: Int = 8192) {
        self.keptSamples = max(1, keptSamples)
        roundTrips.reserveCapacity(self.keptSamples)
    }

    /// A ping went out (ids count up by one from the first).
    public mutating func sent(id: UInt32) {
        if firstID == nil { firstID = id }
        sent += 1
    }

    /// A pong came back `roundTripMicros` after its ping left.
    public mutating func answered(_ probe: Probe, roundTripMicros: UInt32) {
        pongs += 1
        if roundTrips.count < keptSamples { roundTrips.append(roundTripMicros) } else { roundTrips[next] = roundTripMicros; next = (next + 1) % keptSamples }
        smoothedRoundTrip = smoothedRoundTrip.map { $0 + (Double(roundTripMicros) - $0) / 8 } ?? Double(roundTripMicros)
        if let last = lastRoundTrip {
            let change = roundTripMicros > last ? roundTripMicros - last : last - roundTripMicros
            changes[(jitterCount - 1) % Self.recentChanges] = change
            jitterSum += Double(change)
        }
        lastRoundTrip = roundTripMicros
        let tally = probe.tally
        if tally.received <= latestTally.received { reorderedToClient += 1 }
        if tally.received >= latestTally.received { latestTally = tally }
    }

    /// Forgets everything: a new session counts its pings from one again.
    public mutating func reset() { self = LinkMeter(keptSamples: keptSamples) }

    /// The live figures, without sorting or allocating: smoothed round trip, mean jitter, loss so
    /// far. Each ping carries them to the host; `forward`'s status line shows them.
    public var figures: LinkFigures {
        let (up, down) = loss
        return LinkFigures(roundTripMicros: smoothedRoundTrip.map { UInt32(clamping: Int($0.rounded())) } ?? 0,
                           jitterMicros: jitterCount > 0 ? UInt32(clamping: Int((jitterSum / Double(jitterCount)).rounded())) : 0,
                           lossToHostPermille: UInt16((min(1, up ?? 0) * 1000).rounded()),
                           lossToClientPermille: UInt16((min(1, down ?? 0) * 1000).rounded()))
    }

    /// The median of the latest `recentChanges` changes between consecutive round trips, nil
    /// before the second pong: the link's jitter as a playout should start from it. The mean (the
    /// link test's figure) is the whole session's, and one stall among a session's first pings
    /// (its handshake, the host making its pad) raised it to four times the steady figure in the
    /// test guest, which started the first haptics burst at the largest guess. No allocation.
    public var recentJitter: Duration? {
        let count = min(jitterCount, Self.recentChanges)
        guard count > 0 else { return nil }
        // The lower median by rank: the least change with at least half the others at or below it.
        var median = UInt32.max
        for i in 0..<count {
            var below = 0
            for j in 0..<count where changes[j] <= changes[i] { below += 1 }
            if below * 2 >= count, changes[i] < median { median = changes[i] }
        }
        return .microseconds(Int64(median))
    }

    /// Loss each way, as fractions; nil until a pong came back. Only pings up to the highest the
    /// host had seen can be judged: later ones may still be in flight.
    private var loss: (toHost: Double?, toClient: Double?) {
        guard let firstID, latestTally.received > 0 else { return (nil, nil) }
        let span = Double(latestTally.highestID &- firstID) + 1
        return (max(0, 1 - Double(latestTally.received) / span), max(0, 1 - Double(pongs) / Double(latestTally.received)))
    }

    /// The figures so far. `duplicatesToClient`: the client's own count of replays refused.
    public func report(duplicatesToClient: Int = 0) -> LinkReport {
        var report = LinkReport()
        report.sent = sent
        report.answered = pongs
        let sorted = roundTrips.sorted()
        func percentile(_ p: Double) -> Duration? {
            guard !sorted.isEmpty else { return nil }
            let rank = min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)
            return .microseconds(Int64(sorted[max(0, rank)]))
        }
        report.roundTrip50 = percentile(0.50)
        report.roundTrip95 = percentile(0.95)
        report.roundTrip99 = percentile(0.99)
        report.jitter = jitterCount > 0 ? .microseconds(Int64(jitterSum / Double(jitterCount))) : nil
        (report.lossToHost, report.lossToClient) = loss
        report.reorderedToHost = Int(latestTally.reordered)
        report.reorderedToClient = reorderedToClient
        report.duplicatesToHost = Int(latestTally.duplicates)
        report.duplicatesToClient = duplicatesToClient
        return report
    }
}

/// What a link test found, and what it means for forwarding.
public struct LinkReport: Equatable, Sendable {
    public var sent = 0
    public var answered = 0
    public var roundTrip50: Duration?
    public var roundTrip95: Duration?
    public var roundTrip99: Duration?
    /// Mean difference between consecutive round trips (RFC 3550's idea, unsmoothed).
    public var jitter: Duration?
    /// Fractions, 0...1; nil until a pong came back.
    public var lossToHost: Double?
    public var lossToClient: Double?
    public var reorderedToHost = 0
    public var reorderedToClient = 0
    public var duplicatesToHost = 0
    public var duplicatesToClient = 0
    /// Why the test ended before its time (the host stopped answering, its connection closed):
    /// the figures are then only until that moment, and the link is judged poor whatever they say.
    public var endedEarly: String?
    /// Pings not answered at all, whichever way they were lost: `1 - answered / sent`.
    public var unanswered: Double? { sent > 0 ? max(0, 1 - Double(answered) / Double(sent)) : nil }
    public init() {}

    /// What forwarding needs (docs/link-test.md says why): `good` keeps input and feedback as on a
    /// cable; `usable` still converges (re-sends cover the loss) but feels late; `poor` does not.
    public enum Verdict: String, Sendable { case good, usable, poor }
    public static let goodRoundTrip95: Duration = .milliseconds(20), usableRoundTrip95: Duration = .milliseconds(80)
    public static let goodJitter: Duration = .milliseconds(5), usableJitter: Duration = .milliseconds(20)
    public static let goodLoss = 0.01, usableLoss = 0.05

    public var verdict: (Verdict, reasons: [String]) {
        guard let rtt = roundTrip95, let up = lossToHost, let down = lossToClient else { return (.poor, ["no answer came back"]) }
        var verdict = Verdict.good
        var reasons: [String] = []
        func judge(_ what: String, good: Bool, usable: Bool) {
            if !usable { verdict = .poor; reasons.append(what) } else if !good { if verdict == .good { verdict = .usable }; reasons.append(what) }
        }
        if let endedEarly { judge(endedEarly, good: false, usable: false) }
        // The tail no pong counted (a host that stalled at the end): lost both ways at most.
        if let unanswered { judge("\(Self.percent(unanswered)) of pings unanswered", good: unanswered <= 2 * Self.goodLoss, usable: unanswered <= 2 * Self.usableLoss) }
        judge("round trip p95 \(Self.milliseconds(rtt))", good: rtt <= Self.goodRoundTrip95, usable: rtt <= Self.usableRoundTrip95)
        if let jitter { judge("jitter \(Self.milliseconds(jitter))", good: jitter <= Self.goodJitter, usable: jitter <= Self.usableJitter) }
        judge("loss to the host \(Self.percent(up))", good: up <= Self.goodLoss, usable: up <= Self.usableLoss)
        judge("loss to the client \(Self.percent(down))", good: down <= Self.goodLoss, usable: down <= Self.usableLoss)
        return (verdict, reasons)
    }

    /// `1.25 ms`, `41.3 ms`.
    public static func milliseconds(_ d: Duration) -> String {
        let micros = d / .microseconds(1)
        return micros < 10_000 ? decimal(Int(micros), places: 3, shown: 2) + " ms" : decimal(Int(micros), places: 3, shown: 1) + " ms"
    }
    /// `5.1 %`.
    public static func percent(_ fraction: Double) -> String { decimal(Int((fraction * 1000).rounded()), places: 1, shown: 1) + " %" }

    /// `value / 10^places`, rounded to `shown` decimals, without Foundation.
    static func decimal(_ value: Int, places: Int, shown: Int) -> String {
        var scale = 1
        for _ in 0..<(places - shown) { scale *= 10 }
        let rounded = (value + scale / 2) / scale
        var unit = 1
        for _ in 0..<shown { unit *= 10 }
        let fraction = String(rounded % unit)
        return "\(rounded / unit)." + String(repeating: "0", count: shown - fraction.count) + fraction
    }
}

extension Probe {
    /// The padding that makes a ping (with its figures) as long as the datagram a DualSense
    /// streams 250 times a second while forwarding: its state plus one motion sample. A link test
    /// then loads the link as play does.
    public static let inputSizedPadding: UInt16 = {
        var motion = MotionBatch(slot: PadSlot(0))
        _ = motion.append(WireMotionSample())
        let input = encodedSize([.state(PadStateSnapshot(slot: PadSlot(0))), .motion(motion)])
        let ping = encodedSize([.ping(Probe(id: 0, sentMicros: 0))])
        return UInt16(max(0, input - ping))
    }()

    static func encodedSize(_ messages: [WireMessage]) -> Int {
        var storage = [UInt8](repeating: 0, count: 1500)
        return storage.withUnsafeMutableBytes { raw in
            var writer = WireWriter(raw)
            try? WireCodec.beginPayload(&writer)
            for message in messages { try? WireCodec.encode(message, into: &writer) }
            return writer.count
        }
    }
}
