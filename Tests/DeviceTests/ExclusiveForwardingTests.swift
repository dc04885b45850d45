import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices

/// A forwarded pad answers the host alone (docs/desk.md): while `forward` forwards it, a program
/// on the client reading the pad's gamepad and touchpad nodes (a desktop's libinput, Steam, a
/// game) gets nothing, while the host's pad gets every change; after `forward` stops, or is
/// killed, that program reads the pad again. A pad another program holds is refused with a line
/// that says so, and nothing is left held.
final class ExclusiveForwardingTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    var state: URL!
    override func setUp() {
        state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-excl-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
    }
    override func tearDown() {
        unsetenv("PADGATE_STATE_DIR")
        try? FileManager.default.removeItem(at: state)
    }

    /// The client's other reader: the gamepad and touchpad nodes, opened as any program opens them.
    final class Bystander {
        let nodes: [EvdevDevice]
        init(_ pad: Pad) throws {
            nodes = try [pad.node(.gamepad), pad.node(.touchpad)].map { try EvdevDevice(path: try XCTUnwrap($0).path) }
        }
        /// Events read from either node since the last call.
        func drain() throws -> Int { try nodes.reduce(0) { $0 + (try $1.readAvailable { _ in }) } }
    }

    /// A press and a touch, then their release: every call changes both nodes' state.
    struct Presses {
        var input = GamepadState.dualSenseAtRest
        var pressed = false
        mutating func next() -> GamepadState {
            pressed.toggle()
            input.buttons = pressed ? [.south] : []
            input.touch0 = TouchPoint(id: 1, active: pressed, x: 500, y: 300)
            input.sensorTimestamp &+= 12_000
            return input
        }
    }

    func testAForwardedPadAnswersTheHostAloneUntilForwardStopsOrIsKilled() throws {
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let bystander = try Bystander(physicalPad)
        var presses = Presses()

        // Before forward: the bystander reads the pad (what the rest of this test leans on).
        XCTAssertNotNil(try seenByBystander(bystander, physical, &presses), "the bystander never read the pad without forward")

        let port = String(28100 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        for ending in ["stopped", "killed"] {
            let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
            defer { forward.interrupt() }
            XCTAssertNotNil(forward.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding DualSense") }, "forward did not take the pad: \(forward.snapshot())")
            let hostPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
                udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
            }, "the host never made its pad; serve said \(serve.snapshot().suffix(5))")
            let host = try Bystander(hostPad)
            _ = try bystander.drain()
            // Twenty changes, each seen by the host's pad before the next: none by the bystander.
            for change in 0..<20 {
                XCTAssertTrue(hostReads(presses.next(), from: physical, host: host), "change \(change) never reached the host's pad (\(ending) run)")
            }
            XCTAssertEqual(try bystander.drain(), 0, "while forwarded, the client's other reader got the pad's events (\(ending) run)")
            XCTAssertTrue(forward.snapshot().contains { $0.contains("answer the host alone") }, "forward did not say it holds the pads: \(forward.snapshot())")

            if ending == "stopped" { forward.interrupt() } else {
                kill(forward.process.processIdentifier, SIGKILL)
                forward.process.waitUntilExit()
            }
            XCTAssertNotNil(try seenByBystander(bystander, physical, &presses), "after forward was \(ending), the bystander never read the pad again")
        }
    }

    /// A pad whose node another program holds (Steam Input, a remapper, another forward) is
    /// refused with a line naming what to do, and forward holds none of its other nodes.
    func testAPadHeldElsewhereIsRefusedWithAClearLineAndNothingIsLeftHeld() throws {
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let port = String(28150 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }

        // Another program holds the motion node (the last forward would take).
        do {
            let motion = try EvdevDevice(path: try XCTUnwrap(physicalPad.node(.motion)).path)
            try motion.grab()
            let refused = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
            defer { refused.interrupt() }
            XCTAssertNotNil(refused.waitForLine(timeout: .seconds(30)) { $0.contains("is held exclusively by another program") && $0.contains("--shared") },
                            "no clear line for a held pad: \(refused.snapshot())")
            XCTAssertTrue(refused.process.isRunning, "forward goes on, waiting for pads")
            // Nothing of the pad stays held by the refused forward: each other node can be taken.
            for node in physicalPad.evdev where node.role != .motion && !EvdevGrab.leftShared.contains(node.role) {
                XCTAssertNoThrow(try EvdevDevice(path: node.path).grab(), "\(node.path) (\(node.role)) was left held")
            }
            XCTAssertFalse(udev.pads().contains { $0.isHostVirtualPad }, "a refused pad reached the host")
        }

        // Released (its descriptor closed): a forward takes the pad, and a second forward of it is refused so.
        let first = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
        defer { first.interrupt() }
        XCTAssertNotNil(first.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding DualSense") }, "the released pad was not taken: \(first.snapshot())")
        let second = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet"], includeStandardError: true)
        defer { second.interrupt() }
        XCTAssertNotNil(second.waitForLine(timeout: .seconds(30)) { $0.contains("another 'padgate forward' of this pad") },
                        "no clear line for a second forward: \(second.snapshot())")
        XCTAssertFalse(second.snapshot().contains { $0.contains("forwarding DualSense") }, "the second forward took the pad too")
    }

    /// A pad unplugged while forward holds it: a line says so, the host's pad lets go of the button
    /// held at that moment, forward goes on, takes the next pad plugged in and holds it as it held
    /// the first, and lets it go when it stops.
    func testAPadUnpluggedWhileHeldLeavesNothingHeldAndTheNextPadIsHeldAsTheFirst() throws {
        let udev = try Udev()
        let port = String(28200 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "dualsense"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        var first: EmulatedPlayStationPad? = try EmulatedPlayStationPad(bus: .usb)
        defer { first?.stop() }
        _ = try XCTUnwrap(padFor(first!, udev: udev))
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", "054c:0ce6", "--quiet"], includeStandardError: true)
        defer { forward.interrupt() }
        XCTAssertNotNil(forward.waitForLine(timeout: .seconds(30)) { $0.contains("forwarding DualSense") }, "forward did not take the pad: \(forward.snapshot())")
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) } })
        let host = try Bystander(hostPad)
        var held = GamepadState.dualSenseAtRest
        held.buttons = [.south]
        XCTAssertTrue(hostReads(held, from: try XCTUnwrap(first), host: host), "the held button never reached the host's pad")

        first?.stop()
        first = nil
        XCTAssertNotNil(forward.waitForLine(timeout: .seconds(30)) { $0.contains("was unplugged") }, "no line for the unplugged pad: \(forward.snapshot())")
        let released = eventually(timeout: .seconds(30)) { () -> Bool? in
            if !udev.pads().contains(where: { $0.isHostVirtualPad && $0.id == hostPad.id }) { return true }
            _ = try? host.drain()
            return host.nodes[0].value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH) == 0 ? true : nil
        }
        XCTAssertEqual(released, true, "the host's pad kept the button the unplugged pad held")
        XCTAssertTrue(forward.process.isRunning, "forward goes on after an unplug")

        let second = try EmulatedPlayStationPad(bus: .usb)
        defer { second.stop() }
        let secondPad = try XCTUnwrap(padFor(second, udev: udev))
        XCTAssertNotNil(forward.waitForLine(timeout: .seconds(30)) { line in line.contains("forwarding DualSense") && forward.snapshot().filter { $0.contains("forwarding DualSense") }.count >= 2 },
                        "forward did not take the next pad: \(forward.snapshot())")
        let bystander = try Bystander(secondPad)
        let nextHost = try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.id != hostPad.id } })
        let hostReader = try Bystander(nextHost)
        var presses = Presses()
        _ = try bystander.drain()
        for change in 0..<6 {
            XCTAssertTrue(hostReads(presses.next(), from: second, host: hostReader), "change \(change) of the next pad never reached the host")
        }
        XCTAssertEqual(try bystander.drain(), 0, "the next pad was not held as the first")
        forward.interrupt()
        XCTAssertNotNil(try seenByBystander(bystander, second, &presses), "after forward stopped, the next pad stayed held")
    }

    /// Sends `state` until the host's pad shows its south button so (each change seen before the next).
    private func hostReads(_ state: GamepadState, from physical: EmulatedPlayStationPad, host: Bystander) -> Bool {
        let pressed: Int32 = state.buttons.isEmpty ? 0 : 1
        return eventually(timeout: .seconds(10)) { () -> Bool? in
            try? physical.send(state)
            _ = Poll.wait(host.nodes.map(\.descriptor), timeout: .milliseconds(20))
            _ = try? host.drain()
            return host.nodes[0].value(type: EvdevCode.EV_KEY, code: EvdevCode.BTN_SOUTH) == pressed ? true : nil
        } ?? false
    }

    /// Sends changes until the bystander reads one; nil when it never did.
    private func seenByBystander(_ bystander: Bystander, _ physical: EmulatedPlayStationPad, _ presses: inout Presses) throws -> Int? {
        _ = try bystander.drain()
        for _ in 0..<100 {
            try physical.send(presses.next())
            _ = Poll.wait(bystander.nodes.map(\.descriptor), timeout: .milliseconds(50))
            let events = try bystander.drain()
            if events > 0 { return events }
        }
        return nil
    }
}
