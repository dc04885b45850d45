import Foundation
import PadgateRunner
import XCTest

/// `padgate doctor` on this machine, whatever it has: every failing line names its fix, the exit
/// status says whether one failed, the text and JSON agree, and it changes nothing (issue 55).
/// The guest's DoctorDeviceTests check the all-green machine and a user without access.
final class DoctorCommandTests: XCTestCase {
    func testEveryFailedCheckNamesItsFixAndTheExitStatusSaysWhetherOneFailed() throws {
        let json = try padgate(["doctor", "--json"], timeLimit: .seconds(60))
        let report = try JSONDecoder().decode(DoctorReport.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(json.status, report.failed > 0 ? 1 : 0, json.stdout + json.stderr)
        XCTAssertEqual(report.failed, report.checks.filter { $0.status == "failed" }.count)
        for name in ["uhid", "uinput", "vhci-hcd", "udevd", "udev rules", "service user", "serve port", "system bus", "avahi-daemon", "firewall", "kernel"] {
            XCTAssertNotNil(report.named(name), "doctor checks \(name)")
        }
        for check in report.checks where check.status == "failed" {
            XCTAssertFalse(check.fix?.isEmpty ?? true, "\(check.check) failed without a fix: \(check.detail)")
        }
        if !FileManager.default.fileExists(atPath: "/dev/uhid") {
            let uhid = try XCTUnwrap(report.named("uhid"))
            XCTAssertEqual(uhid.status, "failed")
            XCTAssertTrue(uhid.detail.contains("/dev/uhid is missing"), uhid.detail)
            print("doctor on this machine (no /dev/uhid):")
        }
        let text = try padgate(["doctor"], timeLimit: .seconds(60))
        print(text.stdout)
        XCTAssertEqual(text.status, json.status)
        let summary = report.failed == 0 && report.warnings == 0 ? "all good" : "\(report.failed) failed, \(report.warnings) warning\(report.warnings == 1 ? "" : "s")"
        XCTAssertEqual(text.stdout.split(separator: "\n").last.map(String.init), summary)
        for check in report.checks where check.status == "failed" {
            XCTAssertTrue(text.stdout.contains("FAILED  \(check.check)"), "the text names \(check.check)")
        }
    }

    /// Every file doctor opens, it opens to read; it creates, removes, renames, binds and loads nothing.
    func testDoctorChangesNothing() throws {
        let (run, changes, calls) = try SystemChangeTrace.run(["doctor", "--json"])
        XCTAssertFalse(run.signalled || run.timedOut, run.stderr)
        XCTAssertTrue(run.stdout.contains("\"checks\""), run.stdout + run.stderr)
        XCTAssertGreaterThan(calls, 20, "strace traced doctor's opens")
        XCTAssertEqual(changes, [], "doctor changed the system")
    }
}
