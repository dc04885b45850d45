import XCTest
@testable import HIDCodecs

final class RecordingTests: XCTestCase {
    func testFixtureRecordingsHaveTheKnownReportCounts() throws {
        for (file, count, length) in [("dualsense_edge_usb_dsegde.hid", 1972, 389), ("dualsense_bt_djm00n_simple01.hid", 195, 279),
                                      ("xbox_elite2_bt_djm00n.hid", 5, 1037)] {
            let recording = try HIDRecording(text: Fixture.text("recordings/\(file)"))
            XCTAssertEqual(recording.events.count, count, file)
            XCTAssertEqual(recording.devices.first?.descriptor.count, length, file)
        }
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        XCTAssertEqual(edge.devices.first?.vendorID, 0x054C)
        XCTAssertEqual(edge.devices.first?.productID, 0x0DF2)
        XCTAssertEqual(edge.devices.first?.bus, 3)
        XCTAssertEqual(edge.devices.first?.name, "Sony Interactive Entertainment DualSense Edge Wireless Controller")
        XCTAssertEqual(edge.events[1].seconds, 0)
        XCTAssertEqual(edge.events[1].microseconds, 1465)
    }

    func testRoundTripKeepsEverything() throws {
        for file in ["dualsense_edge_usb_dsegde.hid", "dualsense_bt_djm00n_simple01.hid", "xbox_elite2_bt_djm00n.hid"] {
            let original = try HIDRecording(text: Fixture.text("recordings/\(file)"))
            let reread = try HIDRecording(text: original.text())
            XCTAssertEqual(reread, original, file)
        }
    }

    /// hid-tools' record.py writes `D: n` before the first event even though the header already wrote `D:` lines:
    /// the header leaves the last device current. Events on devices 0, 1, 0 must read back as 0, 1, 0.
    func testMultiDeviceRecordingKeepsEachEventsDevice() throws {
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let xbox = try HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid"))
        var first = edge.devices[0], second = xbox.devices[0]
        first.index = 0; second.index = 1
        let order = [0, 1, 0, 0, 1]
        let events = order.enumerated().map { i, device in
            RecordedEvent(seconds: 0, microseconds: i, data: (device == 0 ? edge : xbox).events[i].data, deviceIndex: device)
        }
        let recording = HIDRecording(devices: [first, second], events: events)
        let text = recording.text()
        let reread = try HIDRecording(text: text)
        XCTAssertEqual(reread.events.map(\.deviceIndex), order)
        XCTAssertEqual(reread.events.map(\.data), recording.events.map(\.data))
        XCTAssertEqual(reread.devices.map(\.descriptor), recording.devices.map(\.descriptor))
        let deviceLines = text.split(separator: "\n").filter { $0.hasPrefix("D: ") }
        XCTAssertEqual(deviceLines, ["D: 0", "D: 1", "D: 0", "D: 1", "D: 0", "D: 1"], "header D: 0, D: 1, then one per device change")

        // A lone device that is not device 0 keeps its index too.
        var lone = recording
        lone.devices = [second]
        lone.events = events.filter { $0.deviceIndex == 1 }
        XCTAssertEqual(try HIDRecording(text: lone.text()).events.map(\.deviceIndex), [1, 1])
    }

    func testWrittenEventLinesMatchHidRecorderSpelling() throws {
        let text = try Fixture.text("recordings/dualsense_bt_djm00n_simple01.hid")
        let written = try HIDRecording(text: text).text()
        let eventLines = { (t: String) in t.split(separator: "\n").filter { $0.hasPrefix("E: ") || $0.hasPrefix("R: ") || $0.hasPrefix("I: ") } }
        XCTAssertEqual(eventLines(written), eventLines(text))
    }

    func testMalformedInputGivesLineNumbers() {
        XCTAssertThrowsError(try HIDRecording(text: "R: 2 05\n")) { XCTAssertEqual($0 as? RecordingError, .lengthMismatch(line: 1, declared: 2, actual: 1)) }
        XCTAssertThrowsError(try HIDRecording(text: "# ok\nE: 1.2\n")) { error in
            guard case .malformedLine(let line, _)? = error as? RecordingError else { return XCTFail("\(error)") }
            XCTAssertEqual(line, 2)
        }
        XCTAssertThrowsError(try HIDRecording(text: "E: 0.0 1 zz\n"))
        XCTAssertThrowsError(try HIDRecording(text: "E: 0.0 99999 00\n")) { XCTAssertEqual($0 as? RecordingError, .tooLarge(line: 1, what: "report", limit: 16384)) }
        XCTAssertThrowsError(try HIDRecording(text: "I: 3 054c\n"))
        // Numbers outside what hid-recorder writes are refused with the range, on their line.
        for (text, line, range) in [("D: -1\n", 1, "from 0 to 255"), ("D: 0\nD: 99999999999999999999\n", 2, "from 0 to 255"),
                                    ("E: 1.1000000 1 00\n", 1, "6 digits"), ("E: -1.000000 1 00\n", 1, "seconds from 0")] {
            XCTAssertThrowsError(try HIDRecording(text: text), text) { error in
                guard case .malformedLine(let at, let reason)? = error as? RecordingError else { return XCTFail("\(error)") }
                XCTAssertEqual(at, line, text)
                XCTAssertTrue(reason.contains(range), reason)
            }
        }
    }

