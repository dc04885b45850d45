import Foundation
@testable import PadFamilies
import XCTest
import HIDCodecs
@testable import PadDevices

/// The DualShock 4 padgate presents is the CTS's real pad, byte for byte, and answers each feature
/// report in the form its bus has (hid-sony 6.1 and SDL_hidapi_ps4.c read them).
final class DualShock4IdentityTests: XCTestCase {
    static let ctsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HIDCodecsTests/Fixtures/android_cts")

    /// A CTS registration, its `0x..` literals turned into numbers.
    static func registration(_ name: String) throws -> [String: Any] {
        let text = try String(contentsOf: ctsDirectory.appendingPathComponent(name), encoding: .utf8)
        let hex = try NSRegularExpression(pattern: "0x([0-9a-fA-F]+)")
        var decimal = text
        for match in hex.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            decimal.replaceSubrange(Range(match.range, in: decimal)!, with: String(Int(String(text[Range(match.range(at: 1), in: text)!]), radix: 16)!))
        }
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(decimal.utf8)) as? [String: Any])
    }

    static func feature(_ registration: [String: Any], _ id: Int) throws -> [UInt8] {
        let reports = try XCTUnwrap(registration["feature_reports"] as? [[String: Any]])
        return try XCTUnwrap(reports.first { $0["id"] as? Int == id }?["data"] as? [Int]).map(UInt8.init)
    }

    func testTheShippedIdentityIsTheCTSPads() throws {
        let bt = try Self.registration("sony_dualshock4_bluetooth_register.json"), usb = try Self.registration("sony_dualshock4_usb_register.json")
        XCTAssertEqual((bt["descriptor"] as? [Int])?.map(UInt8.init), DualShock4IdentityData.bluetoothDescriptor)
        XCTAssertEqual((usb["descriptor"] as? [Int])?.map(UInt8.init), DualShock4IdentityData.usbDescriptor)
        XCTAssertEqual(try Self.feature(bt, 0x05), DualShock4IdentityData.bluetoothCalibration)
        XCTAssertEqual(try Self.feature(bt, 0xa3), DualShock4IdentityData.versionInfo)
        XCTAssertEqual(bt["vid"] as? Int, Int(PadKind.dualShock4.canonicalIDs?.vendor ?? 0))
        XCTAssertEqual(bt["pid"] as? Int, Int(PadKind.dualShock4.canonicalIDs?.product ?? 0))
    }

    func testEachBusAnswersInItsOwnForm() throws {
        let mac: [UInt8] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]
        let calibration = DualShock4IdentityData.bluetoothCalibration, version = DualShock4IdentityData.versionInfo
        let bt = try XCTUnwrap(PlayStationPadProfile(kind: .dualShock4, bus: .bluetooth))
        func answer(_ profile: PlayStationPadProfile, _ id: UInt8) -> [UInt8]? {
            profile.featureReport(id, calibration: calibration, firmwareInfo: version, macAddress: mac)
        }
        XCTAssertEqual(answer(bt, 0x05), calibration)
        XCTAssertEqual(answer(bt, 0x02), try DualShock4Calibration.usbForm(calibration), "SDL reads 0x02 first, on either bus")
        XCTAssertEqual(answer(bt, 0xa3), version)
        XCTAssertNil(answer(bt, 0x12), "SDL takes a DS4 that answers 0x12 for a USB one")
        XCTAssertNil(answer(bt, 0x81))
        XCTAssertEqual(bt.layout.reportID, 0x11)
        XCTAssertEqual(bt.descriptor, DualShock4IdentityData.bluetoothDescriptor)

        let usb = try XCTUnwrap(PlayStationPadProfile(kind: .dualShock4, bus: .usb))
        XCTAssertEqual(answer(usb, 0x02), try DualShock4Calibration.usbForm(calibration))
        XCTAssertNil(answer(usb, 0x05))
        // hid-sony copies 0x81's bytes 1-6 and prints them reversed (%pMR): least significant first.
        XCTAssertEqual(answer(usb, 0x81), [0x81, 0x55, 0x44, 0x33, 0x22, 0x11, 0x02])
        XCTAssertEqual(answer(usb, 0x12)?.count, 16)
        XCTAssertEqual(usb.layout.reportID, 0x01)

        XCTAssertNil(PlayStationPadProfile(kind: .switchPro, bus: .bluetooth))
    }

    /// hid-sony counts the DS4's sensor clock in 16/3 µs; the wire in µs.
    func testTheSensorClockIsInTheDualShock4sUnits() throws {
        let profile = try XCTUnwrap(PlayStationPadProfile(kind: .dualShock4, bus: .bluetooth))
        XCTAssertEqual(profile.sensorTicks(micros: 16_000), 3_000)
        XCTAssertEqual(try XCTUnwrap(PlayStationPadProfile(kind: .dualSense, bus: .bluetooth)).sensorTicks(micros: 16_000), 48_000)
    }
}
