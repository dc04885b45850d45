import HIDCodecs
import Logging
import MonotonicTime
import PadFamilies
import PadSystem
import Transport
import WireProtocol

/// Makes and unplugs virtual pads for a session. Making a kernel pad waits for the driver's probe
/// (hundreds of milliseconds), so the host does it off the input path (`PadWorkshop`); tests and
/// in-process pads make them inline.
public protocol PadMaker: AnyObject {
    /// Makes a pad for `arrival`; `done` runs on the session's own loop (at once for an inline maker).
    func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void)
    /// Unplugs a pad whose controls were already released.
    func remove(_ pad: VirtualPad)
}

/// Makes pads on the caller's thread: for tests and in-process pads. The factory need not be
/// Sendable, since it runs on that thread alone.
public final class InlinePadMaker: PadMaker {
    let factory: (PadArrival) throws -> VirtualPad
    public init(_ factory: @escaping (PadArrival) throws -> VirtualPad) { self.factory = factory }
    public func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void) {
        done(Result { try factory(arrival) })
    }
    public func remove(_ pad: VirtualPad) { pad.remove() }
}

/// What the host keeps for one announced pad, from its announcement until it is unplugged.
struct HostPad {
    /// The newest snapshot and when the client was last heard (the state lease's clock).
    var receiver: SnapshotReceiver
    /// Nil while the maker is at work on it.
    var virtualPad: VirtualPad?
    /// The newest touch: a touch is taken only if its sequence is newer.
    var lastTouch: TouchSnapshot?
    /// The lease lapsed: every control released, the pad kept for the grace period.
    var released = false
    /// Rumble a game holds, renewed before its lease lapses.
    var heldRumble: HeldRumble?
    /// The game's lights and triggers so far, sent again a few times after each change.
    var heldOutput: HeldOutput?
    /// Whose host-wide player number it has (`PlayerSlots`); nil until it is made.
    var owner: PlayerSlots.Owner?

    init(receiver: SnapshotReceiver) { self.receiver = receiver }
}

/// A rumble lease the host renews for as long as the game holds it.
struct HeldRumble {
    var lease: RumbleLease
    var sentAt: MonotonicInstant
    /// The time to live the pad asked for; a renewal near the rumble's end carries less.
    var fullTTL: UInt16
    init(lease: RumbleLease, sentAt: MonotonicInstant) { self.lease = lease; self.sentAt = sentAt; fullTTL = lease.ttlMillis }
    var renewalDue: MonotonicInstant { sentAt + .milliseconds(Int(lease.ttlMillis) * 2 / 5) }
    var leaseEnds: MonotonicInstant { sentAt + .milliseconds(Int(lease.ttlMillis)) }

    /// When to renew, given when the pad says its rumble ends (`VirtualPad.rumbleEnds`): never
    /// once the lease already reaches that end, so a uinput effect's length is where the client's
    /// motors stop, whatever the host's loop does after.
    func renewalDue(endingAt end: MonotonicInstant?) -> MonotonicInstant? {
        if let end, leaseEnds >= end { return nil }
        return renewalDue
    }
}

/// A pad's lights and triggers as the game last set them. Unlike rumble they have no lease: one
/// lost datagram would leave the physical pad showing the old state for good. So the whole state
/// goes again at `resends` after each change (re-applying it changes nothing on the pad).
struct HeldOutput {
    static let resends: [Duration] = [.milliseconds(20), .milliseconds(60), .milliseconds(140), .milliseconds(300)]
    var message: HIDOutputMessage
    var changedAt: MonotonicInstant
    var sent = 0
    var resendDue: MonotonicInstant? { sent < Self.resends.count ? changedAt + Self.resends[sent] : nil }
}

/// What the session remembers about a slot beyond its pad's life: the rumble sequence goes on
/// across pads (the client takes only newer leases), a failed arrival waits out its pause, and a
/// refused slot is counted once.
struct SlotHistory {
    var rumbleSequence = WireSequence(0)
    var failedArrival: (arrival: PadArrival, at: MonotonicInstant)?
    var refused = false
}

