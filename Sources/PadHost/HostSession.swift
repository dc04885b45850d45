import Logging
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

/// Makes pads on the caller's thread: for tests and in-process pads.
public final class InlinePadMaker: PadMaker {
    let factory: VirtualPadFactory
    public init(_ factory: @escaping VirtualPadFactory) { self.factory = factory }
    public func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void) {
        done(Result { try factory(arrival) })
    }
    public func remove(_ pad: VirtualPad) { pad.remove() }
}

/// One client's pads on the host: slots to virtual pads, newest-snapshot bookkeeping, and the
/// safety rule that no virtual pad is ever left with a control held (docs/wire.md).
///
/// A lapsed state lease releases every control at once, but a stall is not an unplug: the pad
/// stays for `padGrace` more, so a game does not see its controller vanish because the client's
/// machine paused for a second (docs/security.md, "Leases").
public final class HostSession {
    public let maxPads: Int
    let maker: PadMaker
    public private(set) var pads: [UInt8: VirtualPad] = [:]
    /// Arrivals whose pad is being made: one at a time per session.
    var making: PadArrival?
    var receivers: [UInt8: SnapshotReceiver] = [:]
    var touchSequences: [UInt8: WireSequence] = [:]
    var lastTouch: [UInt8: TouchSnapshot] = [:]
    /// Slots whose lease lapsed: every control released, the pad kept for the grace period.
    var released: Set<UInt8> = []
    public var stateLease: Duration
    public var padGrace: Duration
    public private(set) var counters = Counters()
    /// The session's logger: the input path gives it the client's name and session id.
    public var logger = Logger(label: "padgate.host.session")
    /// Arrivals whose virtual pad could not be made: tried again after a pause, not on every keep-alive.
    var failedArrivals: [UInt8: (arrival: PadArrival, at: ContinuousClock.Instant)] = [:]
    /// Slots refused for --max-pads: their repeated announcements are counted once.
    var refusedSlots: Set<UInt8> = []
    var closed = false
    static let retryAfterDeviceError: Duration = .seconds(2)
    /// The fewest seconds a stalled pad is kept; `padGrace` may be longer, never shorter.
    public static let minimumPadGrace: Duration = .seconds(10)

    /// One line about one slot's pad: the slot goes in the metadata.
    func log(_ level: Logger.Level, _ slot: PadSlot, _ message: @autoclosure () -> Logger.Message) {
        logger.log(level: level, message(), metadata: ["slot": "\(slot.rawValue)"])
    }

    func log(_ level: Logger.Level, _ slot: UInt8, _ message: @autoclosure () -> Logger.Message) {
        log(level, PadSlot(slot), message())
    }

    public struct Counters: Equatable, Sendable {
        public var refusedArrivals = 0
        public var unknownSlot = 0
        public var staleSnapshots = 0
        public var leaseExpiries = 0
        public var graceRemovals = 0
        public var deviceErrors = 0
    }

    /// Called when a virtual pad is added or removed (its feedback descriptors come or go).
    public var onPadsChanged: () -> Void = {}

    public init(maxPads: Int = 4, stateLease: Duration = .milliseconds(1000), padGrace: Duration = minimumPadGrace, maker: PadMaker) {
        self.maxPads = maxPads
        self.stateLease = stateLease
        self.padGrace = padGrace
        self.maker = maker
    }

    public convenience init(maxPads: Int = 4, stateLease: Duration = .milliseconds(1000), padGrace: Duration = minimumPadGrace,
                            makePad: @escaping VirtualPadFactory) {
        self.init(maxPads: maxPads, stateLease: stateLease, padGrace: padGrace, maker: InlinePadMaker(makePad))
    }

    /// Applies one message from the client. Returns messages to send back (e.g. pong).
    public func handle(_ message: WireMessage, now: ContinuousClock.Instant) -> [WireMessage] {
        var replies: [WireMessage] = []
        handle(message, now: now, replies: &replies)
        return replies
    }

