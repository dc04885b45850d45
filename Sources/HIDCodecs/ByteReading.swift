// Little-endian reads that never trap: callers check lengths once per report, these assume it.

extension UnsafeRawBufferPointer {
    @inline(__always)
    func byte(_ offset: Int) -> UInt8 { self[offset] }

    @inline(__always)
    func loadLittleEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    @inline(__always)
    func loadLittleEndianInt16(at offset: Int) -> Int16 {
        Int16(bitPattern: loadLittleEndianUInt16(at: offset))
    }

    @inline(__always)
    func loadLittleEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }
}

/// Hex helpers for CLI input/output and tests.
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        var first = true
        for b in bytes {
            if !first && !separator.isEmpty { out.append(contentsOf: separator.utf8) }
            first = false
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Accepts "0a1b", "0a 1b", "0x0a,0x1b". Throws on odd digit counts or non-hex characters.
    public static func decode(_ text: String) throws(HexError) -> [UInt8] {
        // Drop "0x" prefixes first so "0x05,0xff" reads as two bytes.
        let lowered = Array(text.lowercased().unicodeScalars)
        var scalars: [Unicode.Scalar] = []
        var i = 0
        while i < lowered.count {
            if lowered[i] == "0", i + 1 < lowered.count, lowered[i + 1] == "x", scalars.last.map({ !$0.properties.isASCIIHexDigit }) ?? true {
                i += 2
                continue
            }
            scalars.append(lowered[i])
            i += 1
        }
        var out: [UInt8] = []
        var pending: UInt8? = nil
        for scalar in scalars {
            let nibble: UInt8
            switch scalar {
            case "0"..."9": nibble = UInt8(scalar.value - 48)
            case "a"..."f": nibble = UInt8(scalar.value - 87)
            case " ", ",", ":", "\n", "\t", "-": continue
            default: throw .invalidCharacter(Character(scalar))
            }
            if let high = pending { out.append(high << 4 | nibble); pending = nil } else { pending = nibble }
        }
        if pending != nil { throw .oddDigitCount }
        return out
    }
}

public enum HexError: Error, Equatable, CustomStringConvertible {
    case invalidCharacter(Character)
    case oddDigitCount
    public var description: String {
        switch self {
        case .invalidCharacter(let c): return "'\(c)' is not a hex digit; write bytes like 05ff1a or '05 ff 1a'"
        case .oddDigitCount: return "odd number of hex digits; every byte needs two digits"
        }
    }
}

/// "0x0a" style, for messages.
func hexByte(_ value: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return "0x" + String(digits[Int(value >> 4)]) + String(digits[Int(value & 0x0F)])
}
