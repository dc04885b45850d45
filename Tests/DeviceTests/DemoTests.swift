import Foundation
import PadgateRunner
import XCTest

/// `padgate demo` as `make demo` runs it. The in-process variant needs no device and runs
/// everywhere; the kernel variant (uhid, hid-playstation) runs in the test guest.
final class DemoTests: XCTestCase {
    func testInProcessDemoForwardsInputAndPlaysTheGameFeedbackBack() throws {
        try checkDemo(devices: "in-process", stickUnits: "left 32767,0")
    }

    func testKernelDemoForwardsInputAndPlaysTheGameFeedbackBack() throws {
        try requireDeviceAccess()
        try checkDemo(devices: "kernel", stickUnits: "left 255,128")
    }

    func checkDemo(devices: String, stickUnits: String) throws {
        let run = try padgate(["demo", "--devices", devices, "--duration", "6"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let host = lines.filter { $0.hasPrefix("host ") }, back = lines.filter { $0.hasPrefix("back ") }
        // The script's tour reaches the host's virtual pad: a button, the d-pad, a stick, touch.
        XCTAssertTrue(host.contains { $0.contains("buttons [south]") }, "\(host)")
        XCTAssertTrue(host.contains { $0.contains("dpad-up-right") }, "\(host)")
        XCTAssertTrue(host.contains { $0.contains(stickUnits) }, "\(host)")
        XCTAssertTrue(host.contains { $0.contains("touch 300,500") }, "\(host)")
        // The host's game feedback arrives at the pad as output reports, decoded back.
        XCTAssertTrue(back.contains { $0.contains("lightbar 0,64,255") && $0.contains("player LEDs 00100") }, "\(back)")
        XCTAssertTrue(back.contains { $0.contains("rumble 200/60") }, "\(back)")
        XCTAssertTrue(back.contains { $0.contains("R2 feedback(position: 3, strength: 8)") }, "\(back)")
        XCTAssertTrue(run.stdout.contains(" 0 rejected"), run.stdout)
    }
}
