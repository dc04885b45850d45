import Foundation
import HIDCodecs
import XCTest
@testable import PadDevices

/// Which of a pad's LED class devices are its player lights, and in which order.
final class LEDClassDevicesTests: XCTestCase {
    /// hid-nintendo names its player lights "<hid>:green:player-1..4" and the home LED
    /// "<hid>:blue:player-5": bit 0 of a mask must be player 1, not the home LED that sorts first.
    func testPlayerLightsGoByTheirNumberNotTheirColour() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-leds-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hid = "0005:057E:2009.0001"
        for name in ["\(hid):blue:player-5", "\(hid):green:player-3", "\(hid):green:player-1", "\(hid):green:player-4", "\(hid):green:player-2", "input3::capslock"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(name)", withIntermediateDirectories: true)
        }
        let pad = Pad(id: root, kind: .switchPro, kernelBus: PadBus.bluetooth.kernelBus, vendorID: 0x057e, productID: 0x2009, name: "Pro Controller",
                      uniq: "", phys: "", hidraw: nil, evdev: [], capabilities: [])
        let leds = LEDClassDevices(pad: pad, root: root).playerLEDs.map { ($0 as NSString).lastPathComponent }
        XCTAssertEqual(leds, ["\(hid):green:player-1", "\(hid):green:player-2", "\(hid):green:player-3", "\(hid):green:player-4", "\(hid):blue:player-5"])
    }
}
