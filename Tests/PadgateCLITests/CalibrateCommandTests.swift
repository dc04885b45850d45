import Foundation
import PadgateRunner
import XCTest

/// `padgate calibrate --feature-report` with the published DualSense blobs (Fixtures/README.md in HIDCodecsTests:
/// hid-tools' PS5Controller, identical to Android CTS's USB registration; the Bluetooth form carries its CRC32).
final class CalibrateCommandTests: XCTestCase {
    static let usbBlob = "05fffff2ff04009d225edd922252ddba2251dd1c021c02fb1f05e0831f99df0720fcdf050000000000"
    static let bluetoothBlob = "05fffff2ff04009d225edd922252ddba2251dd1c021c02fb1f05e0831f99df0720fcdf050072ad2c13"

    /// Both forms are 41 bytes: a corrupted CRC must not decode as if it were a USB report.
    func testBluetoothBlobWithCorruptedCRCIsRefused() throws {
        for good in [Self.usbBlob, Self.bluetoothBlob] {
            let run = try padgate(["calibrate", "--feature-report", good, "--json"])
            XCTAssertEqual(run.status, 0, run.stderr)
            XCTAssertTrue(run.stdout.contains("\"denom\": 17727"), run.stdout)
        }
        let corrupted = String(Self.bluetoothBlob.dropLast(2)) + "14"
        let refused = try padgate(["calibrate", "--feature-report", corrupted])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("neither zero (as read over USB) nor a valid Bluetooth CRC32"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--transport usb"), refused.stderr)

        let strict = try padgate(["calibrate", "--feature-report", corrupted, "--transport", "bluetooth"])
        XCTAssertNotEqual(strict.status, 0)
        XCTAssertTrue(strict.stderr.contains("fails its CRC32 check (seed 0xA3)"), strict.stderr)
        XCTAssertEqual(try padgate(["calibrate", "--feature-report", corrupted, "--transport", "usb"]).status, 0,
                       "--transport usb decodes without a CRC check")
        let usbAsBluetooth = try padgate(["calibrate", "--feature-report", Self.usbBlob, "--transport", "bluetooth"])
        XCTAssertNotEqual(usbAsBluetooth.status, 0)
    }

    /// A DualShock 4 report's id says its transport; the Bluetooth 0x05 form's CRC is checked.
    func testDualShock4BluetoothCRCIsChecked() throws {
        let bluetooth = "051e000500e2fff222be228d224fdd4ddd39dd1c021c02e31f8bdf8c1eb4de302071e01000cafc644d"
        XCTAssertEqual(try padgate(["calibrate", "--feature-report", bluetooth, "--model", "dualshock4"]).status, 0)
        let corrupted = try padgate(["calibrate", "--feature-report", String(bluetooth.dropLast(2)) + "4e", "--model", "dualshock4"])
        XCTAssertNotEqual(corrupted.status, 0)
        XCTAssertTrue(corrupted.stderr.contains("fails its CRC32 check"), corrupted.stderr)
    }
}
