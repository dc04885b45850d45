import Foundation
import PadDevices
import PadFamilies
import PadgateRunner
import XCTest

/// `padgate doctor` where everything is there (issue 55): the guest with padgate's rules, a pad
/// bound by its driver, a system bus with avahi-daemon on it, is all green, and doctor changes
/// nothing there; a user without access is told, line by line, what to run.
final class DoctorDeviceTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess([UHIDDevice.path, UInputGamepad.path])
        try UdevRulesTests.installTheseRules()
    }

    /// A name a pad gave itself, with a terminal escape and a bidi override in it.
    static let hostileName = "DualSense \u{1b}[2J\u{202e}"

    func testWithEverythingThereEveryCheckIsGreenAndDoctorChangesNothing() throws {
        if let missing = LANRig.missing { try skipLoudly(missing) }
        let pad = try EmulatedPlayStationPad(bus: .usb, name: Self.hostileName)
        defer { pad.stop() }
        XCTAssertNotNil(padFor(pad, udev: try Udev(), timeout: UdevRulesTests.udevBudget), "the emulated DualSense is found")
        let rig = try LANRig()
        defer { rig.down() }
        try rig.startAvahi(.host)
        let environment = rig.environment(.host)
        let text = try padgate(["doctor"], environment: environment, timeLimit: .seconds(120), namespace: rig.namespace(.host))
        print("doctor in the guest (\(SystemProbe.kernelRelease)):\n\(text.stdout)")
        XCTAssertEqual(text.status, 0, text.stdout + text.stderr)
        XCTAssertEqual(text.stdout.split(separator: "\n").last, "all good")
        XCTAssertFalse(text.stdout.contains("\u{1b}") || text.stdout.contains("\u{202e}"), "a pad's name reaches the terminal escaped")

        let json = try padgate(["doctor", "--json"], environment: environment, timeLimit: .seconds(120), namespace: rig.namespace(.host))
        let report = try JSONDecoder().decode(DoctorReport.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(report.problems.map { "\($0.check): \($0.detail)" }, [])
        for name in ["uhid", "uinput", "vhci-hcd", "udevd", "udev rules", "serve port", "system bus", "avahi-daemon"] {
            XCTAssertEqual(report.named(name)?.status, "ok", name)
        }
        let padLine = try XCTUnwrap(report.checks.first { $0.check.hasPrefix("pad ") && $0.detail.contains("DualSense") }, "\(report.checks.map(\.check))")
        XCTAssertEqual(padLine.status, "ok")
        XCTAssertTrue(padLine.detail.contains("bound by hid-playstation"), padLine.detail)

        let (traced, changes, calls) = try SystemChangeTrace.run(["doctor", "--json"], environment: environment, namespace: rig.namespace(.host))
        XCTAssertTrue(traced.stdout.contains("\"failed\" : 0"), traced.stdout + traced.stderr)
        XCTAssertGreaterThan(calls, 20, "strace traced doctor's opens")
        XCTAssertEqual(changes, [], "doctor changed the system")
    }

    /// A user the rules give nothing (no seat, so no uaccess; not root): uhid, uinput and the pad's
    /// nodes fail, each with the command that fixes it, and doctor exits 1.
    func testAUserWithoutAccessIsToldWhatToRunForEachFailure() throws {
        let pad = try EmulatedPlayStationPad(bus: .bluetooth)
        defer { pad.stop() }
        XCTAssertNotNil(padFor(pad, udev: try Udev(), timeout: UdevRulesTests.udevBudget))
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        let run = try padgate(["--reuid=65534", "--regid=65534", "--clear-groups", padgateExecutable.path, "doctor", "--json"],
                              environment: ["HOME": "/nonexistent"], timeLimit: .seconds(120), executable: setpriv)
        XCTAssertEqual(run.status, 1, run.stdout + run.stderr)
        let report = try JSONDecoder().decode(DoctorReport.self, from: Data(run.stdout.utf8))
        for name in ["uhid", "uinput"] {
            let check = try XCTUnwrap(report.named(name))
            XCTAssertEqual(check.status, "failed", "\(name): \(check.detail)")
            XCTAssertTrue(check.detail.contains("may not open it"), check.detail)
            XCTAssertTrue(check.fix?.contains("padgate udev-rules") ?? false, check.fix ?? "no fix")
        }
        let padLine = try XCTUnwrap(report.checks.first { $0.check.hasPrefix("pad ") && $0.detail.contains("DualSense") && !$0.detail.contains("host pad") })
        XCTAssertEqual(padLine.status, "failed", padLine.detail)
        XCTAssertTrue(padLine.detail.contains("may not open /dev/hidraw"), padLine.detail)
        XCTAssertTrue(padLine.fix?.contains("re-plug the pad") ?? false, padLine.fix ?? "no fix")
        for check in report.checks where check.status == "failed" { XCTAssertNotNil(check.fix, "\(check.check) without a fix") }
    }
}
