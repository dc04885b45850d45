import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import XCTest

/// One pad's feedback holds up no pad's input (issue 59). A Bluetooth DualSense just switched on
/// plays its connection animation and takes no lightbar colour until its own clock passes 3.4 s
/// (SDL's rule); games colour a PS5 pad at once (SDL by player index). `forward` reads every pad of
/// a client on one loop: the colour is held for that pad, never waited for there.
final class PadIndependenceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    /// How long a change of one pad may take to reach the host while another pad's colour is held:
    /// padgate's loop holds nothing, so this is the emulated guest's round trip with room (the old
    /// wait held the loop for up to 4 s).
    static let inputAgeBound = Duration.seconds(1)

    /// A second player switches a Bluetooth DualSense on mid-session: its host pad's driver colours
    /// it at once (hid-playstation's blue at probe) and so does a game; the first player's input
    /// keeps reaching the host within the bound all along, and the colour reaches the new pad once
    /// its animation is over.
    func testAFreshPadsHeldLightbarHoldsUpNoOtherPadsInput() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-indep-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR"); try? FileManager.default.removeItem(at: state) }
        let other = try EmulatedPlayStationPad(bus: .usb)
        defer { other.stop() }
        let udev = try Udev()
        XCTAssertNotNil(padFor(other, udev: udev))
        let port = String(28200 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--all", "--quiet"])
        defer { forward.interrupt() }
        let otherHostPad = try XCTUnwrap(eventually(timeout: .seconds(60)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
        }, "the host never made the first pad; serve said \(serve.snapshot().suffix(5))")
        let otherHost = try LivePadReader(pad: otherHostPad)

        var otherInput = GamepadState.dualSenseAtRest
        /// One change of the first pad, and how long it took to show on its host pad.
        func change(also: () throws -> Void) throws -> Duration {
            otherInput.buttons = otherInput.buttons == [.north] ? [.west] : [.north]
            let want = otherInput.buttons == [.north] ? "north" : "west"
            let sent = MonotonicInstant.now
            while MonotonicInstant.now - sent < .seconds(10) {
                try also()
                otherInput.sensorTimestamp &+= 12_000  // 4 ms in the pad's 1/3 µs ticks
                try other.send(otherInput)
                _ = Poll.wait(otherHost.descriptors, timeout: .milliseconds(8))
                _ = try otherHost.readAvailable()
                if otherHost.snapshot().buttons == [want] { return MonotonicInstant.now - sent }
            }
            XCTFail("the first pad's change never reached the host")
            return .seconds(10)
        }
        var before: [Duration] = []
        for _ in 0..<20 { before.append(try change {}) }

        // The second pad switches on: its clock starts at 0.3 s and runs on as the test feeds it.
        let fresh = try EmulatedPlayStationPad(bus: .bluetooth)
        defer { fresh.stop() }
        var freshInput = GamepadState.dualSenseAtRest
        freshInput.sensorTimestamp = 1_000_000
        let tickFresh = {
            freshInput.sensorTimestamp &+= 12_000
            try fresh.send(freshInput)
        }
        let color = RGBColor(red: 7, green: 99, blue: 201)
        var freshHostPad: Pad?, lookedAt = MonotonicInstant.now, during: [Duration] = []
        let window = MonotonicInstant.now + .seconds(8)
        while MonotonicInstant.now < window {
            // A game colours the new pad as soon as its host pad is there (looked for between changes,
            // so that the test's own udev walk is no part of a change's time).
            if freshHostPad == nil, MonotonicInstant.now - lookedAt > .milliseconds(250) {
                lookedAt = .now
                if let made = udev.pads().first(where: { $0.isHostVirtualPad && $0.id != otherHostPad.id && $0.hasItsInputNodes }) {
                    freshHostPad = made
                    try LEDClassDevices(pad: made).setColor(color)
                }
            }
            during.append(try change { try tickFresh() })
        }
        XCTAssertNotNil(freshHostPad, "the host never made the second pad within the window; serve said \(serve.snapshot().suffix(5))")
        let worst = try XCTUnwrap(during.max()), usual = try XCTUnwrap(before.sorted().dropFirst(before.count / 2).first)
        print("a second pad switched on: the first pad's \(during.count) changes meanwhile reached the host in at most \(worst) (bound \(Self.inputAgeBound); before, median \(usual)); the second pad's clock at \(freshInput.sensorTimestamp) ticks")
        XCTAssertLessThanOrEqual(worst, Self.inputAgeBound, "the second pad's held lightbar held up the first pad's input")

        // The animation over (the pad's clock past 10.2 M ticks): the game's colour is at the pad.
        freshInput.sensorTimestamp = 10_500_000
        var outputs = fresh.takeOutputs()
        let arrived = eventually(timeout: .seconds(10)) { () -> Bool? in
            try? tickFresh()
            usleep(4_000)
            outputs += fresh.takeOutputs()
            return outputs.contains { (try? DualSenseOutputDecoder.decode($0))?.lightbar == color } ? true : nil
        }
        XCTAssertNotNil(arrived, "the game's colour never reached the second pad")
    }
}
