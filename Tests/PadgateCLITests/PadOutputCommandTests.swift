import Foundation
import PadgateRunner
import TestDecoders
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

/// `padgate haptics --dry-run` prints the Bluetooth reports a tone becomes, read here by a decoder
/// written from the documented layout: CRC, sequence and counter in order, the tone's level and
/// frequency in both coils, and the right number of reports for its length.
final class HapticsDryRunTests: XCTestCase {
    func testAToneBecomesReportsThatReadBackAsThatTone() throws {
        let run = try padgate(["haptics", "--tone", "300", "--for", "213ms", "--amplitude", "0.5", "--dry-run"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let reports = try run.stdout.split(separator: "\n").map { line in
            try DualSenseHapticsReader.decode(stride(from: 0, to: line.count, by: 2).map { i -> UInt8 in
                let start = line.index(line.startIndex, offsetBy: i)
                return UInt8(line[start..<line.index(start, offsetBy: 2)], radix: 16)!
            })
        }
        // 213 ms at 3 kHz is 639 frames: 19 full reports and one of 31 frames.
        XCTAssertEqual(reports.count, 20)
        XCTAssertEqual(reports.map(\.counter), (0..<20).map { UInt8($0) })
        XCTAssertEqual(reports.map(\.sequence), (0..<20).map { UInt8($0 % 16) })
        let left = reports.flatMap(\.left), right = reports.flatMap(\.right)
        XCTAssertEqual(left, right, "a tone plays on both coils")
        XCTAssertEqual(left.suffix(1), [0], "the short last report is padded with silence")
        let peak = left.map { abs(Int($0)) }.max() ?? 0
        XCTAssertTrue((60...64).contains(peak), "half of 127 at 300 Hz (a 0.984 box filter): \(peak)")
        // Ten periods of 300 Hz are 100 samples at 3 kHz: the signal repeats with that period.
        let body = Array(left.prefix(600))
        XCTAssertLessThanOrEqual(zip(body, body.dropFirst(100)).map { abs(Int($0) - Int($1)) }.max() ?? 99, 1)
        XCTAssertGreaterThan(zip(body, body.dropFirst(5)).map { abs(Int($0) - Int($1)) }.max() ?? 0, 10, "and not a shorter one")
    }
}
