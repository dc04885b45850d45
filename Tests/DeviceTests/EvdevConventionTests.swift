import Foundation
@testable import PadFamilies
import XCTest
import HIDCodecs
@testable import PadDevices

/// The evdev face of padgate's virtual pads, read by an independent reader (python-evdev), against
/// what the kernel's own drivers expose for the real pads: SDL's test/testevdev.c records the
/// capability bitmaps of a real Xbox 360 pad under xpad and a real DualSense under hid-playstation;
/// xpad.c gives the Xbox 360 pad's axis ranges.
final class EvdevConventionTests: XCTestCase {
    static let reader = repositoryRoot.appendingPathComponent("Tests/SDLProbe/evdev-caps.py")

    override func setUpWithError() throws {
        try requireDeviceAccess()
        guard (try? shell("/usr/bin/python3 -c 'import evdev'")) != nil else {
            try skipLoudly("python3-evdev is missing: tools/build-sdl-probe.sh installs it")
        }
    }

    struct Capabilities: Decodable {
        var name: String, phys: String, bustype: Int, vendor: Int, product: Int, version: Int
        var ev: [Int], keys: [Int], abs: [String: [Int]], ff: [Int]
    }

    func capabilities(_ node: String) throws -> Capabilities {
        try JSONDecoder().decode(Capabilities.self, from: Data(shell("/usr/bin/python3 '\(Self.reader.path)' \(node)").utf8))
    }

    /// A real device's entry in SDL's testevdev table, as sets of codes.
    struct RealPad {
        var eviocgname: String?, bus: Int, vendor: Int, product: Int, version: Int?
        var ev: Set<Int>, keys: Set<Int>, abs: Set<Int>

        init(named name: String) throws {
            let url = repositoryRoot.appendingPathComponent("Tests/HIDCodecsTests/Fixtures/input_vectors/sdl_testevdev_capabilities.json")
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            let entry = try XCTUnwrap((json["entries"] as? [[String: Any]])?.first { $0["name"] as? String == name }, name)
            func bits(_ key: String) -> Set<Int> {
                let bytes = entry[key] as? [Int] ?? []
                return Set(bytes.enumerated().flatMap { index, byte in (0..<8).filter { byte & (1 << $0) != 0 }.map { index * 8 + $0 } })
            }
            eviocgname = entry["eviocgname"] as? String
            bus = entry["bus_type"] as? Int ?? 0; vendor = entry["vendor_id"] as? Int ?? 0; product = entry["product_id"] as? Int ?? 0
            version = entry["version"] as? Int
            ev = bits("ev"); keys = bits("keys"); abs = bits("abs")
        }
    }

    func testTheUInputXboxPadLooksLikeXpadsXbox360Pad() throws {
        let pad = try UInputGamepad(identity: .xbox360, phys: PadPhys.hostVirtual)
        let node = try XCTUnwrap(eventually { pad.devnode })
        let ours = try capabilities(node)
        let real = try RealPad(named: "Xbox 360 wired USB controller")
        XCTAssertEqual(ours.name, real.eviocgname)
        XCTAssertEqual([ours.bustype, ours.vendor, ours.product, ours.version], [real.bus, real.vendor, real.product, try XCTUnwrap(real.version)])
        XCTAssertEqual(Set(ours.ev), real.ev, "event types (SYN, KEY, ABS, FF)")
        XCTAssertEqual(Set(ours.keys), real.keys, "xpad's buttons")
        XCTAssertEqual(Set(ours.abs.keys.compactMap(Int.init)), real.abs, "xpad's axes")
        // drivers/input/joystick/xpad.c, xpad_set_up_abs: sticks ±32768 with fuzz 16 and flat 128,
        // triggers 0...255, the hat -1...1.
        for stick in [EvdevCode.ABS_X, EvdevCode.ABS_Y, EvdevCode.ABS_RX, EvdevCode.ABS_RY] {
            XCTAssertEqual(ours.abs[String(stick)], [-32768, 32767, 16, 128], "axis \(stick)")
        }
        for trigger in [EvdevCode.ABS_Z, EvdevCode.ABS_RZ] { XCTAssertEqual(ours.abs[String(trigger)], [0, 255, 0, 0]) }
        for hat in [EvdevCode.ABS_HAT0X, EvdevCode.ABS_HAT0Y] { XCTAssertEqual(ours.abs[String(hat)], [-1, 1, 0, 0]) }
        XCTAssertTrue(ours.ff.contains(Int(EvdevCode.FF_RUMBLE)), "rumble, as xpad's memless force feedback")
        XCTAssertEqual(ours.phys, PadPhys.hostVirtual, "padgate's mark, which games do not read")
    }

    /// The host's virtual DualSense is bound by hid-playstation itself, on the Bluetooth bus: its
    /// gamepad node must carry the buttons and axes a real DualSense's does.
    func testTheEmulatedDualSenseLooksLikeARealOne() throws {
        let pad = try EmulatedPlayStationPad(idleRepeat: DualSenseDriver().reportCadence)
        defer { pad.stop() }
        let found = try XCTUnwrap(padFor(pad, udev: try Udev()))
        let ours = try capabilities(try XCTUnwrap(found.gamepadNode?.path))
        let real = try RealPad(named: "DualSense (PS5) v8111 - gamepad")
        XCTAssertEqual([ours.vendor, ours.product], [real.vendor, real.product])
        XCTAssertEqual(ours.bustype, 5, "Bluetooth")
        XCTAssertEqual(ours.version, 0x8100, "a Bluetooth DualSense under hid-playstation")
        XCTAssertEqual(Set(ours.keys), real.keys)
        XCTAssertEqual(Set(ours.abs.keys.compactMap(Int.init)), real.abs)
        XCTAssertTrue(real.ev.isSubset(of: Set(ours.ev)))
        XCTAssertTrue(ours.ff.contains(Int(EvdevCode.FF_RUMBLE)))
    }
}
