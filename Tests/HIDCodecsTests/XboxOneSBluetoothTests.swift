import Foundation
import XCTest
@testable import HIDCodecs

/// The Xbox One S over Bluetooth is read through its own descriptor. Android CTS's key-event test pairs real reports
/// of this pad (045e:02fd) with the key events Android must produce for them.
final class XboxOneSBluetoothTests: XCTestCase {
    /// Android keycode ← evdev code ← HID usage. Android: `Vendor_045e_Product_02fd.kl` (key 304 BUTTON_A, 305 B,
    /// 307 X, 308 Y, 310 L1, 311 R1, 315 START, 317 THUMBL, 318 THUMBR, 158 SELECT, 172 MODE) and Generic.kl
    /// (316 BUTTON_MODE). Linux hid-input: in a Game Pad application, Button n is BTN_GAMEPAD (304) + n − 1; Consumer
    /// AC Back (0x224) is KEY_BACK (158), AC Home (0x223) KEY_HOMEPAGE (172).
    static let keycodeUsages: [String: Set<Usage>] = [
        "BUTTON_A": [button(1)], "BUTTON_B": [button(2)], "BUTTON_X": [button(4)], "BUTTON_Y": [button(5)],
        "BUTTON_L1": [button(7)], "BUTTON_R1": [button(8)], "BUTTON_START": [button(12)],
        "BUTTON_THUMBL": [button(14)], "BUTTON_THUMBR": [button(15)],
        "BUTTON_MODE": [button(13), Usage(page: 0x0C, id: 0x223)], "BUTTON_SELECT": [Usage(page: 0x0C, id: 0x224)],
    ]
    static func button(_ n: UInt16) -> Usage { Usage(page: 0x09, id: n) }

    struct Case { var name: String; var reports: [[UInt8]]; var events: [(action: String, keycode: String)] }

