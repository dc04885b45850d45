/// How each message's body is laid out on the wire (docs/wire.md), one type per message, so that
/// the per-report path encodes a state or a motion sample without wrapping it in a `WireMessage`.
public protocol WireMessageBody {
    static var wireType: WireMessageType { get }
    func write(into w: inout WireWriter) throws(WireError)
}

extension PadArrival: WireMessageBody {
    public static var wireType: WireMessageType { .arrival }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u8(type.rawValue); try w.u16(vendorID); try w.u16(productID)
        try w.u32(capabilities.rawValue)
        // Written from the string's own bytes: arrivals ride every keep-alive, so no copy per send.
        var length = name.utf8.count
        if length > WireCodec.maxNameBytes { length = WireCodec.utf8Prefix(Array(name.utf8), maxBytes: WireCodec.maxNameBytes).count }
        try w.u8(UInt8(length))
        for byte in name.utf8.prefix(length) { try w.u8(byte) }
        try identity.calibration.write(into: &w)
        try identity.firmware.write(into: &w)
        try identity.unit.write(into: &w)
    }
}

extension FeatureReportBytes {
    /// Length-prefixed: `count u8 | bytes`.
    func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(UInt8(count))
        for i in 0..<count { try w.u8(self[i]) }
    }
}

/// The body of a removal: the slot whose pad went away.
struct Removal: WireMessageBody {
    static var wireType: WireMessageType { .removal }
    var slot: PadSlot
    func write(into w: inout WireWriter) throws(WireError) { try w.u8(slot.rawValue) }
}

extension PadStateSnapshot: WireMessageBody {
    public static var wireType: WireMessageType { .state }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u32(buttons); try w.u8(dpad)
        try w.i16(leftX); try w.i16(leftY); try w.i16(rightX); try w.i16(rightY); try w.u8(l2); try w.u8(r2)
        // Trailing, and only where the pad has them: a receiver before them stops at r2.
        if l2Fine != nil || r2Fine != nil { try w.u16(l2Wide); try w.u16(r2Wide) }
    }
}

extension WireTouchContact {
    func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(id); try w.u8(active ? 1 : 0); try w.u16(x); try w.u16(y)
    }
}

extension TouchSnapshot: WireMessageBody {
    public static var wireType: WireMessageType { .touch }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue)
        try first.write(into: &w); try second.write(into: &w)
        // Trailing, and only where the pad senses pressure: a receiver before them stops here.
        if first.pressure != nil || second.pressure != nil { try w.u16(first.pressure ?? 0); try w.u16(second.pressure ?? 0) }
    }
}

extension WireMotionSample {
    /// Bytes per sample in a motion message.
    static let wireSize = 28
    func write(into w: inout WireWriter) throws(WireError) {
        try w.u32(timestampMicros)
        try w.f32(gyroX); try w.f32(gyroY); try w.f32(gyroZ)
        try w.f32(accelX); try w.f32(accelY); try w.f32(accelZ)
    }
}

extension MotionBatch: WireMessageBody {
    public static var wireType: WireMessageType { .motion }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u8(UInt8(count))
        for i in 0..<count { try self[i].write(into: &w) }
    }
}

extension BatteryReport: WireMessageBody {
    public static var wireType: WireMessageType { .battery }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u8(percent); try w.u8(state)
    }
}

extension Probe {
    func writeStart(into w: inout WireWriter) throws(WireError) { try w.u32(id); try w.u64(sentMicros) }
    func writePadding(into w: inout WireWriter) throws(WireError) { for _ in 0..<padding { try w.u8(0) } }
}

/// A ping and a pong carry the same probe under different types, each with its own trailing counts.
struct Ping: WireMessageBody {
    static var wireType: WireMessageType { .ping }
    var probe: Probe
    func write(into w: inout WireWriter) throws(WireError) {
        try probe.writeStart(into: &w)
        let f = probe.figures
        try w.u32(f.roundTripMicros); try w.u32(f.jitterMicros); try w.u16(f.lossToHostPermille); try w.u16(f.lossToClientPermille)
        try probe.writePadding(into: &w)
    }
}

struct Pong: WireMessageBody {
    static var wireType: WireMessageType { .pong }
    var probe: Probe
    func write(into w: inout WireWriter) throws(WireError) {
        try probe.writeStart(into: &w)
        let t = probe.tally
        try w.u32(t.received); try w.u32(t.highestID); try w.u32(t.reordered); try w.u32(t.duplicates)
        try probe.writePadding(into: &w)
    }
}

extension RumbleLease: WireMessageBody {
    public static var wireType: WireMessageType { .rumble }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u16(low); try w.u16(high)
        try w.u16(leftTrigger); try w.u16(rightTrigger); try w.u16(ttlMillis)
    }
}

extension HIDOutputMessage: WireMessageBody {
    public static var wireType: WireMessageType { .hidOutput }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue); try w.u8(fields.rawValue)
        try w.u8(red); try w.u8(green); try w.u8(blue); try w.u8(playerLEDMask); try w.u8(micLED)
        try leftTrigger.write(into: &w)
        try rightTrigger.write(into: &w)
    }
}

extension MotionRateRequest: WireMessageBody {
    public static var wireType: WireMessageType { .motionRate }
    public func write(into w: inout WireWriter) throws(WireError) { try w.u8(slot.rawValue); try w.u16(hertz) }
}
