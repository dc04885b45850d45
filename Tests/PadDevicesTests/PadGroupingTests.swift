import Foundation
import XCTest
@testable import PadDevices

/// Grouping and classification, on udev data recorded from a real kernel (see Fixtures/README.md).
final class PadGroupingTests: XCTestCase {
    func recorded() throws -> [UdevRecord] {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "guest-udev-records", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode([UdevRecord].self, from: Data(contentsOf: url))
    }

    func testRecordedGuestGroupsIntoThreePads() throws {
        let pads = PadGrouping.pads(from: try recorded())
        XCTAssertEqual(pads.map(\.kind), [.dualSense, .dualSense, .xbox])
        XCTAssertEqual(pads.map(\.bus), [.usb, .bluetooth, .usb])

        for sony in pads.prefix(2) {
            XCTAssertEqual(sony.evdev.map(\.role), [.gamepad, .touchpad, .motion])
            XCTAssertEqual(sony.evdev[1].name, "Sony Interactive Entertainment DualSense Wireless Controller Touchpad")
            XCTAssertEqual(sony.evdev[2].name, "Sony Interactive Entertainment DualSense Wireless Controller Motion Sensors")
            XCTAssertNotNil(sony.hidraw)
            XCTAssertEqual(sony.vidpid, "054c:0ce6")
            XCTAssertEqual(sony.uniq.count, 17, "uniq is the pad's MAC address")
            XCTAssertEqual(Set(sony.capabilities.names),
                           ["rumble", "lightbar", "player-leds", "adaptive-triggers", "touchpad", "motion", "battery"])
        }
        XCTAssertNotEqual(pads[0].hidraw, pads[1].hidraw)

        let generic = pads[2]
        XCTAssertNil(generic.hidraw)
        XCTAssertEqual(generic.evdev.map(\.role), [.gamepad])
        XCTAssertEqual(generic.name, "padgate virtual Xbox 360 pad")
        XCTAssertEqual(generic.capabilities, [.rumble], "FF_RUMBLE from capabilities/ff, nothing else")
    }

    func testNodesWithoutAJoystickAreNotPads() throws {
        // Drop the gamepad nodes: touchpad and motion nodes alone do not make a pad.
        let withoutJoysticks = try recorded().filter { $0.properties["ID_INPUT_JOYSTICK"] != "1" }
        XCTAssertTrue(PadGrouping.pads(from: withoutJoysticks).isEmpty)
    }

    func testAPadWhoseNodesCameLateIsReportedAsChangedNotReplugged() throws {
        let complete = PadGrouping.pads(from: try recorded())
        var partial = complete
        partial[0].evdev.removeLast()
        let changes = PadMonitor.diff(old: partial, new: complete)
        XCTAssertEqual(changes, [.changed(old: partial[0], new: complete[0])])
        XCTAssertEqual(PadMonitor.diff(old: complete, new: Array(complete.dropFirst())), [.removed(complete[0])])
        XCTAssertEqual(PadMonitor.diff(old: complete, new: complete), [])
    }


