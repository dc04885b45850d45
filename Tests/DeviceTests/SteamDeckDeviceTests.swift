import Foundation
import HIDCodecs
import MonotonicTime
import PadClient
import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// A Steam Deck's controls against the running kernel: hid-steam binds the emulated Deck (from
/// 6.3; hid-generic before) after the probe it answers as a Deck does, padgate finds it by its
/// controller's hidraw node alone, and `forward` carries its controls to the host and the host's
/// rumble back to the Deck as its own command.
final class SteamDeckDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    func driver(of hidraw: String, expecting: String) -> String? { boundDriver(ofHidraw: hidraw, expecting: expecting) }

    func testTheKernelBindsTheEmulatedDeckAndPadgateFindsItByItsHidrawNodeOnce() throws {
        let deck = try EmulatedSteamDeck()
        defer { deck.stop() }
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.kind == .steamDeck && $0.hidraw != nil } },
                                "no Steam Deck listed: \(udev.pads().map { "\($0.name) \($0.vidpid)" })")
        XCTAssertEqual(udev.pads().filter { $0.kind == .steamDeck }.count, 1, "one pad, not hid-steam's evdev view beside it")
        let hidraw = try XCTUnwrap(pad.hidraw)
        XCTAssertEqual(pad.evdev, [])
        if KernelVersion.running >= .hidSteamDrivesTheDeck {
            // hid-steam's client device owns the hidraw node; its own device has the evdev nodes
            // (named from the serial it read with `ae 16 01`) until a program opens that node.
            XCTAssertEqual(driver(of: hidraw, expecting: "hid-steam"), "hid-steam", "kernel \(KernelVersion.running)")
            let names = try shell("cat /proc/bus/input/devices")
            XCTAssertTrue(names.contains("Steam Deck"), "hid-steam's evdev nodes on \(KernelVersion.running): \(names)")
            XCTAssertTrue(names.contains("U: Uniq=\(deck.serial)"), "the serial hid-steam read at probe: \(names)")
        } else {
            XCTAssertEqual(driver(of: hidraw, expecting: "hid-generic"), "hid-generic", "kernel \(KernelVersion.running)")
        }
        // `list` says what it is and how forward reads it.
        let listed = try padgate(["list"], timeLimit: .seconds(30))
        XCTAssertTrue(listed.stdout.contains("Steam Deck [28de:1205]"), listed.stdout)

        // What the Deck sends reaches its hidraw node as it sent it, decoded by its codec.
        let device = try HIDRawDevice(path: hidraw)
        var controls = SteamDeckReports.Controls()
        controls.buttons = [.south, .paddleRight, .quickAccess]
        controls.leftStick = (12_000, -20_000)
        controls.rightPad = (-3000, 4000)
        try deck.send(controls)
        var decoder = ControllerInputDecoder(SteamDeckInputCodec())
        var state = GamepadState()
        let seen = eventually(timeout: .seconds(10)) { () -> GamepadState? in
            guard let report = try? device.read(timeout: .milliseconds(100)), (try? decoder.decode(report, into: &state)) != nil else { return nil }
            return state.buttons == controls.buttons ? state : nil
        }
        // A command through the same node reaches the Deck (hid-steam passes its client's feature
        // reports on), and its reply comes back.
        _ = deck.takeOutputs()
        XCTAssertNoThrow(try device.sendFeatureReport(SteamDeckCommands.rumble(MotorLevels(low: 10, high: 20))))
        XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(5)) { SteamDeckCommands.rumbleLevels(Array($0.dropFirst()))?.strong == 10 * 257 },
                        "the rumble command never reached the Deck")
        XCTAssertEqual(try device.featureReport(0, length: 65).prefix(2), [0x00, 0xEB], "the Deck's reply: the command echoed")
        XCTAssertEqual(seen?.touch1.active, true)
        XCTAssertEqual(seen?.leftStick.x, 12_000 + 32768)
        XCTAssertEqual(seen?.leftStick.y, UInt16(32768 + 20_000), "+y down")
    }

    /// SDL 3's HIDAPI Steam Deck driver opens the emulated Deck (its probe and settings answered as
    /// a Deck answers them) and sees its controls, its back grips and its IMU in SDL's units: the
    /// same Deck the host shows games for a forwarded one. SDL 3.2's driver gives no touchpads
    /// (the count is printed).
    func testSDL3sSteamDeckDriverOpensTheEmulatedDeckAndSeesItsPadsAndIMU() throws {
        let deck = try EmulatedSteamDeck()
        defer { deck.stop() }
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.kind == .steamDeck && $0.hidraw != nil } })
        let sdl = try SDLProbe(.sdl3, hidapi: true, path: try XCTUnwrap(pad.hidraw), opensHidSteamPad: true)
        defer { sdl.quit() }
        print("SDL 3 sees the Deck as \(sdl.info)")
        XCTAssertEqual(sdl.info["vendor"] as? Int, 0x28de)
        XCTAssertEqual(sdl.info["product"] as? Int, 0x1205)
        XCTAssertEqual(sdl.info["gyro"] as? Bool, true, "\(sdl.info)")
        XCTAssertEqual(sdl.info["accel"] as? Bool, true, "\(sdl.info)")
        let offered = Set(sdl.info["buttons"] as? [String] ?? [])
        XCTAssertTrue(offered.isSuperset(of: ["a", "b", "x", "y", "back", "guide", "start", "paddle1", "paddle2", "paddle3", "paddle4"]), "\(offered)")

        // A on, the back grip L4 held, 1440 counts about the Deck's x axis (90 deg/s to hid-steam),
        // the accelerometer 16384 along its z (1 g).
        var controls = SteamDeckReports.Controls()
        controls.buttons = [.south, .paddleLeft]
        controls.gyro = Vector3(x: 1440, y: 0, z: 0)
        try deck.send(controls)
        let state = sdl.waitForState(timeout: .seconds(10)) { ($0["buttons"] as? [String] ?? []).contains("a") }
        XCTAssertNotNil(state, "SDL never saw A: \(sdl.lastState)")
        print("SDL 3 reads the Deck's state as \(state ?? [:])")
        let pressed = Set(state?["buttons"] as? [String] ?? [])
        XCTAssertEqual(pressed.filter { $0.hasPrefix("paddle") }.count, 1, "one back grip held: \(pressed)")
        // SDL_hidapi_steamdeck.c's scales: a gyro count is 2000/32768 deg/s, an accelerometer
        // count 2/32768 g; its axes are hid-steam's (x, z, −y).
        let gyro = state?["gyro"] as? [Double] ?? []
        XCTAssertEqual(gyro.first ?? 0, 1440.0 / 32768 * 2000 * Double.pi / 180, accuracy: 0.001, "\(gyro)")
        let accel = state?["accel"] as? [Double] ?? []
        XCTAssertEqual(accel.count, 3)
        XCTAssertEqual(accel.dropFirst().first ?? 0, 16384.0 / 32768 * 2 * 9.80665, accuracy: 0.01, "\(accel)")
        try deck.send(SteamDeckReports.Controls())
        XCTAssertNotNil(sdl.waitForState(timeout: .seconds(10)) { ($0["buttons"] as? [String] ?? []).isEmpty }, "released: \(sdl.lastState)")
    }

    /// `padgate emulate steam-deck` makes one, and `padgate rumble` on it sends the Deck's own
    /// rumble command, which `emulate` prints as it reads it; the end of the rumble is a stop.
    func testEmulateMakesADeckAndRumbleReachesItAsItsOwnCommand() throws {
        try assertEmulatedRumble(model: "steam-deck", kind: .steamDeck, summary: "virtual Steam Deck controls")
    }

    func testAForwardedDeckReachesTheHostsPadAndTheHostsRumbleReachesTheDeck() throws {
        let deck = try EmulatedSteamDeck()
        defer { deck.stop() }
        let udev = try Udev()
        let pad = try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.kind == .steamDeck && $0.hidraw != nil } })
        let client = try ScratchState("deck-client")
        let host = try ScratchHost("deck-host", virtual: "auto", ports: 27_700..<27_790)
        defer { host.stop() }
        try host.pair(client)
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(host.port)", "--pad", try XCTUnwrap(pad.hidraw)], environment: client.environment)
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(forward.waitFor("through hidraw", timeout: .seconds(60)), forward.output)
        // The host's pad is a Deck where hid-steam drives one: its client device's hidraw node is
        // the Deck SDL opens, its evdev node the gamepad other games read.
        let shown = try ValveHostPad(udev, host: host)
        let (hostPad, gamepadNode, reader, hidSteamDrivesDecks) = (shown.pad, shown.gamepadNode, shown.reader, shown.isDeck)
        var controls = SteamDeckReports.Controls()
        // Thumbs on both sticks (their touch bits, in nearly every report of a Deck in hand) and
        // on the right trackpad's corner: all of it crosses (the host refused the whole state while
        // the wire knew no button past bit 19, and a contact outside the DualSense's touch space).
        controls.buttons = [.south, .r1, .leftStickTouch, .rightStickTouch, .quickAccess]
        controls.rightPad = (32767, -32768)
        controls.leftStick = (32767, 32767)
        controls.triggers = (0, 32767)
        try deck.send(controls)
        let state = try waitForState(reader, timeout: .seconds(10)) { $0.buttons.contains("south") && $0.buttons.contains("r1") }
        XCTAssertNotNil(state, "the host's pad never showed A and RB; serve said \(host.serve.output.suffix(2000)); the Deck's nodes: \((try? shell("grep -B2 -A8 'Steam Deck' /proc/bus/input/devices")) ?? "")")
        // xpad's and hid-steam's ranges: ±32767 sticks with +y down.
        XCTAssertGreaterThan(state?.left_stick[0] ?? 0, 30000, "\(String(describing: state))")
        XCTAssertLessThan(state?.left_stick[1] ?? 0, -30000, "the Deck's up is the host's up: \(String(describing: state))")
        // xpad's triggers are 0...255; hid-steam's are axes of their own (ABS_HAT2X/Y), not read here.
        if !hidSteamDrivesDecks { XCTAssertGreaterThan(state?.r2 ?? 0, 250, "\(String(describing: state))") }
        try deck.send(SteamDeckReports.Controls())
        XCTAssertNotNil(try waitForState(reader, timeout: .seconds(10)) { $0.buttons.isEmpty }, "released on the host")
        // hid-steam answers the host's switch to gamepad mode with a pulse on each of its pads:
        // the host's, not a game's, so the Deck in the person's hands never feels it.
        let pulses = deck.takeOutputs().filter { SteamDeckCommands.pulse(Array($0.dropFirst())) != nil }
        XCTAssertEqual(pulses.count, 0, "the host's mode switch reached the Deck: \(pulses.map { Hex.encode(Array($0.prefix(12))) })")

        // A game's rumble on the host's pad comes back as the Deck's own rumble command, then stops:
        // through SDL 3's HIDAPI driver on the host's Deck (Debian's hid-steam gives its evdev node
        // no force feedback), through force feedback on the Xbox 360 pad.
        _ = deck.takeOutputs()
        let rumble = { (report: [UInt8]) in SteamDeckCommands.rumbleLevels(Array(report.dropFirst())) }
        if hidSteamDrivesDecks {
            let sdl = try SDLProbe(.sdl3, hidapi: true, path: try XCTUnwrap(hostPad.hidraw), opensHidSteamPad: true)
            defer { sdl.quit() }
            // SDL ends a timed rumble only as the game updates it: the game stops it itself.
            XCTAssertEqual(sdl.command("rumble 49152 0 5000")["rc"] as? Int, 0, "\(sdl.info)")
            XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(5)) { rumble($0)?.strong == 192 * 257 },
                            "SDL's rumble never reached the Deck; forward said \(forward.output.suffix(1500))")
            XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
            XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.strong == 0 && $0.weak == 0 } == true },
                            "the rumble's stop never reached the Deck; forward said \(forward.output.suffix(1500))")
            // A trackpad's pulse train (as Steam sends one through the Deck's hidraw node) reaches
            // the physical Deck as its own command, its fields kept.
            let train = SteamDeckCommands.Pulse(pad: .left, onMicros: 300, offMicros: 700, count: 5, gain: -3)
            let game = try HIDRawDevice(path: try XCTUnwrap(hostPad.hidraw))
            try game.sendFeatureReport(SteamDeckCommands.pulse(train))
            XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(5)) { SteamDeckCommands.pulse(Array($0.dropFirst())) == train },
                            "the pulse never reached the Deck; forward said \(forward.output.suffix(1500))")
            // The right pad pressed: the host's Deck says so where Steam and SDL read it (u16 at
            // 58 of its state report, 0...32767), through the wire's 16 bits. (Its hidraw node
            // open, hid-steam hands the reports to it and not to its evdev node.)
            var pressed = controls
            pressed.padPressure = (0, 23456)
            try deck.send(pressed)
            let report = eventually(timeout: .seconds(10)) { () -> [UInt8]? in
                guard let r = try? game.read(timeout: .milliseconds(200)), r.count >= SteamDeckLayout.fieldsEnd else { return nil }
                return r[SteamDeckLayout.padPressure + 2] == 0xa0 && r[SteamDeckLayout.padPressure + 3] == 0x5b ? r : nil
            }
            XCTAssertNotNil(report, "the host's Deck never pressed its right pad with 23456 (0x5ba0); forward said \(forward.output.suffix(800))")
            return
        }
        let player = try playGameEffect(on: gamepadNode)
        defer { player.terminate(); player.waitUntilExit() }
        XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(5)) { rumble($0)?.strong == 192 * 257 }, "the game's rumble never reached the Deck; serve said \(host.serve.output.suffix(2500)); forward said \(forward.output.split(separator: "\n").filter { !$0.hasPrefix("pads ") }.suffix(60).joined(separator: "\n")); the Deck was sent \(deck.takeOutputs().map { Hex.encode(Array($0.prefix(12))) })")
        XCTAssertNotNil(deck.channel.waitForOutput(timeout: .seconds(3)) { rumble($0).map { $0.strong == 0 && $0.weak == 0 } == true },
                        "the 300 ms effect's end never reached the Deck; forward said \(forward.output.suffix(1500))")
    }
}
