import Foundation
import XCTest
@testable import PadDevices

/// Which axis is which, from the capability bitmaps of real pads in SDL's testevdev table
/// (Tests/HIDCodecsTests/Fixtures/input_vectors, from libsdl-org/SDL test/testevdev.c).
final class GamepadAxisCodesTests: XCTestCase {
    static func absoluteAxes(of name: String) throws -> Set<UInt32> {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("HIDCodecsTests/Fixtures/input_vectors/sdl_testevdev_capabilities.json")
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let entry = try XCTUnwrap((json["entries"] as? [[String: Any]])?.first { $0["name"] as? String == name }, name)
        let bytes = entry["abs"] as? [Int] ?? []
        return Set(bytes.enumerated().flatMap { index, byte in (0..<8).filter { byte & (1 << $0) != 0 }.map { UInt32(index * 8 + $0) } })
    }

    func codes(_ name: String) throws -> GamepadAxisCodes {
        let axes = try Self.absoluteAxes(of: name)
        return GamepadAxisCodes { axes.contains($0) }
    }

    /// xpad: right stick RX/RY, triggers Z/RZ.
    func testXpadPadsKeepTheirTriggersOnZ() throws {
        let xpad = try codes("Xbox 360 wired USB controller")
        XCTAssertEqual([xpad.rightX, xpad.rightY, xpad.leftTrigger, xpad.rightTrigger],
                       [EvdevCode.ABS_RX, EvdevCode.ABS_RY, EvdevCode.ABS_Z, EvdevCode.ABS_RZ])
    }

    /// A Series X over Bluetooth mapped by hid-input from its descriptor: X, Y, Z, RZ, GAS, BRAKE.
    /// Its right stick is Z/RZ and its triggers BRAKE (left) and GAS (right).
    func testADescriptorMappedXboxHasItsRightStickOnZAndTriggersOnBrakeAndGas() throws {
        let bluetooth = try codes("Microsoft Xbox Series S|X Controller (model 1914) via Bluetooth")
        XCTAssertEqual([bluetooth.rightX, bluetooth.rightY, bluetooth.leftTrigger, bluetooth.rightTrigger],
                       [EvdevCode.ABS_Z, EvdevCode.ABS_RZ, EvdevCode.ABS_BRAKE, EvdevCode.ABS_GAS])
    }
}
