/// One short item of a HID report descriptor (HID 1.11 §6.2.2.2): a 1-byte prefix
/// `tag(4) type(2) size(2)` followed by 0, 1, 2 or 4 data bytes, little-endian.
public struct DescriptorItem: Equatable, Sendable {
    public enum Kind: UInt8, Sendable { case main = 0, global = 1, local = 2, reserved = 3 }

    /// Offset of the prefix byte in the descriptor.
    public let offset: Int
    /// The prefix byte without its size bits (`prefix & 0xFC`), e.g. 0x04 for Usage Page.
    public let tag: UInt8
    public let dataSize: Int
    /// Data bytes as an unsigned little-endian value.
    public let unsignedValue: UInt32

    public var kind: Kind { Kind(rawValue: (tag >> 2) & 0x03)! }

    /// Data sign-extended from its own width (for Logical/Physical Minimum and friends).
    public var signedValue: Int32 {
        switch dataSize {
        case 1: return Int32(Int8(truncatingIfNeeded: unsignedValue))
        case 2: return Int32(Int16(truncatingIfNeeded: unsignedValue))
        case 4: return Int32(bitPattern: unsignedValue)
        default: return 0
        }
    }
}

/// Why a report descriptor was refused. Each case names the byte offset so a user can look at a hex dump.
public enum DescriptorError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLarge(size: Int, limit: Int)
    case truncatedItem(offset: Int)
    case longItemUnsupported(offset: Int)
    case unknownItem(tag: UInt8, offset: Int)
    case popWithoutPush(offset: Int)
    case globalStackOverflow(offset: Int, limit: Int)
    case reportSizeTooLarge(bits: Int, offset: Int, limit: Int)
    case reportTooLarge(reportID: Int, bits: Int, limit: Int)
    case tooManyUsages(count: Int, offset: Int, limit: Int)
    case tooManyFields(limit: Int)

    public var description: String {
        switch self {
        case .empty: return "the report descriptor is empty"
        case .tooLarge(let size, let limit): return "the report descriptor is \(size) bytes; at most \(limit) are accepted (the kernel's limit)"
        case .truncatedItem(let o): return "the item at byte \(o) announces more data bytes than the descriptor has left; the descriptor is cut short"
        case .longItemUnsupported(let o): return "long item (0xFE) at byte \(o): long items are reserved by HID 1.11 and not supported"
        case .unknownItem(let tag, let o): return "unknown item tag \(hexByte(tag)) at byte \(o); check the descriptor against HID 1.11 §6.2.2"
        case .popWithoutPush(let o): return "Pop at byte \(o) without a matching Push"
        case .globalStackOverflow(let o, let limit): return "Push at byte \(o) nests deeper than \(limit) levels"
        case .reportSizeTooLarge(let bits, let o, let limit): return "Report Size \(bits) at byte \(o) exceeds \(limit) bits per field"
        case .reportTooLarge(let id, let bits, let limit): return "report \(id) would be \(bits) bits long; at most \(limit) bits are accepted"
        case .tooManyUsages(let n, let o, let limit): return "the main item at byte \(o) declares \(n) usages; at most \(limit) are accepted"
        case .tooManyFields(let limit): return "the descriptor declares more than \(limit) fields"
        }
    }
}

/// Splits a descriptor into items. Total: any byte string yields items or a typed error.
public enum DescriptorTokenizer {
    public static let maximumDescriptorSize = 4096  // HID_MAX_DESCRIPTOR_SIZE in the kernel

    public static func items(_ bytes: [UInt8]) throws(DescriptorError) -> [DescriptorItem] {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= maximumDescriptorSize else { throw .tooLarge(size: bytes.count, limit: maximumDescriptorSize) }
        var items: [DescriptorItem] = []
        items.reserveCapacity(bytes.count / 2)
        var index = 0
        while index < bytes.count {
            let prefix = bytes[index]
            // Some devices end their descriptor with a stray 0 byte; hid-tools and the kernel skip it.
            if prefix == 0 && index == bytes.count - 1 { break }
            if prefix == 0xFE { throw .longItemUnsupported(offset: index) }
            let sizeCode = Int(prefix & 0x03)
            let dataSize = sizeCode == 3 ? 4 : sizeCode
            guard index + 1 + dataSize <= bytes.count else { throw .truncatedItem(offset: index) }
            var value: UInt32 = 0
            for i in 0..<dataSize { value |= UInt32(bytes[index + 1 + i]) << (8 * UInt32(i)) }
            items.append(DescriptorItem(offset: index, tag: prefix & 0xFC, dataSize: dataSize, unsignedValue: value))
            index += 1 + dataSize
        }
        return items
    }
}
