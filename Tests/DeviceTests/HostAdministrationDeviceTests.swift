import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// `padgate host` against a host with a real forwarded pad: a second client pairs through
/// `host pair` while the first one's input keeps reaching its virtual pad, and `host revoke`
/// unplugs the revoked client's kernel pad within a second.
final class HostAdministrationDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    func testPairingWhileServingKeepsInputFlowingAndRevokeUnplugsThePad() throws {
        let client = try ScratchState("admin-device-client")
        let other = try ScratchState("admin-device-other")
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev, timeout: .seconds(30)))
        let host = try ScratchHost("admin-device-host", virtual: "dualsense", ports: 27_700..<27_790)
        defer { host.stop() }
        let (port, hostEnvironment) = (host.port, host.environment)
        try host.pair(client)
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.hidraw), "--quiet"], environment: client.environment)
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(60)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
        }, "the host never made the forwarded pad: \(forward.output)")
        let reader = try LivePadReader(pad: virtualPad)

        // Input keeps flowing while another client pairs: the host pad follows a press and a
        // release sent during the pairing.
        let feeding = DispatchSemaphore(value: 0)
        let flip = LockedFlag()
        Thread {
            var input = GamepadState.dualSenseAtRest
            var pressed = false
            while !flip.isSet {
                pressed.toggle()
                input.buttons = pressed ? [.east] : []
                input.sensorTimestamp &+= 12_000
                try? physical.send(input)
                usleep(100_000)
            }
            feeding.signal()
        }.start()
        try host.pair(other)
        XCTAssertNotNil(try waitForState(reader, timeout: .seconds(10)) { $0.buttons.contains("east") }, "a press after the pairing reached the host")
        XCTAssertNotNil(try waitForState(reader, timeout: .seconds(10)) { $0.buttons.isEmpty }, "and its release")
        flip.set()
        feeding.wait()

        // Revoke: the kernel pad goes, within a second of the command.
        let fingerprint = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(padgate(["host", "clients", "--json"], environment: hostEnvironment).stdout.utf8))
            as? [[String: Any]])?.first { $0["connected"] as? Bool == true }?["fingerprint"] as? String)
        // The host removes the pad before it answers, so it is gone when the command returns; the
        // time includes starting `padgate host` itself, which emulation makes slow.
        let started = MonotonicInstant.now
        let revoked = try padgate(["host", "revoke", fingerprint], environment: hostEnvironment, timeLimit: .seconds(30))
        let answered = MonotonicInstant.now
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertFalse(udev.pads().contains { $0.isHostVirtualPad }, "the revoked client's pad was still there when revoke answered")
        FileHandle.standardError.write(Data("HostAdministrationDeviceTests: revoke answered \(answered - started) after it started, the pad already gone\n".utf8))
        XCTAssertTrue(forward.waitFor("is not one", timeout: .seconds(30)), "the revoked client is refused: \(forward.output)")
    }
}

final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
