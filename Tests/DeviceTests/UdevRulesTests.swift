import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices

/// udev/70-padgate.rules, applied by the real udevd: the supported pads' hidraw nodes (USB and
/// Bluetooth) and /dev/uhid and /dev/uinput get the uaccess tag; other Microsoft HID devices do not.
final class UdevRulesTests: XCTestCase {
    static let rules = repositoryRoot.appendingPathComponent("udev/70-padgate.rules")
    static let installed = URL(fileURLWithPath: "/etc/udev/rules.d/70-padgate.rules")
    /// How long udevd may take over a new node: under software emulation on a busy machine, each
    /// of its steps (probe, rules, tags) has been seen to take seconds.
    static let udevBudget: Duration = .seconds(30)

    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path])
        try Self.installTheseRules()
    }

    /// In the guest, installs this checkout's rules as `make install-udev` would (its root is a
    /// throw-away overlay) and waits until udevd applies them; elsewhere, skips loudly unless they
    /// are installed already.
    static func installTheseRules() throws {
        let ours = try Data(contentsOf: Self.rules)
        if (try? Data(contentsOf: Self.installed)) == ours, installedThisRun { return }
        if ProcessInfo.processInfo.environment["PADGATE_IN_GUEST"] == "1" {
            try FileManager.default.createDirectory(at: Self.installed.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: Self.installed)
            try ours.write(to: Self.installed)
            try udevadm(["control", "--reload"])
            try waitForTheRules()
            installedThisRun = true
        } else if (try? Data(contentsOf: Self.installed)) != ours {
            try skipLoudly("\(Self.installed.path) is not this checkout's udev/70-padgate.rules (sudo make install-udev)")
        }
    }
    nonisolated(unsafe) private static var installedThisRun = false

    func testSupportedPadsAndVirtualDeviceInterfacesGetUaccess() throws {
        for bus in PadBus.allCases {
            let events = try UdevEvents()  // before the pad exists, so its events cannot be missed
            let pad = try EmulatedPlayStationPad(bus: bus)
            defer { pad.stop() }
            let hidraw = try XCTUnwrap(padFor(pad, udev: Udev(), timeout: Self.udevBudget)?.hidraw, "\(bus) DualSense has no hidraw node")
            let found = try tags(hidraw, once: events, processed: "add")
            XCTAssertTrue(found.contains(":uaccess:"), "\(bus) DualSense \(hidraw): \(found)")
        }
        let xboxDescriptor = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent(
            "Tests/HIDCodecsTests/Fixtures/descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin")))
        // The same gamepad descriptor under an Xbox One S id, and under a Microsoft keyboard's id:
        // no rule tags the second, so only udevd's event can say it is done with it.
        for (product, granted) in [(UInt16(0x02fd), true), (UInt16(0x0750), false)] {
            let uniq = "padgate-rules-\(String(product, radix: 16))"
            let events = try UdevEvents()
            let device = try RespondingUHIDDevice(UHIDDevice.Identity(name: "padgate rules test \(uniq)", uniq: uniq, bus: .bluetooth,
                                                                      vendorID: 0x045e, productID: product), descriptor: xboxDescriptor)
            defer { device.destroy() }
            let hidraw = try XCTUnwrap(eventually(timeout: Self.udevBudget) { try? Udev().pads().first { $0.uniq == uniq }?.hidraw }, "045e:\(String(product, radix: 16)) has no hidraw node")
            let found = try tags(hidraw, once: events, processed: "add")
            XCTAssertEqual(found.contains(":uaccess:"), granted, "045e:\(String(product, radix: 16)) \(hidraw): \(found)")
        }
        for node in [UHIDDevice.path, UInputGamepad.path] {
            let events = try UdevEvents(subsystems: ["misc"])
            try udevadm(["trigger", "--action=change", node])
            let found = try tags(node, once: events, processed: "change")
            XCTAssertTrue(found.contains(":uaccess:"), "\(node): \(found)")
        }
    }

    /// Every family's emulated pad, by its driver's own model (Valve's included): its hidraw node
    /// and each of its evdev nodes get uaccess (forward holds the nodes no joystick rule opens).
    func testEveryFamilysPadGetsUaccessOnItsHidrawAndEvdevNodes() throws {
        var walked: [String] = []
        for driver in PadDrivers.all {
            for model in driver.emulatedModels where model.throughUHID {
                let emulated = try driver.emulate(model, bus: .usb, transport: .uhid, onOutput: nil)
                defer { emulated.stop() }
                let pad = eventually(timeout: Self.udevBudget) { () -> Pad? in
                    try? Udev().pads().first { $0.kind == model.kind && $0.phys.hasPrefix(PadPhys.emulated) && $0.hidraw != nil && $0.hasItsInputNodes }
                }
                guard let pad, let hidraw = pad.hidraw else { XCTFail("\(model.name): no pad with a hidraw node"); continue }
                let nodes = [hidraw] + pad.evdev.map(\.path)
                let untagged = eventually(timeout: Self.udevBudget) { () -> [String]? in
                    let missing = nodes.filter { node in
                        !((try? self.udevadm(["info", "--query=property", "--name=\(node)"])) ?? "").contains(":uaccess:")
                    }
                    return missing.isEmpty ? [] : nil
                }
                XCTAssertEqual(untagged, [], "\(model.name) \(pad.vidpid): nodes without uaccess among \(nodes)")
                walked.append("\(model.name) \(pad.vidpid) \(nodes.count) nodes")
            }
        }
        print("udev rules reached: \(walked.joined(separator: "; "))")
        XCTAssertTrue(walked.contains { $0.hasPrefix("steam-deck ") } && walked.contains { $0.hasPrefix("steam-controller ") }, "Valve's pads: \(walked)")
    }

    /// Until udevd applies the installed rules: `udevadm control --reload` returns before udevd
    /// has loaded them, and a loaded 6.12 guest processed three pads' add events on the old rules
    /// (no tags at all) while /dev/uhid, 4 s later, had its uaccess. Told by /dev/uhid's own tag
    /// after a change event, within the budget.
    private static func waitForTheRules() throws {
        let began = MonotonicInstant.now
        repeat {
            let events = try UdevEvents(subsystems: ["misc"])
            try udevadm(["trigger", "--action=change", UHIDDevice.path])
            let name = URL(fileURLWithPath: UHIDDevice.path).lastPathComponent
            if events.wait(timeout: .seconds(5), { $0.action == "change" && $0.syspath.hasSuffix("/" + name) }),
               try udevadm(["info", "--query=property", "--name=\(UHIDDevice.path)"]).contains(":uaccess:") {
                print("udevd applied the installed rules \(MonotonicInstant.now - began) after the reload")
                return
            }
            usleep(200_000)
        } while MonotonicInstant.now - began < Self.udevBudget
        XCTFail("udevd did not apply the installed rules within \(Self.udevBudget) of the reload")
    }

    /// The node's udev tags, read once udevd has announced that it finished `action` for it: udevd
    /// sends its event after the rules ran and its database was written, whether or not any rule
    /// matched (a node no rule touches never gets USEC_INITIALIZED, so that cannot be waited for).
    private func tags(_ node: String, once events: UdevEvents, processed action: String) throws -> String {
        let name = URL(fileURLWithPath: node).lastPathComponent
        XCTAssertTrue(events.wait(timeout: Self.udevBudget) { $0.action == action && $0.syspath.hasSuffix("/" + name) },
                      "udevd sent no '\(action)' event for \(node) within \(Self.udevBudget)")
        let properties = try udevadm(["info", "--query=property", "--name=\(node)"])
        return properties.split(separator: "\n").filter { $0.hasPrefix("TAGS=") || $0.hasPrefix("CURRENT_TAGS=") }.joined(separator: " ")
    }

    @discardableResult
    func udevadm(_ arguments: [String]) throws -> String { try Self.udevadm(arguments) }

    @discardableResult
    static func udevadm(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/udevadm")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw DevicesMissing(description: "udevadm \(arguments.joined(separator: " ")) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// udevd's events (its "udev" netlink source: sent once a device's rules have run), kept from
/// creation on so that a caller can create a device and then wait for its event.
final class UdevEvents {
    private let monitor: UdevMonitor
    private var seen: [UdevMonitor.Event] = []

    init(subsystems: [String] = Udev.subsystems) throws {
        guard FileManager.default.fileExists(atPath: "/run/udev/control") else {
            throw DevicesMissing(description: "udevd is not running (no /run/udev/control): its events are what this test waits for")
        }
        monitor = try UdevMonitor(try Udev(), subsystems: subsystems)
    }

    /// True once an event matching `match` has arrived (now or before), false at the deadline.
    func wait(timeout: Duration, file: StaticString = #fileID, line: UInt = #line, _ match: (UdevMonitor.Event) -> Bool) -> Bool {
        let deadline = MonotonicInstant.now + timeout
        while true {
            seen += monitor.drain()
            if seen.contains(where: match) { return true }
            let left = deadline - MonotonicInstant.now
            guard left > .zero else { reportExpiredWait(timeout, file: file, line: line); return false }
            _ = Poll.wait([monitor.descriptor], timeout: left)
        }
    }
}
