/// One family's input reports read into a `GamepadState`, without allocating. Each family's codec
/// lives in its own folder (`PlayStation/`, `SwitchPro/`, `Xbox/`), and its driver
/// (`PadDriver.inputCodec`) says which one a pad's reports take.
public protocol PadInputCodec: Sendable {
    /// The kind whose reports this reads (for errors).
    var kind: PadKind { get }
    /// Decodes one report; one of another id, cut short or failing its checksum throws.
    mutating func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError)
    /// Whether its motion samples carry the pad's own clock (`GamepadState.sensorMicros`), which
    /// `calibrate FILE.hid` needs to measure rest windows.
    var readsMotionWithAClock: Bool { get }
    /// The motion calibration of a pad of the family that gave none (`calibrate FILE.hid`
    /// without `--feature-report`): its IMU's nominal scale into the wire's units.
    var nominalCalibration: MotionCalibration { get }
}

extension PadInputCodec {
    public var readsMotionWithAClock: Bool { false }
    public var nominalCalibration: MotionCalibration { .nominal }
}

public enum InputReportError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case unknownReport(id: UInt8, length: Int, kind: PadKind)
    case tooShort(id: UInt8, got: Int, need: Int)
    case badChecksum(id: UInt8)

    public var description: String {
        switch self {
        case .empty: return "empty input report"
        case .unknownReport(let id, let length, let kind):
            return "\(kind.name) does not send a \(length)-byte input report \(hexByte(id)); is the pad kind right?"
        case .tooShort(let id, let got, let need): return "input report \(hexByte(id)) is \(got) bytes, needs \(need); it was truncated"
        case .badChecksum(let id): return "Bluetooth input report \(hexByte(id)) fails its CRC32 check (seed 0xA1); dropped"
        }
    }
}

/// One bit of a report that means one button.
public struct ButtonBit: Sendable {
    public var byte: Int       // relative to the layout's button bytes
    public var mask: UInt8
    public var button: GamepadButtons
}

/// A button map turned into one table per button byte: three loads per report instead of a loop over bits.
struct ButtonLookup: Sendable {
    private let table: [UInt32]   // 3 × 256 entries

    init(_ map: [ButtonBit]) {
        var table = [UInt32](repeating: 0, count: 3 * 256)
        for bit in map where bit.byte < 3 {
            for value in 0..<256 where UInt8(value) & bit.mask != 0 { table[bit.byte * 256 + value] |= bit.button.rawValue }
        }
        self.table = table
    }

    @inline(__always)
    func buttons(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> GamepadButtons {
        table.withUnsafeBufferPointer { t in
            GamepadButtons(rawValue: t[Int(b0)] | t[256 + Int(b1)] | t[512 + Int(b2)])
        }
    }
}

/// Reads of the fields most pads' reports share.
public enum ReportFields {
    @inline(__always)
    public static func buttons(_ r: UnsafeRawBufferPointer, at offset: Int, map: [ButtonBit]) -> GamepadButtons {
        var result = GamepadButtons()
        for bit in map where r[offset + bit.byte] & bit.mask != 0 { result.insert(bit.button) }
        return result
    }

    @inline(__always)
    public static func touchPoint(_ r: UnsafeRawBufferPointer, at o: Int) -> TouchPoint {
        // contact: bit 7 set = no finger, low 7 bits = id; then 12-bit x, 12-bit y packed in 3 bytes.
        let contact = r[o]
        return TouchPoint(id: contact & 0x7F, active: contact & 0x80 == 0,
                          x: UInt16(r[o + 1]) | UInt16(r[o + 2] & 0x0F) << 8,
                          y: UInt16(r[o + 2] >> 4) | UInt16(r[o + 3]) << 4)
    }

    @inline(__always)
    public static func vector(_ r: UnsafeRawBufferPointer, at o: Int) -> Vector3 {
        Vector3(x: r.loadLittleEndianInt16(at: o), y: r.loadLittleEndianInt16(at: o + 2), z: r.loadLittleEndianInt16(at: o + 4))
    }

}

/// Which codec reads a kind's reports (nil: none; the pad is read through evdev). The drivers'
/// registry answers it (`PadDrivers.inputCodec`); pure code that needs one takes it as a parameter.
public typealias InputCodecCatalogue = @Sendable (_ kind: PadKind, _ descriptor: ReportDescriptor?) -> (any PadInputCodec)?

/// A pad's input reports decoded by its family's codec, counted so a caller can tell a noisy link
/// (bad CRCs, cut-off reports) from a quiet one.
public struct ControllerInputDecoder: Sendable {
    public private(set) var codec: any PadInputCodec
    public var kind: PadKind { codec.kind }
    public private(set) var decodedReports = 0
    public private(set) var rejectedChecksums = 0
    /// Reports shorter than their layout (`tooShort`): a truncated read or a transport that cuts reports.
    public private(set) var rejectedTruncated = 0

    public init(_ codec: any PadInputCodec) { self.codec = codec }

    public mutating func decode(_ report: [UInt8], into state: inout GamepadState) throws(InputReportError) {
        let result: Result<Void, InputReportError> = report.withUnsafeBytes { raw in
            do throws(InputReportError) { try decode(raw, into: &state); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    public mutating func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        guard report.count > 0 else { throw .empty }
        do throws(InputReportError) {
            try codec.decode(report, into: &state)
        } catch {
            switch error {
            case .tooShort: rejectedTruncated += 1
            case .badChecksum: rejectedChecksums += 1
            case .empty, .unknownReport: break
            }
            throw error
        }
        decodedReports += 1
    }
}