/// One client's pads on the host: slots to virtual pads, newest-snapshot bookkeeping, and the
/// safety rule that no virtual pad is ever left with a control held (docs/wire.md).
///
/// A lapsed state lease releases every control at once, but a stall is not an unplug: the pad
/// stays for `padGrace` more, so a game does not see its controller vanish because the client's
/// machine paused for a second (docs/security.md, "Leases").
public final class ClientPads {
    public let maxPads: Int
    let maker: PadMaker
    /// Every announced pad, made or being made.
    private(set) var pads: [PadSlot: HostPad] = [:]
    /// Per-slot memory that outlives a pad.
    var history: [PadSlot: SlotHistory] = [:]
    /// Arrivals whose pad is being made: one at a time per session.
    var making: PadArrival?
    public var stateLease: Duration
    public var padGrace: Duration
    public private(set) var counters = Counters()
    /// This session's pings, as each pong reports them back (docs/link-test.md).
    private var pingTally = PingTally()
    /// What the client last said it measured of the link (`host status`).
    public private(set) var clientFigures: LinkFigures?
    /// The session's logger: the input path gives it the client's name and session id.
    public var logger = Logger(label: "padgate.host.session") {
        didSet { peerLog = ControlPlane.rateLimited(logger) }
    }
    /// For what the client makes happen (arrivals, removals, stalls): a few lines per reason per
    /// window (docs/security.md), however fast it repeats them.
    private var peerLog = ControlPlane.rateLimited(Logger(label: "padgate.host.session"))
    /// Pads made (or replaced) per session: `arrivalBurst` at once, then one per `arrivalInterval`.
    /// A client that re-announces its pads in a loop cannot make the host create and remove kernel
    /// devices faster than that; arrivals beyond wait (the client's keep-alives repeat them).
    static let arrivalBurst = 8
    static let arrivalInterval: Duration = .seconds(2)
    private var arrivalTokens = ClientPads.arrivalBurst
    private var arrivalRefilledAt: MonotonicInstant?
    var closed = false
    /// The client's paired identity (its certificate's fingerprint), stamped on each arrival: a
    /// host pad's address derives from it and the pad's own identity (PlayStationVirtualPad).
    public var clientIdentity = FeatureReportBytes()
    /// The host's player numbers, shared by every session (nil: none are given, as in tests of
    /// one session alone), and this session's id among their holders.
    var players: PlayerNumbers?
    var sessionID: UInt32 = 0
    /// A failed arrival is tried again after this pause, not on every keep-alive.
    static let retryAfterDeviceError: Duration = .seconds(2)
    /// The fewest seconds a stalled pad is kept; `padGrace` may be longer, never shorter.
    public static let minimumPadGrace: Duration = .seconds(10)

    /// The virtual pads made so far.
    public var virtualPads: some Sequence<VirtualPad> { pads.values.lazy.compactMap(\.virtualPad) }

    /// The same in slot order, with their slots (for `host clients`).
    public var virtualPadsBySlot: [(slot: PadSlot, pad: VirtualPad)] {
        pads.compactMap { slot, entry in entry.virtualPad.map { (slot, $0) } }.sorted { $0.slot.rawValue < $1.slot.rawValue }
    }

    /// One line about one slot's pad: the slot goes in the metadata.
    func log(_ level: Logger.Level, _ slot: PadSlot, reason: String, _ message: @autoclosure () -> Logger.Message) {
        peerLog.log(level: level, message(), metadata: ["slot": "\(slot.rawValue)", RateLimitedLogHandler.reasonKey: "\(reason)"])
    }

    /// Takes one pad creation from the session's allowance, if there is one.
    private func takeArrival(now: MonotonicInstant) -> Bool {
        if let since = arrivalRefilledAt {
            let earned = Int((now - since) / Self.arrivalInterval)
            if earned > 0 {
                arrivalTokens = min(Self.arrivalBurst, arrivalTokens + earned)
                arrivalRefilledAt = arrivalTokens == Self.arrivalBurst ? now : since + Self.arrivalInterval * earned
            }
        } else {
            arrivalRefilledAt = now
        }
        guard arrivalTokens > 0 else { return false }
        arrivalTokens -= 1
        return true
    }

