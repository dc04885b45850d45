import HIDCodecs

/// Host → client: 5 ms of what a game plays on the host pad's voice coils, as the Bluetooth path
/// carries it (3 kHz, signed 8-bit, left and right interleaved: docs/haptics.md says why this and
/// not 48 kHz or Opus). Blocks are numbered per pad; block `n` starts at frame `15 n` of the
/// stream, so the client places each by its number alone and a gap is loss, never a shift.
/// Fixed storage: 200 blocks a second must not allocate.
public struct HapticsBlock: Equatable, Sendable {
    /// 5 ms at 3 kHz.
    public static let frames = 15
    public static let sampleRate = DualSenseHapticsReport.sampleRate
    public static let duration: Duration = .milliseconds(5)

    public var slot: PadSlot
    public var sequence: WireSequence
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// A copy of block `sequence - 1`, where the host sent that one too: a single lost datagram
    /// (a click is often one block) is recovered from the next instead of concealed or missed
    /// (docs/haptics.md, "What crosses"). Appended on the wire, so a receiver that knows only
    /// the block ignores it.
    private var previousStorage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    public private(set) var carriesPrevious = false

    public init(slot: PadSlot, sequence: WireSequence) { self.slot = slot; self.sequence = sequence }

    /// Sample `i` of `2 * frames`: left, right, left, right…
    public subscript(i: Int) -> Int8 {
        get {
            precondition(i < 2 * Self.frames)
            return withUnsafeBytes(of: storage) { Int8(bitPattern: $0[i]) }
        }
        set {
            precondition(i < 2 * Self.frames)
            withUnsafeMutableBytes(of: &storage) { $0[i] = UInt8(bitPattern: newValue) }
        }
    }

    public var isSilent: Bool { storage == (0, 0, 0, 0) }

    public func withSamples<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(2 * Self.frames))) }
    }

    /// Carries `block`'s samples as the copy of the block before this one (`block` must be it).
    public mutating func attachPrevious(_ block: HapticsBlock) {
        precondition(block.sequence.next == sequence)
        previousStorage = block.storage
        carriesPrevious = true
    }

    /// The copy of block `sequence - 1`'s samples, if carried.
    public func withPreviousSamples<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard carriesPrevious else { return nil }
        return try withUnsafeBytes(of: previousStorage) { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(2 * Self.frames))) }
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.slot == b.slot && a.sequence == b.sequence && a.storage == b.storage
            && a.carriesPrevious == b.carriesPrevious && (!a.carriesPrevious || a.previousStorage == b.previousStorage)
    }
}

extension HapticsBlock: WireMessageBody {
    public static var wireType: WireMessageType { .haptics }
    public func write(into w: inout WireWriter) throws(WireError) {
        try w.u8(slot.rawValue); try w.u16(sequence.rawValue)
        var copy = storage
        try withUnsafeBytes(of: &copy) { (raw) throws(WireError) in try w.bytes(UnsafeRawBufferPointer(rebasing: raw.prefix(2 * Self.frames))) }
        guard carriesPrevious else { return }
        var previous = previousStorage
        try withUnsafeBytes(of: &previous) { (raw) throws(WireError) in try w.bytes(UnsafeRawBufferPointer(rebasing: raw.prefix(2 * Self.frames))) }
    }

    static func decode(_ r: inout WireReader) throws(WireError) -> HapticsBlock {
        var block = HapticsBlock(slot: try WireLimits.checkSlot(try r.u8()), sequence: WireSequence(try r.u16()))
        let samples = try r.slice(2 * frames)
        withUnsafeMutableBytes(of: &block.storage) { $0.copyMemory(from: samples) }
        // The copy of the block before, when the body holds it whole (fewer bytes: a newer field's, ignored).
        if r.remaining >= 2 * frames {
            let previous = try r.slice(2 * frames)
            withUnsafeMutableBytes(of: &block.previousStorage) { $0.copyMemory(from: previous) }
            block.carriesPrevious = true
        }
        return block
    }
}

extension HapticsBlock {
    /// A 48 kHz coil signal into numbered blocks, frame by frame (`HapticsDecimator`'s 16 to 1):
    /// the host pad's capture and `padgate haptics` make their blocks alike. No allocation.
    public struct Builder: Sendable {
        private var decimator = HapticsDecimator()
        private var block: HapticsBlock
        private var filled = 0

        public init(slot: PadSlot) { block = HapticsBlock(slot: slot, sequence: WireSequence(0)) }

        /// The number the next block gets.
        public var sequence: WireSequence { block.sequence }

        /// One 48 kHz frame; the block it completes, if any.
        public mutating func push(left: Int16, right: Int16) -> HapticsBlock? {
            guard let out = decimator.push(left: left, right: right) else { return nil }
            block[2 * filled] = out.left
            block[2 * filled + 1] = out.right
            filled += 1
            guard filled == HapticsBlock.frames else { return nil }
            filled = 0
            let full = block
            block = HapticsBlock(slot: full.slot, sequence: full.sequence.next)
            return full
        }
    }
}
