import LogCapture
import HIDCodecs
import PadClient
import WireProtocol
import XCTest
@testable import PadDevices

final class HotPlugPolicyTests: XCTestCase {
    func testPadsWithATypedDecoderAreReadFromHidrawAndTheRestFromEvdev() {
        let policy = HotPlugPolicy()
        XCTAssertEqual(policy.reading(for: pad("a", kind: .dualSense, hidraw: "/dev/hidraw3")), .hidraw(path: "/dev/hidraw3"))
        XCTAssertEqual(policy.reading(for: pad("b", kind: .dualSense, hidraw: nil)), .evdev, "no hidraw node")
        XCTAssertEqual(policy.reading(for: pad("c", kind: .switchPro, hidraw: "/dev/hidraw4")), .evdev, "the driver's handshake and calibration")
        XCTAssertEqual(HotPlugPolicy(preferHidraw: false).reading(for: pad("a", kind: .dualSense, hidraw: "/dev/hidraw3")), .evdev, "forward --evdev")
    }

    func testAHostsVirtualPadIsNeverForwardedAndTheSelectorChooses() throws {
        var virtual = pad("v", kind: .xbox)
        virtual.phys = PadPhys.hostVirtual + "/slot0"
        XCTAssertFalse(HotPlugPolicy().forwards(virtual, at: 0), "forwarding it back would loop")
        // Steam Input's virtual pad, as a Steam Deck lists it (28de:11ff, virtual sysfs, no phys).
        var steam = pad("s", kind: .generic)
        steam.vendorID = 0x28de
        steam.productID = 0x11ff
        steam.name = "Microsoft X-Box 360 pad 0"
        XCTAssertEqual(steam.madeByAnotherProgram, "Steam Input")
        XCTAssertFalse(HotPlugPolicy().forwards(steam, at: 0), "it mirrors a controller forwarded itself")
        XCTAssertFalse(HotPlugPolicy(selectors: [try PadSelector("0")]).forwards(steam, at: 0), "not even when chosen by index")
        XCTAssertTrue(HotPlugPolicy().forwards(pad("a"), at: 3))
        let second = HotPlugPolicy(selectors: [try PadSelector("1")])
        XCTAssertFalse(second.forwards(pad("a"), at: 0))
        XCTAssertTrue(second.forwards(pad("a"), at: 1))
        // --pad again: two pads of several (couch co-op from one machine, two clients on one).
        let two = HotPlugPolicy(selectors: [try PadSelector("0"), try PadSelector("2")])
        XCTAssertEqual((0..<4).map { two.forwards(pad("a"), at: $0) }, [true, false, true, false])
    }

    func testChangesBecomeDetachesAndAttaches() {
        let policy = HotPlugPolicy()
        let old = pad("a"), forwarded: (String) -> Bool = { $0 == "a" }, index: (Pad) -> Int = { _ in 2 }
        XCTAssertEqual(policy.actions(for: .removed(old), forwarded: forwarded, index: index), [.detach(id: "a")])
        XCTAssertEqual(policy.actions(for: .removed(pad("z")), forwarded: forwarded, index: index), [], "never forwarded")
        var renumbered = old
        renumbered.evdev = [EvdevNode(path: "/dev/input/event9", role: .gamepad, name: "pad")]
        XCTAssertEqual(policy.actions(for: .changed(old: old, new: renumbered), forwarded: forwarded, index: index),
                       [.detach(id: "a"), .attach(renumbered, index: 2)], "new nodes: start over")
        var charged = old
        charged.capabilities.insert(.battery)
        XCTAssertEqual(policy.actions(for: .changed(old: old, new: charged), forwarded: forwarded, index: index), [],
                       "a battery appeared: the pad as forwarded is unchanged")
        XCTAssertEqual(policy.actions(for: .changed(old: old, new: charged), forwarded: { _ in false }, index: index),
                       [.attach(charged, index: 2)], "a pad not yet forwarded (it failed to open) is tried again")
    }
}

final class HotPlugFeederTests: XCTestCase {
    func testSlotsAreNumberedInOpeningOrderAndAFailedOpeningTakesNone() throws {
        var posted: [PadForwarder.SourceChange] = []
        var opened: [(String, PadSlot, HotPlugPolicy.Reading)] = []
        let feeder = HotPlugFeeder(policy: HotPlugPolicy(), post: { posted.append($0) }) { pad, slot, reading in
            opened.append((pad.id, slot, reading))
            if pad.id == "broken" { throw DeviceError.removed(path: "/dev/input/event1") }
            return try ScriptedPadSource(script: InputScript(parsing: "press south"), slot: slot)
        }
        feeder.logger = CapturedLog.silent
        feeder.attach([pad("a", kind: .dualSense, hidraw: "/dev/hidraw0"), pad("broken"), pad("b")])
        XCTAssertEqual(opened.map(\.0), ["a", "broken", "b"])
        XCTAssertEqual(opened.map(\.1.rawValue), [0, 1, 1], "the failed pad's slot goes to the next one")
        XCTAssertEqual(opened.map(\.2), [.hidraw(path: "/dev/hidraw0"), .evdev, .evdev])
        XCTAssertEqual(posted.count, 2)
        XCTAssertEqual(Set(feeder.sources.keys), ["a", "b"])

        feeder.handle([.removed(pad("a"))], pads: [pad("b")])
        XCTAssertEqual(Set(feeder.sources.keys), ["b"])
        if case .remove(let gone) = posted.last { XCTAssertEqual(gone.arrival.slot.rawValue, 0) } else { XCTFail("no removal posted") }
        feeder.handle([.arrived(pad("c"))], pads: [pad("b"), pad("c")])
        XCTAssertEqual(opened.last?.1.rawValue, 2, "a slot is not given again while the forwarder runs")
    }

    func testAPadWhoseHidrawCannotBeOpenedIsReadFromEvdev() throws {
        var readings: [HotPlugPolicy.Reading] = []
        let feeder = HotPlugFeeder(policy: HotPlugPolicy(), post: { _ in }) { _, slot, reading in
            readings.append(reading)
            if case .hidraw = reading { throw DeviceError.permissionDenied(path: "/dev/hidraw0") }
            return try ScriptedPadSource(script: InputScript(parsing: "press south"), slot: slot)
        }
        feeder.logger = CapturedLog.silent
        feeder.attach([pad("a", kind: .dualShock4, hidraw: "/dev/hidraw0")])
        XCTAssertEqual(readings, [.hidraw(path: "/dev/hidraw0"), .evdev])
        XCTAssertEqual(feeder.sources.count, 1)
    }
}

func pad(_ id: String, kind: PadKind = .xbox, hidraw: String? = nil) -> Pad {
    Pad(id: id, kind: kind, kernelBus: PadBus.usb.kernelBus, vendorID: 0x054c, productID: 0x0ce6, name: "pad \(id)", uniq: "", hidraw: hidraw,
        evdev: [EvdevNode(path: "/dev/input/event-\(id)", role: .gamepad, name: "pad \(id)")], capabilities: [])
}