    public struct Counters: Equatable, Sendable {
        public var refusedArrivals = 0
        public var unknownSlot = 0
        public var staleSnapshots = 0
        public var leaseExpiries = 0
        public var graceRemovals = 0
        public var deviceErrors = 0
        /// Arrivals held back by the session's allowance (`arrivalBurst`, `arrivalInterval`).
        public var heldArrivals = 0
    }

    /// Called when a virtual pad is added or removed (its feedback descriptors come or go).
    public var onPadsChanged: () -> Void = {}
    /// This session's datagrams the link refused as copies (its replay window): read as a pong is built.
    public var replayedDatagrams: () -> Int = { 0 }

    public init(maxPads: Int = 4, stateLease: Duration = .milliseconds(1000), padGrace: Duration = minimumPadGrace, maker: PadMaker) {
        self.maxPads = maxPads
        self.stateLease = stateLease
        self.padGrace = padGrace
        self.maker = maker
    }

    public convenience init(maxPads: Int = 4, stateLease: Duration = .milliseconds(1000), padGrace: Duration = minimumPadGrace,
                            makePad: @escaping (PadArrival) throws -> VirtualPad) {
        self.init(maxPads: maxPads, stateLease: stateLease, padGrace: padGrace, maker: InlinePadMaker(makePad))
    }

    /// Applies one message from the client. Returns messages to send back (e.g. pong).
    public func handle(_ message: WireMessage, now: MonotonicInstant) -> [WireMessage] {
        var replies: [WireMessage] = []
        handle(message, now: now, replies: &replies)
        return replies
    }

    /// The same, appending replies to a buffer the caller keeps (the input path: no allocation).
    public func handle(_ message: WireMessage, now: MonotonicInstant, replies: inout [WireMessage]) {
        switch message {
        case .arrival(let arrival):
            announce(arrival, now: now)
        case .removal(let slot):
            if pads[slot]?.virtualPad != nil { log(.info, slot, reason: "unplugged by the client", "the client unplugged it; released and removed") }
            removePad(slot)
            history[slot]?.failedArrival = nil
        case .state(let snapshot):
            // One lookup, and the pad's state changed in place: this is the input path.
            guard let index = pads.index(forKey: snapshot.slot) else { counters.unknownSlot += 1; return }
            let before = pads.values[index].receiver.staleDropped
            let changed = pads.values[index].receiver.accept(snapshot, now: now)
            let receiver = pads.values[index].receiver
            counters.staleSnapshots += receiver.staleDropped - before
            // Back from a stall: the held state goes back on, even if it is the one sent before.
            let resumed = receiver.lastHeard == now && pads.values[index].released
            if resumed { pads.values[index].released = false }
            if changed || resumed, let pad = pads.values[index].virtualPad, let current = receiver.current {
                if resumed { log(.info, snapshot.slot, reason: "client back", "the client is back; its state applies again") }
                do { try pad.apply(current) } catch { counters.deviceErrors += 1 }
            }
        case .touch(let touch):
            guard let index = pads.index(forKey: touch.slot) else { counters.unknownSlot += 1; return }
            if let last = pads.values[index].lastTouch, !touch.sequence.isNewer(than: last.sequence) { counters.staleSnapshots += 1; return }
            pads.values[index].lastTouch = touch
            if let pad = pads.values[index].virtualPad, !pads.values[index].released {
                do { try pad.apply(touch) } catch { counters.deviceErrors += 1 }
            }
        case .motion(let batch):
            guard let pad = pads[batch.slot]?.virtualPad else { counters.unknownSlot += 1; return }
            do { try pad.apply(batch) } catch { counters.deviceErrors += 1 }
        case .battery(let battery):
            guard let pad = pads[battery.slot]?.virtualPad else { counters.unknownSlot += 1; return }
            do { try pad.apply(battery) } catch { counters.deviceErrors += 1 }
        case .microphone(let frame):
            guard let pad = pads[frame.slot]?.virtualPad else { counters.unknownSlot += 1; return }
            do { try pad.apply(frame) } catch { counters.deviceErrors += 1 }
        case .ping(let probe):
            pingTally.count(probe.id)
            pingTally.duplicates = UInt32(clamping: replayedDatagrams())
            if probe.figures.roundTripMicros != 0 { clientFigures = probe.figures }
            replies.append(.pong(probe.echo(pingTally)))
        case .rumble, .hidOutput, .motionRate, .pong, .haptics, .speaker, .microphoneRequest, .trackpadPulse:
            break  // not for the host, or nothing to do with it yet
        }
    }

