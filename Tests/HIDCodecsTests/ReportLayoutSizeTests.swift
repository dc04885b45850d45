import XCTest
@testable import HIDCodecs

/// Every fixed report layout fits the report it reads, as hid-playstation's static_asserts hold
/// its packed structs to the report sizes (DS_INPUT_REPORT_USB_SIZE 64, _BT_SIZE 78;
/// DS4_INPUT_REPORT_USB_SIZE 64, _BT_SIZE 78; dualshock4_output_report_common 31 bytes).
final class ReportLayoutSizeTests: XCTestCase {
    func testEveryPlayStationInputLayoutFitsItsReportBeforeItsCRC() {
        for layout in PlayStationInputLayout.all {
            XCTAssertTrue(layout.fitsItsReport, "\(layout.format): fields end at \(layout.fieldsEnd), the report is \(layout.length)\(layout.checksummed ? " with a CRC" : "")")
        }
        // The kernel's sizes, which nobody here chose.
        XCTAssertEqual(PlayStationLayouts.dualSenseUSB().length, 64)
        XCTAssertEqual(PlayStationLayouts.dualSenseBluetooth().length, 78)
        XCTAssertEqual(PlayStationLayouts.dualShock4USB.length, 64)
        XCTAssertEqual(PlayStationLayouts.dualShock4Bluetooth.length, 78)
        // struct dualsense_input_report's last field read here is its status byte, 53 bytes in.
        XCTAssertEqual(PlayStationLayouts.dualSenseUSB().fieldsEnd, 1 + 53)
    }

    func testALayoutThatOverrunsItsReportIsCaught() {
        var layout = PlayStationLayouts.dualSenseBluetooth()
        layout.status = layout.length - layout.base - 4   // the first CRC byte
        XCTAssertFalse(layout.fitsItsReport)
    }

    func testTheDualShock4OutputCommonBlockFitsBothReports() {
        typealias S = DualShock4OutputState
        XCTAssertEqual(S.Common.size, S.usbLength - S.usbCommon, "USB 0x05 is the id and the common block")
        XCTAssertLessThanOrEqual(S.bluetoothCommon + S.Common.size, S.bluetoothLength - 4, "Bluetooth 0x11 holds it before its CRC")
        XCTAssertLessThan(S.Common.blinkOff, S.Common.size)
    }
}
