import XCTest
@testable import HIDCodecs

final class ReportDescriptorTests: XCTestCase {
    /// Every report and (folded) field must match what hid-tools 0.12 parsed from the same bytes.
    func testLayoutsMatchHidToolsOnEveryFixtureDescriptor() throws {
        let compared = ["report_id", "size_bytes", "size_bits", "application"]
        let fieldKeys = ["usage_page", "usage", "usage_name", "start_bit", "size_bits", "count", "logical_min", "logical_max",
                         "physical_min", "physical_max", "is_array", "is_const", "is_null", "n", "usages", "unit", "unit_exp"]
        var comparedKeys = Set<String>()
        for name in Fixture.descriptorNames {
            let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/\(name).rdesc.bin"))
            let oracle = try Fixture.json("descriptors/\(name).hidtools.json")
            let ours = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(DescriptorJSON.encode(descriptor).serialized().utf8)) as? [String: Any])
            let oracleReports = try XCTUnwrap(oracle["reports"] as? [String: [[String: Any]]])
            let ourReports = try XCTUnwrap(ours["reports"] as? [String: [[String: Any]]])
            for kind in ["input", "output", "feature"] {
                let expected = oracleReports[kind] ?? []
                let actual = ourReports[kind] ?? []
                XCTAssertEqual(actual.count, expected.count, "\(name) \(kind) report count")
                for (a, e) in zip(actual, expected) {
                    for key in compared {
                        XCTAssertEqual("\(a[key]!)", "\(e[key]!)", "\(name) \(kind) \(e["report_id"]!) \(key)")
                    }
                    let af = a["fields"] as! [[String: Any]], ef = e["fields"] as! [[String: Any]]
                    XCTAssertEqual(af.count, ef.count, "\(name) \(kind) \(e["report_id"]!) field count")
                    for (i, (x, y)) in zip(af, ef).enumerated() {
                        for key in fieldKeys {
                            guard let expected = y[key] else { continue }   // compared wherever the fixture has it
                            comparedKeys.insert(key)
                            XCTAssertEqual(x[key].map { "\($0)" }, "\(expected)", "\(name) \(kind) \(e["report_id"]!) field \(i) \(key)")
                        }
                    }
                }
            }
        }
        XCTAssertEqual(comparedKeys, Set(fieldKeys), "every key is in the fixtures, so every key was compared")
    }

    func testDualSenseUSBInputLayoutHasKnownFieldPositions() throws {
        let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/hidtools_dualsense_usb_054c_0ce6.rdesc.bin"))
        let input = try XCTUnwrap(descriptor.input.first)
        XCTAssertEqual(input.id, ReportID(1))
        XCTAssertEqual(input.sizeBytes, 64)
        let hat = try XCTUnwrap(input.fields.first { $0.usage == Usage(page: 1, id: 0x39) })
        XCTAssertEqual(hat.startBit, 64)  // byte 8 low nibble, as in the kernel's struct
        XCTAssertEqual(hat.sizeBits, 4)
        XCTAssertTrue(hat.hasNullState)
    }

    func testSignedLogicalRangeAndPushPop() throws {
        let bytes: [UInt8] = [
            0x05, 0x01, 0x09, 0x05, 0xA1, 0x01,       // Generic Desktop, Game Pad, Application
            0x15, 0x81, 0x25, 0x7F,                   // Logical -127...127
            0x75, 0x08, 0x95, 0x01,
            0xA4,                                     // Push
            0x15, 0x00, 0x26, 0xFF, 0x00,             // Logical 0...255 inside the push
            0x09, 0x30, 0x81, 0x02,                   // X
            0xB4,                                     // Pop: back to -127...127
            0x09, 0x31, 0x81, 0x02,                   // Y
            0xC0,
        ]
        let layout = try XCTUnwrap(ReportDescriptor(bytes: bytes).input.first)
        XCTAssertNil(layout.id)
        XCTAssertEqual(layout.fields.map(\.logicalMinimum), [0, -127])
        XCTAssertEqual(layout.fields.map(\.logicalMaximum), [255, 127])
        let decoded = try GenericReportDecoder.decode([0x80, 0x80], layout: layout)
        XCTAssertEqual(decoded.map(\.values), [[128], [-128]])
    }

    func testArrayItemKeepsUsageRange() throws {
        let bytes: [UInt8] = [0x05, 0x07, 0x09, 0x06, 0xA1, 0x01, 0x19, 0x00, 0x29, 0x65, 0x15, 0x00, 0x25, 0x65,
                              0x75, 0x08, 0x95, 0x06, 0x81, 0x00, 0xC0]
        let field = try XCTUnwrap(ReportDescriptor(bytes: bytes).input.first?.fields.first)
        XCTAssertTrue(field.isArray)
        XCTAssertEqual(field.count, 6)
        XCTAssertEqual(field.arrayUsages?.count, 0x66)
    }

    func testMalformedDescriptorsGiveTypedErrors() {
        func error(_ bytes: [UInt8]) -> DescriptorError? {
            do { _ = try ReportDescriptor(bytes: bytes); return nil } catch { return error }
        }
        XCTAssertEqual(error([]), .empty)
        XCTAssertEqual(error([0x05]), .truncatedItem(offset: 0))
        XCTAssertEqual(error([0x05, 0x01, 0xFE, 0x02, 0x00, 0x00, 0x00]), .longItemUnsupported(offset: 2))
        XCTAssertEqual(error([0xB4]), .popWithoutPush(offset: 0))
        XCTAssertEqual(error([0x76, 0x01, 0x01]).map { if case .reportSizeTooLarge = $0 { true } else { false } }, true)
        XCTAssertEqual(error([0x75, 0x08, 0x97, 0xFF, 0xFF, 0xFF, 0x00, 0x81, 0x02]).map { if case .reportTooLarge = $0 { true } else { false } }, true)
        XCTAssertEqual(error([0xF4]), .unknownItem(tag: 0xF4, offset: 0))
        XCTAssertEqual(error(Array(repeating: 0xA4, count: 40)), .globalStackOverflow(offset: 16, limit: 16))
        XCTAssertEqual(error(Array(repeating: 0x00, count: 5000)), .tooLarge(size: 5000, limit: 4096))
    }

    func testRandomBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let length = Int.random(in: 0...64, using: &generator)
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if let descriptor = try? ReportDescriptor(bytes: bytes) {
                for layout in descriptor.input { _ = try? GenericReportDecoder.decode(bytes, layout: layout) }
            }
        }
    }
}
