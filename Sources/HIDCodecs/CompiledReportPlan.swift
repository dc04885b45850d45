/// A report layout compiled once into flat lists of per-value reads (byte offset, shift, mask, sign, value slot),
/// so decoding a report is a few tight loops with no allocation: the caller keeps the value storage and hands it
/// to every `decode`. Three kinds of read, chosen per value when compiling: runs of whole bytes (copied), values
/// one 8-byte load covers (shift and mask), and the rest (bit by bit, checked against the report's length).
///
/// Values come out exactly as `GenericReportDecoder` returns them: one `Int64` per value, in field order
/// (field `i` owns `valueRange(ofField: i)`), sign-extended when the field's logical minimum is negative,
/// the low 64 bits of wider fields, 0 for values that lie past the end of the report.
public struct CompiledReportPlan: Sendable {
    /// One value read with a single unaligned 8-byte load: `(word >> shift) & mask`, then sign-extended.
    struct WordRead: Sendable {
        var mask: UInt64
        /// The value's top bit for signed values, 0 otherwise: `(v ^ signBit) - signBit` sign-extends without a branch.
        var signBit: UInt64
        /// Clamped so the 8 loaded bytes stay inside the layout's whole bytes (values near the end load from earlier).
        var loadOffset: Int32
        var valueIndex: Int32
        var shift: UInt8
    }

    /// Consecutive whole-byte values at consecutive bytes (sticks, triggers, vendor blocks: most of a gamepad report):
    /// one widening copy instead of a read per value.
    struct ByteRun: Sendable {
        var byteOffset: Int
        var valueIndex: Int
        var count: Int
        var signed: Bool
    }

    /// A value the word load cannot take (layouts under 8 bytes, values in a trailing partial byte, wide values
    /// at an odd bit offset): read bit range by bit range, checked against the report's real length.
    struct CheckedRead: Sendable {
        var startBit: Int
        var sizeBits: Int
        var signed: Bool
        var valueIndex: Int
    }

    public let layout: ReportLayout
    /// How many `Int64` values one report decodes to: the size of the storage `decode` needs.
    public let valueCount: Int
    /// Field `i`'s values start at `fieldValueStarts[i]`; one extra entry at the end holds `valueCount`.
    let fieldValueStarts: [Int]
    let byteRuns: [ByteRun]
    let wordReads: [WordRead]
    let checkedReads: [CheckedRead]

    public init(layout: ReportLayout) {
        self.layout = layout
        let layoutBytes = layout.sizeBytes
        var starts: [Int] = []
        starts.reserveCapacity(layout.fields.count + 1)
        var words: [WordRead] = []
        words.reserveCapacity(layout.fields.reduce(0) { $0 + max($1.count, 0) })   // one allocation, not one per doubling
        var runs: [ByteRun] = []
        var checked: [CheckedRead] = []
        var valueIndex = 0
        // Only the scalars of each field are read (binding whole fields would retain and release their usage lists).
        for (fieldStart, sizeBits, count, signed) in layout.fields.lazy.map({ ($0.startBit, $0.sizeBits, $0.count, $0.isSigned) }) {
            starts.append(valueIndex)
            // The same width and sign rule as GenericReportDecoder.extractBits: the low 64 bits, no extension at 64.
            let width = min(max(sizeBits, 0), 64)
            let extendsSign = signed && width > 1 && width < 64
            for i in 0..<max(count, 0) {
                let startBit = fieldStart + sizeBits * i
                if width == 8, startBit >= 0, startBit & 7 == 0, startBit >> 3 < layoutBytes {
                    let byte = startBit >> 3, signed = extendsSign
                    if let last = runs.last, last.signed == signed, last.byteOffset + last.count == byte, last.valueIndex + last.count == valueIndex {
                        runs[runs.count - 1].count += 1
                    } else {
                        runs.append(ByteRun(byteOffset: byte, valueIndex: valueIndex, count: 1, signed: signed))
                    }
                } else if let read = Self.wordRead(startBit: startBit, width: width, extendsSign: extendsSign,
                                            valueIndex: valueIndex, layoutBytes: layoutBytes) {
                    words.append(read)
                } else {
                    checked.append(CheckedRead(startBit: startBit, sizeBits: sizeBits, signed: signed, valueIndex: valueIndex))
                }
                valueIndex += 1
            }
        }
        starts.append(valueIndex)
        valueCount = valueIndex
        fieldValueStarts = starts
        byteRuns = runs
        wordReads = words
        checkedReads = checked
    }

