import Foundation
import XCTest
@testable import PadDevices

/// `padgate emulate`, `list` and `watch` as a person runs them, against the real driver.
final class CommandLineTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testEmulatedPadIsListedAndItsScriptedInputIsWatched() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-\(UUID()).script")
        try """
            wait 400
            press south
            left 255 0
            touch 0 800 400
            wait 400
            release south
            untouch 0
            left 128 128
            repeat
            """.write(to: script, atomically: true, encoding: .utf8)
        let emulate = try PadgateProcess(["emulate", "dualsense", "--script", script.path, "--json"])
        defer { emulate.interrupt() }

        struct Listed: Decodable { var type: String; var hidraw: String?; var evdev: [EvdevNode]; var vendor_id: String }
        let listed = try XCTUnwrap(eventually(timeout: .seconds(10)) { () -> Listed? in
            let list = try runPadgate(["list", "--json"])
            let pads = try JSONDecoder().decode([Listed].self, from: Data(list.utf8))
            return pads.first { $0.type == "dualsense" && $0.evdev.count == 3 }
        }, "padgate list --json never showed the emulated DualSense")
        XCTAssertNotNil(listed.hidraw)
        XCTAssertEqual(listed.evdev.map(\.role), [.gamepad, .touchpad, .motion])

        let watch = try PadgateProcess(["watch", listed.evdev[0].path, "--json", "--no-motion", "--duration", "20"])
        defer { watch.interrupt() }
        struct Event: Decodable { var event: String; var state: LivePadState? }
        func states() -> [LivePadState] {
            watch.snapshot().compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }.compactMap(\.state)
        }
        // The script presses and releases in a loop; watch must show a press, then a release after it.
        let pressedAt = eventually(timeout: .seconds(15)) {
            states().firstIndex { $0.buttons.contains("south") && $0.left_stick == [255, 0] && $0.touch.contains { $0.x == 800 && $0.y == 400 } }
        }
        XCTAssertNotNil(pressedAt, "watch never showed the scripted press; saw \(watch.snapshot().suffix(5))")
        let released = eventually(timeout: .seconds(10)) {
            states().dropFirst((pressedAt ?? 0) + 1).first { $0.buttons.isEmpty && $0.touch.isEmpty && $0.left_stick == [128, 128] }
        }
        XCTAssertNotNil(released, "watch never showed the release")

        emulate.interrupt()
        XCTAssertNotNil(watch.waitForLine(timeout: .seconds(3)) { $0.contains("\"event\":\"removed\"") },
                        "unplugging was not reported by watch")
    }

    private func runPadgate(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = padgateExecutable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
