import WireProtocol

/// One client's pads on the host: slots to virtual pads, newest-snapshot bookkeeping, and the
/// safety rule that no virtual pad is ever left with a control held (docs/wire.md).
public final class HostSession {
    public let maxPads: Int
    let makePad: VirtualPadFactory
    public private(set) var pads: [UInt8: VirtualPad] = [:]
    var receivers: [UInt8: SnapshotReceiver] = [:]
    var touchSequences: [UInt8: WireSequence] = [:]
    public var stateLease: Duration
    public private(set) var counters = Counters()
    public var log: (String) -> Void = { _ in }
    /// Arrivals whose virtual pad could not be made: tried again after a pause, not on every keep-alive.
    var failedArrivals: [UInt8: (arrival: PadArrival, at: ContinuousClock.Instant)] = [:]
    /// Slots refused for --max-pads: their repeated announcements are counted once.
    var refusedSlots: Set<UInt8> = []
    static let retryAfterDeviceError: Duration = .seconds(2)

    public struct Counters: Equatable, Sendable {
        public var refusedArrivals = 0
        public var unknownSlot = 0
        public var staleSnapshots = 0
        public var leaseExpiries = 0
        public var deviceErrors = 0
    }

    public init(maxPads: Int = 4, stateLease: Duration = .milliseconds(1000), makePad: @escaping VirtualPadFactory) {
        self.maxPads = maxPads
        self.stateLease = stateLease
        self.makePad = makePad
    }

    /// Applies one message from the client. Returns messages to send back (e.g. pong).
    public func handle(_ message: WireMessage, now: ContinuousClock.Instant) -> [WireMessage] {
        switch message {
        case .arrival(let arrival):
            // The client repeats each arrival with its keep-alives (a datagram may be lost): the
            // same announcement again changes nothing; a different one for the slot starts afresh.
            let slot = arrival.slot.rawValue
            if let existing = pads[slot] {
                if existing.arrival == arrival { return [] }
                log("slot \(slot) announced as '\(arrival.name)' instead of '\(existing.arrival.name)': replacing its virtual pad")
                removePad(slot)
            }
            if let failed = failedArrivals[slot], failed.arrival == arrival, now - failed.at < Self.retryAfterDeviceError { return [] }
            guard pads.count < maxPads else {
                if refusedSlots.insert(slot).inserted { counters.refusedArrivals += 1; log("slot \(slot) refused: \(maxPads) pads is this host's limit (--max-pads)") }
                return []
            }
            refusedSlots.remove(slot)
            let attempted = ContinuousClock.now
            do {
                pads[slot] = try makePad(arrival)
                failedArrivals[slot] = nil
                var receiver = SnapshotReceiver(lease: stateLease)
                receiver.start(now: now)
                receivers[slot] = receiver
            } catch {
                counters.deviceErrors += 1
                // makePad may have blocked for seconds: the pause starts after it, on the caller's clock.
                failedArrivals[slot] = (arrival, now + (ContinuousClock.now - attempted))
                log("cannot create a virtual pad for '\(arrival.name)' (slot \(slot)): \(error); retrying in \(Self.retryAfterDeviceError)")
            }
        case .removal(let slot):
            if pads[slot.rawValue] != nil { log("slot \(slot.rawValue): the client unplugged it; released and removed") }
            removePad(slot.rawValue)
            failedArrivals[slot.rawValue] = nil
        case .state(let snapshot):
            guard let pad = pads[snapshot.slot.rawValue], var receiver = receivers[snapshot.slot.rawValue] else {
                counters.unknownSlot += 1; return []
            }
            let before = receiver.staleDropped
            if receiver.accept(snapshot, now: now), let current = receiver.current {
                do { try pad.apply(current) } catch { counters.deviceErrors += 1 }
            }
            counters.staleSnapshots += receiver.staleDropped - before
            receivers[snapshot.slot.rawValue] = receiver
        case .touch(let touch):
            guard let pad = pads[touch.slot.rawValue] else { counters.unknownSlot += 1; return [] }
            if let last = touchSequences[touch.slot.rawValue], !touch.sequence.isNewer(than: last) { counters.staleSnapshots += 1; return [] }
            touchSequences[touch.slot.rawValue] = touch.sequence
            do { try pad.apply(touch) } catch { counters.deviceErrors += 1 }
        case .motion(let batch):
            guard let pad = pads[batch.slot.rawValue] else { counters.unknownSlot += 1; return [] }
            do { try pad.apply(batch) } catch { counters.deviceErrors += 1 }
        case .ping(let probe):
            return [.pong(probe)]
        case .battery, .rumble, .hidOutput, .motionRate, .pong:
            break  // not for the host, or nothing to do with it yet
        }
        return []
    }

    /// Releases and removes pads whose client went silent past the state lease.
    public func expireLeases(now: ContinuousClock.Instant) {
        for (slot, receiver) in receivers where receiver.leaseExpired(now: now) {
            counters.leaseExpiries += 1
            log("slot \(slot): no state for \(stateLease); every control released, the virtual pad removed")
            removePad(slot)
        }
    }

    /// When the next lease would expire: the host's only timer.
    public func nextLeaseDeadline() -> ContinuousClock.Instant? {
        receivers.values.compactMap { $0.lastHeard.map { $0 + stateLease } }.min()
    }

    /// The client disconnected: everything released, everything unplugged.
    public func close() {
        for slot in Array(pads.keys) { removePad(slot) }
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

    /// When a held rumble must be renewed next.
    public func nextRenewal() -> ContinuousClock.Instant? {
        heldRumble.values.map { $0.sentAt + .milliseconds(Int($0.lease.ttlMillis) * 2 / 5) }.min()
    }

    func nextRumbleSequence(_ slot: UInt8) -> WireSequence {
        let next = (renewalSequence[slot] ?? WireSequence(0)).next
        renewalSequence[slot] = next
        return next
    }

    func removePad(_ slot: UInt8) {
        guard let pad = pads.removeValue(forKey: slot) else { return }
        // Neutral first, so a game polling between the two never sees a held button.
        try? pad.apply(.neutral(PadSlot(slot)))
        try? pad.apply(TouchSnapshot(slot: PadSlot(slot)))
        pad.remove()
        heldRumble[slot] = nil
        receivers[slot] = nil
        touchSequences[slot] = nil
    }
}
