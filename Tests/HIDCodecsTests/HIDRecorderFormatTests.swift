import Foundation
import XCTest
@testable import HIDCodecs

/// Our hid-recorder comment lines against hid-recorder's own: the Edge recording was written by hid-recorder (name,
/// descriptor dump and a decoded line above every report); the DJm00n recordings come with hid-tools' decoding of
/// every report (`format_report`, its lines joined by a space).
final class HIDRecorderFormatTests: XCTestCase {
    func testHeaderMatchesHidRecordersOnTheEdgeRecording() throws {
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let device = edge.devices[0]
        let written = edge.leadingComments + device.comments
        XCTAssertEqual(written.count, 1 + 192 + 1)
        let ours = HIDRecorderFormat.headerComments(name: try XCTUnwrap(device.name), descriptor: device.descriptor)
        XCTAssertEqual(ours.count, written.count)
        for (index, (line, expected)) in zip(ours, written).enumerated() { XCTAssertEqual(line, expected, "header line \(index)") }
    }

    func testEveryEdgeReportsCommentMatchesHidRecorders() throws {
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let descriptor = try ReportDescriptor(bytes: edge.devices[0].descriptor)
        var mismatches = 0
        for (index, event) in edge.events.enumerated() {
            XCTAssertFalse(event.comments.isEmpty)
            let ours = HIDRecorderFormat.eventComments(event.data, descriptor: descriptor)
            if ours != event.comments {
                mismatches += 1
                if mismatches <= 3 { XCTFail("report \(index):\nours:     \(ours)\nrecorded: \(event.comments)") }
            }
        }
        XCTAssertEqual(mismatches, 0, "of \(edge.events.count) reports")
    }

    func testDecodedLinesMatchHidToolsOnTheDJm00nRecordings() throws {
        var compared = 0
        for name in ["dualsense_bt_djm00n_simple01", "xbox_elite2_bt_djm00n"] {
            let recording = try HIDRecording(text: Fixture.text("recordings/\(name).hid"))
            let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
            let decoded = try RecordingTests.decodedFile("recordings/\(name).hidtools-decoded.txt")
            XCTAssertEqual(decoded.count, recording.events.count)
            for (event, oracle) in zip(recording.events, decoded) {
                let layout = try XCTUnwrap(descriptor.layout(.input, for: event.data))
                let ours = HIDRecorderFormat.reportLines(event.data, layout: layout).joined(separator: " ")
                XCTAssertEqual(ours, oracle.comments.last, name)
                compared += 1
            }
        }
        XCTAssertEqual(compared, 195 + 5)
    }

    /// The Elite 2's report 1 spans several collections: hid-recorder breaks its comment there and lines the
    /// continuation up one column after the first line's "/".
    func testMultiLineReportsAreIndentedLikeHidRecorder() throws {
        let xbox = try HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid"))
        let descriptor = try ReportDescriptor(bytes: xbox.devices[0].descriptor)
        let comments = HIDRecorderFormat.eventComments(xbox.events[0].data, descriptor: descriptor)
        XCTAssertGreaterThan(comments.count, 1)
        XCTAssertTrue(comments[0].hasPrefix("ReportID: 1 / X:  33127 | Y:  31407 "), comments[0])
        XCTAssertTrue(comments[1].hasPrefix(String(repeating: " ", count: 12) + "| Z:  31115"), comments[1])
        XCTAssertEqual(HIDRecorderFormat.eventComments([0x01, 0x02], descriptor: descriptor), [], "shorter than its layout: no comment")
    }

    /// Items the fixture descriptors do not use. Expected lines are hid-tools 0.12's own dump of these bytes
    /// (`ReportDescriptor.from_bytes(...).dump()`), run once and pasted here.
    func testItemDescriptionsFollowHidTools() {
        XCTAssertEqual(HIDRecorderFormat.descriptorDump([0x06, 0x00, 0xFF, 0x09, 0x20, 0x15, 0x81, 0x55, 0x0F, 0xA1, 0x02, 0xC0]), [
            "0x06, 0x00, 0xff,              // Usage Page (Vendor Defined Page 1)  0",
            "0x09, 0x20,                    // Usage (Vendor Usage 0x20)           3",
            "0x15, 0x81,                    // Logical Minimum (-127)              5",
            "0x55, 0x0f,                    // Unit Exponent (-1)                  7",
            "0xa1, 0x02,                    // Collection (Logical)                9",
            "0xc0,                          // End Collection                      11",
        ])
        XCTAssertEqual(HIDRecorderFormat.descriptorDump([0x05, 0x01, 0x82, 0x42, 0x01, 0xA1, 0x04, 0xA1, 0x80, 0xC0, 0xC0,
                                                         0x67, 0x11, 0xE0, 0x00, 0x00, 0x27, 0xFF, 0xFF, 0xFF, 0xFF]), [
            "0x05, 0x01,                    // Usage Page (Generic Desktop)        0",
            "0x82, 0x42, 0x01,              // Input (Data,Var,Abs,Null,Buff)      2",
            "0xa1, 0x04,                    // Collection (Named_array)            5",
            "0xa1, 0x80,                    //  Collection (Vendor_defined 0x80)   7",
            "0xc0,                          //  End Collection                     9",
            "0xc0,                          // End Collection                      10",
            "0x67, 0x11, 0xe0, 0x00, 0x00,  // Unit (SILinear: cm * s⁻²)           11",
            "0x27, 0xff, 0xff, 0xff, 0xff,  // Logical Maximum (4294967295)        16",
        ])
        XCTAssertEqual(HIDRecorderFormat.unitDescription(0x0001), "None", "hid-tools: a system without units is None")
    }
}