    /// The same, appending replies to a buffer the caller keeps (the input path: no allocation).
    public func handle(_ message: WireMessage, now: ContinuousClock.Instant, replies: inout [WireMessage]) {
        switch message {
        case .arrival(let arrival):
            announce(arrival, now: now)
        case .removal(let slot):
            if pads[slot.rawValue] != nil { log(.info, slot, "the client unplugged it; released and removed") }
            removePad(slot.rawValue)
            failedArrivals[slot.rawValue] = nil
        case .state(let snapshot):
            let slot = snapshot.slot.rawValue
            guard var receiver = receivers[slot] else { counters.unknownSlot += 1; return }
            let before = receiver.staleDropped
            let changed = receiver.accept(snapshot, now: now)
            counters.staleSnapshots += receiver.staleDropped - before
            receivers[slot] = receiver
            // Back from a stall: the held state goes back on, even if it is the one sent before.
            let resumed = receiver.lastHeard == now && released.remove(slot) != nil
            if changed || resumed, let pad = pads[slot], let current = receiver.current {
                if resumed { log(.info, slot, "the client is back; its state applies again") }
                do { try pad.apply(current) } catch { counters.deviceErrors += 1 }
            }
        case .touch(let touch):
            let slot = touch.slot.rawValue
            guard receivers[slot] != nil else { counters.unknownSlot += 1; return }
            if let last = touchSequences[slot], !touch.sequence.isNewer(than: last) { counters.staleSnapshots += 1; return }
            touchSequences[slot] = touch.sequence
            lastTouch[slot] = touch
            if let pad = pads[slot], !released.contains(slot) {
                do { try pad.apply(touch) } catch { counters.deviceErrors += 1 }
            }
        case .motion(let batch):
            guard let pad = pads[batch.slot.rawValue] else { counters.unknownSlot += 1; return }
            do { try pad.apply(batch) } catch { counters.deviceErrors += 1 }
        case .battery(let battery):
            guard let pad = pads[battery.slot.rawValue] else { counters.unknownSlot += 1; return }
            do { try pad.apply(battery) } catch { counters.deviceErrors += 1 }
        case .ping(let probe):
            replies.append(.pong(probe))
        case .rumble, .hidOutput, .motionRate, .pong:
            break  // not for the host, or nothing to do with it yet
        }
    }

    func announce(_ arrival: PadArrival, now: ContinuousClock.Instant) {
        // The client repeats each arrival with its keep-alives (a datagram may be lost): the
        // same announcement again changes nothing; a different one for the slot starts afresh.
        let slot = arrival.slot.rawValue
        if let existing = pads[slot] {
            if existing.arrival == arrival { return }
            log(.notice, slot, "announced as \(PeerName(local: arrival.name)) instead of \(PeerName(local: existing.arrival.name)): replacing its virtual pad")
            removePad(slot)
        }
        guard making == nil else { return }  // one pad at a time; the next keep-alive announces it again
        if let failed = failedArrivals[slot], failed.arrival == arrival, now - failed.at < Self.retryAfterDeviceError { return }
        guard pads.count < maxPads else {
            if refusedSlots.insert(slot).inserted { counters.refusedArrivals += 1; log(.warning, slot, "refused: \(maxPads) pads is this host's limit per client (--max-pads)") }
            return
        }
        refusedSlots.remove(slot)
        if receivers[slot] == nil {
            var receiver = SnapshotReceiver(lease: stateLease)
            receiver.start(now: now)
            receivers[slot] = receiver
        }
        making = arrival
        // Times after this are on the caller's clock: `now` plus however long the making took.
        let started = ContinuousClock.now
        maker.make(arrival) { [weak self] result in self?.padMade(arrival, result, now: now + (ContinuousClock.now - started)) }
    }

    /// The maker's answer, on the session's loop. A pad nobody wants any more is unplugged again.
    public func padMade(_ arrival: PadArrival, _ result: Result<VirtualPad, Error>, now: ContinuousClock.Instant) {
        let slot = arrival.slot.rawValue
        if making == arrival { making = nil }
        switch result {
        case .success(let pad):
            guard !closed, receivers[slot] != nil, pads[slot] == nil else { maker.remove(pad); return }
            pads[slot] = pad
            onPadsChanged()
            failedArrivals[slot] = nil
            // What arrived while the pad was being made shows at once.
            if let current = receivers[slot]?.current, !released.contains(slot) {
                do { try pad.apply(current) } catch { counters.deviceErrors += 1 }
            }
            if let touch = lastTouch[slot], !released.contains(slot) { try? pad.apply(touch) }
        case .failure(let error):
            counters.deviceErrors += 1
            receivers[slot] = nil
            failedArrivals[slot] = (arrival, now)
            log(.error, slot, "cannot create a virtual pad for \(PeerName(local: arrival.name)): \(error); retrying in \(Self.retryAfterDeviceError)")
        }
    }

