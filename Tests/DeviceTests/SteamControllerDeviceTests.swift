import Foundation
import HIDCodecs
import MonotonicTime
import PadClient
import PadFamilies
import PadSystem
import PadgateRunner
import XCTest
@testable import PadDevices

/// The 2026 Steam Controller against the running kernel: hid-generic binds the emulated one (no
/// kernel driver has it on these lines) with its lizard mouse and keyboard nodes, padgate finds
/// it by its hidraw node once, and `forward` turns its lizard mode off, carries its controls to the
/// host's Deck (an Xbox 360 pad before 6.3) and the host's rumble and trackpad pulses back as its
/// own reports.
final class SteamControllerDeviceTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    /// The HID device under a hidraw node: its driver and how many input nodes it has.
    func hidDevice(of hidraw: String) -> (driver: String?, inputs: Int) {
        let device = "/sys/class/hidraw/\((hidraw as NSString).lastPathComponent)/device"
        let driver = boundDriver(ofHidraw: hidraw, expecting: "hid-generic")
        let inputs = ((try? FileManager.default.contentsOfDirectory(atPath: device + "/input")) ?? []).filter { $0.hasPrefix("input") }
        return (driver, inputs.count)
    }

    /// This test's controller (by its serial: not one an earlier test left).
    func findController(_ udev: Udev, _ controller: EmulatedSteamController) throws -> Pad {
        try XCTUnwrap(eventually(timeout: .seconds(30)) { udev.pads().first { $0.kind == .steamController && $0.hidraw != nil && $0.uniq == controller.serial } },
                      "no Steam Controller listed: \(udev.pads().map { "\($0.name) \($0.vidpid) \($0.uniq)" })")
    }

    func testHidGenericBindsTheEmulatedControllerAndPadgateFindsItByItsHidrawNodeOnce() throws {
        let controller = try EmulatedSteamController()
        defer { controller.stop() }
        let udev = try Udev()
        let pad = try findController(udev, controller)
        XCTAssertEqual(udev.pads().filter { $0.kind == .steamController }.count, 1)
        let hidraw = try XCTUnwrap(pad.hidraw)
        // Its lizard mouse and keyboard, for forward to hold (udev may list them a moment after the hidraw node).
        let lizard = eventually(timeout: .seconds(30)) { udev.pads().first { $0.uniq == controller.serial && !$0.evdev.isEmpty }?.evdev }
        XCTAssertEqual(lizard.map { Set($0.map(\.role)) }, [.other], "and never read as the pad: \(lizard ?? [])")
        let device = hidDevice(of: hidraw)
        XCTAssertEqual(device.driver, "hid-generic", "kernel \(KernelVersion.running)")
        XCTAssertGreaterThanOrEqual(device.inputs, 1, "hid-generic's lizard nodes on the same HID device")
        let listed = try padgate(["list"], timeLimit: .seconds(30))
        XCTAssertTrue(listed.stdout.contains("Steam Controller [28de:1302]"), listed.stdout)

        // What it sends reaches the hidraw node as sent, decoded by its codec.
        var controls = SteamControllerReports.Controls()
        controls.buttons = [.south, .paddleRight]
        controls.leftStick = (-32767, 0)
        let reader = try HIDRawDevice(path: hidraw)
        try controller.send(controls)
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        let seen = eventually(timeout: .seconds(10)) { () -> GamepadButtons? in
            guard let report = try? reader.read(timeout: .milliseconds(100)), (try? decoder.decode(report, into: &state)) != nil else { return nil }
            return state.buttons.contains(.south) ? state.buttons : nil
        }
        XCTAssertEqual(seen, [.south, .paddleRight])
        XCTAssertEqual(state.leftStick.x, 1)
    }

    /// SDL 3.4's own driver for the controller (`SDL_hidapi_steam_triton.c`, in sid's libsdl3)
    /// opens the emulated one through hidraw and sees what a game reads: its buttons and one back
    /// grip, the sticks (y negated), both trackpads, the IMU in SDL's units; it turns the IMU on,
    /// and its rumble comes as the controller's own report 0x80. Expected values are SDL's
    /// (its source, cited): what a program that knows the controller makes of padgate's.
    func testSDL34sOwnDriverOpensTheEmulatedControllerAndSeesItsControlsPadsAndIMU() throws {
        let controller = try EmulatedSteamController()
        defer { controller.stop() }
        let udev = try Udev()
        let pad = try findController(udev, controller)
        let sdl = try SDLProbe(.sdl34, hidapi: true, path: try XCTUnwrap(pad.hidraw))
        defer { sdl.quit() }
        print("SDL 3.4 sees the controller as \(sdl.info)")
        let version = (sdl.info["sdl_version"] as? String ?? "").split(separator: ".").compactMap { Int($0) }
        XCTAssertTrue(version.count >= 2 && version[0] == 3 && version[1] >= 4, "an SDL with the controller's driver (3.4 on): \(sdl.info)")
        XCTAssertEqual(sdl.info["product"] as? Int, 0x1302)
        XCTAssertEqual(sdl.info["touchpads"] as? Int, 2, "its two trackpads (OpenJoystick adds two of one finger)")
        XCTAssertEqual(sdl.info["gyro"] as? Bool, true, "\(sdl.info)")
        XCTAssertEqual(sdl.info["accel"] as? Bool, true, "\(sdl.info)")
        XCTAssertEqual(sdl.info["has_rumble"] as? Bool, true, "\(sdl.info)")
        // The IMU on as the probe enables its sensors (SetSensorsEnabled: setting 0x30, raw accel
        // and gyro 0x18). (3.4.14's source turns lizard mode off too as it updates the device;
        // 3.4.18, the SDL under test, sent no such report within 10 s.)
        let settings = { (report: [UInt8]) in SteamControllerCommands.settingValues(report)?.map { [Int($0.setting), Int($0.value)] } }
        var seenReports: [[UInt8]] = []
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(10)) { seenReports.append($0); return settings($0) == [[0x30, 0x18]] },
                        "SDL never turned the IMU on; it sent \(seenReports.map { $0.prefix(8).map { String(format: "%02x", $0) }.joined() })")

        // A and the left back grip (L4) held, the left stick at (12000, 20000), the right trigger
        // full, the right pad touched at (16384, -16384), 1440 gyro counts about x.
        var controls = SteamControllerReports.Controls()
        controls.buttons = [.south, .paddleLeft]
        controls.leftStick = (12_000, 20_000)
        controls.triggers = (0, 32767)
        controls.rightPad = (16_384, -16_384)
        controls.gyro = Vector3(x: 1440, y: 0, z: 0)
        controls.accel = Vector3(x: 0, y: 0, z: 16_384)
        try controller.send(controls)
        let state = sdl.waitForState(timeout: .seconds(10)) { state in
            let gyro = state["gyro"] as? [Double] ?? []
            return (state["buttons"] as? [String] ?? []).contains("a") && abs((gyro.first ?? 0) - 1440.0 / 32768 * 2000 * Double.pi / 180) < 0.005
        }
        XCTAssertNotNil(state, "SDL 3.4 never saw A and the gyro: \(sdl.lastState)")
        print("SDL 3.4 reads the controller's state as \(state ?? [:])")
        let pressed = Set(state?["buttons"] as? [String] ?? [])
        XCTAssertEqual(pressed.filter { $0.hasPrefix("paddle") }.count, 1, "one back grip held: \(pressed)")
        // HandleGenericState: LEFTX = x, LEFTY = -y; a trigger's axis is v * 2 - 32768 (SDL's
        // gamepad layer shows it 0...32767).
        let axes = state?["axes"] as? [String: Int] ?? [:]
        XCTAssertEqual(axes["leftx"], 12_000, "\(axes)")
        XCTAssertEqual(axes["lefty"], -20_000, "\(axes)")
        XCTAssertGreaterThan(axes["righttrigger"] ?? 0, 32_000, "\(axes)")
        XCTAssertEqual(axes["lefttrigger"] ?? -1, 0, "\(axes)")
        // HandleState: touchpad 1 is the right pad, x = X / 65536 + 0.5, y = -Y / 65536 + 0.5.
        let pads = state?["touchpads"] as? [[[String: Any]]] ?? []
        XCTAssertEqual(pads.count, 2, "\(state ?? [:])")
        let right = pads.count == 2 ? pads[1].first : nil
        XCTAssertEqual(right?["down"] as? Bool, true, "\(pads)")
        XCTAssertEqual(right?["x"] as? Double ?? 0, 0.75, accuracy: 0.001, "\(pads)")
        XCTAssertEqual(right?["y"] as? Double ?? 0, 0.75, accuracy: 0.001, "\(pads)")
        XCTAssertEqual(pads.first?.first?["down"] as? Bool, false, "the left pad untouched: \(pads)")
        // Accelerometer: 2/32768 g a count, SDL's y is the controller's z.
        let accel = state?["accel"] as? [Double] ?? []
        XCTAssertEqual(accel.count, 3)
        XCTAssertEqual(accel.dropFirst().first ?? 0, 16_384.0 / 32768 * 2 * 9.80665, accuracy: 0.01, "\(accel)")

        // SDL's rumble: report 0x80 with the strong motor's speed on the left, the weak's on the right.
        _ = controller.takeOutputs()
        XCTAssertEqual(sdl.command("rumble 49152 16384 5000")["rc"] as? Int, 0, "\(sdl.info)")
        let rumble = { (report: [UInt8]) in SteamControllerCommands.rumbleSpeeds(report) }
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 49152 && $0.high == 16384 } == true },
                        "SDL 3.4's rumble never reached the controller")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 0 && $0.high == 0 } == true },
                        "SDL 3.4's rumble stop never reached the controller")
        try controller.send(SteamControllerReports.Controls())
        XCTAssertNotNil(sdl.waitForState(timeout: .seconds(10)) { ($0["buttons"] as? [String] ?? []).isEmpty }, "released: \(sdl.lastState)")
    }

    /// `padgate emulate steam-controller` makes one, and `padgate rumble` on it sends its own
    /// rumble report, which `emulate` prints; the end of the rumble is a stop.
    func testEmulateMakesOneAndRumbleReachesItAsItsOwnReport() throws {
        try assertEmulatedRumble(model: "steam-controller", kind: .steamController, summary: "virtual Steam Controller")
    }

    /// `forward` on the controller's hidraw node to a host of this test's own, paired. The
    /// client's state goes with them: its scratch directory (its identity) lasts as long as it.
    func forwarding(_ pad: Pad, name: String, ports: Range<Int>, hostArguments: [String] = []) throws -> (client: ScratchState, host: ScratchHost, forward: RunningPadgate) {
        let client = try ScratchState("\(name)-client")
        let host = try ScratchHost("\(name)-host", virtual: "auto", ports: ports, arguments: hostArguments)
        try host.pair(client)
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(host.port)", "--pad", try XCTUnwrap(pad.hidraw)], environment: client.environment)
        return (client, host, forward)
    }

    func testAForwardedControllerReachesTheHostsPadAndTheHostsRumbleReachesIt() throws {
        let controller = try EmulatedSteamController()
        defer { controller.stop() }
        let udev = try Udev()
        let pad = try findController(udev, controller)
        let (client, host, forward) = try forwarding(pad, name: "triton", ports: 27_790..<27_880)
        defer { host.stop(); withExtendedLifetime(client) {} }
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(forward.waitFor("through hidraw", timeout: .seconds(60)), forward.output)

        // forward turns lizard mode off and the IMU on as it opens the controller, and keeps
        // lizard mode off (the controller falls back 8 s after the last): again within its 3 s.
        let settings = { (report: [UInt8]) in SteamControllerCommands.settingValues(report)?.map { [Int($0.setting), Int($0.value)] } }
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(10)) { settings($0) == [[9, 0]] }, "lizard mode never turned off")
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(10)) { settings($0) == [[0x30, 0x18]] }, "the IMU never turned on")
        let first = MonotonicInstant.now
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(10)) { settings($0) == [[9, 0]] }, "lizard mode off only once")
        XCTAssertLessThan(MonotonicInstant.now - first, .seconds(6), "within the 3 s it is re-sent at (and the 8 s the controller keeps it)")

        // The host shows it as a Steam Deck where hid-steam drives Decks (6.3 on), else as an
        // Xbox 360 pad (and says why).
        let shown = try ValveHostPad(udev, host: host)
        let (hostPad, gamepadNode, reader, hostShowsADeck) = (shown.pad, shown.gamepadNode, shown.reader, shown.isDeck)
        var controls = SteamControllerReports.Controls()
        controls.buttons = [.south, .r1, .leftStickTouch, .rightStickTouch]
        controls.leftStick = (32767, 32767)
        controls.triggers = (0, 32767)
        controls.rightPad = (32767, -32768)
        try controller.send(controls)
        let state = try waitForState(reader, timeout: .seconds(10)) { $0.buttons.contains("south") && $0.buttons.contains("r1") }
        XCTAssertNotNil(state, "the host's pad never showed A and RB; serve said \(host.serve.output.suffix(1500))")
        XCTAssertGreaterThan(state?.left_stick[0] ?? 0, 30000, "\(String(describing: state))")
        XCTAssertLessThan(state?.left_stick[1] ?? 0, -30000, "its up is the host's up: \(String(describing: state))")
        // xpad's triggers are 0...255; hid-steam's are axes of their own, not read here.
        if !hostShowsADeck { XCTAssertGreaterThan(state?.r2 ?? 0, 250, "\(String(describing: state))") }
        try controller.send(SteamControllerReports.Controls())
        XCTAssertNotNil(try waitForState(reader, timeout: .seconds(10)) { $0.buttons.isEmpty }, "released on the host")

        let rumble = { (report: [UInt8]) in SteamControllerCommands.rumbleSpeeds(report) }
        guard hostShowsADeck else {
            // A game's rumble on the host's pad comes back as the controller's own report, then stops.
            let player = try playGameEffect(on: gamepadNode)
            defer { player.terminate(); player.waitUntilExit() }
            XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0)?.low == 192 * 257 },
                            "the game's rumble never reached the controller; forward said \(forward.output.suffix(1500))")
            XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(3)) { rumble($0).map { $0.low == 0 && $0.high == 0 } == true },
                            "the 300 ms effect's end never reached the controller; forward said \(forward.output.suffix(1500))")
            return
        }
        // SDL 3's Steam Deck driver on the host's Deck: a grip held and the IMU, numerically. The
        // controller's 1440 gyro counts about x (90 deg/s at hid-steam's 16 a deg/s, the Deck's
        // scale too) are 1440 of the host Deck's, which SDL reads at 2000/32768 deg/s a count (as
        // its Triton driver reads the controller's); x is x on both.
        let sdl = try SDLProbe(.sdl3, hidapi: true, path: try XCTUnwrap(hostPad.hidraw), opensHidSteamPad: true)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["product"] as? Int, 0x1205, "\(sdl.info)")
        var moved = SteamControllerReports.Controls()
        moved.buttons = [.east, .paddleLeft]
        moved.gyro = Vector3(x: 1440, y: 0, z: 0)
        try controller.send(moved)
        let seen = sdl.waitForState(timeout: .seconds(10)) { state in
            let gyro = state["gyro"] as? [Double] ?? []
            return (state["buttons"] as? [String] ?? []).contains("b") && abs((gyro.first ?? 0) - 1440.0 / 32768 * 2000 * Double.pi / 180) < 0.005
        }
        XCTAssertNotNil(seen, "SDL never saw B and 1440 counts about x: \(sdl.lastState)")
        XCTAssertEqual(Set(seen?["buttons"] as? [String] ?? []).filter { $0.hasPrefix("paddle") }.count, 1, "one grip held: \(seen ?? [:])")

        // SDL's rumble comes back as the controller's own report 0x80; the game stops it itself.
        _ = controller.takeOutputs()
        XCTAssertEqual(sdl.command("rumble 49152 0 5000")["rc"] as? Int, 0, "\(sdl.info)")
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0)?.low == 192 * 257 },
                        "SDL's rumble never reached the controller; forward said \(forward.output.suffix(1500))")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 0 && $0.high == 0 } == true },
                        "the rumble's stop never reached the controller; forward said \(forward.output.suffix(1500))")
        // A trackpad's pulse train, as Steam sends one through the Deck's hidraw node, plays on the
        // controller as its own report 0x81: the pad, µs on and off and the count kept.
        let game = try HIDRawDevice(path: try XCTUnwrap(hostPad.hidraw))
        try game.sendFeatureReport(SteamDeckCommands.pulse(.init(pad: .left, onMicros: 300, offMicros: 700, count: 5, gain: -3)))
        let pulse = controller.channel.waitForOutput(timeout: .seconds(5)) { SteamControllerCommands.pulse($0) != nil }
        let played = pulse.flatMap { SteamControllerCommands.pulse($0) }
        XCTAssertEqual(played?.pad, .left, "the pulse never reached the controller; forward said \(forward.output.suffix(1500))")
        XCTAssertEqual(played.map { [$0.onMicros, $0.offMicros, $0.count] }, [300, 700, 5])
        XCTAssertEqual(pulse?.count, SteamControllerCommands.pulseLength)
        // The right pad pressed at 23456 reaches the host's Deck where Steam and SDL read it (u16
        // at 58 of its report). (Its hidraw node open, hid-steam hands reports to it alone.)
        var pressed = SteamControllerReports.Controls()
        pressed.rightPad = (1000, 1000)
        pressed.padPressure = (0, 23456)
        try controller.send(pressed)
        let report = eventually(timeout: .seconds(10)) { () -> [UInt8]? in
            guard let r = try? game.read(timeout: .milliseconds(200)), r.count >= SteamDeckLayout.fieldsEnd else { return nil }
            return r[SteamDeckLayout.padPressure + 2] == 0xa0 && r[SteamDeckLayout.padPressure + 3] == 0x5b ? r : nil
        }
        XCTAssertNotNil(report, "the host's Deck never pressed its right pad with 23456 (0x5ba0); forward said \(forward.output.suffix(800))")
    }

    /// `serve --show steam-controller=itself`: the host's pad is a Steam Controller (hid-generic
    /// binds it, padgate lists it as its own and never forwards it), and SDL 3.4's own driver
    /// opens it and reads the physical controller's controls, right pad and gyro through the link
    /// in SDL's units. Its rumble comes back as the physical controller's report 0x80 and stops;
    /// one rumble report a dead game never follows stops by itself (the real controller's rule);
    /// a pulse train on its trackpad plays on the physical one as its report 0x81.
    func testAHostShowingTheControllerAsItselfGivesSDL34TheControllerAndItsFeedbackComesBack() throws {
        let controller = try EmulatedSteamController()
        defer { controller.stop() }
        let udev = try Udev()
        let pad = try findController(udev, controller)
        let (client, host, forward) = try forwarding(pad, name: "triton-itself", ports: 27_970..<28_060, hostArguments: ["--show", "steam-controller=itself"])
        defer { host.stop(); withExtendedLifetime(client) {} }
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(forward.waitFor("through hidraw", timeout: .seconds(60)), forward.output)
        let hostPad = try XCTUnwrap(eventually(timeout: .seconds(60)) { udev.pads().first { $0.isHostVirtualPad && $0.kind == .steamController } },
                                    "no host Steam Controller; serve said \(host.serve.output.suffix(1500))")
        XCTAssertEqual(hidDevice(of: try XCTUnwrap(hostPad.hidraw)).driver, "hid-generic", "kernel \(KernelVersion.running)")
        XCTAssertEqual(udev.pads().filter { $0.kind == .steamController }.count, 2, "the physical controller and the host's")

        let sdl = try SDLProbe(.sdl34, hidapi: true, path: try XCTUnwrap(hostPad.hidraw))
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["product"] as? Int, 0x1302, "\(sdl.info)")
        XCTAssertEqual(sdl.info["touchpads"] as? Int, 2, "\(sdl.info)")
        XCTAssertEqual(sdl.info["gyro"] as? Bool, true, "\(sdl.info)")
        XCTAssertEqual(sdl.info["has_rumble"] as? Bool, true, "\(sdl.info)")
        // As in the direct test: A and a grip, the left stick, the right trigger, the right pad,
        // 1440 gyro counts about x: through the wire and back into the host controller's report.
        var controls = SteamControllerReports.Controls()
        controls.buttons = [.south, .paddleLeft]
        controls.leftStick = (12_000, 20_000)
        controls.triggers = (0, 32767)
        controls.rightPad = (16_384, -16_384)
        controls.gyro = Vector3(x: 1440, y: 0, z: 0)
        controls.accel = Vector3(x: 0, y: 0, z: 16_384)
        try controller.send(controls)
        let state = sdl.waitForState(timeout: .seconds(10)) { state in
            let gyro = state["gyro"] as? [Double] ?? []
            return (state["buttons"] as? [String] ?? []).contains("a") && abs((gyro.first ?? 0) - 1440.0 / 32768 * 2000 * Double.pi / 180) < 0.01
        }
        XCTAssertNotNil(state, "SDL 3.4 never saw A and the gyro on the host's controller: \(sdl.lastState); serve said \(host.serve.output.suffix(800))")
        print("SDL 3.4 reads the host's Steam Controller as \(state ?? [:])")
        XCTAssertEqual(Set(state?["buttons"] as? [String] ?? []).filter { $0.hasPrefix("paddle") }.count, 1, "one grip: \(state ?? [:])")
        let axes = state?["axes"] as? [String: Int] ?? [:]
        XCTAssertEqual(Double(axes["leftx"] ?? 0), 12_000, accuracy: 2, "\(axes)")
        XCTAssertEqual(Double(axes["lefty"] ?? 0), -20_000, accuracy: 2, "\(axes)")
        XCTAssertGreaterThan(axes["righttrigger"] ?? 0, 32_000, "\(axes)")
        let pads = state?["touchpads"] as? [[[String: Any]]] ?? []
        let right = pads.count == 2 ? pads[1].first : nil
        XCTAssertEqual(right?["down"] as? Bool, true, "\(pads)")
        XCTAssertEqual(right?["x"] as? Double ?? 0, 0.75, accuracy: 0.01, "\(pads)")
        XCTAssertEqual(right?["y"] as? Double ?? 0, 0.75, accuracy: 0.01, "\(pads)")
        let accel = state?["accel"] as? [Double] ?? []
        XCTAssertEqual(accel.dropFirst().first ?? 0, 9.80665, accuracy: 0.05, "\(accel)")

        // SDL's rumble reaches the physical controller as its own report (levels of 255: 192 and
        // 64 are 192 × 257 and 64 × 257), and SDL's stop stops it.
        let rumble = { (report: [UInt8]) in SteamControllerCommands.rumbleSpeeds(report) }
        _ = controller.takeOutputs()
        XCTAssertEqual(sdl.command("rumble 49152 16384 5000")["rc"] as? Int, 0, "\(sdl.info)")
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 192 * 257 && $0.high == 64 * 257 } == true },
                        "SDL 3.4's rumble on the host never reached the controller; forward said \(forward.output.suffix(1500))")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 0 && $0.high == 0 } == true },
                        "SDL 3.4's stop never reached the controller; forward said \(forward.output.suffix(1500))")
        sdl.quit()

        // One rumble report and nothing after (a game killed mid-rumble): the controller stops a
        // level by itself, so the host's stops too, and the physical one with it.
        let game = try HIDRawDevice(path: try XCTUnwrap(hostPad.hidraw))
        _ = controller.takeOutputs()
        try game.write(SteamControllerCommands.rumble(MotorLevels(low: 128, high: 0)))
        let sent = MonotonicInstant.now
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0)?.low == 128 * 257 },
                        "the game's rumble never reached the controller; forward said \(forward.output.suffix(1500))")
        XCTAssertNotNil(controller.channel.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.low == 0 && $0.high == 0 } == true },
                        "a rumble nobody renewed never stopped; forward said \(forward.output.suffix(1500))")
        print("one rumble report: the physical controller stopped \(MonotonicInstant.now - sent) after it was written (the host holds it \(SteamControllerVirtualPad.rumbleHold))")

        // A pulse train on the host controller's right pad, as Steam sends one: the physical pad's own report.
        try game.write(SteamControllerCommands.pulse(pad: .right, onMicros: 300, offMicros: 700, count: 5))
        let pulse = controller.channel.waitForOutput(timeout: .seconds(5)) { SteamControllerCommands.pulse($0) != nil }
        let played = pulse.flatMap { SteamControllerCommands.pulse($0) }
        XCTAssertEqual(played?.pad, .right, "the pulse never reached the controller; forward said \(forward.output.suffix(1500))")
        XCTAssertEqual(played.map { [$0.onMicros, $0.offMicros, $0.count] }, [300, 700, 5])
    }

    /// A puck's slot is a pad on the host only while a controller is on it: none while it is
    /// silent, one when a controller comes (its connect report, then its state), none once it goes.
    func testAPucksSlotIsAHostPadOnlyWhileAControllerIsOnIt() throws {
        let slot = try EmulatedSteamController(product: 0x1304, connected: false)
        defer { slot.stop() }
        let udev = try Udev()
        let pad = try findController(udev, slot)
        XCTAssertEqual(pad.productID, 0x1304)
        let (client, host, forward) = try forwarding(pad, name: "puck", ports: 27_880..<27_970)
        defer { host.stop(); withExtendedLifetime(client) {} }
        defer { _ = forward.stopOutcome(after: SIGTERM) }
        XCTAssertTrue(forward.waitFor("connected to", timeout: .seconds(60)), forward.output)
        // forward has the slot open (its lizard mode off went out); the host has no pad for it.
        XCTAssertNotNil(slot.channel.waitForOutput(timeout: .seconds(10)) { SteamControllerCommands.settingValues($0) != nil }, forward.output)
        // The host's pad: a Deck (found by its hidraw node) or an Xbox 360 pad.
        let hostPad = { udev.pads().first { $0.isHostVirtualPad && ($0.gamepadNode != nil || $0.kind == .steamDeck) } }
        XCTAssertNil(eventually(timeout: .seconds(2), expiryIsExpected: true, hostPad), "an empty slot made a host pad")

        try slot.setConnected(true)
        var controls = SteamControllerReports.Controls()
        controls.buttons = [.east]
        try slot.send(controls)
        XCTAssertNotNil(eventually(timeout: .seconds(30), hostPad), "no host pad once a controller came; forward said \(forward.output.suffix(1500))")
        XCTAssertTrue(forward.waitFor("a controller came onto its slot", timeout: .seconds(10)), forward.output)

        try slot.setConnected(false)
        XCTAssertNotNil(eventually(timeout: .seconds(30)) { hostPad() == nil ? true : nil }, "the host pad stayed after the controller left")
        XCTAssertTrue(forward.waitFor("its controller left its slot", timeout: .seconds(10)), forward.output)

        // It comes back, then falls silent without a word (switched off): gone from the host too,
        // and its settings went to it again as it came back.
        _ = slot.takeOutputs()
        try slot.setConnected(true)
        try slot.send(controls)
        XCTAssertNotNil(eventually(timeout: .seconds(30), hostPad), "no host pad once it came back; forward said \(forward.output.suffix(1500))")
        XCTAssertNotNil(slot.channel.waitForOutput(timeout: .seconds(10)) { SteamControllerCommands.settingValues($0)?.first?.setting == SteamControllerCommands.imuModeSetting },
                        "the IMU was not turned on again as it came back")
        try slot.setConnected(false, saying: false)
        XCTAssertNotNil(eventually(timeout: .seconds(30)) { hostPad() == nil ? true : nil }, "the host pad stayed after the controller fell silent")
    }
}
