import Foundation
import HIDCodecs
import XCTest
@testable import PadDevices
@testable import PadFamilies
import PadSystem
import WireProtocol

/// A host pad is made whole: when the host's maker returns it, its driver has registered every
/// input device it makes for the pad, each with its handlers (evdev's eventN, joydev's jsN). The
/// drivers open a pad, ask for its calibration, then register them in their own order:
/// hid-playstation the gamepad, motion, touchpad; hid-sony (a DualShock 4 on 6.1) touchpad,
/// motion, then the gamepad; hid-nintendo the IMU, then the gamepad (6.12 on; 6.1 the other way
/// round). The test prints each driver's order. The kernel numbers joysticks
/// as they register, so pads made one after another get joystick numbers in that order: how a
/// reconnecting client's pads get theirs back (`CouchCoopDeviceTests`). On every kernel line,
/// because the order is each driver's. Found by the couch test: a client's two DualSenses came
/// back with their numbers swapped; then a Switch Pro handed over before its gamepad was
/// numbered (two sysfs devices: its IMU and a gamepad not yet whole).
final class HostPadOrderDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    /// The input devices (/sys/class/input/inputN) a driver registered with `uniq`: sysfs, the
    /// kernel's view, read independently of the host's (/proc/bus/input/devices).
    func inputDevices(uniq: String) -> [String] {
        let root = "/sys/class/input"
        return ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { input in
            input.hasPrefix("input")
                && (try? String(contentsOfFile: "\(root)/\(input)/uniq", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == uniq.lowercased()
        }.map { "\(root)/\($0)" }
    }

    /// The pad's first joystick number (`jsN`) among the input devices a driver registered with
    /// `uniq` (joydev also numbers a DualSense's motion sensors).
    func joystick(uniq: String) -> Int? {
        inputDevices(uniq: uniq).flatMap { input in
            ((try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []).filter { $0.hasPrefix("js") }.compactMap { Int($0.dropFirst(2)) }
        }.min()
    }

    /// Every joystick node with the name and phys of its input device.
    func joysticks() -> [String] {
        let root = "/sys/class/input"
        return ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter { $0.hasPrefix("js") }.sorted().map { js in
            func read(_ name: String) -> String {
                ((try? String(contentsOfFile: "\(root)/\(js)/device/\(name)", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return "\(js) \"\(read("name"))\" at \(read("phys"))"
        }
    }

    func testAHostPadIsMadeWithItsInputDevicesSoJoysticksAreNumberedInTheOrderPadsAreMade() throws {
        // joydev numbers the joysticks; udev loads it when the first gamepad appears, which would
        // number this test's first pad late (a boot's first test).
        _ = try? shell("modprobe joydev")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/sys/module/joydev"), "joydev is not loaded: no joystick numbers to check")
        // Joysticks an earlier test left: a pad removed after its maker returned would free its
        // number under this test's pads (each takes the lowest free one).
        let before = joysticks()
        print("joysticks before the first pad: \(before.isEmpty ? "none" : before.joined(separator: "; "))")
        // Every driver order: hid-playstation's, hid-sony's or hid-playstation's DualShock 4
        // (by kernel line), hid-nintendo's.
        let kinds: [PadKind] = [.dualSense, .dualShock4, .dualSense, .switchPro]
        // Each driver's devices for a pad: gamepad, motion and touchpad; the Switch Pro's two.
        let devices: [PadKind: Int] = [.dualSense: 3, .dualShock4: 3, .switchPro: 2]
        var made: [any VirtualPad] = []
        defer { made.forEach { $0.remove() } }
        var numbers: [Int] = []
        for (i, kind) in kinds.enumerated() {
            var identity = PadIdentity(unit: try XCTUnwrap(FeatureReportBytes([0x10, 0x20, 0x30, 0x40, 0x50, UInt8(0x60 + i)])))
            identity.client = try XCTUnwrap(FeatureReportBytes(Array("js-order".utf8)))
            let ids = try XCTUnwrap(kind.canonicalIDs)
            let arrival = PadArrival(slot: PadSlot(UInt8(i)), type: kind, vendorID: ids.vendor, productID: ids.product, capabilities: [],
                                     name: "", identity: identity)
            made.append(try PadDrivers.hostPad(for: arrival, presentation: .uhid))
            let uniq = UHIDPadChannel.uniq(of: try XCTUnwrap(HostPadAddress.stable(for: arrival, kind: kind)))
            // At once, no waiting: made means registered, every device of it.
            let expected = try XCTUnwrap(devices[kind])
            XCTAssertEqual(inputDevices(uniq: uniq).count, expected, "host pad \(i) (\(kind.displayName), \(uniq)) was handed over before its driver registered it whole")
            numbers.append(try XCTUnwrap(joystick(uniq: uniq), "host pad \(i) (\(kind.displayName)) has no joystick node"))
            // The driver and the order it registered the pad's devices in: evdev numbers a device
            // as it registers (inputN is numbered when the driver allocates it).
            func eventNumber(_ input: String) -> Int {
                let event = ((try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []).first { $0.hasPrefix("event") }
                return event.flatMap { Int($0.dropFirst(5)) } ?? Int.max
            }
            let order = inputDevices(uniq: uniq).sorted { eventNumber($0) < eventNumber($1) }
                .map { (try? String(contentsOfFile: "\($0)/name", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?" }
            let driver = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(inputDevices(uniq: uniq).first ?? "")/device/driver")).map { ($0 as NSString).lastPathComponent } ?? "?"
            print("host pad \(i) (\(kind.displayName)): \(driver) registered \(order.map { "\"\($0)\"" }.joined(separator: ", ")); js\(numbers.last ?? -1)")
            // The host's view of "registered whole" (/proc/bus/input/devices) is the kernel's
            // sysfs view: the same devices, with the same handlers (mousedev's aside: it takes
            // touchpads).
            let listed = KernelDrivers.registeredInputs(in: KernelDrivers.listedInputs())
                .filter { $0.uniq.lowercased() == uniq.lowercased() }.map { Set($0.handlers.filter { $0.hasPrefix("event") || $0.hasPrefix("js") }) }
            let sysfs = inputDevices(uniq: uniq).map { input in
                Set(((try? FileManager.default.contentsOfDirectory(atPath: input)) ?? []).filter { $0.hasPrefix("event") || $0.hasPrefix("js") })
            }
            XCTAssertEqual(Set(listed), Set(sysfs), "host pad \(i): /proc/bus/input/devices' handlers against sysfs")
        }
        XCTAssertEqual(numbers, numbers.sorted(), "joystick numbers in the order the pads were made: \(numbers)")
        XCTAssertEqual(Set(numbers).count, kinds.count, "\(numbers)")
    }
}