    /// A Steam Deck's controls, as udev shows them: three HID interfaces (mouse, keyboard, the
    /// vendor controller interface: `/proc/bus/input/devices` of a real Deck, Fixtures README).
    /// Before 6.3 hid-generic gives the controller a hidraw node and no input node; from 6.3
    /// hid-steam gives its own device evdev nodes and no hidraw, and a client device the hidraw node.
    func deckRecords(hidSteam: Bool) -> [UdevRecord] {
        let usb = "/devices/pci0000:00/0000:00:08.1/0000:04:00.4/usb1/1-3"
        func hid(_ interface: Int, _ number: Int, name: String = "Valve Software Steam Controller") -> UdevRecord.Ancestor {
            .init(syspath: "\(usb)/1-3:1.\(interface)/0003:28DE:1205.\(String(format: "%04X", number))", subsystem: "hid",
                  properties: ["HID_ID": "0003:000028DE:00001205", "HID_NAME": name, "HID_UNIQ": "123456789ABCDEF",
                               "HID_PHYS": "usb-0000:04:00.4-3/input\(interface)"])
        }
        func event(_ parent: UdevRecord.Ancestor, _ n: Int, _ properties: [String: String], name: String) -> UdevRecord {
            let input = UdevRecord.Ancestor(syspath: parent.syspath + "/input/input\(n)", subsystem: "input", properties: ["NAME": "\"\(name)\""])
            return UdevRecord(syspath: input.syspath + "/event\(n)", subsystem: "input", sysname: "event\(n)", devnode: "/dev/input/event\(n)",
                              properties: properties, ancestors: [input, parent])
        }
        func hidraw(_ parent: UdevRecord.Ancestor, _ n: Int) -> UdevRecord {
            UdevRecord(syspath: parent.syspath + "/hidraw/hidraw\(n)", subsystem: "hidraw", sysname: "hidraw\(n)", devnode: "/dev/hidraw\(n)",
                       properties: [:], ancestors: [parent])
        }
        let mouse = hid(0, 1), keyboard = hid(1, 2), controller = hid(2, 3)
        var records = [event(mouse, 5, ["ID_INPUT_MOUSE": "1"], name: "Valve Software Steam Controller"), hidraw(mouse, 0),
                       event(keyboard, 7, ["ID_INPUT_KEYBOARD": "1"], name: "Valve Software Steam Controller"), hidraw(keyboard, 1)]
        if hidSteam {
            records += [event(controller, 9, ["ID_INPUT_JOYSTICK": "1"], name: "Steam Deck"),
                        event(controller, 10, ["ID_INPUT_ACCELEROMETER": "1"], name: "Steam Deck Motion Sensors"),
                        hidraw(hid(2, 4), 2)]   // the client device hid-steam adds, beside the controller's
        } else {
            records.append(hidraw(controller, 2))
        }
        return records
    }

    func testASteamDeckIsOnePadFoundByItsControllersHidrawNodeOnEveryKernel() {
        for hidSteam in [false, true] {
            let pads = PadGrouping.pads(from: deckRecords(hidSteam: hidSteam))
            XCTAssertEqual(pads.count, 1, "hid-steam: \(hidSteam): \(pads)")
            let deck = pads.first
            XCTAssertEqual(deck?.kind, .steamDeck)
            XCTAssertEqual(deck?.hidraw, "/dev/hidraw2", "the controller's node, not the mouse's or keyboard's")
            // Its lizard mouse and keyboard (the other interfaces of its USB device), for `forward`
            // to hold; never hid-steam's gamepad and motion nodes.
            XCTAssertEqual(deck?.evdev, [EvdevNode(path: "/dev/input/event5", role: .other, name: "Valve Software Steam Controller"),
                                         EvdevNode(path: "/dev/input/event7", role: .other, name: "Valve Software Steam Controller")])
            XCTAssertEqual(deck?.hasItsInputNodes, true)
            XCTAssertEqual(deck?.uniq, "123456789ABCDEF")
            XCTAssertEqual(deck.map { Set($0.capabilities.names) }, ["touchpad", "motion", "rumble"])
        }
    }

    /// A 2026 Steam Controller's one HID interface, as hid-generic binds it (wired 1302, or a
    /// puck's slot): the lizard mouse and keyboard nodes and the hidraw node on the same device.
    func steamControllerRecords(product: UInt16, interface: Int, number: Int) -> [UdevRecord] {
        let id = String(format: "%04X", product)
        let hid = UdevRecord.Ancestor(syspath: "/sys/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.\(interface)/0003:28DE:\(id).\(String(format: "%04X", number))",
                                      subsystem: "hid",
                                      properties: ["HID_ID": "0003:000028DE:0000\(id)", "HID_NAME": "Valve Steam Controller",
                                                   "HID_PHYS": "usb-0000:00:14.0-2/input\(interface)"])
        func event(_ n: Int, _ properties: [String: String]) -> UdevRecord {
            let input = UdevRecord.Ancestor(syspath: hid.syspath + "/input/input\(n)", subsystem: "input", properties: ["NAME": "\"Valve Steam Controller\""])
            return UdevRecord(syspath: input.syspath + "/event\(n)", subsystem: "input", sysname: "event\(n)", devnode: "/dev/input/event\(n)",
                              properties: properties, ancestors: [input, hid])
        }
        return [event(10 * number, ["ID_INPUT_MOUSE": "1"]), event(10 * number + 1, ["ID_INPUT_KEYBOARD": "1"]),
                UdevRecord(syspath: hid.syspath + "/hidraw/hidraw\(number)", subsystem: "hidraw", sysname: "hidraw\(number)",
                           devnode: "/dev/hidraw\(number)", properties: [:], ancestors: [hid])]
    }

