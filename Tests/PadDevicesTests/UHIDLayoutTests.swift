import CLinuxInput
import XCTest
@testable import PadDevices

/// The byte offsets padgate writes uhid events with, against the kernel header's own layout.
final class UHIDLayoutTests: XCTestCase {
    func testOffsetsMatchLinuxUhidHeader() {
        XCTAssertEqual(UHIDLayout.eventSize, padgate_uhid_event_size())
        XCTAssertEqual(UHIDLayout.create2DescriptorSize, padgate_uhid_offset_create2_rd_size())
        XCTAssertEqual(UHIDLayout.create2Descriptor, padgate_uhid_offset_create2_rd_data())
        XCTAssertEqual(UHIDLayout.outputSize, padgate_uhid_offset_output_size())
        XCTAssertEqual(UHIDLayout.outputType, padgate_uhid_offset_output_rtype())
        XCTAssertEqual(UHIDLayout.getReportReplyData, padgate_uhid_offset_get_report_reply_data())
        XCTAssertEqual(UHIDLayout.setReportData, padgate_uhid_offset_set_report_data())
        XCTAssertEqual(UHIDLayout.create2, UInt32(UHID_CREATE2.rawValue))
        XCTAssertEqual(UHIDLayout.input2, UInt32(UHID_INPUT2.rawValue))
        XCTAssertEqual(UHIDLayout.getReportReply, UInt32(UHID_GET_REPORT_REPLY.rawValue))
        XCTAssertEqual(UHIDLayout.setReportReply, UInt32(UHID_SET_REPORT_REPLY.rawValue))
        XCTAssertEqual(UHIDLayout.output, UInt32(UHID_OUTPUT.rawValue))
        XCTAssertEqual(UHIDLayout.destroy, UInt32(UHID_DESTROY.rawValue))
    }
}
