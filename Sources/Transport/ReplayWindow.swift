/// Accepts each datagram sequence number at most once, within a sliding window behind the
/// highest seen (RFC 6479's idea with one 64-bit word): replays and stale datagrams are refused
/// before decryption results are used.
public struct ReplayWindow: Sendable {
    public static let size: UInt64 = 64
    /// The furthest ahead of the highest seen a sequence may be. A sender counts up by one per
    /// datagram from 1, so a gap of a million is hours of lost traffic: anything beyond it is junk,
    /// refused before it costs an AES-GCM open (a flood of random headers would otherwise).
    public static let maxJump: UInt64 = 1 << 20
    public private(set) var highest: UInt64 = 0
    private var seen: UInt64 = 0  // bit i: highest - i was accepted
    private var started = false

    public init() {}

    public enum Verdict: Equatable, Sendable { case fresh, replayed, tooOld, implausible }

    /// Checks without recording: call before decrypting, `commit` after the tag verified.
    public func check(_ sequence: UInt64) -> Verdict {
        guard started else { return sequence <= Self.maxJump ? .fresh : .implausible }
        if sequence > highest { return sequence - highest <= Self.maxJump ? .fresh : .implausible }
        let age = highest - sequence
        if age >= Self.size { return .tooOld }
        return seen & (1 << age) != 0 ? .replayed : .fresh
    }

    public mutating func commit(_ sequence: UInt64) {
        guard started else { started = true; highest = sequence; seen = 1; return }
        if sequence > highest {
            let shift = sequence - highest
            seen = shift >= Self.size ? 1 : (seen << shift) | 1
            highest = sequence
        } else {
            seen |= 1 << (highest - sequence)
        }
    }
}
