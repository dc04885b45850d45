import Foundation
import MonotonicTime
import PadSystem
import PadgateRunner
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

        let listed = try XCTUnwrap(eventually(timeout: .seconds(10)) { () -> Listed? in
            try listedPads().first { $0.type == "dualsense" && $0.hasItsInputNodes }
        }, "padgate list --json never showed the emulated DualSense")
        XCTAssertEqual(try listedPads().filter { $0.type == "dualsense" }.count, 1,
                       "one physical pad is one entry, however many nodes it has")
        XCTAssertNotNil(listed.hidraw)
        XCTAssertEqual(listed.evdev.map(\.role), KernelVersion.evdevRoles(kind: .dualSense, bus: .bluetooth))

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

    func testRecordAndInspectALivePadFromItsHidrawNode() throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-\(UUID()).script")
        try "press east\nr2 200\nwait 100\nrelease east\nr2 0\nwait 100\nrepeat\n".write(to: script, atomically: true, encoding: .utf8)
        let emulate = try PadgateProcess(["emulate", "dualsense", "--bus", "usb", "--script", script.path])
        defer { emulate.interrupt() }
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { () -> Bool? in
            (try? runPadgate(["list", "--json"]))?.contains("\"dualsense\"") == true ? true : nil
        })

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-\(UUID()).hid")
        _ = try runPadgate(["record", "054c:0ce6", "-o", file.path, "--duration", "2"])
        let text = try String(contentsOf: file, encoding: .utf8)
        XCTAssertTrue(text.contains("\nR: 257 05 01 09 05 a1 01"), "the kernel's copy of the DualSense descriptor heads the file")
        XCTAssertTrue(text.contains("\nI: 3 054c 0ce6\n"))
        XCTAssertGreaterThan(text.components(separatedBy: "\nE: ").count, 20, "2 s of a 125 Hz pad")

        struct Report: Decodable { var report_id: Int; var length: Int; var buttons: [String]?; var r2: Int? }
        let decoded = try runPadgate(["inspect", file.path, "--json"]).split(separator: "\n")
            .compactMap { try? JSONDecoder().decode(Report.self, from: Data($0.utf8)) }
        XCTAssertTrue(decoded.allSatisfy { $0.report_id == 1 && $0.length == 64 })
        XCTAssertTrue(decoded.contains { $0.buttons == ["east"] && $0.r2 == 200 }, "a pressed report decodes as east + r2 200")
        XCTAssertTrue(decoded.contains { $0.buttons == [] && $0.r2 == 0 })

        let live = try runPadgate(["inspect", "054c:0ce6", "--json", "--duration", "1.5"]).split(separator: "\n")
            .compactMap { try? JSONDecoder().decode(Report.self, from: Data($0.utf8)) }
        XCTAssertTrue(live.contains { $0.buttons == ["east"] }, "live inspect decodes the pad's reports")
    }

    /// Unplugging is reported within 1 s, and the same watch follows the pad when it is plugged in again.
    func testWatchReportsUnplugWithinASecondAndFollowsTheReplug() throws {
        var first: PadgateProcess? = try PadgateProcess(["emulate", "dualsense"])
        defer { first?.interrupt() }
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { try? listedPads().first { $0.type == "dualsense" && $0.hasItsInputNodes } })
        let watch = try PadgateProcess(["watch", "054c:0ce6", "--json", "--no-motion", "--duration", "40"])
        defer { watch.interrupt() }
        XCTAssertNotNil(watch.waitForLine { $0.contains("\"event\":\"arrived\"") }, "watch never attached")

        let unplugged = MonotonicInstant.now
        first?.process.interrupt()
        let removed = watch.waitForLine(timeout: .seconds(5)) { $0.contains("\"event\":\"removed\"") }
        let latency = MonotonicInstant.now - unplugged
        XCTAssertNotNil(removed, "unplugging was not reported")
        XCTAssertLessThan(latency, .seconds(1), "removal reported \(latency) after the unplug")
        first?.interrupt()
        first = nil

        let script = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-\(UUID()).script")
        try "press north\nwait 300\nrelease north\nwait 300\nrepeat\n".write(to: script, atomically: true, encoding: .utf8)
        let second = try PadgateProcess(["emulate", "dualsense", "--script", script.path])
        defer { second.interrupt() }
        struct Event: Decodable { var event: String; var state: LivePadState? }
        let followed = eventually(timeout: .seconds(15)) { () -> Bool? in
            let events = watch.snapshot().compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
            guard let replug = events.lastIndex(where: { $0.event == "arrived" }), events.filter({ $0.event == "arrived" }).count == 2 else { return nil }
            return events[replug...].contains { $0.state?.buttons == ["north"] } ? true : nil
        }
        XCTAssertNotNil(followed, "watch did not follow the re-plugged pad; saw \(watch.snapshot().suffix(4))")
    }

    /// A Bluetooth pad: output reports the kernel sends for a command reach `emulate`, decoded.
    func testBluetoothEmulationPrintsTheDecodedOutputReports() throws {
        let emulate = try PadgateProcess(["emulate", "dualsense", "--bus", "bt", "--json"])
        defer { emulate.interrupt() }
        let listed = try XCTUnwrap(eventually(timeout: .seconds(10)) { try? listedPads().first { $0.type == "dualsense" && $0.hasItsInputNodes } })
        XCTAssertEqual(listed.bus, "bluetooth")
        let run = try padgate(["lightbar", "10", "20", "30", "--pad", listed.evdev[0].path])
        XCTAssertEqual(run.status, 0, run.stderr)
        let line = emulate.waitForLine { $0.contains("\"lightbar\":[10,20,30]") }
        XCTAssertNotNil(line, "no decoded lightbar among \(emulate.snapshot().suffix(3))")
        XCTAssertTrue(line?.contains("\"report_id\":49") == true, "a Bluetooth output report is 0x31: \(line ?? "")")
    }

    /// `emulate --replay` plays a real pad's recording into the kernel; watch sees its values.
    func testReplayedRecordingReachesWatch() throws {
        // hid-recorder decoded the recording's first report as X: 131, Y: 132 (its comment line).
        let recording = repositoryRoot.appendingPathComponent("Tests/HIDCodecsTests/Fixtures/recordings/dualsense_edge_usb_dsegde.hid")
        // Looped: a watch that starts late on a loaded machine still meets the recording's values.
        let emulate = try PadgateProcess(["emulate", "dualsense", "--replay", recording.path, "--loop", "--duration", "60"])
        defer { emulate.interrupt() }
        let watch = try PadgateProcess(["watch", "054c:0ce6", "--wait", "--json", "--no-motion", "--duration", "60"])
        defer { watch.interrupt() }
        XCTAssertNotNil(watch.waitForLine(timeout: .seconds(45)) { $0.contains("\"left_stick\":[131,132]") },
                        "the recording's first stick position never showed; saw \(watch.snapshot().suffix(3))")
    }

    struct Listed: Decodable {
        var type: String; var bus: String; var hidraw: String?; var evdev: [EvdevNode]; var vendor_id: String
        /// Every node the running kernel makes for a DualSense on this bus.
        var hasItsInputNodes: Bool { evdev.map(\.role) == KernelVersion.evdevRoles(kind: .dualSense, bus: bus == "usb" ? .usb : .bluetooth) }
    }
    private func listedPads() throws -> [Listed] {
        try JSONDecoder().decode([Listed].self, from: Data(runPadgate(["list", "--json"]).utf8))
    }

    private func runPadgate(_ arguments: [String]) throws -> String { try padgate(arguments).stdout }
}