    /// How many virtual pads are made (not counting one being made).
    var madePads: Int {
        var count = 0
        for entry in pads.values where entry.virtualPad != nil { count += 1 }
        return count
    }

    func announce(_ announced: PadArrival, now: MonotonicInstant) {
        var arrival = announced
        arrival.identity.client = clientIdentity
        // The client repeats each arrival with its keep-alives (a datagram may be lost): the
        // same announcement again changes nothing; a different one for the slot starts afresh.
        let slot = arrival.slot
        if let existing = pads[slot]?.virtualPad, existing.arrival == arrival { return }
        guard making == nil else { return }  // one pad at a time; the next keep-alive announces it again
        if let failed = history[slot]?.failedArrival, failed.arrival == arrival, now - failed.at < Self.retryAfterDeviceError { return }
        if pads[slot]?.virtualPad != nil || madePads < maxPads {
            // A pad to make (or to replace): only within the session's allowance.
            guard takeArrival(now: now) else {
                counters.heldArrivals += 1
                log(.warning, slot, reason: "arrivals too fast", "pads announced faster than \(Self.arrivalBurst) at once and one per \(Self.arrivalInterval); held")
                return
            }
        }
        if let existing = pads[slot]?.virtualPad {
            log(.notice, slot, reason: "pad replaced", "announced as \(PeerName(local: arrival.name)) instead of \(PeerName(local: existing.arrival.name)): replacing its virtual pad")
            removePad(slot)
        }
        guard madePads < maxPads else {
            if history[slot, default: SlotHistory()].refused == false {
                history[slot, default: SlotHistory()].refused = true
                counters.refusedArrivals += 1
                log(.warning, slot, reason: "over --max-pads", "refused: \(maxPads) pads is this host's limit per client (--max-pads)")
            }
            return
        }
        history[slot]?.refused = false
        if pads[slot] == nil {
            var receiver = SnapshotReceiver(lease: stateLease)
            receiver.start(now: now)
            pads[slot] = HostPad(receiver: receiver)
        }
        evictGhosts(of: arrival)
        making = arrival
        // Times after this are on the caller's clock: `now` plus however long the making took.
        let started = MonotonicInstant.now
        maker.make(arrival) { [weak self] result in self?.padMade(arrival, result, now: now + (MonotonicInstant.now - started)) }
    }

    /// The maker's answer, on the session's loop. A pad nobody wants any more is unplugged again.
    private func padMade(_ arrival: PadArrival, _ result: Result<VirtualPad, Error>, now: MonotonicInstant) {
        let slot = arrival.slot
        if making == arrival { making = nil }
        switch result {
        case .success(let pad):
            guard !closed, let entry = pads[slot], entry.virtualPad == nil else { maker.remove(pad); return }
            pads[slot]?.virtualPad = pad
            onPadsChanged()
            history[slot]?.failedArrival = nil
            givePlayerNumber(slot, arrival, now: now)
            // What arrived while the pad was being made shows at once.
            if let current = entry.receiver.current, !entry.released {
                do { try pad.apply(current) } catch { counters.deviceErrors += 1 }
            }
            if let touch = entry.lastTouch, !entry.released { try? pad.apply(touch) }
        case .failure(let error):
            counters.deviceErrors += 1
            pads[slot] = nil
            history[slot, default: SlotHistory()].failedArrival = (arrival, now)
            log(.error, slot, reason: "pad not created", "cannot create a virtual pad for \(PeerName(local: arrival.name)): \(error); retrying in \(Self.retryAfterDeviceError)")
        }
    }

