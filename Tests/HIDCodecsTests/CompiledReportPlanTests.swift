import Foundation
import XCTest
@testable import HIDCodecs

/// The generic decoder before it ran on `CompiledReportPlan`, kept as the reference the plan must match value for
/// value: `extractBits` (unchanged, checked against hid-tools) per value, straight off the layout's fields.
enum LegacyGenericDecoder {
    static func decode(_ report: [UInt8], layout: ReportLayout) throws(GenericDecodeError) -> [DecodedField] {
        guard report.count >= layout.sizeBytes else {
            throw .reportTooShort(reportID: layout.id, got: report.count, need: layout.sizeBytes)
        }
        return report.withUnsafeBytes { raw in
            layout.fields.map { field in
                var values: [Int64] = []
                values.reserveCapacity(field.count)
                for i in 0..<field.count {
                    values.append(GenericReportDecoder.extractBits(raw, startBit: field.startBit + field.sizeBits * i, sizeBits: field.sizeBits, signed: field.isSigned) ?? 0)
                }
                return DecodedField(field: field, values: values)
            }
        }
    }
}

/// Short-item descriptor bytes for hand-made layouts.
enum Descriptor {
    static func item(_ prefix: UInt8, _ value: Int) -> [UInt8] {   // always the 4-byte form: no sign ambiguity
        let v = UInt32(truncatingIfNeeded: value)
        return [prefix | 0x03, UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }
    static let gamePad: [UInt8] = [0x05, 0x01, 0x09, 0x05, 0xA1, 0x01]
    static let end: [UInt8] = [0xC0]
    static func reportID(_ id: UInt8) -> [UInt8] { [0x85, id] }
    static func size(_ bits: Int) -> [UInt8] { item(0x74, bits) }
    static func count(_ n: Int) -> [UInt8] { item(0x94, n) }
    static func logical(_ minimum: Int, _ maximum: Int) -> [UInt8] { item(0x14, minimum) + item(0x24, maximum) }
    /// Generic Desktop usages X, Y, ... for variables; a usage range for arrays.
    static func usages(_ first: UInt8, _ last: UInt8) -> [UInt8] { [0x19, first, 0x29, last] }
    static let variable: [UInt8] = [0x81, 0x02]
    static let array: [UInt8] = [0x81, 0x00]
    static let constant: [UInt8] = [0x81, 0x03]
}

final class CompiledReportPlanTests: XCTestCase {
    /// Decodes with the plan into reused storage and regroups per field, for comparison with the legacy decoder.
    func planFields(_ plan: CompiledReportPlan, _ report: [UInt8], _ storage: inout [Int64]) throws(GenericDecodeError) -> [DecodedField] {
        try plan.decode(report, into: &storage)
        return plan.decodedFields(storage)
    }

    /// Plan, GenericReportDecoder and the legacy decoder agree on `report`: the same values, or the same error.
    func assertSameDecoding(_ report: [UInt8], _ layout: ReportLayout, _ plan: CompiledReportPlan, _ storage: inout [Int64],
                            _ context: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = Result { () throws(GenericDecodeError) in try LegacyGenericDecoder.decode(report, layout: layout) }
        let planned = Result { () throws(GenericDecodeError) in try planFields(plan, report, &storage) }
        let generic = Result { () throws(GenericDecodeError) in try GenericReportDecoder.decode(report, layout: layout) }
        XCTAssertEqual(planned, expected, "plan: \(context())", file: file, line: line)
        XCTAssertEqual(generic, expected, "GenericReportDecoder: \(context())", file: file, line: line)
    }

    func testEveryReportOfEveryFixtureRecordingDecodesAsBefore() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixture.url("recordings").path)
            .filter { $0.hasSuffix(".hid") }.sorted()
        XCTAssertEqual(files.count, 4)
        var compared = 0
        for file in files {
            let recording = try HIDRecording(text: Fixture.text("recordings/\(file)"))
            let descriptors = try Dictionary(uniqueKeysWithValues: recording.devices.map { ($0.index, try ReportDescriptor(bytes: $0.descriptor)) })
            var plans: [Int: [ReportID?: (CompiledReportPlan, [Int64])]] = [:]   // compiled once per device and report id
            for (n, event) in recording.events.enumerated() {
                let descriptor = try XCTUnwrap(descriptors[event.deviceIndex], "\(file) event \(n)")
                guard let layout = descriptor.layout(.input, for: event.data) else { continue }
                let plan = plans[event.deviceIndex, default: [:]][layout.id]?.0 ?? CompiledReportPlan(layout: layout)
                var storage = plans[event.deviceIndex, default: [:]][layout.id]?.1 ?? plan.makeValueStorage()
                assertSameDecoding(event.data, layout, plan, &storage, "\(file) event \(n)")
                plans[event.deviceIndex, default: [:]][layout.id] = (plan, storage)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 1972 + 195 + 5 + 11157, "every report of every recording has a layout")
    }