    /// The single-load read for a value, or nil when one 8-byte load inside the layout's whole bytes cannot cover it.
    /// Every report is at least `layoutBytes` long (`decode` checks), so such a load never leaves the report.
    private static func wordRead(startBit: Int, width: Int, extendsSign: Bool, valueIndex: Int, layoutBytes: Int) -> WordRead? {
        guard layoutBytes >= 8, let index = Int32(exactly: valueIndex) else { return nil }
        if width == 0 {   // extractBits reads nothing and gives 0 wherever the field is
            return WordRead(mask: 0, signBit: 0, loadOffset: 0, valueIndex: index, shift: 0)
        }
        guard startBit >= 0, startBit + width <= layoutBytes * 8 else { return nil }
        let loadOffset = min(startBit >> 3, layoutBytes - 8)
        let shift = startBit - loadOffset * 8
        guard shift + width <= 64, let offset = Int32(exactly: loadOffset) else { return nil }
        let mask: UInt64 = width == 64 ? ~0 : (1 << UInt64(width)) - 1
        return WordRead(mask: mask, signBit: extendsSign ? 1 << UInt64(width - 1) : 0,
                        loadOffset: offset, valueIndex: index, shift: UInt8(shift))
    }

    /// Which slots of the value storage hold field `index`'s values (`layout.fields[index]`).
    public func valueRange(ofField index: Int) -> Range<Int> { fieldValueStarts[index]..<fieldValueStarts[index + 1] }

    /// Storage of the right size for `decode`; make it once and reuse it for every report.
    public func makeValueStorage() -> [Int64] { [Int64](repeating: 0, count: valueCount) }

    /// Decodes one report into `values` (at least `valueCount` long; a shorter buffer is a programming error).
    /// Allocates nothing. Throws, leaving `values` untouched, when the report is shorter than the layout.
    public func decode(_ report: UnsafeRawBufferPointer, into values: UnsafeMutableBufferPointer<Int64>) throws(GenericDecodeError) {
        guard report.count >= layout.sizeBytes else {
            throw .reportTooShort(reportID: layout.id, got: report.count, need: layout.sizeBytes)
        }
        precondition(values.count >= valueCount, "value storage holds \(values.count) values, the plan writes \(valueCount)")
        guard let output = values.baseAddress else { return }   // no values to write
        if let bytes = report.baseAddress {
            for run in byteRuns {
                let source = bytes + run.byteOffset, target = output + run.valueIndex
                if run.signed {
                    for i in 0..<run.count { target[i] = Int64(source.load(fromByteOffset: i, as: Int8.self)) }
                } else {
                    for i in 0..<run.count { target[i] = Int64(source.load(fromByteOffset: i, as: UInt8.self)) }
                }
            }
            wordReads.withUnsafeBufferPointer { reads in
                for read in reads {
                    let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: Int(read.loadOffset), as: UInt64.self))
                    let value = (word &>> UInt64(read.shift)) & read.mask
                    output[Int(read.valueIndex)] = Int64(bitPattern: (value ^ read.signBit) &- read.signBit)
                }
            }
        } else {
            // An empty report passes the length check only for an empty layout: no byte runs, no word reads.
            precondition(byteRuns.isEmpty && wordReads.isEmpty)
        }
        for read in checkedReads {
            output[read.valueIndex] = GenericReportDecoder.extractBits(report, startBit: read.startBit, sizeBits: read.sizeBits, signed: read.signed) ?? 0
        }
    }

    /// `decode` for reports and storage kept in arrays (`values` from `makeValueStorage()`). Allocates nothing.
    public func decode(_ report: [UInt8], into values: inout [Int64]) throws(GenericDecodeError) {
        // withUnsafeMutableBufferPointer rethrows untyped errors: carry the typed one out as a value.
        let failure = report.withUnsafeBytes { bytes -> GenericDecodeError? in
            values.withUnsafeMutableBufferPointer { storage -> GenericDecodeError? in
                do throws(GenericDecodeError) { try decode(bytes, into: storage); return nil } catch { return error }
            }
        }
        if let failure { throw failure }
    }

    /// The decoded values regrouped per field, in `GenericReportDecoder.decode`'s shape (allocates one array per field).
    public func decodedFields(_ values: [Int64]) -> [DecodedField] {
        precondition(values.count >= valueCount, "value storage holds \(values.count) values, the plan wrote \(valueCount)")
        return layout.fields.indices.map { i in
            DecodedField(field: layout.fields[i], values: Array(values[valueRange(ofField: i)]))
        }
    }
}