    func testASteamControllerIsFoundByItsHidrawNodeBesideHidGenericsLizardNodes() {
        let wired = PadGrouping.pads(from: steamControllerRecords(product: 0x1302, interface: 0, number: 1))
        XCTAssertEqual(wired.map(\.kind), [.steamController])
        XCTAssertEqual(wired.first?.hidraw, "/dev/hidraw1")
        XCTAssertEqual(wired.first?.evdev.map(\.path), ["/dev/input/event10", "/dev/input/event11"], "its lizard mouse and keyboard, held while forwarded")
        XCTAssertEqual(wired.first?.evdev.map(\.role), [.other, .other], "and never read as the pad")
        // A puck: its four slots (interfaces 2-5) are controllers; interface 6, the puck's own, is not.
        let puck = (2...6).flatMap { steamControllerRecords(product: 0x1304, interface: $0, number: $0) }
        XCTAssertEqual(PadGrouping.pads(from: puck).compactMap(\.hidraw), ["/dev/hidraw2", "/dev/hidraw3", "/dev/hidraw4", "/dev/hidraw5"])
        // Each slot holds its own lizard nodes, not its neighbours' nor the puck's.
        XCTAssertEqual(PadGrouping.pads(from: puck).map { $0.evdev.map(\.path) },
                       (2...5).map { ["/dev/input/event\(10 * $0)", "/dev/input/event\(10 * $0 + 1)"] })
        // A Deck's lizard interfaces stay out (their input nodes are theirs).
        XCTAssertEqual(PadGrouping.pads(from: deckRecords(hidSteam: false)).count, 1)
    }

    func testTheUSBDeviceOfAHIDDeviceIsFoundOnlyThroughAUSBInterface() {
        XCTAssertEqual(PadGrouping.usbDevice(ofHID: "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-1/3-1:1.2/0003:28DE:1205.0003"),
                       "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-1")
        XCTAssertEqual(PadGrouping.usbDevice(ofHID: "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-1/3-1.4/3-1.4:1.0/0003:054C:0CE6.0002"),
                       "/sys/devices/pci0000:00/0000:00:14.0/usb3/3-1/3-1.4", "behind a hub")
        XCTAssertNil(PadGrouping.usbDevice(ofHID: "/sys/devices/virtual/misc/uhid/0005:054C:0CE6.0001"), "uhid pads are no USB device's")
        XCTAssertNil(PadGrouping.usbDevice(ofHID: "/0005:054C:0CE6.0001"))
    }

    func testSysfsCapabilityBitmap() {
        // capabilities/ff of a DualSense: FF_RUMBLE (0x50) and the FF_PERIODIC family bits.
        XCTAssertTrue(EvdevBitmap(sysfs: "107030000 0").contains(0x50))
        XCTAssertFalse(EvdevBitmap(sysfs: "0").contains(0x50))
        XCTAssertTrue(EvdevBitmap(sysfs: "1 0").contains(64))
    }

    func testSelectors() throws {
        let pads = PadGrouping.pads(from: try recorded())
        XCTAssertEqual(try PadSelector.select(PadSelector("1"), from: pads), pads[1])
        XCTAssertEqual(try PadSelector.select(PadSelector(pads[2].evdev[0].path), from: pads), pads[2])
        XCTAssertEqual(try PadSelector.select(PadSelector(try XCTUnwrap(pads[1].hidraw)), from: pads), pads[1])
        XCTAssertEqual(try PadSelector.select(PadSelector("045e:028e"), from: pads), pads[2])
        XCTAssertEqual(try PadSelector.select(nil, from: pads), pads[0])
        XCTAssertThrowsError(try PadSelector.select(PadSelector("7"), from: pads)) {
            XCTAssertTrue("\($0)".contains("padgate list"), "\($0)")
        }
        XCTAssertThrowsError(try PadSelector("dualsense"))
        XCTAssertThrowsError(try PadSelector.select(nil, from: [])) { XCTAssertTrue("\($0)".contains("plug one in")) }
    }
}