    /// Every input, output and feature layout of every fixture descriptor, over seeded random bytes, at the layout's
    /// length, longer, and one byte short.
    func testEveryFixtureDescriptorLayoutDecodesAsBefore() throws {
        var random = XorShift(seed: 0x5EED_0F_C0DEC)
        var layouts = 0
        for name in Fixture.descriptorNames {
            let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/\(name).rdesc.bin"))
            for layout in descriptor.input + descriptor.output + descriptor.feature {
                let plan = CompiledReportPlan(layout: layout)
                var storage = plan.makeValueStorage()
                for length in [layout.sizeBytes - 1, layout.sizeBytes, layout.sizeBytes + 1, layout.sizeBytes + 9] where length >= 0 {
                    for repetition in 0..<8 {
                        let report = random.bytes(length)
                        assertSameDecoding(report, layout, plan, &storage, "\(name) \(layout.kind) \(layout.id?.description ?? "-") length \(length) #\(repetition)")
                    }
                }
                layouts += 1
            }
        }
        XCTAssertGreaterThan(layouts, 20)
    }

    /// Hand-checked values: fields straddling bytes, 12- and 32-bit signed and unsigned values, a 3-bit array,
    /// and padding wider than 64 bits (its low 64 bits, never sign-extended).
    func testStraddlingSignedAndWideFields() throws {
        let bytes = Descriptor.gamePad + Descriptor.reportID(7)
            + Descriptor.size(12) + Descriptor.count(2) + Descriptor.logical(-2048, 2047) + Descriptor.usages(0x30, 0x31) + Descriptor.variable
            + Descriptor.size(32) + Descriptor.count(1) + Descriptor.logical(Int(Int32.min), Int(Int32.max)) + Descriptor.usages(0x32, 0x32) + Descriptor.variable
            + Descriptor.size(32) + Descriptor.count(1) + Descriptor.logical(0, -1) + Descriptor.usages(0x33, 0x33) + Descriptor.variable
            + Descriptor.size(3) + Descriptor.count(2) + Descriptor.logical(1, 7) + Descriptor.usages(0x01, 0x07) + Descriptor.array
            + Descriptor.size(70) + Descriptor.count(1) + Descriptor.logical(-1, 1) + Descriptor.constant
            + Descriptor.end
        let layout = try XCTUnwrap(ReportDescriptor(bytes: bytes).input.first)
        XCTAssertEqual(layout.fields.map(\.sizeBits), [12, 12, 32, 32, 3, 70])
        var report = [UInt8](repeating: 0, count: layout.sizeBytes)
        report[0] = 7
        report[1] = 0x00; report[2] = 0xF8; report[3] = 0x7F   // X = 0x800 = -2048, Y = 0x7FF = 2047 (straddles byte 2)
        report[4] = 0xFF; report[5] = 0xFF; report[6] = 0xFF; report[7] = 0xFF   // Z = -1 (signed 32 bits)
        report[8] = 0xFE; report[9] = 0xFF; report[10] = 0xFF; report[11] = 0xFF // Rx = 0xFFFFFFFE, unsigned
        report[12] = 0b0010_1101                                // array: 5, 5 (bits 96-98, 99-101)
        for i in 12...20 { report[i] |= i == 12 ? 0b1100_0000 : 0xFF }   // padding from bit 102: all ones
        let plan = CompiledReportPlan(layout: layout)
        var values = plan.makeValueStorage()
        try plan.decode(report, into: &values)
        XCTAssertEqual(values, [-2048, 2047, -1, 0xFFFF_FFFE, 5, 5, -1])
        XCTAssertEqual(plan.valueRange(ofField: 4), 4..<6)
        XCTAssertEqual(plan.decodedFields(values), try LegacyGenericDecoder.decode(report, layout: layout))
    }

    /// A field in the trailing partial byte is 0 in a report of exactly the layout's whole bytes and read when
    /// the report is longer; layouts under 8 bytes take the checked path throughout.
    func testTrailingPartialByteAndShortLayouts() throws {
        let bytes = Descriptor.gamePad + Descriptor.reportID(2)
            + Descriptor.size(4) + Descriptor.count(3) + Descriptor.logical(-8, 7) + Descriptor.usages(0x30, 0x32) + Descriptor.variable
            + Descriptor.end
        let layout = try XCTUnwrap(ReportDescriptor(bytes: bytes).input.first)
        XCTAssertEqual(layout.sizeBits, 20)
        XCTAssertEqual(layout.sizeBytes, 2)
        let plan = CompiledReportPlan(layout: layout)
        var values = plan.makeValueStorage()
        try plan.decode([2, 0x9F], into: &values)
        XCTAssertEqual(values, [-1, -7, 0], "the third value lies past the report's end")
        try plan.decode([2, 0x9F, 0x08], into: &values)
        XCTAssertEqual(values, [-1, -7, -8])
    }

