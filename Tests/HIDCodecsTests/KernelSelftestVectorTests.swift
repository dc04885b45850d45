import XCTest
@testable import HIDCodecs

/// The 616 steps in input_vectors/hidtools_kernel_selftest_vectors.json pair input reports with the evdev
/// values the kernel's hid-playstation produces (transcribed from Linux's HID selftests). We decode each
/// report, map it like hid-playstation does, and compare within the stated tolerances (accel ±1, gyro ±64).
final class KernelSelftestVectorTests: XCTestCase {
    func calibration(for device: String) throws -> MotionCalibration {
        if device.hasPrefix("dualsense") {
            let json = try Fixture.json("calibration/dualsense_feature_0x05.json")
            let blob = (json["blobs"] as! [[String: Any]]).first { $0["id"] as? String == (device.hasSuffix("bt") ? "A_bt" : "A_usb") }!
            return try CalibrationParser.dualSense(Fixture.hex(blob["hex"] as! String)).calibration
        }
        let json = try Fixture.json("calibration/ds4_feature_calibration.json")
        let blob = (json["blobs"] as! [[String: Any]]).first { $0["id"] as? String == (device.hasSuffix("bt") ? "ds4_bt_0x05" : "ds4_usb_0x02") }!
        return try CalibrationParser.dualShock4(Fixture.hex(blob["hex"] as! String)).calibration
    }

    func testEveryStepMatchesKernelEvdevValues() throws {
        let vectors = try Fixture.json("input_vectors/hidtools_kernel_selftest_vectors.json")
        let devices = try XCTUnwrap(vectors["devices"] as? [String: [String: Any]])
        var steps = 0, expectations = 0
        for (name, device) in devices.sorted(by: { $0.key < $1.key }) {
            let model: PadKind = name.hasPrefix("dualsense") ? .dualSense : .dualShock4
            let calibration = try calibration(for: name)
            for testCase in device["cases"] as! [[String: Any]] {
                let label = "\(name) / \(testCase["test"]!)"
                var decoder = ControllerInputDecoder(kind: model)!
                var mapper = PlayStationEvdevMapper(calibration: calibration)
                var state = GamepadState()
                try decoder.decode(Fixture.hex(testCase["initial_report"] as! String), into: &state)
                var previous = mapper.map(state)
                for step in testCase["steps"] as! [[String: Any]] {
                    steps += 1
                    try decoder.decode(Fixture.hex(step["report"] as! String), into: &state)
                    let frame = mapper.map(state)
                    for expect in step["expect"] as! [[String: Any]] {
                        expectations += 1
                        let code = expect["code"] as! String
                        let expected = Int32(expect["value"] as! Int)
                        let tolerance = Int32(expect["tolerance"] as? Int ?? 0)
                        let actual = try XCTUnwrap(frame.value(node: expect["node"] as! String, code: code, slot: expect["slot"] as? Int), "\(label) \(code)")
                        XCTAssertLessThanOrEqual(abs(actual - expected), tolerance, "\(label): \(expect["node"]!) \(code) = \(actual), kernel says \(expected)")
                    }
                    for code in step["expect_no_event_for"] as? [String] ?? [] {
                        XCTAssertEqual(frame.value(node: "gamepad", code: code), previous.value(node: "gamepad", code: code), "\(label): \(code) must not change")
                    }
                    previous = frame
                }
            }
        }
        XCTAssertEqual(steps, 616)
        XCTAssertEqual(expectations, 632)
    }
}
