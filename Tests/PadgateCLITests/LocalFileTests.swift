import Foundation
import Glibc
import PadgateRunner
import PadSystem
import XCTest

/// Files a person names, as the commands read and write them (issue 39): `--plot` and `-o` never
/// replace what is not a regular file; `haptics FILE.wav` reads only a regular file of bounded size;
/// a name a device gave itself reaches the terminal escaped.
final class LocalFileTests: XCTestCase {
    /// An error that quotes what a file held (a recording's bad byte) reaches the terminal
    /// escaped: every error padgate prints goes through one escaping rule (Padgate.main).
    func testAnErrorQuotingAFilesBytesIsEscaped() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-bad-\(UUID()).hid")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("D: 0\nR: 2 05 01\nE: 0.0 2 z\u{1b}[2J\u{07}\u{202e} 01\n".utf8).write(to: url)
        let run = try padgate(["inspect", url.path], timeLimit: .seconds(30))
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("is not a hex byte"), run.stderr)
        for raw in ["\u{1b}", "\u{07}", "\u{202e}"] { XCTAssertFalse(run.stderr.contains(raw), "raw \(raw.unicodeScalars.first!.value) in: \(run.stderr)") }
        XCTAssertTrue(run.stderr.contains("\\u{1b}[2J"), run.stderr)
    }

    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-local-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func kind(_ path: String) -> UserFile.Kind? {
        var info = stat()
        return stat(path, &info) == 0 ? UserFile.Kind(mode: info.st_mode) : nil
    }

    func recording() throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: CalibrateCommandTests.recordings.path)
        let name = try XCTUnwrap(names.sorted().first { $0.hasPrefix("dualsense_usb") && $0.hasSuffix(".hid") })
        return CalibrateCommandTests.recordings.appendingPathComponent(name).path
    }

    // MARK: --plot

    func testPlotIntoAFIFOReachesItsReader() throws {
        let fifo = directory.appendingPathComponent("plot.svg").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let received = LockedBox<Data?>(nil)
        let reader = Thread { received.withLock { $0 = readToEnd(fifo) } }
        reader.start()
        let run = try padgate(["calibrate", try recording(), "--plot", fifo], timeLimit: .seconds(60))
        XCTAssertEqual(run.status, 0, run.stderr)
        for _ in 0..<500 where received.withLock({ $0 }) == nil { usleep(10_000) }
        let svg = received.withLock { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        XCTAssertTrue(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>\n"), String(svg.prefix(100)))
        XCTAssertEqual(kind(fifo), .fifo, "a FIFO, not a file renamed over it")
    }

    func testPlotIntoADirectoryIsRefused() throws {
        let run = try padgate(["calibrate", try recording(), "--plot", directory.path])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--plot '\(directory.path)' is a directory"), run.stderr)
        XCTAssertEqual(kind(directory.path), .directory)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [], "no temporary file left")
    }

    /// Was: a regular file renamed over the device node, exit 0. The write's error is the answer.
    func testPlotIntoDevFullFailsAndLeavesTheDevice() throws {
        XCTAssertEqual(kind("/dev/full"), .characterDevice)
        let run = try padgate(["calibrate", try recording(), "--plot", "/dev/full"])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("--plot '/dev/full' cannot be written: write: No space left on device"), run.stderr)
        XCTAssertEqual(kind("/dev/full"), .characterDevice)
    }

    func testRecordOutputIntoADirectoryOrAMissingFolderIsRefused() throws {
        let folder = try padgate(["record", "0", "-o", directory.path])
        XCTAssertTrue(folder.stderr.contains("-o '\(directory.path)' is a directory"), folder.stderr)
        let missing = try padgate(["record", "0", "-o", directory.path + "/no/out.hid"])
        XCTAssertTrue(missing.stderr.contains("the folder '\(directory.path)/no' does not exist"), missing.stderr)
    }

    // MARK: haptics FILE.wav

    static func wav(format: Int = 1, bits: Int = 16, frames: Int = 4, extensibleSubformat: Int? = nil) -> Data {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var fmt = le(format, 2) + le(2, 2) + le(48_000, 4) + le(48_000 * 2 * bits / 8, 4) + le(2 * bits / 8, 2) + le(bits, 2)
        if let extensibleSubformat {
            // cbSize, valid bits, channel mask, then the subformat GUID (its tag, then the fixed tail).
            fmt += le(22, 2) + le(bits, 2) + le(3, 4) + le(extensibleSubformat, 2)
                + [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        let data = [UInt8](repeating: 0x10, count: frames * 2 * bits / 8)
        let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le(fmt.count, 4) + fmt + Array("data".utf8) + le(data.count, 4) + data
        return Data(Array("RIFF".utf8) + le(body.count, 4) + body)
    }

    func haptics(_ file: String) throws -> PadgateRun { try padgate(["haptics", file, "--dry-run"], timeLimit: .seconds(20)) }

    /// A sparse 2 GiB file: refused by its size at once (it took 4.2 GB when read first).
    func testAHugeWAVIsRefusedBySizeBeforeItIsRead() throws {
        let path = directory.appendingPathComponent("huge.wav").path
        try Self.wav().write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(truncate(path, 2 << 30), 0)
        let run = try haptics(path)
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("WAV file '\(path)' is 2048 MiB; at most 64 MiB is read"), run.stderr)
        XCTAssertLessThan(run.elapsed, .seconds(10), "read before refused")
    }

    func testADeviceOrAFIFOIsRefusedByWhatItIs() throws {
        let zero = try haptics("/dev/zero")
        XCTAssertNotEqual(zero.status, 0)
        XCTAssertTrue(zero.stderr.contains("'/dev/zero' is a character device, not a regular file"), zero.stderr)
        let fifo = directory.appendingPathComponent("fifo.wav").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let run = try haptics(fifo)
        XCTAssertFalse(run.timedOut, "waited for a writer")
        XCTAssertTrue(run.stderr.contains("is a FIFO, not a regular file"), run.stderr)
    }

    /// Nothing to send is no success: no samples, or a tone of no length.
    func testNothingToPlayIsRefused() throws {
        let empty = directory.appendingPathComponent("empty.wav").path
        try Self.wav(frames: 0).write(to: URL(fileURLWithPath: empty))
        let file = try haptics(empty)
        XCTAssertNotEqual(file.status, 0)
        XCTAssertTrue(file.stderr.contains("its data chunk holds no samples"), file.stderr)
        for length in ["0", "0s", "0ms", "0.1ms"] {
            let tone = try padgate(["haptics", "--tone", "150", "--for", length, "--dry-run"])
            XCTAssertNotEqual(tone.status, 0, length)
            XCTAssertEqual(tone.stdout, "", length)
            XCTAssertTrue(tone.stderr.contains("--for must be more than 0"), tone.stderr)
        }
    }

    /// The message says the limit the command checks (HapticsCommand.maximumLength), not another.
    func testTheLengthLimitIsTheOneChecked() throws {
        for length in ["601s", "4000s"] {
            let run = try padgate(["haptics", "--tone", "150", "--for", length, "--dry-run"])
            XCTAssertNotEqual(run.status, 0)
            XCTAssertTrue(run.stderr.contains("'\(length)' is too long: at most 600 s"), run.stderr)
            XCTAssertFalse(run.stderr.contains("hour"), run.stderr)
        }
        XCTAssertEqual(try padgate(["haptics", "--tone", "150", "--for", "600s", "--dry-run"]).status, 0)
    }

    /// Float samples marked 16-bit would play as PCM noise: refused, plain or extensible.
    func testFloatSamplesMarked16BitAreRefused() throws {
        for (name, bytes) in [("float.wav", Self.wav(format: 3)), ("extensible-float.wav", Self.wav(format: 0xFFFE, extensibleSubformat: 3))] {
            let path = directory.appendingPathComponent(name).path
            try bytes.write(to: URL(fileURLWithPath: path))
            let run = try haptics(path)
            XCTAssertNotEqual(run.status, 0, name)
            XCTAssertTrue(run.stderr.contains("IEEE float samples are not 16-bit PCM"), "\(name): \(run.stderr)")
        }
        let pcm = directory.appendingPathComponent("extensible-pcm.wav").path
        try Self.wav(format: 0xFFFE, extensibleSubformat: 1).write(to: URL(fileURLWithPath: pcm))
        XCTAssertEqual(try haptics(pcm).status, 0)
    }

    // MARK: names from outside

    static let hostile = "\u{1b}[2J\u{07}\u{202e}"

    func assertNothingRaw(_ run: PadgateRun, _ what: String, line: UInt = #line) {
        for output in [run.stdout, run.stderr] {
            for raw in ["\u{1b}", "\u{07}", "\u{202e}"] {
                XCTAssertFalse(output.contains(raw), "\(what): \(raw.unicodeScalars.first!.value) reached the terminal raw: \(output.prefix(300))", line: line)
            }
        }
    }

    /// A pad that calls itself ESC[2J BEL U+202E: `inspect` and `calibrate` print its name escaped.
    func testARecordedDevicesNameIsEscaped() throws {
        let text = try String(contentsOfFile: try recording(), encoding: .utf8)
        let renamed = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("N: ") ? "N: Evil" + Self.hostile + "Pad" : String($0) }.joined(separator: "\n")
        XCTAssertNotEqual(renamed, text, "the recording names its device")
        let path = directory.appendingPathComponent("hostile.hid").path
        try renamed.write(toFile: path, atomically: true, encoding: .utf8)

        let inspect = try padgate(["inspect", path])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(inspect.stdout.contains("Evil\\u{1b}[2J\\u{7}\\u{202e}Pad"), String(inspect.stdout.prefix(300)))
        assertNothingRaw(inspect, "inspect")
        let calibrate = try padgate(["calibrate", path], timeLimit: .seconds(60))
        XCTAssertEqual(calibrate.status, 0, calibrate.stderr)
        XCTAssertTrue(calibrate.stdout.contains("Evil\\u{1b}[2J\\u{7}\\u{202e}Pad"), calibrate.stdout)
        assertNothingRaw(calibrate, "calibrate")
        for json in [try padgate(["inspect", path, "--json"]), try padgate(["calibrate", path, "--json"], timeLimit: .seconds(60))] {
            assertNothingRaw(json, "--json")
        }
    }

    /// `--pad` as typed, echoed back by `haptics` and `record`: escaped.
    func testAPadSelectorIsEchoedEscaped() throws {
        for arguments in [["haptics", "--tone", "150", "--pad", Self.hostile], ["haptics", "--tone", "150", "--pad", "/dev/" + Self.hostile],
                          ["record", Self.hostile], ["record", "/dev/" + Self.hostile, "-o", directory.appendingPathComponent("r.hid").path]] {
            let run = try padgate(arguments)
            XCTAssertNotEqual(run.status, 0, "\(arguments)")
            XCTAssertTrue(run.stderr.contains("\\u{1b}[2J\\u{7}\\u{202e}"), run.stderr)
            assertNothingRaw(run, "\(arguments)")
        }
    }
}

