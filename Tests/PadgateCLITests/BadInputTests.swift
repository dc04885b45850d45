import Foundation
import PadgateRunner
import XCTest

/// Bad input to every subcommand, as a person or a script could give it: missing, empty, huge,
/// negative, NaN, not UTF-8, the wrong type, a directory, a device or pipe, a node that does not
/// exist. Each must end on its own within seconds with one clear error line (or the documented
/// success), never a trap, a backtrace or a hang. Runs the built binary; needs no device (on a
/// machine without pads, a command that needs one must say so and stop).
final class BadInputTests: XCTestCase {
    enum Outcome {
        /// Non-zero exit; the error line contains this text.
        case refused(String)
        /// Exit 0; standard output contains this text.
        case succeeds(String)
    }

    struct Case {
        var arguments: [String]
        var outcome: Outcome
        var line: UInt
        init(_ arguments: [String], _ outcome: Outcome, line: UInt = #line) {
            self.arguments = arguments; self.outcome = outcome; self.line = line
        }
    }

    /// `{dir}` is a folder of bad files this test makes (see `makeFiles`).
    static let cases: [Case] = [
        // list
        Case(["list", "extra"], .refused("Unexpected argument 'extra'")),
        Case(["list", "--json", "--bogus"], .refused("Unknown option '--bogus'")),
        // watch
        Case(["watch", ""], .refused("'' is not a pad")),
        Case(["watch", "/dev/hidraw999"], .refused("/dev/hidraw999 does not exist")),
        Case(["watch", "{dir}"], .refused("is not a device node")),
        Case(["watch", "0", "--duration", "nan"], .refused("'nan' is not a number of seconds")),
        Case(["watch", "0", "--duration", "-1"], .refused("more than 0 and at most 31536000")),
        Case(["watch", "0", "--duration", "1e400"], .refused("is not a number of seconds")),
        Case(["watch", "99999999999999999999999"], .refused("is not a pad")),
        // haptics
        Case(["haptics"], .refused("give either FILE.wav or --tone HZ")),
        Case(["haptics", "--tone", "5000", "--dry-run"], .refused("--tone must be from 1 to 1500 Hz")),
        Case(["haptics", "--tone", "150", "--amplitude", "2", "--dry-run"], .refused("--amplitude must be from 0 to 1")),
        Case(["haptics", "--tone", "150", "--for", "1h", "--dry-run"], .refused("is not a duration")),
        Case(["haptics", "--tone", "150", "--for", "3000s", "--dry-run"], .refused("too long: at most 600 s")),
        Case(["haptics", "{dir}/wedge.script", "--dry-run"], .refused("not a WAV file")),
        Case(["haptics", "--tone", "150", "--dry-run", "--bus", "usb"], .refused("audio card's channels 3 and 4")),
        // emulate
        Case(["emulate"], .refused("Missing expected argument '<model>'")),
        Case(["emulate", "ps3"], .refused("'ps3' is invalid")),
        Case(["emulate", "dualsense", "--bus", "serial"], .refused("'serial' is invalid")),
        Case(["emulate", "dualsense", "--duration", "inf"], .refused("'inf' is not a number of seconds")),
        Case(["emulate", "dualsense", "--duration", "0"], .refused("more than 0")),
        Case(["emulate", "dualsense", "--script", "{dir}/wedge.script"], .refused("script line 2: 'wait' needs milliseconds from 0 to 3600000")),
        Case(["emulate", "dualsense", "--script", "{dir}/no-time.script"], .refused("script line 3: 'repeat' starts over at once")),
        Case(["emulate", "dualsense", "--script", "{dir}/negative-wait.script"], .refused("script line 1: 'wait' needs milliseconds from 0 to 3600000")),
        Case(["emulate", "dualsense", "--script", "{dir}/huge-wait.script"], .refused("from 0 to 3600000 as argument 1, not '9223372036854775808'")),
        Case(["emulate", "dualsense", "--script", "{dir}/not-utf8"], .refused("is not UTF-8 text")),
        Case(["emulate", "dualsense", "--script", "{dir}"], .refused("is a directory")),
        Case(["emulate", "dualsense", "--script", "/dev/zero"], .refused("not a regular file")),
        Case(["emulate", "dualsense", "--script", "{dir}/fifo"], .refused("not a regular file")),
        Case(["emulate", "dualsense", "--script", "{dir}/missing"], .refused("does not exist")),
        Case(["emulate", "dualsense", "--script", "{dir}/empty", "--replay", "{dir}/empty"], .refused("not both")),
        Case(["emulate", "dualsense", "--replay", "{dir}/negative-device.hid"], .refused("D: needs a device index from 0 to 255")),
        Case(["emulate", "dualsense", "--replay", "{dir}/huge"], .refused("line 1")),
        Case(["emulate", "xbox", "--script", "{dir}/empty"], .refused("drive an emulated DualSense")),
        // record
        Case(["record"], .refused("Missing expected argument '<pad>'")),
        Case(["record", "", "-o", "{dir}/out.hid"], .refused("'' is not a pad")),
        Case(["record", "0", "-o", "{dir}"], .refused("is a directory")),
        Case(["record", "0", "-o", "{dir}/missing/out.hid"], .refused("does not exist")),
        Case(["record", "/dev/input/event999"], .refused("/dev/input/event999 does not exist")),
        // inspect
        Case(["inspect"], .refused("give a recording to decode")),
        Case(["inspect", ""], .refused("does not exist")),
        Case(["inspect", "{dir}/not-utf8"], .refused("is not UTF-8 text")),
        Case(["inspect", "{dir}/negative-device.hid"], .refused("line 1: D: needs a device index from 0 to 255")),
        Case(["inspect", "{dir}/huge"], .refused("line 1")),
        Case(["inspect", "{dir}/empty"], .refused("holds no device and no report")),
        Case(["inspect", "/dev/zero"], .refused("no game controller found for '/dev/zero'")),
        Case(["inspect", "{dir}/fifo"], .refused("not a regular file")),
        Case(["inspect", "--descriptor", "{dir}/not-utf8"], .refused("unknown item tag 0xfc at byte 0")),
        Case(["inspect", "--descriptor", "{dir}"], .refused("is a directory")),
        Case(["inspect", "--descriptor", "/dev/urandom"], .refused("not a regular file")),
        Case(["inspect", "--descriptor", "{dir}/empty"], .refused("the report descriptor is empty")),
        Case(["inspect", "0", "--duration", "-3"], .refused("more than 0")),
        // calibrate
        Case(["calibrate"], .refused("give a PAD to measure")),
        Case(["calibrate", "--feature-report", ""], .refused("--feature-report is empty")),
        Case(["calibrate", "--feature-report", "zz"], .refused("is not a hex digit")),
        Case(["calibrate", "--feature-report", "05"], .refused("it needs at least")),
        Case(["calibrate", "--feature-report", String(repeating: "ff", count: 60_000)], .refused("")),
        Case(["calibrate", "--feature-report", "05", "--model", "nes"], .refused("'nes' is invalid")),
        Case(["calibrate", "0", "--seconds", "nan"], .refused("'nan' is not a number of seconds")),
        Case(["calibrate", "0", "--seconds", "1000"], .refused("--seconds must be from 0.5 to 60")),
        Case(["calibrate", "0", "--feature-report", "05"], .refused("not both")),
        // serve
        Case(["serve", "--port", "70000"], .refused("'70000' is invalid")),
        Case(["serve", "--port", "-1"], .refused("'-1' is invalid")),
        Case(["serve", "--max-clients", "-1"], .refused("--max-clients must be within 1-1024")),
        Case(["serve", "--max-clients", "0"], .refused("--max-clients must be within 1-1024")),
        Case(["serve", "--max-pads", "999999"], .refused("--max-pads must be within")),
        Case(["serve", "--pad-grace", "nan"], .refused("'nan' is not a number of seconds")),
        Case(["serve", "--pad-grace", "1"], .refused("--pad-grace must be within")),
        Case(["serve", "--address", "999.1.1.1", "--duration", "1"], .refused("'999.1.1.1' is not an IP address")),
        Case(["serve", "--address", "", "--duration", "1"], .refused("is not an IP address")),
        Case(["serve", "--virtual", "nes"], .refused("the kinds are auto, dualsense, dualsense-usb, xbox, usb, uhid, in-process")),
        Case(["serve", "--show", "steam-controller=nes"], .refused("--show: no pad kind is shown as 'steam-controller=nes': the choices are steam-controller=deck, steam-controller=itself")),
        Case(["serve", "--show", "dualsense=itself"], .refused("the choices are steam-controller=deck")),
        Case(["serve", "--show", "\u{1b}[2J"], .refused("no pad kind is shown as '\\u{1b}[2J'")),
        Case(["serve", "--show", "steam-controller=itself", "--virtual", "xbox"], .refused("--show applies to --virtual auto, usb or uhid")),
        Case(["serve", "--duration", "-1"], .refused("more than 0")),
        Case(["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "0.5"], .succeeds("")),
        // forward and pair
        // Without HOST, forward and pair look on the LAN: no daemon, or no suitable host, is one line either way.
        Case(["forward"], .refused("the LAN")),
        Case(["forward", ""], .refused("is invalid for '<host>'")),
        Case(["forward", "a b c"], .refused("is invalid for '<host>'")),
        Case(["forward", "127.0.0.1:0"], .refused("is invalid for '<host>'")),
        Case(["forward", "127.0.0.1:99999"], .refused("is invalid for '<host>'")),
        Case(["forward", "127.0.0.1:abc"], .refused("is invalid for '<host>'")),
        Case(["forward", "127.0.0.1", "--duration", "nan"], .refused("'nan' is not a number of seconds")),
        Case(["forward", "127.0.0.1:9", "--pad", "99", "--duration", "1"], .succeeds("")),
        Case(["pair", "--pin", "123456"], .refused("the LAN")),
        Case(["pair", "127.0.0.1", "--pin", "12345"], .refused("the PIN is the 6 digits")),
        Case(["pair", "127.0.0.1", "--pin", "-123456"], .refused("")),
        Case(["pair", "127.0.0.1", "--pin", "１２３４５６"], .refused("the PIN is the 6 digits")),
        Case(["pair", "127.0.0.1:9", "--pin", "123456"], .refused("cannot connect to 127.0.0.1:9")),
        // hosts
        Case(["hosts", "forget"], .refused("Missing expected argument '<host>'")),
        Case(["hosts", "forget", "nowhere.invalid"], .refused("no pinned host 'nowhere.invalid'")),
        Case(["hosts", "--json", "--bogus"], .refused("Unknown option '--bogus'")),
        Case(["list", "--log-level", "loud"], .refused("'loud' is invalid for '--log-level <level>': the levels are trace")),
        // host (no host runs under this test's runtime directory)
        Case(["host", "revoke"], .refused("Missing expected argument '<client>'")),
        Case(["host", "status"], .refused("cannot reach a running host at")),
        Case(["host", "clients", "--json", "--bogus"], .refused("Unknown option '--bogus'")),
        // demo
        Case(["demo", "--devices", "gpu"], .refused("'gpu' is invalid")),
        Case(["demo", "--duration", "0"], .refused("more than 0")),
        Case(["demo", "--duration", "1e9"], .refused("more than 0 and at most")),
        Case(["demo", "--script", ""], .refused("does not exist")),
        Case(["demo", "--devices", "in-process", "--script", "{dir}/wedge.script", "--duration", "2"], .refused("script line 2: 'wait' needs milliseconds")),
        Case(["demo", "--devices", "in-process", "--script", "{dir}/no-time.script", "--duration", "2"], .refused("script line 3: 'repeat' starts over at once")),
        Case(["demo", "--devices", "in-process", "--script", "{dir}/after-repeat.script"], .refused("script line 3: 'repeat' on line 2 starts over")),
        // lights, triggers, rumble (dry runs need no pad)
        Case(["lightbar", "1", "2"], .refused("lightbar takes R G B")),
        Case(["lightbar", "256", "0", "0", "--dry-run", "--bus", "usb"], .refused("RED must be a number from 0 to 255")),
        Case(["lightbar", "-1", "0", "0", "--dry-run", "--bus", "usb"], .refused("RED must be a number from 0 to 255")),
        Case(["lightbar", "nan", "0", "0", "--dry-run", "--bus", "usb"], .refused("got 'nan'")),
        Case(["lightbar", "1", "2", "3", "--dry-run", "--bus", "usb"], .succeeds("0200")),
        Case(["lightbar", "1", "2", "3", "--pad", "/dev/hidraw999"], .refused("/dev/hidraw999 does not exist")),
        Case(["player-leds", "8", "--dry-run", "--bus", "usb"], .refused("PLAYER must be a number from 0 to 7")),
        Case(["player-leds", "--dry-run", "--bus", "usb"], .refused("Missing expected argument '<player>'")),
        Case(["trigger", "left", "--dry-run", "--bus", "usb"], .refused("missing an effect")),
        Case(["trigger", "left", "bogus", "--dry-run", "--bus", "usb"], .refused("unknown effect 'bogus'")),
        Case(["trigger", "left", "feedback", "-1", "8", "--dry-run", "--bus", "usb"], .refused("it must be between 0 and 255")),
        Case(["trigger", "left", "weapon", "2", "99", "8", "--dry-run", "--bus", "usb"], .refused("end is 99")),
        Case(["rumble"], .refused("rumble takes LOW HIGH")),
        Case(["rumble", "300", "0", "--dry-run", "--bus", "usb"], .refused("LOW must be a number from 0 to 255")),
        Case(["rumble", "1", "1", "--dry-run", "--bus", "usb", "--for", "-1s"], .refused("is not a duration")),
        Case(["rumble", "1", "1", "--dry-run", "--bus", "usb", "--for", "nan"], .refused("is not a duration")),
        Case(["rumble", "1", "1", "--dry-run", "--bus", "usb", "--for", "99999h"], .refused("is not a duration")),
        Case(["rumble", "--pad", "0", "--pattern", "{dir}"], .refused("is a directory")),
        Case(["rumble", "--pad", "0", "--pattern", "/dev/zero"], .refused("not a regular file")),
        Case(["rumble", "--pad", "0", "--pattern", "{dir}/not-utf8"], .refused("is not UTF-8 text")),
        Case(["rumble", "--pad", "0", "--pattern", "{dir}/huge"], .refused("pattern line 1")),
        Case(["rumble", "--pad", "0", "--pattern", "nonsense"], .refused("neither a built-in pattern")),
        Case(["rumble", "--pad", "/dev/input/event999", "1", "1"], .refused("/dev/input/event999 does not exist")),
        Case(["nonsense"], .refused("Unexpected argument 'nonsense'")),
    ]

    /// Long enough for a loaded machine to start the binary, short next to the hang it would catch.
    static let timeLimit: Duration = .seconds(20)

    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-bad-input-\(UUID())")
        try makeFiles(in: directory)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func makeFiles(in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let files: [String: Data] = [
            // The script that wedged `demo` (issue 20): its waits add up to nothing before `repeat`.
            "wedge.script": Data("wait 1\nwait -1\nrepeat\n".utf8),
            "no-time.script": Data("wait 0\npress south\nrepeat\n".utf8),
            "negative-wait.script": Data("wait -5\n".utf8),
            "huge-wait.script": Data("wait 9223372036854775808\n".utf8),
            "after-repeat.script": Data("wait 10\nrepeat\npress south\n".utf8),
            "negative-device.hid": Data("D: -1\nR: 1 05\n".utf8),
            "not-utf8": Data([0xff, 0xfe, 0x00, 0x80, 0x0a]),
            "huge": Data(repeating: UInt8(ascii: "a"), count: 3 << 20),
            "empty": Data(),
        ]
        for (name, data) in files { try data.write(to: directory.appendingPathComponent(name)) }
        XCTAssertEqual(mkfifo(directory.appendingPathComponent("fifo").path, 0o600), 0, "mkfifo")
    }

    func testEveryCommandRefusesBadInputWithOneClearLine() throws {
        let environment = ["PADGATE_STATE_DIR": directory.appendingPathComponent("state").path,
                           "HOME": directory.appendingPathComponent("home").path,
                           "PADGATE_RUNTIME_DIR": directory.appendingPathComponent("run").path]
        for item in Self.cases {
            let arguments = item.arguments.map { $0.replacingOccurrences(of: "{dir}", with: directory.path) }
            let shown = "padgate " + arguments.map { $0.count > 60 ? String($0.prefix(20)) + "…" : $0 }.joined(separator: " ")
            let run = try padgate(arguments, environment: environment, timeLimit: Self.timeLimit)
            check(run, item.outcome, shown, line: item.line)
        }
    }

    /// Arguments that are not UTF-8 (a shell passes bytes; Foundation cannot, so sh builds them).
    func testArgumentsThatAreNotUTF8AreRefused() throws {
        for (command, expected) in [("inspect \"$(printf 'x\\377')\"", "does not exist"),
                                    ("watch \"$(printf '\\377')\"", "is not a pad"),
                                    ("forward \"$(printf 'host\\377')\"", "is invalid for '<host>'")] {
            let run = try padgate(["-c", "exec \"$0\" " + command, padgateExecutable.path], timeLimit: Self.timeLimit,
                                  executable: URL(fileURLWithPath: "/bin/sh"))
            check(run, .refused(expected), command, line: #line)
        }
    }

    private func check(_ run: PadgateRun, _ outcome: Outcome, _ shown: String, line: UInt) {
        XCTAssertFalse(run.timedOut, "\(shown): still running after \(Self.timeLimit)", line: line)
        XCTAssertFalse(run.signalled, "\(shown): ended by a signal (status \(run.status)): \(run.stderr.prefix(400))", line: line)
        for crash in ["Fatal error", "Backtrac", "Stack dump", "Illegal instruction", "Segmentation"] {
            XCTAssertFalse(run.stderr.contains(crash), "\(shown): \(run.stderr.prefix(400))", line: line)
        }
        switch outcome {
        case .refused(let expected):
            XCTAssertNotEqual(run.status, 0, "\(shown) should fail; stdout: \(run.stdout.prefix(200))", line: line)
            // One line says what is wrong; ArgumentParser may follow it with usage lines, as coreutils
            // follows its error with "Try --help".
            let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
            XCTAssertEqual(errors.count, 1, "\(shown): want one 'Error:' line, got: \(run.stderr.prefix(400))", line: line)
            if let error = errors.first {
                XCTAssertTrue(expected.isEmpty || error.contains(expected), "\(shown): '\(error)' does not say '\(expected)'", line: line)
                XCTAssertLessThan(error.count, 400, "\(shown): the error line runs on: \(error.prefix(200))…", line: line)
            }
            XCTAssertLessThanOrEqual(run.stderr.split(separator: "\n").count, 6, "\(shown): \(run.stderr.prefix(600))", line: line)
        case .succeeds(let expected):
            XCTAssertEqual(run.status, 0, "\(shown): \(run.stderr.prefix(400))", line: line)
            XCTAssertTrue(expected.isEmpty || run.stdout.contains(expected), "\(shown): \(run.stdout.prefix(200))", line: line)
        }
    }
}
