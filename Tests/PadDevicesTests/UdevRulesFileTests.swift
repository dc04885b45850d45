import Foundation
import HIDCodecs
import PadDevices
@testable import PadFamilies
import XCTest

/// udev/70-padgate.rules against the families' own ids: the file is what `padgate udev-rules`
/// makes, and every id of the one table is in it. The rules applied by a real udevd are
/// `UdevRulesTests`' (the guest's).
final class UdevRulesFileTests: XCTestCase {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("udev/\(UdevRules.fileName)")

    func testTheRulesFileIsTheOneTheFamiliesMake() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        XCTAssertEqual(text, UdevRules.text(), "udev/70-padgate.rules is out of date: make udev-rules")
    }

    /// Read from the file as udev would match it, not from the generator: a family whose id is
    /// missing fails here whatever made the file.
    func testEveryFamilysIdsOpenTheirHidrawAndEvdevNodes() throws {
        let grants = try String(contentsOf: Self.file, encoding: .utf8).split(separator: "\n")
            .filter { !$0.hasPrefix("#") && $0.contains("KERNEL==\"hidraw*|event*\"") && $0.contains("TAG+=\"uaccess\"") }
        var checked = 0
        for kind in PadKind.allCases where kind != .generic {
            let driver = PadDrivers.driver(for: kind)
            for row in kind.ids {
                // A vendor-wide row (Microsoft's) is granted product by product, by its family.
                let products = row.product.map { [$0] } ?? driver.openedProducts.filter { $0.vendor == row.vendor }.map(\.product)
                XCTAssertFalse(products.isEmpty, "\(kind) grants no product of vendor \(String(format: "%04x", row.vendor))")
                for product in products {
                    let name = String(format: "*:%04X:%04X.*", row.vendor, product)
                    XCTAssertTrue(grants.contains { $0.contains(name) }, "\(kind) \(name) is not in udev/70-padgate.rules")
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 18, "Sony 5, Nintendo 1, Microsoft 8, Valve 5")
        for valve in ["*:28DE:1205.*", "*:28DE:1302.*", "*:28DE:1303.*", "*:28DE:1304.*", "*:28DE:1305.*"] {
            XCTAssertTrue(grants.contains { $0.contains(valve) }, valve)
        }
        XCTAssertFalse(grants.contains { $0.contains("*:045E:0750.*") || $0.contains("045E:*") }, "no Microsoft keyboard, no vendor-wide match")
    }

    /// The shell test the rule runs on a USB pad's node, run here on status files as vhci-hcd
    /// writes them: only the port padgate's host marked is a host pad.
    func testAUSBHostPadIsToldByPadgatesMarkOnItsPort() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-vhci-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try """
            hub port sta spd dev      sockfd local_busid
            hs  0000 006 003 70680001 000005 3-1
            hs  0001 006 003 70650002 000007 3-2
            hs  0002 006 003 00030004 000009 3-3
            hs  0003 004 000 00000000 000000 0-0

            """.write(to: directory.appendingPathComponent("status"), atomically: true, encoding: .utf8)
        try "hub port sta spd dev      sockfd local_busid\nhs  0008 006 003 70680009 000011 5-1\n"
            .write(to: directory.appendingPathComponent("status.1"), atomically: true, encoding: .utf8)
        let rule = UdevRules.usbHostPadTest(directory: directory.path)
        // udev's escapes undone, the program and its arguments as udev splits them.
        let unescaped = rule.replacingOccurrences(of: "$$", with: "$").replacingOccurrences(of: "%%", with: "%")
        let script = try XCTUnwrap(unescaped.components(separatedBy: "-c '").last?.dropLast(2))
        XCTAssertFalse(script.contains("\""), "a double quote would end udev's value")
        func isHostPad(_ devpath: String) throws -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", String(script)]
            process.environment = ["DEVPATH": devpath, "PATH": "/usr/bin:/bin"]
            process.currentDirectoryURL = directory  // globbing is off for the pattern: no file may stand in for it
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        let node = "/3-1:1.3/0003:054C:0CE6.0005/input/input12/event10"
        XCTAssertTrue(try isHostPad("/devices/platform/vhci_hcd.0/usb3/3-1" + node), "the host's mark, 7068")
        XCTAssertFalse(try isHostPad("/devices/platform/vhci_hcd.0/usb3/3-2/3-2:1.3/0003:054C:0CE6.0006/input/input13/event11"), "padgate emulate's mark, 7065")
        XCTAssertFalse(try isHostPad("/devices/platform/vhci_hcd.0/usb3/3-3/3-3:1.0/0003:054C:0CE6.0007/input/input14/event12"), "someone's usbip device")
        XCTAssertFalse(try isHostPad("/devices/platform/vhci_hcd.0/usb3/3-11/3-11:1.0/0003:054C:0CE6.0008/input/input15/event13"), "3-1 is no prefix of 3-11")
        XCTAssertTrue(try isHostPad("/devices/platform/vhci_hcd.1/usb5/5-1/5-1:1.3/0003:054C:0CE6.0009/input/input16/event14"), "a second controller's status file")
    }
}
