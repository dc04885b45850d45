import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import PadgateRunner
import WireProtocol
import XCTest
@testable import PadDevices

/// Couch co-op on one host (issue 42): two clients, each forwarding two pads (two DualSenses on
/// one, a DualSense and a Switch Pro on the other). Every host pad is bound by its driver with an
/// address of its own, SDL 2 and SDL 3 see four pads with four serials, SDL's rumble on each host
/// pad reaches that pad's physical pad and no other, and a client that drops and comes back gets
/// its pads back with their player numbers and their joystick numbers.
final class CouchCoopDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    enum Physical {
        case dualSense(EmulatedPlayStationPad)
        case switchPro(EmulatedSwitchPro)

        /// Presses south (or nothing) on the pad.
        func press(_ down: Bool, sequence: inout UInt32) throws {
            switch self {
            case .dualSense(let pad):
                var input = GamepadState.dualSenseAtRest
                input.buttons = down ? [.south] : []
                sequence &+= 12_000
                input.sensorTimestamp = sequence
                try pad.send(input)
            case .switchPro(let pad):
                var controls = SwitchProReports.Controls()
                let sticks = EmulatedSwitchProTests.calibration.sticks
                controls.left = (UInt16(sticks.leftX.center), UInt16(sticks.leftY.center))
                controls.right = (UInt16(sticks.rightX.center), UInt16(sticks.rightY.center))
                controls.buttons = down ? .south : []
                try pad.send(controls)
            }
        }

        /// The motor levels an output report asks for, if it is a rumble report.
        func motors(_ report: [UInt8]) -> MotorLevels? {
            switch self {
            case .dualSense: (try? DualSenseOutputDecoder.decode(report))?.motors
            case .switchPro: SwitchProReports.output(report)?.rumble.flatMap(SwitchHDRumble.levels)
            }
        }

        func takeOutputs() -> [[UInt8]] {
            switch self {
            case .dualSense(let pad): pad.takeOutputs()
            case .switchPro(let pad): pad.takeOutputs()
            }
        }

