import Foundation
import XCTest
import HIDCodecs
@testable import PadDevices

/// hid-tools' hid-replay takes the recordings padgate writes: a real pad's recording, read and
/// written back by HIDRecording, is replayed into the kernel by hid-replay, and padgate watches it.
final class HIDReplayTests: XCTestCase {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    override func setUpWithError() throws { try requireDeviceAccess([UHIDDevice.path]) }

    func testHidReplayPlaysARecordingPadgateWrote() throws {
        let hidReplay = Self.repository.appendingPathComponent(".tools/python/bin/hid-replay")
        guard FileManager.default.isExecutableFile(atPath: hidReplay.path) else {
            XCTFail("hid-tools is missing at \(hidReplay.path): run tools/install-deps.sh (make test does)")
            return
        }
        let fixture = Self.repository.appendingPathComponent("Tests/HIDCodecsTests/Fixtures/recordings/xbox_elite2_bt_djm00n.hid")
        let ours = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-replay-\(UUID()).hid")
        try HIDRecording(text: String(contentsOf: fixture, encoding: .utf8)).text().write(to: ours, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: ours) }

        let replay = Process()
        replay.executableURL = hidReplay
        replay.arguments = [ours.path]
        let input = Pipe()
        replay.standardInput = input
        replay.standardOutput = FileHandle.nullDevice
        try replay.run()
        defer { if replay.isRunning { replay.interrupt(); replay.waitUntilExit() } }

        // The recording's I: line says Bluetooth 045e:0b05 (an Xbox Elite Series 2).
        let pad = try XCTUnwrap(eventually(timeout: .seconds(20)) { try? Udev().pads().first { $0.vendorID == 0x045e && $0.productID == 0x0b05 } },
                                "hid-replay's device never appeared as a pad")
        XCTAssertEqual(pad.kind, .xbox)
        XCTAssertEqual(pad.bus, .bluetooth)
        XCTAssertNotNil(pad.hidraw)

        let watch = try PadgateProcess(["watch", "045e:0b05", "--json", "--duration", "30"])
        defer { watch.interrupt() }
        XCTAssertNotNil(watch.waitForLine { $0.contains("\"event\":\"arrived\"") })
        input.fileHandleForWriting.write(Data("\n".utf8))  // hid-replay waits for Enter before it plays
        // hid-tools decoded the recording's first report as X: 33127, Y: 31407 (its .hidtools-decoded.txt).
        XCTAssertNotNil(watch.waitForLine(timeout: .seconds(15)) { $0.contains("\"left_stick\":[33127,31407]") },
                        "the replayed stick position never showed; saw \(watch.snapshot().suffix(3))")
    }
}