    /// Releases every control of a pad whose client went silent past the state lease, and unplugs
    /// it once the grace period is over too.
    public func expireLeases(now: ContinuousClock.Instant) {
        for (slot, receiver) in receivers {
            guard let lastHeard = receiver.lastHeard else { continue }
            if !released.contains(slot), receiver.leaseExpired(now: now) {
                counters.leaseExpiries += 1
                released.insert(slot)
                releaseControls(slot)
                log(.warning, slot, "no state for \(stateLease); every control released (the pad stays \(padGrace) for the client to return)")
            } else if released.contains(slot), now - lastHeard > stateLease + padGrace {
                counters.graceRemovals += 1
                log(.warning, slot, "no state for \(stateLease + padGrace); the virtual pad removed")
                removePad(slot)
            }
        }
    }

    /// When the next lease or grace period runs out: the host's only timer besides rumble renewal.
    public func nextLeaseDeadline() -> ContinuousClock.Instant? {
        var next: ContinuousClock.Instant?
        for (slot, receiver) in receivers {
            guard let heard = receiver.lastHeard else { continue }
            let due = heard + stateLease + (released.contains(slot) ? padGrace : .zero)
            if next.map({ due < $0 }) ?? true { next = due }
        }
        return next
    }

    /// The client disconnected: everything released, everything unplugged.
    public func close() {
        closed = true
        for slot in Array(receivers.keys) { removePad(slot) }
    }

    func releaseControls(_ slot: UInt8) {
        guard let pad = pads[slot] else { return }
        // Neutral first, so a game polling between the two never sees a held button.
        try? pad.apply(.neutral(PadSlot(slot)))
        try? pad.apply(TouchSnapshot(slot: PadSlot(slot)))
        heldRumble[slot] = nil
    }

    /// Rumble a game holds (a DualSense keeps its motors at the last level until told otherwise)
    /// is renewed before its lease lapses, so the client keeps rumbling exactly as long as the
    /// host is alive and the game wants it.
    var heldRumble: [UInt8: (lease: RumbleLease, sentAt: ContinuousClock.Instant)] = [:]
    var renewalSequence: [UInt8: WireSequence] = [:]

    public func feedback(now: ContinuousClock.Instant = .now) -> [WireMessage] {
        var out: [WireMessage] = []
        for (slot, pad) in pads {
            do {
                for message in try pad.takeFeedback() {
                    if case .rumble(var lease) = message {
                        lease.sequence = nextRumbleSequence(slot)
                        heldRumble[slot] = lease.isStop ? nil : (lease, now)
                        out.append(.rumble(lease))
                    } else {
                        out.append(message)
                    }
                }
            } catch { counters.deviceErrors += 1 }
        }
        for (slot, held) in heldRumble where now - held.sentAt >= .milliseconds(Int(held.lease.ttlMillis) * 2 / 5) {
            var renewal = held.lease
            renewal.sequence = nextRumbleSequence(slot)
            heldRumble[slot] = (renewal, now)
            out.append(.rumble(renewal))
        }
        return out
    }

    /// When a held rumble must be renewed next, or a pad has feedback due by itself.
    public func nextRenewal() -> ContinuousClock.Instant? {
        var next: ContinuousClock.Instant?
        func consider(_ due: ContinuousClock.Instant?) { if let due, next.map({ due < $0 }) ?? true { next = due } }
        for held in heldRumble.values { consider(held.sentAt + .milliseconds(Int(held.lease.ttlMillis) * 2 / 5)) }
        for pad in pads.values { consider(pad.feedbackDeadline) }
        return next
    }

    func nextRumbleSequence(_ slot: UInt8) -> WireSequence {
        let next = (renewalSequence[slot] ?? WireSequence(0)).next
        renewalSequence[slot] = next
        return next
    }

    func removePad(_ slot: UInt8) {
        releaseControls(slot)
        if let pad = pads.removeValue(forKey: slot) { maker.remove(pad); onPadsChanged() }
        receivers[slot] = nil
        touchSequences[slot] = nil
        lastTouch[slot] = nil
        released.remove(slot)
    }
}
