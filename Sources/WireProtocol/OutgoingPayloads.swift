/// Messages encoded straight into datagram payloads as they are made: each payload is the version
/// byte and as many messages as fit; a message that does not fit starts the next payload. Motion
/// samples of one pad are gathered into messages of up to `MotionBatch.capacity` as they come.
/// The storage is allocated once and grows only when one pass makes more payloads than ever
/// before, so the per-report path allocates nothing.
public struct OutgoingPayloads: ~Copyable {
    /// A payload's size at most: with a datagram's 32 bytes of header and tag and 28 of IPv4 and
    /// UDP headers, a datagram stays inside a 1500-byte Ethernet MTU.
    public static let payloadCapacity = 1400

    private var storage: UnsafeMutableRawBufferPointer
    /// Lengths of the payloads finished before `writer`'s: the first `finished` of them.
    private var lengths: [Int]
    private var finished = 0
    private var writer: WireWriter
    /// The motion message being filled: where its length and count go, and its pad.
    private var openMotion: (slot: PadSlot, lengthAt: Int, countAt: Int, samples: Int)?

    public init(payloads: Int = 4) {
        storage = .allocate(byteCount: payloads * Self.payloadCapacity, alignment: 8)
        lengths = [Int](repeating: 0, count: payloads)
        writer = WireWriter(UnsafeMutableRawBufferPointer(rebasing: storage[0..<Self.payloadCapacity]))
        begin()
    }

    deinit { storage.deallocate() }

    /// True when nothing has been added since the last `drain`.
    public var isEmpty: Bool { finished == 0 && writer.count <= 1 }

    public mutating func append<Body: WireMessageBody>(_ body: Body) {
        closeMotion()
        add { (w: inout WireWriter) throws(WireError) in try WireCodec.encode(body, into: &w) }
    }

    public mutating func append(_ message: WireMessage) {
        closeMotion()
        add { (w: inout WireWriter) throws(WireError) in try WireCodec.encode(message, into: &w) }
    }

    /// One motion sample of the pad in `slot`: joins that pad's open motion message while it has
    /// room, or opens the next one.
    public mutating func appendMotion(_ sample: WireMotionSample, slot: PadSlot) {
        if let open = openMotion, open.slot == slot, open.samples < MotionBatch.capacity, writer.remaining >= WireMotionSample.wireSize {
            try? sample.write(into: &writer)
            openMotion?.samples += 1
            return
        }
        closeMotion()
        // type u8, length u16, slot u8, count u8, then the sample.
        if writer.remaining < 5 + WireMotionSample.wireSize { nextPayload() }
        do throws(WireError) {
            try writer.u8(WireMessageType.motion.rawValue)
            let lengthAt = try writer.reserveU16()
            try writer.u8(slot.rawValue)
            let countAt = writer.count
            try writer.u8(1)
            try sample.write(into: &writer)
            openMotion = (slot, lengthAt, countAt, 1)
        } catch {
            preconditionFailure("a motion message fits an empty payload")
        }
    }

    /// Hands each payload to `body`, in order, and starts over empty.
    public mutating func drain(_ body: (UnsafeRawBufferPointer) -> Void) {
        closeMotion()
        let capacity = Self.payloadCapacity
        for index in 0..<finished {
            body(UnsafeRawBufferPointer(rebasing: storage[index * capacity..<index * capacity + lengths[index]]))
        }
        if writer.count > 1 {
            let at = finished * capacity
            body(UnsafeRawBufferPointer(rebasing: storage[at..<at + writer.count]))
        }
        finished = 0
        writer = WireWriter(UnsafeMutableRawBufferPointer(rebasing: storage[0..<capacity]))
        begin()
    }

    @inline(__always)
    private mutating func add(_ encode: (inout WireWriter) throws(WireError) -> Void) {
        let before = writer
        do throws(WireError) { try encode(&writer); return } catch { writer = before }
        guard writer.count > 1 else { return }  // larger than a whole payload: no message padgate makes is
        nextPayload()
        let empty = writer
        do throws(WireError) { try encode(&writer) } catch { writer = empty }
    }

    private mutating func begin() { try? WireCodec.beginPayload(&writer) }

    private mutating func closeMotion() {
        guard let open = openMotion else { return }
        writer.patchU16(at: open.lengthAt, UInt16(writer.count - open.lengthAt - 2))
        writer.patchU8(at: open.countAt, UInt8(open.samples))
        openMotion = nil
    }

    private mutating func nextPayload() {
        closeMotion()
        lengths[finished] = writer.count
        finished += 1
        let capacity = Self.payloadCapacity, index = finished
        if index == lengths.count {
            // More payloads in one pass than ever before: keep the room for next time.
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 8)
            grown.copyMemory(from: UnsafeRawBufferPointer(storage))
            storage.deallocate()
            storage = grown
            lengths += [Int](repeating: 0, count: lengths.count)
        }
        writer = WireWriter(UnsafeMutableRawBufferPointer(rebasing: storage[index * capacity..<(index + 1) * capacity]))
        begin()
    }
}
