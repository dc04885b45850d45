import Foundation
import PadgateRunner
import XCTest

/// `padgate inspect FILE` errors name the file and what is wrong with it.
final class InspectCommandTests: XCTestCase {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-inspect-\(UUID())")
    override func setUpWithError() throws { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func testMissingFileIsSaidToBeMissing() throws {
        for missing in ["x.hid", directory.appendingPathComponent("gone.hid").path, "recordings/x.hid"] {
            let run = try padgate(["inspect", missing])
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.stderr.contains("recording '\(missing)' does not exist"), run.stderr)
            XCTAssertFalse(run.stderr.contains("is not a pad"), run.stderr)
        }
        let descriptor = try padgate(["inspect", "--descriptor", "nothing.bin"])
        XCTAssertTrue(descriptor.stderr.contains("descriptor file 'nothing.bin' does not exist"), descriptor.stderr)
        XCTAssertTrue(try padgate(["inspect", directory.path]).stderr.contains("is a directory, not a regular file"))
    }

    func testNonUTF8FileNamesTheFileAndTheByte() throws {
        let file = directory.appendingPathComponent("binary.hid")
        try Data([0x23, 0x20, 0x6F, 0x6B, 0x0A, 0xFF, 0x00]).write(to: file)
        let run = try padgate(["inspect", file.path])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("'\(file.path)' is not a hid-recorder recording: it is not UTF-8 text (byte 5 is 0xff); a raw report descriptor goes with --descriptor"), run.stderr)
        XCTAssertFalse(run.stderr.contains("NSCocoaErrorDomain"), run.stderr)
    }

    /// A selector that names a pad still goes to the live path (no pad here: the error says so).
    func testPadSelectorsAreStillPads() throws {
        let run = try padgate(["inspect", "054c:0ce6", "--duration", "0.1"])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertFalse(run.stderr.contains("does not exist"), run.stderr)
    }

    /// Nothing to decode is an error, not a silent success.
    func testAnEmptyRecordingIsAnError() throws {
        let file = directory.appendingPathComponent("empty.hid")
        try Data().write(to: file)
        let run = try padgate(["inspect", file.path])
        XCTAssertEqual(run.status, 1, run.stdout)
        XCTAssertTrue(run.stderr.contains("holds no device and no report"), run.stderr)
        XCTAssertEqual(run.stdout, "")
    }
}