    /// The CTS files write numbers as 0x.. literals; turn them into decimals, then read the JSON.
    static func cases() throws -> [Case] {
        let text = try Fixture.text("android_cts/microsoft_xboxones_keyeventtests.json")
        let hex = try NSRegularExpression(pattern: "0x([0-9a-fA-F]+)")
        var decimal = text
        for match in hex.matches(in: text, range: NSRange(text.startIndex..., in: text)).reversed() {
            let digits = String(text[Range(match.range(at: 1), in: text)!])
            decimal.replaceSubrange(Range(match.range, in: decimal)!, with: String(Int(digits, radix: 16)!))
        }
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(decimal.utf8)) as? [[String: Any]])
        return json.map { entry in
            Case(name: entry["name"] as! String,
                 reports: (entry["reports"] as! [[Int]]).map { $0.map(UInt8.init) },
                 events: (entry["events"] as! [[String: String]]).map { ($0["action"]!, $0["keycode"]!) })
        }
    }

    /// Every case's reports, decoded in order, press and release exactly the usages of its key events, and the
    /// sticks, triggers and hat stay at rest (sticks centred at 0x7fff, triggers 0, hat in its null state).
    func testKeyEventCasesDecodeThroughTheDescriptor() throws {
        let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin"))
        let cases = try Self.cases()
        XCTAssertEqual(cases.count, 12)
        for testCase in cases {
            var pressed = Set<Usage>()
            var events: [(action: String, usage: Usage)] = []
            for report in testCase.reports {
                let (layout, fields) = try GenericReportDecoder.decodeInput(report, descriptor: descriptor)
                XCTAssertEqual(layout.id, ReportID(report[0]))
                var now = Set<Usage>()
                for decoded in fields where !decoded.field.isConstant {
                    let value = decoded.values[0]
                    if decoded.field.logicalMaximum == 1 {
                        if value == 1 { now.insert(decoded.field.usage) }
                        continue
                    }
                    switch UsageNames.name(of: decoded.field.usage) {
                    case "X", "Y", "Z", "Rz": XCTAssertEqual(value, 0x7FFF, "\(testCase.name): stick centred")
                    case "Brake", "Accelerator": XCTAssertEqual(value, 0, "\(testCase.name): trigger released")
                    case "Hat switch": XCTAssertFalse((decoded.field.logicalMinimum...decoded.field.logicalMaximum).contains(value),
                                                      "\(testCase.name): hat released (null)")
                    default: XCTFail("\(testCase.name): unexpected field \(decoded.field.usage)")
                    }
                }
                // Only report 1 carries the buttons; report 2 carries AC Home alone, so the others keep their state.
                let carried = Set(fields.filter { $0.field.logicalMaximum == 1 && !$0.field.isConstant }.map(\.field.usage))
                let next = pressed.subtracting(carried).union(now)
                events += next.subtracting(pressed).sorted().map { ("DOWN", $0) } + pressed.subtracting(next).sorted().map { ("UP", $0) }
                pressed = next
            }
            XCTAssertEqual(events.count, testCase.events.count, testCase.name)
            for (event, expected) in zip(events, testCase.events) {
                XCTAssertEqual(event.action, expected.action, testCase.name)
                XCTAssertTrue(Self.keycodeUsages[expected.keycode]?.contains(event.usage) == true,
                              "\(testCase.name): \(event.usage) is not what \(expected.keycode) comes from")
            }
        }
    }

    /// Android keycode → the button padgate forwards (`XboxBluetoothLayout`).
    static let keycodeButtons: [String: GamepadButtons] = [
        "BUTTON_A": .south, "BUTTON_B": .east, "BUTTON_X": .west, "BUTTON_Y": .north, "BUTTON_L1": .l1, "BUTTON_R1": .r1,
        "BUTTON_START": .options, "BUTTON_THUMBL": .l3, "BUTTON_THUMBR": .r3, "BUTTON_MODE": .ps, "BUTTON_SELECT": .create,
    ]

    /// The decoder `forward` reads an Xbox over Bluetooth with: every CTS case presses and releases exactly the
    /// buttons of its key events, in order, with the sticks centred and the triggers and d-pad at rest, including
    /// the old firmware whose Xbox button comes alone in report 0x02.
    func testKeyEventCasesThroughTheForwardingDecoder() throws {
        let descriptor = try ReportDescriptor(bytes: Fixture.bytes("descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin"))
        for testCase in try Self.cases() {
            var decoder = try XCTUnwrap(ControllerInputDecoder(kind: .xbox, descriptor: descriptor))
            var state = GamepadState(), pressed: GamepadButtons = []
            var events: [(action: String, button: GamepadButtons)] = []
            for report in testCase.reports {
                try decoder.decode(report, into: &state)
                XCTAssertEqual(state.format, .hidDescriptor)
                if report[0] == 0x01 {
                    XCTAssertEqual(state.leftStick, StickPosition(x: 0x7FFF, y: 0x7FFF), testCase.name)
                    XCTAssertEqual(state.rightStick, StickPosition(x: 0x7FFF, y: 0x7FFF), testCase.name)
                    XCTAssertEqual([state.l2, state.r2], [0, 0], testCase.name)
                    XCTAssertEqual(state.dpad, .none, testCase.name)
                }
                for row in GamepadButtons.table where state.buttons.contains(row.button) != pressed.contains(row.button) {
                    events.append((state.buttons.contains(row.button) ? "DOWN" : "UP", row.button))
                }
                pressed = state.buttons
            }
            XCTAssertEqual(events.map(\.action), testCase.events.map(\.action), testCase.name)
            XCTAssertEqual(events.map(\.button.rawValue), testCase.events.map { Self.keycodeButtons[$0.keycode]?.rawValue ?? 0 }, testCase.name)
        }
    }

    /// The Elite Series 2's 39-byte report 0x01 (a newer firmware's layout) through the same decoder: its sticks are
    /// hid-tools' decoded X, Y, Z and Rz for every report of the recording, and its battery report 0x04 is the charge
    /// (Battery Strength 139 of 255: 55 %).
    func testTheElite2sLongerReportDecodesAsHidToolsReadsIt() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/xbox_elite2_bt_djm00n.hid"))
        let descriptor = try ReportDescriptor(bytes: try XCTUnwrap(recording.devices.first).descriptor)
        var decoder = try XCTUnwrap(ControllerInputDecoder(kind: .xbox, descriptor: descriptor))
        var state = GamepadState(), checked = 0
        for event in try RecordingTests.decodedFile("recordings/xbox_elite2_bt_djm00n.hidtools-decoded.txt") {
            guard event.data.first == 0x01, let comment = event.comments.first else {
                XCTAssertEqual(event.comments.first, "ReportID: 4 / Battery Strength:  139 ")
                try decoder.decode(event.data, into: &state)
                XCTAssertEqual(state.battery, BatteryStatus(percent: 55, state: .unknown))
                continue
            }
            func value(_ name: String) -> UInt16? {
                guard let range = comment.range(of: "\(name): ") else { return nil }
                return UInt16(comment[range.upperBound...].drop(while: { $0 == " " }).prefix(while: \.isNumber))
            }
            try decoder.decode(event.data, into: &state)
            XCTAssertEqual(state.leftStick, StickPosition(x: try XCTUnwrap(value("X")), y: try XCTUnwrap(value("Y"))))
            XCTAssertEqual(state.rightStick, StickPosition(x: try XCTUnwrap(value("Z")), y: try XCTUnwrap(value("Rz"))))
            XCTAssertEqual(state.buttons, [])
            checked += 1
        }
        XCTAssertEqual(checked, 3)
    }
}
