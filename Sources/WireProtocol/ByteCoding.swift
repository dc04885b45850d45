/// Big-endian writer into a caller-owned buffer: encoding a message allocates nothing.
public struct WireWriter {
    let buffer: UnsafeMutableRawBufferPointer
    public private(set) var count = 0

    public init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    public var remaining: Int { buffer.count - count }

    @inline(__always) public mutating func u8(_ v: UInt8) throws(WireError) {
        guard remaining >= 1 else { throw .noRoom }
        buffer[count] = v; count += 1
    }
    // One bounds check and one store per field, not per byte: encoding runs for every report.
    @inline(__always) mutating func store<T: FixedWidthInteger>(_ v: T) throws(WireError) {
        guard remaining >= MemoryLayout<T>.size else { throw .noRoom }
        buffer.storeBytes(of: v.bigEndian, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }
    @inline(__always) public mutating func u16(_ v: UInt16) throws(WireError) { try store(v) }
    @inline(__always) public mutating func u32(_ v: UInt32) throws(WireError) { try store(v) }
    @inline(__always) public mutating func u64(_ v: UInt64) throws(WireError) { try store(v) }
    @inline(__always) public mutating func i16(_ v: Int16) throws(WireError) { try u16(UInt16(bitPattern: v)) }
    @inline(__always) public mutating func f32(_ v: Float) throws(WireError) { try u32(v.bitPattern) }
    public mutating func bytes(_ v: UnsafeRawBufferPointer) throws(WireError) {
        guard remaining >= v.count else { throw .noRoom }
        for i in 0..<v.count { buffer[count + i] = v[i] }
        count += v.count
    }
    /// Writes a u16 placeholder now and patches it later (message lengths).
    mutating func reserveU16() throws(WireError) -> Int { let at = count; try u16(0); return at }
    mutating func patchU16(at offset: Int, _ v: UInt16) { buffer.storeBytes(of: v.bigEndian, toByteOffset: offset, as: UInt16.self) }
    mutating func patchU8(at offset: Int, _ v: UInt8) { buffer[offset] = v }
}

/// Big-endian reader over received bytes; every read is bounds-checked.
public struct WireReader {
    let buffer: UnsafeRawBufferPointer
    public private(set) var offset = 0

    public init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    public var remaining: Int { buffer.count - offset }

    public mutating func u8() throws(WireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated }
        defer { offset += 1 }
        return buffer[offset]
    }
    @inline(__always) mutating func load<T: FixedWidthInteger>(_: T.Type) throws(WireError) -> T {
        guard remaining >= MemoryLayout<T>.size else { throw .truncated }
        defer { offset += MemoryLayout<T>.size }
        return T(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
    public mutating func u16() throws(WireError) -> UInt16 { try load(UInt16.self) }
    public mutating func u32() throws(WireError) -> UInt32 { try load(UInt32.self) }
    public mutating func u64() throws(WireError) -> UInt64 { try load(UInt64.self) }
    public mutating func i16() throws(WireError) -> Int16 { Int16(bitPattern: try u16()) }
    public mutating func f32() throws(WireError) -> Float { Float(bitPattern: try u32()) }
    public mutating func skip(_ n: Int) throws(WireError) {
        guard remaining >= n else { throw .truncated }
        offset += n
    }
    public mutating func slice(_ n: Int) throws(WireError) -> UnsafeRawBufferPointer {
        guard remaining >= n else { throw .truncated }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + n])
    }
}

public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case noRoom
    case badMagic
    case malformed(String)

    public var description: String {
        switch self {
        case .truncated: return "message ends before its fields do"
        case .noRoom: return "datagram buffer too small for the message"
        case .badMagic: return "not a padgate datagram"
        case .malformed(let why): return "malformed message: \(why)"
        }
    }
}
