/// 16-bit sequence numbers that wrap (RFC 1982's serial number arithmetic): the one place padgate
/// compares and unwraps them (the wire's sequences, haptics blocks, speaker frames, pad reports).
public enum Serial16 {
    /// How far `a` is ahead of `b`, the shorter way round the circle (negative: behind).
    @inlinable public static func distance(_ a: UInt16, from b: UInt16) -> Int { Int(Int16(bitPattern: a &- b)) }

    /// `sequence` as a count that never wraps, placed nearest `newest` (a count unwrapped before).
    @inlinable public static func unwrap(_ sequence: UInt16, near newest: Int64) -> Int64 {
        newest + Int64(distance(sequence, from: UInt16(truncatingIfNeeded: newest)))
    }
}
