import Foundation
import HIDCodecs
import PadDevices
import PadFamilies
import PadgateRunner
import XCTest

/// `padgate emulate` makes every family a driver knows, through uhid with the pad's own
/// descriptor, so the kernel's real driver binds it; rumble a program plays on it through that
/// driver (evdev force feedback, or the family's own hidraw report) comes out of `emulate`,
/// read as the family's output report.
final class EmulateEveryFamilyTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testEveryDriverModelIsOffered() {
        let names = Set(PadDrivers.emulatedModels.map(\.name))
        XCTAssertTrue(names.isSuperset(of: ["dualsense", "dualsense-edge", "dualshock4", "switch-pro", "xbox-one", "xbox", "gamepad"]), "\(names)")
        for driver in PadDrivers.all { for kind in driver.kinds { XCTAssertEqual(PadDrivers.driver(for: kind).kinds, driver.kinds, "\(kind) has two drivers") } }
        XCTAssertEqual(Set(PadDrivers.all.flatMap(\.kinds)), Set(PadKind.allCases), "a kind without a driver")
    }

    func testAnEmulatedDualShock4PrintsTheRumbleItsDriverSends() throws {
        try check("dualshock4", kind: .dualShock4, rumble: "rumble low=")
    }

    func testAnEmulatedSwitchProPrintsTheRumbleItsDriverSends() throws {
        try check("switch-pro", kind: .switchPro, rumble: "rumble low=")
    }

    func testAnEmulatedXboxOnePrintsTheRumbleItsReportCarries() throws {
        try check("xbox-one", kind: .xbox, rumble: "rumble strong ")
    }

    func testAnEmulatedEdgeIsAnEdge() throws {
        let emulate = try PadgateProcess(["emulate", "dualsense-edge", "--json", "--duration", "60"], includeStandardError: true)
        defer { emulate.interrupt() }
        let pad = try XCTUnwrap(eventually(timeout: .seconds(15)) { try? Udev().pads().first { $0.kind == .dualSenseEdge && $0.phys.hasPrefix(PadPhys.emulated) && $0.hasItsInputNodes } },
                                "no Edge bound: \(emulate.snapshot().suffix(3))")
        XCTAssertEqual(pad.productID, PadKind.dualSenseEdge.canonicalIDs?.product)
    }

    /// Emulates `model`, finds it bound as `kind`, plays 500 ms of rumble on it with `padgate
    /// rumble`, and waits for `emulate` to print an output report that reads as rumble.
    func check(_ model: String, kind: PadKind, rumble: String, file: StaticString = #filePath, line: UInt = #line,
               _ playing: @escaping (String) -> Bool = { _ in true }) throws {
        // Drivers send rumble fields when nothing plays too (hid-nintendo's frames all the time,
        // hid-sony's with every LED report): the motors on is what was played.
        let playing = { (line: String) in !line.contains("low=0 high=0") && !line.contains("strong 0 weak 0") && playing(line) }
        let emulate = try PadgateProcess(["emulate", model, "--json", "--duration", "60"], includeStandardError: true)
        defer { emulate.interrupt() }
        let pad = try XCTUnwrap(eventually(timeout: .seconds(15)) { try? Udev().pads().first { $0.kind == kind && $0.phys.hasPrefix(PadPhys.emulated) && $0.hasItsInputNodes } },
                                "no \(kind) bound: \(emulate.snapshot().suffix(3))", file: file, line: line)
        XCTAssertTrue(emulate.snapshot().contains { $0.contains("is up") }, "\(emulate.snapshot().suffix(3))", file: file, line: line)
        let run = try padgate(["rumble", "200", "100", "--for", "500ms", "--pad", try XCTUnwrap(pad.gamepadNode?.path)])
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        XCTAssertNotNil(emulate.waitForLine { $0.contains("\"summary\":\"\(rumble)") && playing($0) },
                        "no rumble printed; saw \(emulate.snapshot().suffix(4))", file: file, line: line)
    }
}