    /// Releases every control of a pad whose client went silent past the state lease, and unplugs
    /// it once the grace period is over too.
    public func expireLeases(now: MonotonicInstant) {
        for (slot, entry) in pads {
            guard let lastHeard = entry.receiver.lastHeard else { continue }
            if !entry.released, entry.receiver.leaseExpired(now: now) {
                counters.leaseExpiries += 1
                pads[slot]?.released = true
                releaseControls(slot)
                log(.warning, slot, reason: "lease lapsed", "no state for \(stateLease); every control released (the pad stays \(padGrace) for the client to return)")
            } else if entry.released, now - lastHeard > stateLease + padGrace {
                counters.graceRemovals += 1
                log(.warning, slot, reason: "grace over", "no state for \(stateLease + padGrace); the virtual pad removed")
                removePad(slot)
            }
        }
    }

    /// When the next lease or grace period runs out: the host's only timer besides rumble renewal.
    public func nextLeaseDeadline() -> MonotonicInstant? {
        var next: MonotonicInstant?
        for entry in pads.values {
            guard let heard = entry.receiver.lastHeard else { continue }
            let due = heard + stateLease + (entry.released ? padGrace : .zero)
            if next.map({ due < $0 }) ?? true { next = due }
        }
        return next
    }

    /// The client disconnected: everything released, everything unplugged.
    public func close() {
        closed = true
        for slot in Array(pads.keys) { removePad(slot) }
    }

    func releaseControls(_ slot: PadSlot) {
        guard let pad = pads[slot]?.virtualPad else { return }
        // Neutral first, so a game polling between the two never sees a held button.
        try? pad.apply(.neutral(slot))
        try? pad.apply(TouchSnapshot(slot: slot))
        pads[slot]?.heldRumble = nil
    }

    /// Rumble a game holds (a DualSense keeps its motors at the last level until told otherwise)
    /// is renewed before its lease lapses, so the client keeps rumbling exactly as long as the
    /// host is alive and the game wants it.
    public func feedback(now: MonotonicInstant = .now, into out: inout [WireMessage]) {
        // By index, changing each pad in place: iterating a copy while changing the dictionary copies it.
        var index = pads.startIndex
        while index != pads.endIndex {
            defer { pads.formIndex(after: &index) }
            let slot = pads.keys[index]
            if let pad = pads.values[index].virtualPad {
                let start = out.count
                do { try pad.takeFeedback(into: &out) } catch { counters.deviceErrors += 1 }
                for i in start..<out.count {
                    switch out[i] {
                    case .rumble(var lease):
                        lease.sequence = nextRumbleSequence(slot)
                        logger.trace("rumble lease \(lease.sequence.rawValue) for slot \(slot.rawValue): \(lease.levels) for \(lease.ttlMillis) ms")
                        pads.values[index].heldRumble = lease.isStop ? nil : HeldRumble(lease: lease, sentAt: now)
                        out[i] = .rumble(lease)
                    case .hidOutput(let output):
                        var state = pads.values[index].heldOutput?.message ?? output
                        state.merge(output)
                        pads.values[index].heldOutput = HeldOutput(message: state, changedAt: now)
                    default:
                        break
                    }
                }
            }
        }
        index = pads.startIndex
        while index != pads.endIndex {
            defer { pads.formIndex(after: &index) }
            if let due = pads.values[index].heldOutput?.resendDue, now >= due {
                pads.values[index].heldOutput!.sent += 1
                out.append(.hidOutput(pads.values[index].heldOutput!.message))
            }
            guard let held = pads.values[index].heldRumble else { continue }
            let ends = pads.values[index].virtualPad?.rumbleEnds
            guard let due = held.renewalDue(endingAt: ends), now >= due else { continue }
            var renewal = held.lease
            renewal.ttlMillis = held.fullTTL
            if let ends {
                // Over: the lease lapses at the client by itself; the pad's next pass says what follows.
                guard ends > now else { pads.values[index].heldRumble = nil; continue }
                renewal.ttlMillis = min(held.fullTTL, RumbleLease.millis(from: now, until: ends))
            }
            renewal.sequence = nextRumbleSequence(pads.keys[index])
            logger.trace("rumble lease \(renewal.sequence.rawValue) for slot \(pads.keys[index].rawValue) renewed: \(renewal.levels) for \(renewal.ttlMillis) ms, the pad's rumble ends in \(ends.map { "\($0 - now)" } ?? "never")")
            var renewed = HeldRumble(lease: renewal, sentAt: now)
            renewed.fullTTL = held.fullTTL
            pads.values[index].heldRumble = renewed
            out.append(.rumble(renewal))
        }
    }

