import MonotonicTime
import WireProtocol

/// The host's player numbers (1, 2, 3, …), one per forwarded pad across every client: what the
/// physical pad's player lights show and what `host status` lists pads by (docs/virtual-pads.md,
/// "Player numbers").
///
/// A number belongs to the pad, not to its order of arrival: its owner is the client's paired
/// identity and the pad's own (its address or serial), so a pad that drops and comes back (a
/// reconnect, a new session, the client restarted) gets its number back, whatever arrived
/// meanwhile. A pad gone for longer than `grace` frees its number. A number held for an absent
/// pad never keeps a present one out: when every number is taken, the longest-absent owner's
/// goes to the newcomer.
///
/// Pure: no clock, callers pass `now`.
public struct PlayerSlots: Sendable {
    /// Whose number it is.
    public struct Owner: Hashable, Sendable {
        /// The client's paired identity (its certificate's fingerprint).
        public var client: FeatureReportBytes
        /// The pad's own identity (`PadIdentity.unit`); a pad without one is known by the
        /// client's slot for it, which holds while that client keeps its pads in the same order.
        public var pad: FeatureReportBytes
        public var slot: PadSlot?
        public init(client: FeatureReportBytes, pad: FeatureReportBytes, slot: PadSlot) {
            self.client = client
            self.pad = pad
            self.slot = pad.isEmpty ? slot : nil
        }
        public init(_ arrival: PadArrival) {
            self.init(client: arrival.identity.client, pad: arrival.identity.unit, slot: arrival.slot)
        }
    }

    struct Held: Sendable {
        var number: Int
        /// The session whose host pad has it now (nil once its pad went).
        var holder: UInt32?
        /// When its pad went; nil while it is here.
        var releasedAt: MonotonicInstant?
    }

    /// How long a number waits for its pad by default: a reconnect, a client restarted, a pad
    /// switched off and on again come back within it.
    public static let defaultGrace: Duration = .seconds(60)
    /// The most numbers at once (the host's clients times their pads).
    public let capacity: Int
    /// How long a number waits for its pad to come back.
    public let grace: Duration
    private var held: [Owner: Held] = [:]

    public init(capacity: Int, grace: Duration) {
        precondition(capacity > 0, "a host has at least one player number")
        self.capacity = capacity
        self.grace = grace
    }

    /// The owner's number for `holder`'s host pad: the one it had if it is still held, else the
    /// lowest free one. Nil only when `capacity` pads are here at once.
    public mutating func claim(_ owner: Owner, holder: UInt32, now: MonotonicInstant) -> Int? {
        expire(now: now)
        if let number = held[owner]?.number {
            held[owner] = Held(number: number, holder: holder)
            return number
        }
        var taken = Set<Int>()
        for entry in held.values { taken.insert(entry.number) }
        if let free = (1...capacity).first(where: { !taken.contains($0) }) {
            held[owner] = Held(number: free, holder: holder)
            return free
        }
        // Every number is held: the longest-absent owner's goes to the pad that is here.
        var absent: (owner: Owner, since: MonotonicInstant, number: Int)?
        for (other, entry) in held {
            guard let since = entry.releasedAt else { continue }
            if absent.map({ since < $0.since }) ?? true { absent = (other, since, entry.number) }
        }
        guard let absent else { return nil }
        held[absent.owner] = nil
        held[owner] = Held(number: absent.number, holder: holder)
        return absent.number
    }

    /// `holder`'s pad of this owner went: its number waits `grace` for it. A session that lost
    /// the pad to a newer one (the same pad, reconnected) releases nothing.
    public mutating func release(_ owner: Owner, holder: UInt32, now: MonotonicInstant) {
        guard let entry = held[owner], entry.holder == holder, entry.releasedAt == nil else { return }
        held[owner] = Held(number: entry.number, holder: nil, releasedAt: now)
    }

    /// The session whose host pad has the owner's number now.
    public func holder(of owner: Owner) -> UInt32? { held[owner]?.holder }

    /// Frees the numbers whose grace is over.
    public mutating func expire(now: MonotonicInstant) {
        held = held.filter { _, entry in entry.releasedAt.map { now - $0 < grace } ?? true }
    }

    /// The owner's number, here or waiting.
    public func number(of owner: Owner) -> Int? { held[owner]?.number }

    /// Numbers waiting for their pads, lowest first, with how long each has been gone.
    public func waiting(now: MonotonicInstant) -> [(number: Int, owner: Owner, absent: Duration)] {
        held.compactMap { owner, entry in entry.releasedAt.map { (entry.number, owner, now - $0) } }.sorted { $0.number < $1.number }
    }
}

/// The host's `PlayerSlots`, shared by every session's `ClientPads`; used on the input path's
/// thread only.
final class PlayerNumbers {
    var slots: PlayerSlots
    /// Removes the host pad of `owner` from session `session`: the same pad now comes through a
    /// newer session (its client reconnected), so the old host pad is a ghost.
    var evict: (_ session: UInt32, _ owner: PlayerSlots.Owner) -> Void = { _, _ in }

    init(capacity: Int, grace: Duration) { slots = PlayerSlots(capacity: capacity, grace: grace) }
}
