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

    // MARK: calibrate FILE.hid

    static let recordings = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HIDCodecsTests/Fixtures/recordings")

    /// The idle DualSense recording with its own feature report: the rest windows cover it and the
    /// bias is the one tools/rest-truth.py computed from its bytes (rest_truth.json).
    func testARecordingsRestWindowsAndBiasWithAPlot() throws {
        let truthFile = try Data(contentsOf: Self.recordings.appendingPathComponent("rest_truth.json"))
        let truths = try XCTUnwrap((JSONSerialization.jsonObject(with: truthFile) as? [String: Any])?["recordings"] as? [[String: Any]])
        let truth = try XCTUnwrap(truths.first { ($0["file"] as? String)?.hasPrefix("dualsense_usb") == true })
        let file = Self.recordings.appendingPathComponent(try XCTUnwrap(truth["file"] as? String)).path
        let plot = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-gyro-\(UUID()).svg")
        defer { try? FileManager.default.removeItem(at: plot) }

        let run = try padgate(["calibrate", file, "--feature-report", try XCTUnwrap(truth["feature05"] as? String), "--json", "--plot", plot.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], run.stdout)
        XCTAssertEqual((report["pad"] as? [String: Any])?["type"] as? String, "dualsense")
        XCTAssertEqual(report["samples"] as? Int, truth["samples"] as? Int)
        let windows = try XCTUnwrap(report["rest_windows"] as? [[String: Any]])
        XCTAssertFalse(windows.isEmpty)
        let bias = try XCTUnwrap(report["gyro_bias_dps"] as? [Double]), expected = try XCTUnwrap(truth["gyro_bias_dps"] as? [Double])
        for axis in 0..<3 { XCTAssertEqual(bias[axis], expected[axis], accuracy: 0.02, "axis \(axis)") }
        let gravity = try XCTUnwrap(windows.first?["gravity_g"] as? Double)
        XCTAssertEqual(gravity, try XCTUnwrap(truth["gravity_g"] as? Double), accuracy: 0.002)
        XCTAssertEqual(report["warnings"] as? [String], [], "gravity within 3 % of 1 g")

        let svg = try String(contentsOf: plot, encoding: .utf8)
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""), String(svg.prefix(200)))
        XCTAssertTrue(svg.hasSuffix("</svg>\n"))
        XCTAssertEqual(svg.components(separatedBy: "<polyline").count - 1, 6, "3 axes and 3 bias lines in one panel")
        XCTAssertEqual(svg.components(separatedBy: "class=\"rest\"").count - 1, windows.count, "one shaded rect per rest window")

        // Text for people: the windows and the bias.
        let text = try padgate(["calibrate", file])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("rest windows") && text.stdout.contains("gyro bias (the estimate at the end)"), text.stdout)
    }

    /// A recording without a PlayStation pad, or without motion, says so; live-pad options are refused.
    func testRecordingsThatCannotBeCalibrated() throws {
        let xbox = try padgate(["calibrate", Self.recordings.appendingPathComponent("xbox_elite2_bt_djm00n.hid").path])
        XCTAssertNotEqual(xbox.status, 0)
        XCTAssertTrue(xbox.stderr.contains("no DualSense, DualSense Edge or DualShock 4"), xbox.stderr)
        let simple = try padgate(["calibrate", Self.recordings.appendingPathComponent("dualsense_bt_djm00n_simple01.hid").path])
        XCTAssertNotEqual(simple.status, 0)
        XCTAssertTrue(simple.stderr.contains("sent no report with motion"), simple.stderr)
        let edge = Self.recordings.appendingPathComponent("dualsense_edge_usb_dsegde.hid").path
        let seconds = try padgate(["calibrate", edge, "--seconds", "2"])
        XCTAssertNotEqual(seconds.status, 0)
        XCTAssertTrue(seconds.stderr.contains("--seconds is for a live PAD"), seconds.stderr)
        let badReport = try padgate(["calibrate", edge, "--feature-report", "05"])
        XCTAssertTrue(badReport.stderr.contains("--feature-report:"), badReport.stderr)
        let missing = try padgate(["calibrate", "/nonexistent/x.hid"])
        XCTAssertTrue(missing.stderr.contains("does not exist"), missing.stderr)
    }
}