    /// Integers of a hid-tools decoded line ("ReportID: 1 / X:  131 | ... | # | ..."), skipping constant fields.
    static func oracleValues(_ comment: String) -> [Int64] {
        var text = comment
        if let slash = text.range(of: " / ") { text = String(text[slash.upperBound...]) }
        var values: [Int64] = []
        for segment in text.split(separator: "|") {
            var body = segment.trimmingCharacters(in: .whitespaces)
            if body == "#" || body.isEmpty { continue }
            if let colon = body.firstIndex(of: ":") { body = String(body[body.index(after: colon)...]) }
            for token in body.split(whereSeparator: { $0 == " " || $0 == "," }) {
                if let v = Int64(token) { values.append(v) }
            }
        }
        return values
    }

    /// The *.hidtools-decoded.txt files list `E: time bytes...` (no length) followed by hid-tools' `# ReportID ...` line.
    static func decodedFile(_ path: String) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        for line in try Fixture.text(path).split(separator: "\n") {
            if line.hasPrefix("E: ") {
                events.append(RecordedEvent(seconds: 0, microseconds: 0, data: line.split(separator: " ").dropFirst(2).map { UInt8($0, radix: 16)! }))
            } else if line.hasPrefix("# ReportID"), !events.isEmpty {
                events[events.count - 1].comments.append(String(line.dropFirst(2)))
            }
        }
        return events
    }

    /// hid-recorder wrote hid-tools' decoding above every Edge report; the DJm00n recordings come with a decoded file.
    /// Our generic decoder must produce the same values for every non-constant field.
    func testGenericDecoderMatchesHidToolsDecodingOfRecordings() throws {
        var compared = 0
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let bt = try HIDRecording(text: Fixture.text("recordings/dualsense_bt_djm00n_simple01.hid"))
        let btDecoded = try Self.decodedFile("recordings/dualsense_bt_djm00n_simple01.hidtools-decoded.txt")
        let xbox = try HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid"))
        let xboxDecoded = try Self.decodedFile("recordings/xbox_elite2_bt_djm00n.hidtools-decoded.txt")
        let sets: [(HIDRecording, [RecordedEvent])] = [
            (edge, edge.events), (bt, btDecoded), (xbox, xboxDecoded),
        ]
        for (recording, decodedEvents) in sets {
            let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
            XCTAssertEqual(decodedEvents.count, recording.events.count)
            for (event, decoded) in zip(recording.events, decodedEvents) {
                XCTAssertEqual(event.data, decoded.data)
                guard let comment = decoded.comments.last(where: { $0.hasPrefix("ReportID") }) else { continue }
                let (_, fields) = try GenericReportDecoder.decodeInput(event.data, descriptor: descriptor)
                let ours = fields.filter { !$0.field.isConstant }.flatMap(\.values)
                XCTAssertEqual(ours, Self.oracleValues(comment), comment)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 1972 + 195 + 5)
    }
}