        func stop() {
            switch self {
            case .dualSense(let pad): pad.stop()
            case .switchPro(let pad): pad.stop()
            }
        }
    }

    /// The joystick node (`jsN`) the kernel gave a pad's gamepad evdev node.
    func joystick(of pad: Pad) -> String? {
        guard let event = pad.gamepadNode?.path.split(separator: "/").last else { return nil }
        let device = "/sys/class/input/\(event)/device"
        return (try? FileManager.default.contentsOfDirectory(atPath: device))?.first { $0.hasPrefix("js") }
    }

    func testTwoClientsWithTwoPadsEachAreFourPlayersWhoKeepTheirNumbersAcrossAReconnect() throws {
        let alice = try ScratchState("coop-alice"), bob = try ScratchState("coop-bob")
        let udev = try Udev()
        let a1 = try EmulatedPlayStationPad(bus: .usb), a2 = try EmulatedPlayStationPad(bus: .usb)
        let b1 = try EmulatedPlayStationPad(bus: .usb), b2 = try EmulatedSwitchPro(calibration: EmulatedSwitchProTests.calibration)
        let physical: [Physical] = [.dualSense(a1), .dualSense(a2), .dualSense(b1), .switchPro(b2)]
        defer { physical.forEach { $0.stop() } }
        let nodes = [try XCTUnwrap(padFor(a1, udev: udev)?.hidraw), try XCTUnwrap(padFor(a2, udev: udev)?.hidraw),
                     try XCTUnwrap(padFor(b1, udev: udev)?.hidraw), try XCTUnwrap(EmulatedSwitchProTests.padFor(b2, udev: udev)?.gamepadNode?.path)]

        let host = try ScratchHost("coop-host", virtual: "uhid", ports: 27_600..<27_690)
        defer { host.stop() }
        let (serve, port, hostEnvironment) = (host.serve, host.port, host.environment)
        try host.pair(alice)
        try host.pair(bob)
        func forward(_ who: ScratchState, _ pads: ArraySlice<String>) throws -> RunningPadgate {
            try RunningPadgate(["forward", "127.0.0.1:\(port)", "--quiet"] + pads.flatMap { ["--pad", $0] }, environment: who.environment)
        }
        var forwardAlice = try forward(alice, nodes[0...1])
        let forwardBob = try forward(bob, nodes[2...3])
        defer { _ = forwardAlice.stopOutcome(after: SIGTERM); _ = forwardBob.stopOutcome(after: SIGTERM) }

        // Four host pads, each bound by its driver (hidraw and evdev), four addresses.
        func hostPads() -> [Pad]? {
            eventually(timeout: .seconds(60)) { () -> [Pad]? in
                let made = udev.pads().filter { $0.isHostVirtualPad && $0.hidraw != nil && $0.gamepadNode != nil }
                return made.count == 4 ? made : nil
            }
        }
        let made = try XCTUnwrap(hostPads(), "four host pads: \(udev.pads().filter(\.isHostVirtualPad).map(\.name)); serve said \(serve.output.suffix(2000))")
        XCTAssertEqual(Set(made.map(\.uniq)).count, 4, "four addresses: \(made.map(\.uniq))")

        // Player numbers: 1 to 4, two per client.
        func players() throws -> [[String: Any]] {
            let status = try padgate(["host", "status", "--json"], environment: hostEnvironment, timeLimit: .seconds(30))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], status.stderr)
            return try XCTUnwrap(object["players"] as? [[String: Any]])
        }
        let before = try players()
        XCTAssertEqual(before.compactMap { $0["player"] as? Int }, [1, 2, 3, 4], "\(before)")
        // Both clients run on this machine under one host name: the host tells them apart by
        // their certificates (the second is stored under the name and its fingerprint).
        let byClient = Dictionary(grouping: before) { $0["fingerprint"] as? String ?? "" }
        XCTAssertEqual(byClient.count, 2, "two clients: \(before)")
        XCTAssertTrue(byClient.values.allSatisfy { $0.count == 2 }, "two pads each: \(before)")
        XCTAssertTrue(before.allSatisfy { $0["pad"] is String }, "every number has its pad here")

        // SDL 2 and SDL 3 each see four pads with four serials.
        for library in [SDLProbe.Library.sdl2, .sdl3] {
            var serials: [String] = []
            for pad in made {
                let sdl = try SDLProbe(library, hidapi: true, path: try XCTUnwrap(pad.hidraw))
                serials.append(sdl.info["serial"] as? String ?? "")
                sdl.quit()
            }
            XCTAssertEqual(Set(serials).count, 4, "\(library): \(serials)")
            XCTAssertFalse(serials.contains(""), "\(library): \(serials)")
        }

        // Which host pad is which physical pad: a press on one shows on its host pad alone. Then
        // SDL's rumble on that host pad reaches that physical pad and no other.
        let probes = try made.map { try SDLProbe(.sdl3, hidapi: true, path: try XCTUnwrap($0.hidraw)) }
        defer { probes.forEach { $0.quit() } }
        var sequence: UInt32 = 0
        for (index, pad) in physical.enumerated() {
            var owner: Int?
            for _ in 0..<100 where owner == nil {
                try pad.press(true, sequence: &sequence)
                owner = probes.indices.first { i in
                    (probes[i].waitForState(timeout: .milliseconds(20), slice: true) { !(($0["buttons"] as? [String]) ?? []).isEmpty }) != nil
                }
            }
            let probe = try XCTUnwrap(owner.map { probes[$0] }, "physical pad \(index)'s press reached no host pad")
            for _ in 0..<20 { try pad.press(false, sequence: &sequence); usleep(10_000) }
            for other in physical { _ = other.takeOutputs() }
            XCTAssertEqual(probe.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
            let reached = eventually(timeout: .seconds(5)) { () -> Bool? in
                pad.takeOutputs().contains { pad.motors($0).map { !$0.isSilent } ?? false } ? true : nil
            }
            XCTAssertNotNil(reached, "SDL's rumble on physical pad \(index)'s host pad never reached it")
            XCTAssertEqual(probe.command("rumble 0 0 0")["rc"] as? Int, 0)
            for (otherIndex, other) in physical.enumerated() where otherIndex != index {
                XCTAssertFalse(other.takeOutputs().contains { other.motors($0).map { !$0.isSilent } ?? false },
                               "pad \(index)'s rumble reached physical pad \(otherIndex) too")
            }
        }

        // Alice's client drops and comes back: her pads come back with their numbers, addresses
        // and joystick numbers; Bob's never moved.
        let joysticks = Dictionary(uniqueKeysWithValues: made.map { ($0.uniq, joystick(of: $0)) })
        _ = forwardAlice.stopOutcome(after: SIGKILL)
        forwardAlice = try forward(alice, nodes[0...1])
        let back = eventually(timeout: .seconds(60)) { () -> [[String: Any]]? in
            guard let now = try? players(), now.count == 4, now.allSatisfy({ $0["pad"] is String }),
                  Set(now.compactMap { $0["session"] as? String }) != Set(before.compactMap { $0["session"] as? String }) else { return nil }
            return now
        }
        let after = try XCTUnwrap(back, "alice's pads did not come back: \((try? players()) ?? [])")
        for number in 1...4 {
            let old = try XCTUnwrap(before.first { $0["player"] as? Int == number }), new = try XCTUnwrap(after.first { $0["player"] as? Int == number })
            XCTAssertEqual(old["fingerprint"] as? String, new["fingerprint"] as? String, "player \(number) changed hands: \(before) then \(after)")
            // The pad as the host shows it, whichever of its client's slots it came back in.
            func what(_ line: Any?) -> String? { (line as? String)?.split(separator: ":", maxSplits: 1).last.map(String.init) }
            XCTAssertEqual(what(old["pad"]), what(new["pad"]), "player \(number)'s pad")
        }
        let remade = try XCTUnwrap(hostPads())
        XCTAssertEqual(Set(remade.map(\.uniq)), Set(made.map(\.uniq)), "the same four addresses")
        for pad in remade { XCTAssertEqual(joystick(of: pad), joysticks[pad.uniq] ?? nil, "\(pad.name) \(pad.uniq): its joystick number") }
    }
}
