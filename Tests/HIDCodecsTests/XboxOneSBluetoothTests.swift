import Foundation
import XCTest
@testable import HIDCodecs

/// The Xbox One S over Bluetooth has no typed decoder: its reports go through the descriptor. Android CTS's key-event
/// test pairs real reports of this pad (045e:02fd) with the key events Android must produce for them.
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
}
