import CZlib

/// The byte that Sony pads prepend (virtually) before computing a Bluetooth report's CRC32.
/// It is the HID transaction header of the packet kind: DATA|Input, DATA|Output, SET_REPORT|Feature.
public enum CRCSeed: UInt8, Sendable, CaseIterable {
    case input = 0xA1
    case output = 0xA2
    case feature = 0xA3
}

/// CRC32 (zlib polynomial) over `seed ++ report[0..<n-4]`, stored little-endian in the last 4 bytes.
/// Used by DualSense and DualShock 4 reports over Bluetooth.
public enum BluetoothCRC {
    public static let trailerSize = 4

    /// CRC of `seed` followed by `bytes`. Does not allocate.
    public static func checksum(seed: CRCSeed, over bytes: UnsafeRawBufferPointer) -> UInt32 {
        var seedByte = seed.rawValue
        var crc = withUnsafePointer(to: &seedByte) { crc32(0, $0, 1) }
        if let base = bytes.baseAddress, bytes.count > 0 {
            crc = crc32(crc, base.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    public static func checksum(seed: CRCSeed, over bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum(seed: seed, over: $0) }
    }

    /// True when the last four bytes of `report` hold the CRC of the bytes before them.
    public static func verify(seed: CRCSeed, report: UnsafeRawBufferPointer) -> Bool {
        guard report.count > trailerSize else { return false }
        let bodyCount = report.count - trailerSize
        let expected = checksum(seed: seed, over: UnsafeRawBufferPointer(rebasing: report[0..<bodyCount]))
        return report.loadLittleEndianUInt32(at: bodyCount) == expected
    }

    public static func verify(seed: CRCSeed, report: [UInt8]) -> Bool {
        report.withUnsafeBytes { verify(seed: seed, report: $0) }
    }

    /// Writes the CRC of everything before the last four bytes into those bytes.
    public static func stamp(seed: CRCSeed, report: inout [UInt8]) {
        precondition(report.count > trailerSize, "a CRC-stamped report needs room for its 4-byte trailer")
        let bodyCount = report.count - trailerSize
        let crc = report.withUnsafeBytes { checksum(seed: seed, over: UnsafeRawBufferPointer(rebasing: $0[0..<bodyCount])) }
        for i in 0..<4 { report[bodyCount + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
    }
}
