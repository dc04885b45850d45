import HIDCodecs

/// A haptic pulse train on a pad's trackpad (a Steam Deck's): what a game on the host asked of
/// its Deck (the 0x8F command), for the physical pad's own. `count` pulses of `onMicros` on and
/// `offMicros` off, at `gain` dB, on one pad or both. A train lasts at most `maximumMillis`: a
/// longer one is refused as malformed (the host cuts what a game asks to that first), so a host
/// cannot keep a pad buzzing beyond it, as a rumble lease cannot.
public struct TrackpadPulse: Equatable, Sendable {
    public static let maximumMillis = 2000

    public var slot: PadSlot
    public var sequence: WireSequence
    public var side: Trackpad
    public var onMicros: UInt16
    public var offMicros: UInt16
    public var count: UInt16
    public var gain: Int8

    public init(slot: PadSlot, sequence: WireSequence, side: Trackpad, onMicros: UInt16, offMicros: UInt16, count: UInt16, gain: Int8) {
        self.slot = slot; self.sequence = sequence; self.side = side
        self.onMicros = onMicros; self.offMicros = offMicros; self.count = count; self.gain = gain
    }

    /// How long the train lasts.
    public var micros: Int { Int(count) * (Int(onMicros) + Int(offMicros)) }

    /// The most pulses of this shape that fit within `maximumMillis` (at least one).
    public static func largestCount(onMicros: UInt16, offMicros: UInt16) -> UInt16 {
        UInt16(min(Int(UInt16.max), maximumMillis * 1000 / max(1, Int(onMicros) + Int(offMicros))))
    }
}

extension TrackpadPulse: WireMessageBody {
    public static var wireType: WireMessageType { .trackpadPulse }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u8(side.rawValue)
        try w.u16(onMicros); try w.u16(offMicros); try w.u16(count); try w.u8(UInt8(bitPattern: gain))
    }
    static func decode(_ r: inout WireReader) throws(WireError) -> TrackpadPulse {
        let slot = try WireLimits.checkSlot(try r.u8()), sequence = WireSequence(try r.u16()), sideByte = try r.u8()
        guard let side = Trackpad(rawValue: sideByte) else { throw .malformed("trackpad side \(sideByte)") }
        let pulse = TrackpadPulse(slot: slot, sequence: sequence, side: side, onMicros: try r.u16(), offMicros: try r.u16(), count: try r.u16(),
                                  gain: Int8(bitPattern: try r.u8()))
        guard pulse.micros <= maximumMillis * 1000 else { throw .malformed("a trackpad pulse train of \(pulse.micros) µs") }
        return pulse
    }
}
