import HIDCodecs
import XCTest
@testable import PadDevices

final class InputScriptTests: XCTestCase {
    func testStepsParseAndApply() throws {
        let script = try InputScript(parsing: """
            # a comment
            press south l1   # trailing comment
            dpad down-left
            left 0 255
            touch 1 1919 1079
            wait 20
            release l1
            untouch 1
            battery 40 charging
            repeat
            """)
        XCTAssertEqual(script.steps.count, 9)
        var state = GamepadState.dualSenseAtRest
        for case .set(let change) in script.steps.prefix(4) { state.apply(change) }
        XCTAssertEqual(state.buttons, [.south, .l1])
        XCTAssertEqual(state.dpad, .downLeft)
        XCTAssertEqual(state.leftStick, StickPosition(x: 0, y: 255))
        XCTAssertEqual(state.touch1, TouchPoint(id: 1, active: true, x: 1919, y: 1079))
        XCTAssertEqual(script.steps[4], .wait(milliseconds: 20))
        for case .set(let change) in script.steps[5...7] { state.apply(change) }
        XCTAssertEqual(state.buttons, [.south])
        XCTAssertFalse(state.touch1.active)
        XCTAssertEqual(state.battery, BatteryStatus(percent: 40, state: .charging))
        XCTAssertEqual(script.steps.last, .repeatFromStart)
    }

    func testErrorsNameTheLineAndTheFix() {
        let bad: [(String, String)] = [
            ("press jump", "unknown button 'jump'"), ("left 300 0", "x from 0 to 255"), ("touch 2 0 0", "slot from 0 to 1"),
            ("touch 0 1920 0", "x from 0 to 1919"), ("dpad sideways", "up-right"), ("fly", "unknown step 'fly'"),
            ("battery 101", "from 0 to 100"), ("wait -1", "milliseconds from 0 to 3600000"),
            ("wait 9223372036854775808", "from 0 to 3600000"), ("gyro 0 0 40000", "from -32768 to 32767"),
            ("left 1 2 3", "takes 2 arguments"), ("battery 50 full", "'charging'"), ("l2", "from 0 to 255"),
        ]
        for (line, expected) in bad {
            XCTAssertThrowsError(try InputScript(parsing: "wait 1\n" + line), line) {
                let message = "\($0)"
                XCTAssertTrue(message.hasPrefix("script line 2:"), message)
                XCTAssertTrue(message.contains(expected), "\(line): \(message)")
            }
        }
    }

    func testNewTouchContactsTakeNewIDs() {
        var state = GamepadState.dualSenseAtRest
        state.apply(.touch(slot: 0, x: 10, y: 10))
        let first = state.touch0.id
        state.apply(.touch(slot: 0, x: 20, y: 20))
        XCTAssertEqual(state.touch0.id, first, "moving a contact keeps its id")
        state.apply(.untouch(slot: 0))
        state.apply(.touch(slot: 0, x: 30, y: 30))
        XCTAssertNotEqual(state.touch0.id, first, "a new contact gets a new id")
    }

    func testThePlayerKeepsTheScriptsClockAndNeverSpins() throws {
        var player = InputScriptPlayer(try InputScript(parsing: "press south\nwait 100\nrelease south\nwait 100\nrepeat"))
        var state = GamepadState()
        player.advance(to: .milliseconds(50), &state)
        XCTAssertEqual(state.buttons, .south)
        player.advance(to: .milliseconds(150), &state)
        XCTAssertEqual(state.buttons, [])
        player.advance(to: .milliseconds(210), &state)
        XCTAssertEqual(state.buttons, .south, "repeated, on the script's own clock")
        // A caller an hour late skips the passes it missed: one call stays one pass's work.
        player.advance(to: .seconds(3600) + .milliseconds(150), &state)
        XCTAssertEqual(state.buttons, [], "an hour and 150 ms in: the release half of a 200 ms pass")
        // A script without a repeat plays once.
        var once = InputScriptPlayer(try InputScript(parsing: "press south\nwait 5"))
        once.advance(to: .seconds(1), &state)
        XCTAssertEqual(state.buttons, .south)
    }

    /// The script that wedged `demo` (issue 20): its waits add up to no time, so `repeat` would
    /// start over forever within one tick. Refused whole, with the line of the `repeat`.
    func testARepeatWhosePassTakesNoTimeIsRefused() {
        for (text, line) in [("wait 1\nwait -1\nrepeat", 2), ("wait 0\nrepeat", 2), ("press south\nrepeat", 2), ("repeat", 1)] {
            XCTAssertThrowsError(try InputScript(parsing: text), text) {
                let message = "\($0)"
                XCTAssertTrue(message.hasPrefix("script line \(line):"), message)
            }
        }
        XCTAssertThrowsError(try InputScript(parsing: "wait 0\nrepeat")) {
            XCTAssertTrue("\($0)".contains("at least 1 ms"), "\($0)")
        }
        XCTAssertThrowsError(try InputScript(parsing: "wait 10\nrepeat\npress south")) {
            XCTAssertEqual("\($0)", "script line 3: 'repeat' on line 2 starts over, so this step would never run")
        }
        XCTAssertNoThrow(try InputScript(parsing: "press south\nwait 1\nrepeat\n\n# trailing comment\n"))
    }
}
