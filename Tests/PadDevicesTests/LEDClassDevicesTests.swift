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

/// Lights for forwarding's loop: handed to a thread of their own (`LEDWriter`), newest wins.
final class LEDWriterTests: XCTestCase {
    /// hid-nintendo's player LEDs are a round trip to the pad each: a write that does not return
    /// (here a FIFO nobody reads) must not hold up whoever asked, and what was asked meanwhile
    /// collapses into the newest request.
    func testABlockedDriverHoldsUpNobodyAndTheNewestMaskWins() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-ledwriter-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hid = "0005:057E:2009.0001"
        var brightness: [String] = []
        for number in 1...4 {
            let led = "\(root)/\(hid):green:player-\(number)"
            try FileManager.default.createDirectory(atPath: led, withIntermediateDirectories: true)
            brightness.append(led + "/brightness")
        }
        // Player 1's brightness blocks its writer until someone reads it; the others are files.
        XCTAssertEqual(mkfifo(brightness[0], 0o600), 0)
        for path in brightness.dropFirst() { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil)) }
        let pad = Pad(id: root, kind: .switchPro, kernelBus: PadBus.bluetooth.kernelBus, vendorID: 0x057e, productID: 0x2009, name: "Pro Controller",
                      uniq: "", phys: "", hidraw: nil, evdev: [], capabilities: [])
        let writer = LEDWriter(pad: pad, root: root)
        defer { writer.close() }

        writer.setPlayerMask(0b0001)  // returns although the write cannot finish
        XCTAssertFalse(writer.waitUntilIdle(timeout: .milliseconds(300)), "the FIFO's write finished with nobody reading it")
        writer.setPlayerMask(0b0010)
        writer.setPlayerMask(0b0100)
        // Unblock the first write: read what it wrote.
        let reader = open(brightness[0], O_RDONLY | O_NONBLOCK)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        XCTAssertTrue(writer.waitUntilIdle(timeout: .seconds(30)), "the writer never finished")
        func value(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .ascii) }
        // Two writes: the first mask, then the newest; 0b0010 was overtaken and never written.
        XCTAssertEqual(writer.writes, 2)
        XCTAssertEqual(value(brightness[2]), "1", "player 3 is lit by the newest mask")
        XCTAssertEqual(value(brightness[1]), "0", "player 2 is dark in the newest mask")
        XCTAssertEqual(writer.failures, 0)
    }
}
