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
            ("press jump", "unknown button 'jump'"), ("left 300 0", "x (0...255)"), ("touch 2 0 0", "slot must be 0 or 1"),
            ("touch 0 1920 0", "1920x1080"), ("dpad sideways", "up-right"), ("fly", "unknown step 'fly'"),
            ("battery 101", "0...100"),
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
        // A repeat before any wait would loop forever within one call: such a script plays once.
        var once = InputScriptPlayer(try InputScript(parsing: "press south\nrepeat\nwait 100"))
        once.advance(to: .seconds(1), &state)
        XCTAssertEqual(state.buttons, .south)
    }
}
