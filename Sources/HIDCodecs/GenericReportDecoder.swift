/// Why a report could not be decoded with a descriptor layout.
public enum GenericDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyReport
    case noLayout(firstByte: UInt8)
    case reportTooShort(reportID: ReportID?, got: Int, need: Int)

    public var description: String {
        switch self {
        case .emptyReport: return "the report is empty"
        case .noLayout(let b): return "the descriptor declares no input report with id \(hexByte(b))"
        case .reportTooShort(let id, let got, let need):
            return "report \(id.map(\.description) ?? "(unnumbered)") is \(got) bytes, the descriptor says \(need)"
        }
    }
}

/// The values of one field in one report.
public struct DecodedField: Equatable, Sendable {
    public var field: ReportField
    /// One value per count (variables have one). Signed fields are sign-extended.
    public var values: [Int64]
}

/// Decodes any report with the layout from its descriptor: the generic path for pads without
/// a typed decoder (Xbox over Bluetooth, unknown pads). Returns arrays, so it allocates; `CompiledReportPlan`,
/// which does the decoding, writes into caller-owned storage without allocating.
public enum GenericReportDecoder {
    /// Reads `sizeBits` bits starting at `startBit` (LSB first, as HID packs them). Nil when out of range.
    /// The plan's checked path for values a single word load cannot reach.
    @inline(__always)
    public static func extractBits(_ report: UnsafeRawBufferPointer, startBit: Int, sizeBits: Int, signed: Bool) -> Int64? {
        guard sizeBits > 0 else { return 0 }
        let width = min(sizeBits, 64)
        guard startBit >= 0, startBit + width <= report.count * 8 else { return nil }
        var value: UInt64 = 0
        var bit = 0
        while bit < width {
            let absolute = startBit + bit
            let byte = UInt64(report[absolute >> 3])
            let shift = absolute & 7
            let take = min(8 - shift, width - bit)
            value |= ((byte >> UInt64(shift)) & ((1 << UInt64(take)) - 1)) << UInt64(bit)
            bit += take
        }
        if signed && width < 64 && width > 1 && value & (1 << UInt64(width - 1)) != 0 {
            value |= ~UInt64(0) << UInt64(width)
        }
        return Int64(bitPattern: value)
    }

    /// Every field's values, through a plan compiled for this one call. Callers decoding many reports with one layout
    /// should keep a `CompiledReportPlan` and its value storage instead: that path allocates nothing per report.
    public static func decode(_ report: [UInt8], layout: ReportLayout) throws(GenericDecodeError) -> [DecodedField] {
        guard report.count >= layout.sizeBytes else {   // before compiling: a cut-off report costs nothing
            throw .reportTooShort(reportID: layout.id, got: report.count, need: layout.sizeBytes)
        }
        let plan = CompiledReportPlan(layout: layout)
        var values = plan.makeValueStorage()
        try plan.decode(report, into: &values)
        return plan.decodedFields(values)
    }

    /// Picks the input layout by report id (like hid-tools' `ReportDescriptor.get`) and decodes.
    public static func decodeInput(_ report: [UInt8], descriptor: ReportDescriptor) throws(GenericDecodeError) -> (ReportLayout, [DecodedField]) {
        guard let first = report.first else { throw .emptyReport }
        guard let layout = descriptor.layout(.input, for: report) else { throw .noLayout(firstByte: first) }
        return (layout, try decode(report, layout: layout))
    }
}