    /// When a held rumble must be renewed next, or a pad has feedback due by itself.
    public func nextRenewal() -> MonotonicInstant? {
        var next: MonotonicInstant?
        func consider(_ due: MonotonicInstant?) { if let due, next.map({ due < $0 }) ?? true { next = due } }
        for entry in pads.values {
            consider(entry.heldRumble?.renewalDue(endingAt: entry.virtualPad?.rumbleEnds))
            consider(entry.heldOutput?.resendDue)
            consider(entry.virtualPad?.feedbackDeadline)
        }
        return next
    }

    func nextRumbleSequence(_ slot: PadSlot) -> WireSequence {
        let next = history[slot, default: SlotHistory()].rumbleSequence.next
        history[slot, default: SlotHistory()].rumbleSequence = next
        return next
    }

    func removePad(_ slot: PadSlot) {
        releaseControls(slot)
        guard let entry = pads.removeValue(forKey: slot) else { return }
        if let owner = entry.owner { players?.slots.release(owner, holder: sessionID, now: .now) }
        if let pad = entry.virtualPad { maker.remove(pad); onPadsChanged() }
    }

    // MARK: Player numbers

    /// The pad's player number, and its player lights showing it unless the game set them (the
    /// first pass after this sends them; `HeldOutput` sends them again).
    private func givePlayerNumber(_ slot: PadSlot, _ arrival: PadArrival, now: MonotonicInstant) {
        guard let players else { return }
        let owner = PlayerSlots.Owner(arrival)
        pads[slot]?.owner = owner
        guard let number = players.slots.claim(owner, holder: sessionID, now: now) else { return }
        log(.info, slot, reason: "player number", "player \(number)")
        // As the physical pad's family shows a player, where the game has not set those lights.
        let shown = PadDrivers.driver(for: arrival.type).playerLights(number)
        var lights = pads[slot]?.heldOutput?.message ?? HIDOutputMessage(slot: slot, sequence: WireSequence(0))
        let before = lights.fields
        if let mask = shown.mask, !before.contains(.playerLEDs) {
            lights.fields.insert(.playerLEDs)
            lights.playerLEDMask = mask
        }
        if let color = shown.color, !before.contains(.lightbar) {
            lights.fields.insert(.lightbar)
            (lights.red, lights.green, lights.blue) = (color.red, color.green, color.blue)
        }
        guard lights.fields != before else { return }
        pads[slot]?.heldOutput = HeldOutput(message: lights, changedAt: now - HeldOutput.resends[0])
    }

    /// The same physical pad already has a host pad (its client reconnected, or moved it to another
    /// slot): that one is a ghost, removed before the new one is made (their addresses are equal,
    /// and the kernel refuses a second pad with the same address).
    private func evictGhosts(of arrival: PadArrival) {
        guard let players else { return }
        let owner = PlayerSlots.Owner(arrival)
        if let holder = players.slots.holder(of: owner), holder != sessionID {
            players.evict(holder, owner)
        }
        for (slot, entry) in pads where slot != arrival.slot && entry.owner == owner {
            log(.notice, slot, reason: "pad moved", "the same pad arrived in slot \(arrival.slot.rawValue); its old host pad removed")
            removePad(slot)
        }
    }

    /// Removes this session's host pad of `owner` (a newer session has the same pad).
    func evict(_ owner: PlayerSlots.Owner) {
        for (slot, entry) in pads where entry.owner == owner {
            log(.notice, slot, reason: "pad reconnected", "the same pad came back through a newer session; this host pad removed")
            removePad(slot)
        }
    }

    /// This session's pads with their player numbers (nil: none given).
    public var playersBySlot: [(slot: PadSlot, player: Int?)] {
        pads.map { slot, entry in (slot, entry.owner.flatMap { players?.slots.number(of: $0) }) }.sorted { $0.slot.rawValue < $1.slot.rawValue }
    }
}