    /// Byte values at consecutive bytes with a zero-size field between them are not one run: the empty field
    /// owns a value slot (always 0) between theirs.
    func testZeroSizeFieldBetweenByteValuesKeepsItsSlot() throws {
        let bytes = Descriptor.gamePad
            + Descriptor.size(8) + Descriptor.count(2) + Descriptor.logical(0, 255) + Descriptor.usages(0x30, 0x31) + Descriptor.variable
            + Descriptor.size(0) + Descriptor.count(1) + Descriptor.usages(0x32, 0x32) + Descriptor.variable
            + Descriptor.size(8) + Descriptor.count(8) + Descriptor.usages(0x33, 0x33) + Descriptor.variable
            + Descriptor.end
        let layout = try XCTUnwrap(ReportDescriptor(bytes: bytes).input.first)
        let plan = CompiledReportPlan(layout: layout)
        var values = plan.makeValueStorage()
        let report: [UInt8] = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
        try plan.decode(report, into: &values)
        XCTAssertEqual(values, [10, 11, 0, 12, 13, 14, 15, 16, 17, 18, 19])
        XCTAssertEqual(plan.decodedFields(values), try LegacyGenericDecoder.decode(report, layout: layout))
    }

    func testShortReportThrowsTheTypedErrorAndLeavesStorageAlone() throws {
        let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/dualsense_edge_usb_054c_0df2_rogueenemy.rdesc.bin"))
        let plan = CompiledReportPlan(layout: descriptor.input[0])
        XCTAssertEqual(plan.valueCount, 88)
        var values = [Int64](repeating: 42, count: plan.valueCount)
        XCTAssertThrowsError(try plan.decode([0x01, 0x80, 0x80], into: &values)) { error in
            XCTAssertEqual(error as? GenericDecodeError, .reportTooShort(reportID: ReportID(1), got: 3, need: 64))
        }
        XCTAssertEqual(values, [Int64](repeating: 42, count: 88))
    }

    /// Decoding writes into the caller's storage in place: the same buffer after every report.
    func testDecodingReusesTheCallersStorage() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
        let plan = CompiledReportPlan(layout: descriptor.input[0])
        var values = plan.makeValueStorage()
        let address = values.withUnsafeBufferPointer { $0.baseAddress }
        for event in recording.events.prefix(100) { try plan.decode(event.data, into: &values) }
        XCTAssertEqual(values.withUnsafeBufferPointer { $0.baseAddress }, address)
    }

    /// Seeded random descriptors: odd sizes (1-40 bits, 57-64, over 64, 0), signed and unsigned, variables, arrays,
    /// padding, with and without a report id, at several report lengths.
    func testRandomLayoutsDecodeAsBefore() throws {
        var random = XorShift(seed: 0xD15C_0DE5)
        let sizes = Array(0...40) + [57, 58, 63, 64, 65, 70, 128]
        for round in 0..<300 {
            var bytes = Descriptor.gamePad
            if random.next() % 2 == 0 { bytes += Descriptor.reportID(UInt8(1 + random.next() % 200)) }
            for _ in 0..<(1 + Int(random.next() % 10)) {
                let size = sizes[Int(random.next() % UInt64(sizes.count))]
                let count = Int(random.next() % 6)
                let signed = random.next() % 2 == 0
                bytes += Descriptor.size(size) + Descriptor.count(count) + (signed ? Descriptor.logical(-3, 3) : Descriptor.logical(0, 9))
                switch random.next() % 4 {
                case 0: bytes += Descriptor.usages(0x30, UInt8(0x30 + random.next() % 8)) + Descriptor.variable
                case 1: bytes += Descriptor.usages(0x01, 0x09) + Descriptor.array
                case 2: bytes += Descriptor.constant
                default: bytes += Descriptor.variable   // usage-less: one field of size × count bits
                }
            }
            bytes += Descriptor.end
            let descriptor = try ReportDescriptor(bytes: bytes)
            for layout in descriptor.input {
                let plan = CompiledReportPlan(layout: layout)
                var storage = plan.makeValueStorage()
                for extra in [-1, 0, 1, 2, 7, 8] where layout.sizeBytes + extra >= 0 {
                    var report = random.bytes(layout.sizeBytes + extra)
                    if let id = layout.id, !report.isEmpty { report[0] = id.rawValue }
                    assertSameDecoding(report, layout, plan, &storage, "round \(round) length \(report.count) descriptor \(bytes)")
                }
            }
        }
    }
}

/// xorshift64: the same bytes on every run.
struct XorShift {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return state
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
