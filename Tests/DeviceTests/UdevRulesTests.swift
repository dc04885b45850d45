import Foundation
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
        let ours = try Data(contentsOf: Self.rules)
        if ProcessInfo.processInfo.environment["PADGATE_IN_GUEST"] == "1" {
            // The guest's root is a throw-away overlay: install, as `make install-udev` would.
            try FileManager.default.createDirectory(at: Self.installed.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: Self.installed)
            try ours.write(to: Self.installed)
            try udevadm(["control", "--reload"])
        } else if (try? Data(contentsOf: Self.installed)) != ours {
            try skipLoudly("\(Self.installed.path) is not this checkout's udev/70-padgate.rules (sudo make install-udev)")
        }
    }

    func testSupportedPadsAndVirtualDeviceInterfacesGetUaccess() throws {
        for bus in VirtualDualSense.Bus.allCases {
            let pad = try VirtualDualSense(bus: bus)
            defer { pad.stop() }
            let hidraw = try XCTUnwrap(padFor(pad, udev: Udev(), timeout: Self.udevBudget)?.hidraw, "\(bus) DualSense has no hidraw node")
            let found = try tags(hidraw, until: { $0.contains(":uaccess:") })
            XCTAssertTrue(found.contains(":uaccess:"), "\(bus) DualSense \(hidraw): \(found)")
        }
        let xboxDescriptor = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent(
            "Tests/HIDCodecsTests/Fixtures/descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin")))
        // The same gamepad descriptor under an Xbox One S id, and under a Microsoft keyboard's id.
        for (product, granted) in [(UInt16(0x02fd), true), (UInt16(0x0750), false)] {
            let uniq = "padgate-rules-\(String(product, radix: 16))"
            let device = try UHIDDevice()
            try device.create(UHIDDevice.Identity(name: "padgate rules test \(uniq)", uniq: uniq, bus: .bluetooth,
                                                  vendorID: 0x045e, productID: product), descriptor: xboxDescriptor)
            defer { try? device.destroy() }
            let hidraw = try XCTUnwrap(eventually(timeout: Self.udevBudget) { try? Udev().pads().first { $0.uniq == uniq }?.hidraw }, "045e:\(String(product, radix: 16)) has no hidraw node")
            let found = try tags(hidraw, until: { granted ? $0.contains(":uaccess:") : true })
            XCTAssertEqual(found.contains(":uaccess:"), granted, "045e:\(String(product, radix: 16)) \(hidraw): \(found)")
        }
        for node in [UHIDDevice.path, UInputGamepad.path] {
            _ = try? udevadm(["trigger", "--action=change", node])
            let found = try tags(node, until: { $0.contains(":uaccess:") })
            XCTAssertTrue(found.contains(":uaccess:"), "\(node): \(found)")
        }
    }

    /// The node's udev tags once udevd has processed it (USEC_INITIALIZED is set) and `done` holds,
    /// or as they are after `udevBudget`.
    private func tags(_ node: String, until done: (String) -> Bool) throws -> String {
        var last = ""
        let found = eventually(timeout: Self.udevBudget) { () -> String? in
            guard let properties = try? udevadm(["info", "--query=property", "--name=\(node)"]) else { return nil }
            let lines = properties.split(separator: "\n")
            last = lines.filter { $0.hasPrefix("TAGS=") || $0.hasPrefix("CURRENT_TAGS=") }.joined(separator: " ")
            return lines.contains { $0.hasPrefix("USEC_INITIALIZED=") } && done(last) ? last : nil
        }
        return found ?? last
    }

    @discardableResult
    private func udevadm(_ arguments: [String]) throws -> String {
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
