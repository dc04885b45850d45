import Foundation
import PadgateRunner
import XCTest

/// The output commands with --dry-run (no pad needed): their numbers are read as dualsensectl reads them,
/// strtol(s, NULL, 0), so hex and octal spellings give the same report as decimal.
final class PadOutputCommandTests: XCTestCase {
    func dryRun(_ arguments: [String]) throws -> String {
        let run = try padgate(arguments + ["--dry-run"])
        XCTAssertEqual(run.status, 0, "\(arguments): \(run.stderr)")
        return run.stdout
    }

    func testNumbersAcceptHexAndOctalLikeDualsensectl() throws {
        XCTAssertEqual(try dryRun(["lightbar", "0x10", "020", "16", "0xff"]), try dryRun(["lightbar", "16", "16", "16", "255"]))
        XCTAssertEqual(try dryRun(["player-leds", "03"]), try dryRun(["player-leds", "3"]))
        XCTAssertEqual(try dryRun(["rumble", "0xc8", "0144"]), try dryRun(["rumble", "200", "100"]))
        XCTAssertEqual(try dryRun(["trigger", "left", "weapon", "0x2", "05", "010"]), try dryRun(["trigger", "left", "weapon", "2", "5", "8"]))
        XCTAssertNotEqual(try dryRun(["lightbar", "0x10", "0", "0"]), try dryRun(["lightbar", "10", "0", "0"]))

        let refused = try padgate(["lightbar", "08", "0", "0", "--dry-run"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("RED must be a number from 0 to 255 (decimal, 0x-prefixed hex or 0-prefixed octal), got '08'"), refused.stderr)
        XCTAssertNotEqual(try padgate(["player-leds", "0x8", "--dry-run"]).status, 0, "players are 0-7")
    }
}
