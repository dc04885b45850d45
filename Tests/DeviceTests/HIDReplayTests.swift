import Foundation
import HIDCodecs
import PadSystem
import XCTest
@testable import PadDevices

/// hid-tools' hid-replay takes the recordings padgate writes: a recording of real Xbox One S data,
/// read and written back by HIDRecording, is replayed into the kernel by hid-replay, and padgate
/// watches the pad it makes.
final class HIDReplayTests: XCTestCase {

    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testHidReplayPlaysARecordingPadgateWrote() throws {
        let hidReplay = repositoryRoot.appendingPathComponent(".tools/python/bin/hid-replay")
        guard FileManager.default.isExecutableFile(atPath: hidReplay.path) else {
            XCTFail("hid-tools is missing at \(hidReplay.path): run tools/install-deps.sh (make test does)")
            return
        }
        // An Xbox One S over Bluetooth: its descriptor, and Android CTS's "Press BUTTON_A" report
        // (android_cts/microsoft_xboxones_keyeventtests.json in ../shared/fixtures), held for a second.
        let descriptor = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent(
            "Tests/HIDCodecsTests/Fixtures/descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin")))
        let pressA: [UInt8] = [0x01, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00]
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined(separator: " ") }
        let source = (["R: \(descriptor.count) \(hex(descriptor))", "N: padgate replay test pad", "I: 5 045e 02fd"]
            + (0..<10).map { String(format: "E: 000000.%06d %d ", $0 * 100_000, pressA.count) + hex(pressA) }).joined(separator: "\n") + "\n"
        let ours = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-replay-\(UUID()).hid")
        try HIDRecording(text: source).text().write(to: ours, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: ours) }

        let replay = Process()
        replay.executableURL = hidReplay
        replay.arguments = [ours.path]
        let input = Pipe()
        replay.standardInput = input
        let diagnostics = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-replay-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: diagnostics.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: diagnostics) }
        replay.standardOutput = try FileHandle(forWritingTo: diagnostics)
        replay.standardError = replay.standardOutput
        try replay.run()
        defer { if replay.isRunning { replay.interrupt(); replay.waitUntilExit() } }

        // The recording's I: line says Bluetooth 045e:0b05 (an Xbox Elite Series 2).
        // Python starts slowly in the emulated guest: allow it a minute. The node is looked up in sysfs
        // rather than through udev, whose queue this guest drains slowly for an Xbox pad.
        let node = try XCTUnwrap(eventually(timeout: .seconds(60)) { Self.eventNode(vendor: "045e", product: "02fd") },
                                 "hid-replay's device never appeared; hid-replay said: \((try? String(contentsOf: diagnostics, encoding: .utf8)) ?? "")")
        let device = try XCTUnwrap(eventually { try? EvdevDevice(path: node) }, "\(node) did not open")
        XCTAssertEqual(device.vendorID, 0x045e)
        XCTAssertEqual(device.busType, PadBus.bluetooth.kernelBus, "the recording's I: line said Bluetooth")
        input.fileHandleForWriting.write(Data("\n".utf8))  // hid-replay waits for Enter before it plays
        // Android expects BUTTON_A down for this report: BTN_SOUTH to Linux.
        let pressed = eventually(timeout: .seconds(20)) { () -> Bool? in
            _ = try? device.readAvailable { _ in }
            return device.value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH) == 1 ? true : nil
        }
        XCTAssertNotNil(pressed, "the replayed press never reached \(node)")
    }

    /// The gamepad event node of the input device with these ids, from sysfs.
    static func eventNode(vendor: String, product: String) -> String? {
        let inputs = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/input")) ?? []
        for name in inputs where name.hasPrefix("event") {
            let id = "/sys/class/input/\(name)/device/id/"
            func read(_ file: String) -> String? { (try? String(contentsOfFile: id + file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) }
            if read("vendor") == vendor, read("product") == product,
               let device = try? EvdevDevice(path: "/dev/input/\(name)"), device.has(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH) {
                return device.path
            }
        }
        return nil
    }
}