final class ReportInspectionTests: XCTestCase {
    func testEdgeReportJSONCarriesSemanticFields() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        var inspector = ReportInspector(device: recording.devices[0], codecs: TestCodecs.catalogue)
        let event = recording.events[0]
        let text = inspector.inspect(event.data, time: event.time).serialized()
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        // Values straight from the hid-tools comment above this report: X 131, Y 132, Z 126, Rz 129, hat 8.
        XCTAssertEqual(json["report_id"] as? Int, 1)
        XCTAssertEqual(json["length"] as? Int, 64)
        XCTAssertEqual(json["left_stick"] as? [Int], [131, 132])
        XCTAssertEqual(json["right_stick"] as? [Int], [126, 129])
        XCTAssertEqual(json["dpad"] as? String, "none")
        XCTAssertEqual(json["buttons"] as? [String], [])
        XCTAssertEqual((json["touch"] as? [[String: Any]])?.count, 2)
        // gyro x = bytes 16-17 = fc ff = -4 in the recorded report.
        XCTAssertEqual((json["gyro"] as? [Int])?.first, -4)
        XCTAssertNotNil(json["battery"] as? [String: Any])
    }

    /// Switch Pro report 0x30 (dekuNukem's Nintendo_Switch_Reverse_Engineering: 12-bit sticks packed at bytes 6 and 9,
    /// three IMU samples of accel xyz + gyro xyz from byte 13). left_stick/right_stick are 0-255 like every known pad's
    /// (the 12-bit value >> 4), the native values are kept as *_raw, and all three IMU samples are listed.
    func testSwitchProSticksAreScaledAndEveryIMUSampleIsListed() throws {
        var report = [UInt8](repeating: 0, count: 49)
        report[0] = 0x30
        report[6] = 0x34; report[7] = 0x82; report[8] = 0x7A       // left x = 0x234, y = 0x7A8
        report[9] = 0xFF; report[10] = 0x0F; report[11] = 0x80     // right x = 0xFFF, y = 0x800
        for sample in 0..<3 {
            let o = 13 + 12 * sample
            report[o] = UInt8(10 + sample)                         // accel x = 10, 11, 12
            report[o + 6] = UInt8(0x100 - 1 - sample)              // gyro x = -1, -2, -3
            report[o + 7] = 0xFF
        }
        var inspector = ReportInspector(descriptor: nil, codec: SwitchProInputCodec())
        let text = inspector.inspect(report, time: nil).serialized()
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        XCTAssertEqual(json["left_stick"] as? [Int], [0x23, 0x7A])
        XCTAssertEqual(json["right_stick"] as? [Int], [0xFF, 0x80])
        XCTAssertEqual(json["left_stick_raw"] as? [Int], [0x234, 0x7A8])
        XCTAssertEqual(json["right_stick_raw"] as? [Int], [0xFFF, 0x800])
        let samples = try XCTUnwrap(json["motion_samples"] as? [[String: [Int]]])
        XCTAssertEqual(samples.map { $0["accel"] }, [[10, 0, 0], [11, 0, 0], [12, 0, 0]])
        XCTAssertEqual(samples.map { $0["gyro"] }, [[-1, 0, 0], [-2, 0, 0], [-3, 0, 0]])
        XCTAssertEqual(json["gyro"] as? [Int], [-1, 0, 0], "gyro/accel stay the first sample")

        // PlayStation sticks are already 8-bit: no *_raw, one motion sample.
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        var edgeInspector = ReportInspector(device: edge.devices[0], codecs: TestCodecs.catalogue)
        let edgeJSON = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(edgeInspector.inspect(edge.events[0].data, time: nil).serialized().utf8)) as? [String: Any])
        XCTAssertNil(edgeJSON["left_stick_raw"])
        XCTAssertEqual((edgeJSON["motion_samples"] as? [Any])?.count, 1)
    }

    func testUnknownPadFallsBackToDescriptorFields() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid"))
        var inspector = ReportInspector(device: recording.devices[0], codecs: TestCodecs.catalogue)
        let text = inspector.inspect(recording.events[1].data, time: recording.events[1].time).serialized()
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        // hid-tools: "ReportID: 4 / Battery Strength:  139"
        let fields = try XCTUnwrap(json["fields"] as? [[String: Any]])
        XCTAssertEqual(fields.first?["usage"] as? String, "Battery Strength")
        XCTAssertEqual(fields.first?["values"] as? [Int], [139])
    }

    /// A Bluetooth 0x31 report whose CRC fails is reported as such, not decoded through the
    /// descriptor's vendor fields (the kernel selftests' DualSense BT report, one byte flipped).
    func testInspectSaysABluetoothReportFailedItsCRC() throws {
        let vectors = try Fixture.json("input_vectors/hidtools_kernel_selftest_vectors.json")
        let device = try XCTUnwrap((vectors["devices"] as? [String: Any])?["dualsense_bt"] as? [String: Any])
        let cases = try XCTUnwrap(device["cases"] as? [[String: Any]])
        let good = Fixture.hex(try XCTUnwrap(cases.first?["initial_report"] as? String))
        let descriptor = try ReportDescriptor(bytes: Fixture.hex(try XCTUnwrap(device["report_descriptor_hex"] as? String)))
        var inspector = ReportInspector(descriptor: descriptor, codec: PlayStationInputCodec.dualSense)
        func inspected(_ report: [UInt8]) throws -> [String: Any] {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(inspector.inspect(report, time: nil).serialized().utf8)) as? [String: Any])
        }
        XCTAssertNil(try inspected(good)["error"], "the genuine report decodes")
        var corrupt = good
        corrupt[10] ^= 0x40
        let json = try inspected(corrupt)
        XCTAssertTrue((json["error"] as? String)?.contains("CRC") == true, "\(json)")
        XCTAssertNil(json["fields"], "no descriptor fields for a corrupt report")
        XCTAssertNil(json["buttons"])
    }
}
