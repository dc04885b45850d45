import Foundation
import HIDCodecs
import MonotonicTime
@testable import PadFamilies
import PadSystem
import WireProtocol
import XCTest
@testable import PadDevices

/// padgate's pads as a game sees them: Debian's libsdl2 (Tests/SDLProbe/sdl-probe.c) and Debian's
/// SDL 3 (Tests/SDLProbe/sdl3-probe.c, built by tools/build-sdl3.sh), each with its HIDAPI drivers
/// on and off, against `emulate`'s DualSense on both buses, the uinput Xbox pad, and the host's
/// virtual pads behind `serve`/`forward`. Every check runs once per library (a test for SDL 2, its
/// twin with "SDL3" in its name for SDL 3). Expected values come from SDL's and the kernel's
/// sources, cited where they are used; where SDL 3 differs, its own behaviour is asserted.
final class SDLClientTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDeviceAccess()
        // Both probes: a missing SDL 3 one fails the device run as loudly as a missing SDL 2 one.
        for library in SDLProbe.Library.allCases where !FileManager.default.isExecutableFile(atPath: library.executable.path) {
            try skipLoudly("\(library.executable.path) is missing: \(library.builder) builds it (tools/test-devices.sh runs it)")
        }
    }

    // MARK: The emulated DualSense

    func testSDLsHIDAPIDriverOpensTheDefaultDualSenseWithEveryCapability() throws { try hidapiOpensTheDefaultDualSense(.sdl2) }
    func testSDL3sHIDAPIDriverOpensTheDefaultDualSenseWithEveryCapability() throws { try hidapiOpensTheDefaultDualSense(.sdl3) }

    /// The default presentation (Bluetooth) is opened by SDL's HIDAPI PS5 driver with every capability.
    func hidapiOpensTheDefaultDualSense(_ library: SDLProbe.Library) throws {
        let pad = try EmulatedPlayStationPad(idleRepeat: DualSenseDriver().reportCadence)
        defer { pad.stop() }
        XCTAssertEqual(pad.bus, .bluetooth)
        let udev = try Udev()
        let node = try XCTUnwrap(padFor(pad, udev: udev)?.hidraw)
        let sdl = try SDLProbe(library, hidapi: true, path: node)
        defer { sdl.quit() }
        let info = sdl.info   // as SDL opened it: a streaming pad is in enhanced mode from the start
        XCTAssertEqual(info["type"] as? String, "ps5")
        XCTAssertEqual(info["has_led"] as? Bool, true)
        XCTAssertEqual(info["has_rumble"] as? Bool, true)
        if library == .sdl3 {
            // SDL 3 tells of the player lights too (SDL_hidapi_ps5.c, GetJoystickCapabilities).
            XCTAssertEqual(info["has_player_led"] as? Bool, true)
        }
        XCTAssertEqual(info["touchpads"] as? Int, 1)
        XCTAssertEqual(info["fingers"] as? Int, 2)
        XCTAssertEqual(info["gyro"] as? Bool, true, "SDL enabled the gyro")
        XCTAssertEqual(info["accel"] as? Bool, true)
        try checkInput(sdl: sdl, send: { try pad.send($0) }, touch: true, buttons: Self.dualSenseButtons + [(.touchpad, "touchpad"), (.mute, "misc1")])
        try checkMotion(sdl: sdl, send: { try pad.send($0) })
        try checkFeedback(sdl: sdl, outputs: { timeout, match in pad.waitForOutput(timeout: timeout, where: match) })
    }

    func testAUSBBusDualSenseIsInvisibleToSDLsHIDAPIAndReachesItThroughEvdev() throws { try usbBusDualSense(.sdl2) }
    func testAUSBBusDualSenseReachesSDL3sHIDAPIAndEvdevDrivers() throws { try usbBusDualSense(.sdl3) }

    /// Why Bluetooth is the default: SDL 2's hidapi drops a USB-bus hidraw node with no USB device
    /// above it, so a USB-bus uhid pad reaches a game only through SDL's evdev driver. SDL 3's
    /// hidapi keeps it (src/hidapi/linux/hid.c, BUS_USB: "uhid USB devices ... no USB information"),
    /// and its HIDAPI PS5 driver opens it as a wired pad with its touchpad.
    func usbBusDualSense(_ library: SDLProbe.Library) throws {
        let pad = try EmulatedPlayStationPad(bus: .usb, idleRepeat: DualSenseDriver().reportCadence)
        defer { pad.stop() }
        let udev = try Udev()
        let found = try XCTUnwrap(padFor(pad, udev: udev))
        let hidrawPath = try XCTUnwrap(found.hidraw)
        switch library {
        case .sdl2:
            XCTAssertThrowsError(try SDLProbe(library, hidapi: true, path: hidrawPath, wait: 3), "SDL's HIDAPI opened a USB-bus uhid pad")
        case .sdl3, .sdl34:
            let hidapi = try SDLProbe(library, hidapi: true, path: hidrawPath)
            defer { hidapi.quit() }
            XCTAssertEqual(hidapi.info["type"] as? String, "ps5")
            XCTAssertEqual(hidapi.info["touchpads"] as? Int, 1)
            try checkInput(sdl: hidapi, send: { try pad.send($0) }, touch: true, buttons: Self.dualSenseButtons + [(.touchpad, "touchpad"), (.mute, "misc1")])
        }
        let gamepad = try XCTUnwrap(found.gamepadNode?.path)
        let sdl = try SDLProbe(library, hidapi: false, path: gamepad)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "ps5")
        // Neither SDL's evdev driver (linux/SDL_sysjoystick.c, 2.26 and 3.2) reads a touchpad node.
        XCTAssertEqual(sdl.info["touchpads"] as? Int, 0, "SDL's evdev driver gives a PS5 pad no touchpad")
        try checkInput(sdl: sdl, send: { try pad.send($0) }, touch: false, buttons: Self.dualSenseButtons)
    }

    func testTheDefaultDualSenseThroughSDLsEvdevDriver() throws { try defaultDualSenseThroughEvdev(.sdl2) }
    func testTheDefaultDualSenseThroughSDL3sEvdevDriver() throws { try defaultDualSenseThroughEvdev(.sdl3) }

    /// With SDL's HIDAPI off, the default pad reaches the game through hid-playstation's evdev nodes;
    /// its rumble goes through the kernel's force feedback and still arrives, and stops.
    func defaultDualSenseThroughEvdev(_ library: SDLProbe.Library) throws {
        let pad = try EmulatedPlayStationPad(idleRepeat: DualSenseDriver().reportCadence)
        defer { pad.stop() }
        let udev = try Udev()
        let gamepad = try XCTUnwrap(padFor(pad, udev: udev)?.gamepadNode?.path)
        let sdl = try SDLProbe(library, hidapi: false, path: gamepad)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "ps5")
        try checkInput(sdl: sdl, send: { try pad.send($0) }, touch: false, buttons: Self.dualSenseButtons)
        _ = pad.takeOutputs()
        XCTAssertEqual(sdl.command("rumble 65535 32768 5000")["rc"] as? Int, 0)
        let on = pad.waitForOutput(timeout: .seconds(5)) { (try? DualSenseOutputDecoder.decode($0))?.motors == MotorLevels(low: 255, high: 128) }
        XCTAssertNotNil(on, "SDL's evdev rumble never reached the pad")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(pad.waitForOutput(timeout: .seconds(5)) { (try? DualSenseOutputDecoder.decode($0))?.motors == MotorLevels(low: 0, high: 0) },
                        "SDL's evdev rumble never stopped")
    }

    func testTheDualShock4ThroughSDLsEvdevDriver() throws { try dualShock4ThroughEvdev(.sdl2) }
    func testTheDualShock4ThroughSDL3sEvdevDriver() throws { try dualShock4ThroughEvdev(.sdl3) }

    /// The DualShock 4 the host shows, through SDL's evdev driver (HIDAPI off): a PS4 controller
    /// with hid-sony's codes, and SDL's rumble reaches the pad through the kernel's force feedback.
    func dualShock4ThroughEvdev(_ library: SDLProbe.Library) throws {
        let pad = try EmulatedPlayStationPad(kind: .dualShock4, idleRepeat: DualSenseDriver().reportCadence)
        defer { pad.stop() }
        let udev = try Udev()
        let gamepad = try XCTUnwrap(padFor(pad, udev: udev)?.gamepadNode?.path)
        let sdl = try SDLProbe(library, hidapi: false, path: gamepad)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "ps4")
        try checkInput(sdl: sdl, send: { try pad.send($0) }, touch: false, buttons: Self.dualSenseButtons)
        _ = pad.takeOutputs()
        XCTAssertEqual(sdl.command("rumble 65535 32768 5000")["rc"] as? Int, 0)
        let motors = { (report: [UInt8]) in (try? DualShock4OutputDecoder.decode(report))?.motors }
        XCTAssertNotNil(pad.waitForOutput(timeout: .seconds(5)) { motors($0) == MotorLevels(low: 255, high: 128) }, "SDL's evdev rumble never reached the pad")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(pad.waitForOutput(timeout: .seconds(5)) { motors($0) == MotorLevels(low: 0, high: 0) }, "SDL's evdev rumble never stopped")
    }

    func testTheXboxOneSThroughSDLsEvdevDriver() throws { try xboxOneSThroughEvdev(.sdl2) }
    func testTheXboxOneSThroughSDL3sEvdevDriver() throws { try xboxOneSThroughEvdev(.sdl3) }

    /// The Xbox One S the host shows, through SDL's evdev driver: an Xbox One controller with
    /// hid-microsoft's codes, and SDL's rumble reaches the pad's report 0x03 through the kernel's
    /// force feedback (two motors: evdev has no trigger motors).
    func xboxOneSThroughEvdev(_ library: SDLProbe.Library) throws {
        let pad = try EmulatedXboxOne()
        defer { pad.stop() }
        let udev = try Udev()
        let gamepad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.uniq == pad.uniq && $0.hidraw != nil && $0.gamepadNode != nil }?.gamepadNode?.path
        })
        let sdl = try SDLProbe(library, hidapi: false, path: gamepad)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "xboxone")
        try checkInput(sdl: sdl, send: { state in
            let stick = StickScale(minimum: 0, maximum: 255)
            try pad.send(XboxOneSBluetooth.stateReport(buttons: state.buttons, dpad: state.dpad,
                                                       leftX: stick.wire(Int32(state.leftStick.x)), leftY: stick.wire(Int32(state.leftStick.y)),
                                                       rightX: stick.wire(Int32(state.rightStick.x)), rightY: stick.wire(Int32(state.rightStick.y)),
                                                       l2: state.l2, r2: state.r2))
        }, touch: false, buttons: Self.dualSenseButtons)
        _ = pad.takeOutputs()
        // hid-microsoft: magnitude × 100 / 65535.
        XCTAssertEqual(sdl.command("rumble 65535 32768 5000")["rc"] as? Int, 0)
        let rumble = { (report: [UInt8]) in try? XboxRumbleReport(decoding: report) }
        XCTAssertNotNil(pad.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.strong == 100 && $0.weak == 50 } ?? false },
                        "SDL's evdev rumble never reached the pad")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(pad.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.strong == 0 && $0.weak == 0 } ?? false },
                        "SDL's evdev rumble never stopped")
    }

    func testTheSwitchProThroughSDLsEvdevDriver() throws { try switchProThroughEvdev(.sdl2) }
    func testTheSwitchProThroughSDL3sEvdevDriver() throws { try switchProThroughEvdev(.sdl3) }

    /// The Switch Pro the host shows, through SDL's evdev driver (HIDAPI off): a Switch Pro
    /// controller with hid-nintendo's codes, every button by position.
    func switchProThroughEvdev(_ library: SDLProbe.Library) throws {
        // SDL 2 by position only with this; SDL 3 always (SDL_gamepad.c reads the name only inside mappings).
        setenv("SDL_GAMECONTROLLER_USE_BUTTON_LABELS", "0", 1)
        defer { unsetenv("SDL_GAMECONTROLLER_USE_BUTTON_LABELS") }
        let pad = try EmulatedSwitchPro()
        defer { pad.stop() }
        let gamepad = try XCTUnwrap(EmulatedSwitchProTests.padFor(pad, udev: try Udev())?.gamepadNode?.path)
        let sdl = try SDLProbe(library, hidapi: false, path: gamepad)
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "switch-pro")
        var controls = SwitchProReports.Controls()
        for (button, name) in Self.dualSenseButtons {
            controls.buttons = button
            var seen: [String: Any]?
            for _ in 0..<50 where seen == nil {
                try pad.send(controls)
                seen = sdl.waitForState(timeout: .milliseconds(100), slice: true) { ($0["buttons"] as? [String]) == [name] }
            }
            XCTAssertNotNil(seen, "\(name): SDL saw \(sdl.lastState)")
        }
    }

    // MARK: The uinput Xbox pad

    func testTheUInputXboxPadIsAnXbox360PadToSDLWithXpadsButtons() throws { try uinputXboxPad(.sdl2) }
    func testTheUInputXboxPadIsAnXbox360PadToSDL3WithXpadsButtons() throws { try uinputXboxPad(.sdl3) }

    func uinputXboxPad(_ library: SDLProbe.Library) throws {
        let pad = try UInputGamepad(identity: .xbox360)
        // SDL's uploads and erases wait in the kernel until the pad answers: answer all the time.
        let feedback = ServicedRumble(pad)
        defer { feedback.stop() }
        let node = try XCTUnwrap(eventually { pad.devnode })
        for hidapi in [true, false] {
            let sdl = try SDLProbe(library, hidapi: hidapi, path: node)
            defer { sdl.quit() }
            XCTAssertEqual(sdl.info["type"] as? String, "xbox360", "hidapi \(hidapi)")
            // xpad: A, B, X, Y by label; X sits west (SDL's "x"), Y north (SDL's "y").
            for (code, name) in [(EvdevCode.BTN_A, "a"), (EvdevCode.BTN_B, "b"), (EvdevCode.BTN_X, "x"), (EvdevCode.BTN_Y, "y"),
                                 (EvdevCode.BTN_SELECT, "back"), (EvdevCode.BTN_START, "start"), (EvdevCode.BTN_MODE, "guide")] {
                try pad.emit(type: EvdevCode.EV_KEY, code: code, value: 1); try pad.sync()
                XCTAssertNotNil(sdl.waitForState { ($0["buttons"] as? [String]) == [name] }, "code \(code) should be SDL's \(name)")
                try pad.emit(type: EvdevCode.EV_KEY, code: code, value: 0); try pad.sync()
                XCTAssertNotNil(sdl.waitForState { ($0["buttons"] as? [String]) == [] })
            }
            XCTAssertEqual(sdl.command("rumble 65535 0 300")["rc"] as? Int, 0)
            XCTAssertNotNil(eventually { feedback.uploaded().first { $0.levels.low == 255 } }, "SDL's strong motor, hidapi \(hidapi)")
        }
    }

    // MARK: The host's virtual pads behind serve and forward

    func testAGameOnTheHostSeesTheForwardedDualSenseThroughSDLsHIDAPI() throws { try forwardedDualSense(.sdl2) }
    func testAGameOnTheHostSeesTheForwardedDualSenseThroughSDL3sHIDAPI() throws { try forwardedDualSense(.sdl3) }

    /// A game on the host drives the host's virtual DualSense through SDL's HIDAPI driver; the
    /// physical pad's input arrives, and the game's rumble, lights and trigger effects reach the
    /// physical pad, the rumble stopping when SDL stops it.
    /// The host's DualSense as a USB device on vhci-hcd: SDL 2.26's hidapi, which drops a USB-bus
    /// uhid pad (no USB parent to read strings from), opens this one as it opens a wired pad.
    func testAGameOnTheHostSeesTheForwardedUSBDualSenseThroughSDLsHIDAPI() throws { try forwardedDualSense(.sdl2, virtual: "usb") }
    func testAGameOnTheHostSeesTheForwardedUSBDualSenseThroughSDL3sHIDAPI() throws { try forwardedDualSense(.sdl3, virtual: "usb") }

    func forwardedDualSense(_ library: SDLProbe.Library, virtual: String = "dualsense") throws {
        if virtual == "usb", let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        try forwarded(virtual: virtual) { physical, virtualPad in
            XCTAssertEqual(virtualPad.bus, virtual == "usb" ? .usb : .bluetooth, "the host presents its DualSense as SDL's HIDAPI opens it")
            let sdl = try SDLProbe(library, hidapi: true, path: try XCTUnwrap(virtualPad.hidraw))
            defer { sdl.quit() }
            XCTAssertEqual(sdl.info["type"] as? String, "ps5")
            XCTAssertEqual(sdl.info["touchpads"] as? Int, 1)
            XCTAssertEqual(sdl.info["gyro"] as? Bool, true)
            try checkInput(sdl: sdl, send: { try physical.send($0) }, touch: true, buttons: Self.dualSenseButtons + [(.touchpad, "touchpad")])
            try checkMotion(sdl: sdl, send: { try physical.send($0) })
            try checkFeedback(sdl: sdl, forwarded: true) { timeout, match in physical.waitForOutput(timeout: timeout, where: match) }
        }
    }

    /// The host's DualSense, uhid and USB, is no pointer to the host's desktop: with padgate's
    /// rules installed its touchpad node (and every other) carries LIBINPUT_IGNORE_DEVICE=1 in
    /// udev's database, while the emulated physical pad's does not; SDL still reads its touches.
    func testTheHostsDualSenseIsNoPointerToTheDesktopAndSDLStillReadsItsTouches() throws {
        try UdevRulesTests.installTheseRules()
        for virtual in ["dualsense", "usb"] {
            if virtual == "usb", let reason = VHCI.unavailableReason() { print("the USB host pad is left out: \(reason)"); continue }
            try forwarded(virtual: virtual) { physical, virtualPad in
                let touchpad = try XCTUnwrap(virtualPad.node(.touchpad)?.path, "\(virtual): the host pad has no touchpad node")
                let ignored = eventually(timeout: UdevRulesTests.udevBudget) { () -> Bool? in
                    virtualPad.evdev.allSatisfy { SystemProbe.udevProperties(ofNode: $0.path)["LIBINPUT_IGNORE_DEVICE"] == "1" } ? true : nil
                }
                XCTAssertEqual(ignored, true, "\(virtual) host pad \(touchpad): \(virtualPad.evdev.map { "\($0.path) \(SystemProbe.udevProperties(ofNode: $0.path)["LIBINPUT_IGNORE_DEVICE"] ?? "-")" })")
                XCTAssertEqual(SystemProbe.udevProperties(ofNode: touchpad)["ID_INPUT_TOUCHPAD"], "1", "still a touchpad to games that look")
                let physicalTouchpad = try XCTUnwrap(try Udev().pads().first { $0.phys.hasPrefix(PadPhys.emulated) && $0.kind == .dualSense }?.node(.touchpad)?.path)
                XCTAssertNil(SystemProbe.udevProperties(ofNode: physicalTouchpad)["LIBINPUT_IGNORE_DEVICE"], "a pad padgate did not make for a host stays the desktop's")
                let sdl = try SDLProbe(.sdl3, hidapi: true, path: try XCTUnwrap(virtualPad.hidraw))
                defer { sdl.quit() }
                XCTAssertEqual(sdl.info["touchpads"] as? Int, 1)
                try checkInput(sdl: sdl, send: { try physical.send($0) }, touch: true, buttons: [(.touchpad, "touchpad")])
            }
        }
    }

    func testAGameOnTheHostSeesTheForwardedDualShock4ThroughSDLsHIDAPIAsAPS4Controller() throws { try forwardedDualShock4(.sdl2) }
    func testAGameOnTheHostSeesTheForwardedDualShock4ThroughSDL3sHIDAPIAsAPS4Controller() throws { try forwardedDualShock4(.sdl3) }

    /// A forwarded DualShock 4 is a PS4 controller to a game on the host: SDL's HIDAPI PS4 driver
    /// opens it in enhanced mode (touchpad, gyro, accelerometer, LED, rumble), reads the physical
    /// pad's calibration through it, and its rumble, player colour, LED and raw effects reach the
    /// physical pad's own reports.
    func forwardedDualShock4(_ library: SDLProbe.Library) throws {
        let calibration = EmulatedDualShock4Tests.calibration
        try forwarded(virtual: "auto", physical: EmulatedPlayStationPad(kind: .dualShock4, bus: .usb, calibration: calibration)) { physical, virtualPad in
            XCTAssertEqual(virtualPad.kind, .dualShock4)
            XCTAssertEqual(virtualPad.bus, .bluetooth, "the host presents its DualShock 4 as SDL's HIDAPI opens it")
            let sdl = try SDLProbe(library, hidapi: true, path: try XCTUnwrap(virtualPad.hidraw))
            defer { sdl.quit() }
            XCTAssertEqual(sdl.info["type"] as? String, "ps4")
            XCTAssertEqual(sdl.info["has_led"] as? Bool, true)
            XCTAssertEqual(sdl.info["has_rumble"] as? Bool, true)
            XCTAssertEqual(sdl.info["touchpads"] as? Int, 1)
            XCTAssertEqual(sdl.info["fingers"] as? Int, 2)
            XCTAssertEqual(sdl.info["gyro"] as? Bool, true)
            XCTAssertEqual(sdl.info["accel"] as? Bool, true)
            // SDL_hidapi_ps4.c scales the DS4's touchpad by 1/1920 across and 1/920 down.
            try checkInput(sdl: sdl, send: { try physical.send($0) }, touch: true, touchHeight: 920,
                           buttons: Self.dualSenseButtons + [(.touchpad, "touchpad")])
            try checkDualShock4Motion(sdl: sdl, calibration: calibration) { try physical.send($0) }
            let motors = { (report: [UInt8]) in (try? DualShock4OutputDecoder.decode(report))?.motors }
            var passed: [String] = []
            func output(_ match: @escaping (DecodedDualShock4Output) -> Bool) -> DecodedDualShock4Output? {
                passed = []
                return physical.waitForOutput(timeout: .seconds(5)) { report in
                    guard let output = try? DualShock4OutputDecoder.decode(report) else { passed.append("undecodable \(report.prefix(4))"); return false }
                    passed.append("\(output)")
                    return match(output)
                }.flatMap { try? DualShock4OutputDecoder.decode($0) }
            }
            _ = physical.takeOutputs()
            // SDL sends the high byte of each level: 65535 and 32896 become 255 and 128.
            XCTAssertEqual(sdl.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
            XCTAssertNotNil(output { $0.motors == MotorLevels(low: 255, high: 128) }, "SDL's rumble; the pad got \(passed)")
            try expectStop(sdl: sdl, motors: motors) { timeout, match in physical.waitForOutput(timeout: timeout, where: match) }
            // Until a game sets a colour, SDL_hidapi_ps4.c lights the player index's (SetLedsForPlayerIndex).
            let player = anotherPlayerIndex(sdl)
            let colours = [RGBColor(red: 0, green: 0, blue: 0x40), RGBColor(red: 0x40, green: 0, blue: 0), RGBColor(red: 0, green: 0x40, blue: 0)]
            XCTAssertEqual(sdl.command("player \(player)")["rc"] as? Int, 0)
            XCTAssertNotNil(output { $0.lightbar == colours[player] }, "SDL's player index \(player); the pad got \(passed)")
            XCTAssertEqual(sdl.command("led 255 0 128")["rc"] as? Int, 0)
            XCTAssertNotNil(output { $0.lightbar == RGBColor(red: 255, green: 0, blue: 128) }, "SDL's LED; the pad got \(passed)")
            // A raw effects block (SDL_SendGamepadEffect): right and left motor, then the lightbar.
            XCTAssertEqual(sdl.command("effect 0000102030")["rc"] as? Int, 0)
            XCTAssertNotNil(output { $0.lightbar == RGBColor(red: 0x10, green: 0x20, blue: 0x30) }, "SDL's effect; the pad got \(passed)")
        }
    }

    func testAGameOnTheHostSeesTheForwardedXboxThroughSDLsHIDAPIWithTriggerRumble() throws { try forwardedXbox(.sdl2) }
    func testAGameOnTheHostSeesTheForwardedXboxThroughSDL3sHIDAPIWithTriggerRumble() throws { try forwardedXbox(.sdl3) }

    /// A forwarded Xbox over Bluetooth is an Xbox One controller to a game on the host: SDL's
    /// HIDAPI Xbox One driver opens it with rumble and trigger rumble, and both reach the physical
    /// pad's own report 0x03 with SDL's magnitudes (SDL_hidapi_xboxone.c: level / 655, 0...100).
    func forwardedXbox(_ library: SDLProbe.Library) throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-sdl-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR"); try? FileManager.default.removeItem(at: state) }
        let physical = try EmulatedXboxOne()
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.uniq == physical.uniq && $0.hidraw != nil && $0.gamepadNode != nil }
        })
        let port = String(27900 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", "auto"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.hidraw), "--quiet"])
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hidraw != nil && $0.gamepadNode != nil }
        }, "the host never created its virtual pad")
        let sdl = try SDLProbe(library, hidapi: true, path: try XCTUnwrap(virtualPad.hidraw))
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "xboxone")
        XCTAssertEqual(sdl.info["has_rumble"] as? Bool, true)
        XCTAssertEqual(sdl.info["has_rumble_triggers"] as? Bool, true)
        try checkInput(sdl: sdl, send: { state in
            let stick = StickScale(minimum: 0, maximum: 255)
            try physical.send(XboxOneSBluetooth.stateReport(buttons: state.buttons, dpad: state.dpad,
                                                            leftX: stick.wire(Int32(state.leftStick.x)), leftY: stick.wire(Int32(state.leftStick.y)),
                                                            rightX: stick.wire(Int32(state.rightStick.x)), rightY: stick.wire(Int32(state.rightStick.y)),
                                                            l2: state.l2, r2: state.r2))
        }, touch: false, buttons: Self.dualSenseButtons)

        // SDL holds a Bluetooth Xbox pad's next rumble for 50 ms after the last and sends it from
        // its update: keep SDL updating while waiting, as a game's frame loop does.
        func outputs(_ timeout: Duration, _ match: ([UInt8]) -> Bool) -> [UInt8]? {
            let deadline = MonotonicInstant.now + timeout
            while MonotonicInstant.now < deadline {
                _ = sdl.command("state")
                if let report = physical.waitForOutput(timeout: .milliseconds(50), where: match) { return report }
            }
            return nil
        }
        var seen: [String] = []
        func rumble(_ match: @escaping (XboxRumbleReport) -> Bool) -> XboxRumbleReport? {
            seen = []
            return outputs(.seconds(5)) { report in
                guard let decoded = try? XboxRumbleReport(decoding: report) else { seen.append("other \(report.prefix(3))"); return false }
                seen.append("\(decoded.bytes)")
                return match(decoded)
            }.flatMap { try? XboxRumbleReport(decoding: $0) }
        }
        _ = physical.takeOutputs()
        // 65535 / 655 = 100, 32896 / 655 = 50; 13107 / 655 = 20, 52428 / 655 = 80.
        XCTAssertEqual(sdl.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
        XCTAssertNotNil(rumble { $0.strong == 100 && $0.weak == 50 }, "SDL's rumble; the pad got \(seen)")
        XCTAssertEqual(sdl.command("triggers 13107 52428 10000")["rc"] as? Int, 0)
        XCTAssertNotNil(rumble { $0.leftTrigger == 20 && $0.rightTrigger == 80 && $0.strong == 100 && $0.weak == 50 },
                        "SDL's trigger rumble; the pad got \(seen)")
        XCTAssertEqual(sdl.command("triggers 0 0 0")["rc"] as? Int, 0)
        try expectStop(sdl: sdl, motors: { report in
            (try? XboxRumbleReport(decoding: report)).map { MotorLevels(low: $0.strong, high: $0.weak, leftTrigger: $0.leftTrigger, rightTrigger: $0.rightTrigger) }
        }, outputs: outputs)
    }

    func testAGameOnTheHostSeesTheForwardedSwitchProThroughSDLsHIDAPI() throws { try forwardedSwitchPro(.sdl2) }
    func testAGameOnTheHostSeesTheForwardedSwitchProThroughSDL3sHIDAPI() throws { try forwardedSwitchPro(.sdl3) }

    /// A forwarded Switch Pro is a Nintendo Switch Pro controller to a game on the host: SDL's
    /// HIDAPI Switch driver does its own handshake with the host's pad (device info, SPI reads of
    /// the physical pad's calibration, report mode, IMU), reports gyro and accelerometer, every
    /// button by position, and its HD rumble and player lights reach the physical pad.
    func forwardedSwitchPro(_ library: SDLProbe.Library) throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-sdl-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        // Positions, not Nintendo's labels: south is "a" whatever is printed on it (SDL 3: always,
        // SDL_gamepad.c reads this name only inside mappings).
        setenv("SDL_GAMECONTROLLER_USE_BUTTON_LABELS", "0", 1)
        defer { unsetenv("PADGATE_STATE_DIR"); unsetenv("SDL_GAMECONTROLLER_USE_BUTTON_LABELS"); try? FileManager.default.removeItem(at: state) }
        let calibration = EmulatedSwitchProTests.calibration
        let physical = try EmulatedSwitchPro(calibration: calibration)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(EmulatedSwitchProTests.padFor(physical, udev: udev))
        let port = String(27900 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", "auto"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.gamepadNode?.path), "--quiet"])
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hidraw != nil && $0.gamepadNode != nil && $0.node(.motion) != nil }
        }, "the host never created its virtual pad")
        let sdl = try SDLProbe(library, hidapi: true, path: try XCTUnwrap(virtualPad.hidraw))
        defer { sdl.quit() }
        XCTAssertEqual(sdl.info["type"] as? String, "switch-pro")
        XCTAssertEqual(sdl.info["has_rumble"] as? Bool, true)

        // Buttons by position, the d-pad, ZL and ZR as full triggers.
        var controls = SwitchProReports.Controls()
        let sticks = calibration.sticks
        controls.left = (UInt16(sticks.leftX.center), UInt16(sticks.leftY.center))
        controls.right = (UInt16(sticks.rightX.center), UInt16(sticks.rightY.center))
        func until(_ what: String, _ condition: @escaping ([String: Any]) -> Bool) throws {
            var seen: [String: Any]?
            for _ in 0..<50 where seen == nil {
                try physical.send(controls)
                seen = sdl.waitForState(timeout: .milliseconds(100), slice: true, condition)
            }
            XCTAssertNotNil(seen, "\(what): SDL saw \(sdl.lastState)")
        }
        for (button, name) in Self.dualSenseButtons + [(.capture, "misc1")] {
            controls.buttons = button
            try until(name) { ($0["buttons"] as? [String]) == [name] }
        }
        controls.buttons = [.l2]
        try until("ZL") { ($0["axes"] as? [String: Int])?["lefttrigger"] == 32767 && ($0["buttons"] as? [String]) == [] }
        controls.buttons = []
        for (dpad, name) in [(DPad.up, "dpup"), (.right, "dpright"), (.down, "dpdown"), (.left, "dpleft")] {
            controls.dpad = dpad
            try until(name) { ($0["buttons"] as? [String]) == [name] }
        }
        controls.dpad = .none
        // Sticks at the ends of the pad's calibrated range, through SDL's own reading of it.
        controls.left = (UInt16(sticks.leftX.max), UInt16(sticks.leftY.min))
        try until("left stick right and down") { report in
            let axes = report["axes"] as? [String: Int] ?? [:]
            return (axes["leftx"] ?? 0) > 30000 && (axes["lefty"] ?? 0) > 30000 && abs(axes["rightx"] ?? 99999) < 2000
        }
        XCTAssertEqual(sdl.command("info")["gyro"] as? Bool, true, "SDL enabled the gyro")
        // Motion: SDL reads the physical pad's raw counts (14.2842 counts per deg/s, 4096 per g,
        // axes in its own order): the magnitudes, sorted, within 2 % (the pad's IMU calibration
        // moves them by less than 1 %).
        var imu = SwitchProReports.IMUSample()
        imu.gyro = (4000, -2000, 1000); imu.accel = (-3000, 4100, 250)
        var motion: [String: Any]?
        for _ in 0..<50 where motion == nil {
            try physical.send(controls, imu: imu)
            motion = sdl.waitForState(timeout: .milliseconds(100), slice: true) { report in
                guard let gyro = report["gyro"] as? [Double], let accel = report["accel"] as? [Double], gyro.count == 3, accel.count == 3 else { return false }
                let counts = gyro.map { abs($0) * 180 / Double.pi * 14.2842 }.sorted(), g = accel.map { abs($0) / 9.80665 * 4096 }.sorted()
                return zip(counts, [1000.0, 2000, 4000]).allSatisfy { abs($0 - $1) < $1 * 0.02 }
                    && zip(g, [250.0, 3000, 4100]).allSatisfy { abs($0 - $1) < $1 * 0.02 }
            }
        }
        XCTAssertNotNil(motion, "SDL's gyro and accelerometer do not follow the physical pad's raw counts: \(sdl.lastState)")

        // Rumble: SDL's HD rumble reaches the physical pad, and its stop.
        _ = physical.takeOutputs()
        func levels(_ report: [UInt8]) -> MotorLevels? { SwitchProReports.output(report)?.rumble.flatMap(SwitchHDRumble.levels) }
        XCTAssertEqual(sdl.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { levels($0).map { $0.low > 100 && $0.high > 40 } ?? false },
                        "SDL's rumble never reached the physical pad")
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { levels($0) == .silent }, "SDL's stop never reached the physical pad")

        // Player lights: SDL 2.26 lights the one light of the player index (1 << index % 4).
        var lights: [UInt8] = []
        XCTAssertEqual(sdl.command("player 2")["rc"] as? Int, 0)
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(10)) { report in
            guard let output = SwitchProReports.output(report), output.subcommand == 0x30, let light = output.arguments.first else { return false }
            lights.append(light)
            return light & 0x0F == 0x04
        }, "SDL's player lights never reached the physical pad: \(lights)")
    }

    func testAGameOnTheHostSeesTheForwardedPadAsAnXbox360Pad() throws { try forwardedXbox360(.sdl2) }
    func testAGameOnTheHostSeesTheForwardedPadAsAnXbox360PadThroughSDL3() throws { try forwardedXbox360(.sdl3) }

    /// `serve --virtual xbox`: an Xbox 360 pad to SDL's evdev driver; its rumble reaches the physical
    /// pad and stops, and a game's own evdev effect plays for its length.
    func forwardedXbox360(_ library: SDLProbe.Library) throws {
        try forwarded(virtual: "xbox") { physical, virtualPad in
            let sdl = try SDLProbe(library, hidapi: false, path: try XCTUnwrap(virtualPad.gamepadNode?.path))
            defer { sdl.quit() }
            XCTAssertEqual(sdl.info["type"] as? String, "xbox360")
            try checkInput(sdl: sdl, send: { try physical.send($0) }, touch: false, buttons: Self.dualSenseButtons)
            _ = physical.takeOutputs()
            XCTAssertEqual(sdl.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
            XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { (try? DualSenseOutputDecoder.decode($0))?.motors == MotorLevels(low: 255, high: 128) },
                            "SDL's rumble on the host's Xbox pad never reached the physical pad")
            try expectStop(sdl: sdl) { timeout, match in physical.waitForOutput(timeout: timeout, where: match) }
            sdl.quit()
            // What follows is no SDL's: it runs once, beside SDL 2.
            guard library == .sdl2 else { return }

            // A game's own effect of 300 ms, played once: the physical pad rumbles for its length
            // (ff-memless's rule), not until the effect is erased.
            let player = Process()
            player.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            player.arguments = [repositoryRoot.appendingPathComponent("Tests/SDLProbe/ff-play.py").path,
                                try XCTUnwrap(virtualPad.gamepadNode?.path), "49152", "0", "300", "3"]
            _ = physical.takeOutputs()
            let said = Pipe()
            player.standardOutput = said
            try player.run()
            defer { player.terminate(); player.waitUntilExit() }
            // From when the game has played its effect: Python's start-up in the emulated guest is
            // not padgate's to bound.
            XCTAssertEqual(String(decoding: said.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), "played")
            let motors = { (report: [UInt8]) in (try? DualSenseOutputDecoder.decode(report))?.motors }
            // Its own level (49152 of 65535 on the strong motor is 192): not a late report of SDL's
            // rumble before it, which a busy pad could still be reading (uhid queues 32 events).
            XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(10)) { motors($0) == MotorLevels(low: 192, high: 0) }, "the effect never played")
            let started = MonotonicInstant.now
            // Every report until the stop, with when it came: a failure says what the pad was sent.
            var seen: [String] = []
            let stop = physical.waitForOutput(timeout: .seconds(3)) { report in
                seen.append("\(MonotonicInstant.now - started): \(motors(report).map(\.description) ?? "no motors") (\(report.count) bytes)")
                return motors(report) == MotorLevels(low: 0, high: 0)
            }
            XCTAssertNotNil(stop, "the 300 ms effect never stopped while the game held it; the pad was sent \(seen)")
            let played = MonotonicInstant.now - started
            print("a 300 ms uinput effect rumbled the physical pad for \(played)")
            XCTAssertLessThan(played, .milliseconds(900), "a 300 ms effect ran \(played)")
            XCTAssertGreaterThan(played, .milliseconds(150), "a 300 ms effect ran only \(played)")
        }
    }

    /// An emulated USB DualSense (or `physical`) forwarded to `serve --virtual KIND` on this machine.
    func forwarded(virtual kind: String, physical made: @autoclosure () throws -> EmulatedPlayStationPad = try EmulatedPlayStationPad(bus: .usb),
                   _ body: (EmulatedPlayStationPad, Pad) throws -> Void) throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-sdl-\(UUID())")
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR"); try? FileManager.default.removeItem(at: state) }
        let physical = try made()
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        let port = String(27950 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", kind], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // Every pad on this machine (--all), the host's own virtual pads among them: forward must
        // leave those alone, or each forwarded pad makes another.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--all", "--quiet"])
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: HostPadBudget.made) {
            udev.pads().first { $0.isHostVirtualPad && (kind == "xbox" || ($0.hasItsInputNodes && $0.capabilities.contains(.battery))) }
        }, "the host never created its virtual pad")
        _ = physicalPad
        usleep(2_000_000)
        XCTAssertEqual(udev.pads().filter(\.isHostVirtualPad).count, 1, "forward --all forwarded the host's own virtual pad")
        try body(physical, virtualPad)
    }

    // MARK: Helpers

    /// A pad that has been on for 30 s (its sensor clock, in 1/3 µs): SDL holds a Bluetooth
    /// DualSense's light changes until that clock passes 3.4 s, the pad's own connection animation.
    static let padOnForAWhile: GamepadState = {
        var state = GamepadState.dualSenseAtRest
        state.sensorTimestamp = 90_000_000
        return state
    }()

    static let dualSenseButtons: [(GamepadButtons, String)] = [
        (.south, "a"), (.east, "b"), (.west, "x"), (.north, "y"), (.create, "back"), (.ps, "guide"), (.options, "start"),
        (.l3, "leftstick"), (.r3, "rightstick"), (.l1, "leftshoulder"), (.r1, "rightshoulder"),
    ]

    /// Every button by SDL's name, the d-pad, sticks and triggers at their ends (SDL's axes span
    /// -32768...32767, triggers 0...32767), and touch fingers in SDL's 0...1 space.
    func checkInput(sdl: SDLProbe, send: (GamepadState) throws -> Void, touch: Bool, touchHeight: Double = 1070,
                    buttons: [(GamepadButtons, String)]) throws {
        var state = Self.padOnForAWhile
        func until(_ what: String, _ condition: @escaping ([String: Any]) -> Bool) throws {
            var seen: [String: Any]?
            for _ in 0..<50 where seen == nil {
                state.sensorTimestamp &+= 12_000
                try send(state)
                seen = sdl.waitForState(timeout: .milliseconds(100), slice: true, condition)
            }
            XCTAssertNotNil(seen, "\(what): SDL saw \(sdl.lastState)")
        }
        for (button, name) in buttons {
            state.buttons = button
            try until(name) { ($0["buttons"] as? [String]) == [name] }
        }
        state.buttons = []
        for (dpad, name) in [(DPad.up, "dpup"), (.right, "dpright"), (.down, "dpdown"), (.left, "dpleft")] {
            state.dpad = dpad
            try until(name) { ($0["buttons"] as? [String]) == [name] }
        }
        state.dpad = .none
        state.leftStick = StickPosition(x: 0, y: 255)
        state.rightStick = StickPosition(x: 255, y: 0)
        state.l2 = 255
        state.r2 = 0
        try until("sticks and triggers") { report in
            let axes = report["axes"] as? [String: Int] ?? [:]
            return axes["leftx"] == -32768 && axes["lefty"] == 32767 && axes["rightx"] == 32767 && axes["righty"] == -32768
                && axes["lefttrigger"] == 32767 && axes["righttrigger"] == 0 && (report["buttons"] as? [String]) == []
        }
        guard touch else { return }
        // SDL_hidapi_ps5.c scales the touchpad by 1/1920 across and 1/1070 down (the PS4 driver 1/920).
        state.apply(.touch(slot: 0, x: 960, y: UInt16(touchHeight / 2)))
        try until("a finger") { report in
            guard let finger = (report["touch"] as? [[String: Any]])?.first, finger["down"] as? Bool == true,
                  let x = finger["x"] as? Double, let y = finger["y"] as? Double else { return false }
            return abs(x - 0.5) < 0.001 && abs(y - 0.5) < 0.001
        }
    }

    /// Gyro in rad/s and accelerometer in m/s², as SDL reports them, from raw counts through the
    /// pad's calibration (feature 0x05): deg/s = (raw - bias) * 2 * speed / (plus - minus), as
    /// SDL_hidapi_ps5.c and older hid-playstation compute it.
    func checkMotion(sdl: SDLProbe, send: (GamepadState) throws -> Void) throws {
        let blob = DualSenseIdentityData.calibration
        func le16(_ offset: Int) -> Double { Double(Int16(bitPattern: UInt16(blob[offset]) | UInt16(blob[offset + 1]) << 8)) }
        // Layout (hid-playstation, USB): pitch/yaw/roll bias 1,3,5; plus/minus pairs 7..17; speeds 19,21; accel 23..33.
        let gyroBias = le16(1), gyroPlus = le16(7), gyroMinus = le16(9), speedPlus = le16(19), speedMinus = le16(21)
        let accelYPlus = le16(27), accelYMinus = le16(29)
        var state = Self.padOnForAWhile
        let gyroRaw: Int16 = 8000
        state.motion.first.gyro = Vector3(x: gyroRaw, y: 0, z: 0)
        let accelRaw = Int16((accelYPlus + accelYMinus) / 2 + (accelYPlus - accelYMinus) / 2)   // +1 g on Y
        state.motion.first.accel = Vector3(x: 0, y: accelRaw, z: 0)
        let expectedGyro = (Double(gyroRaw) - gyroBias) * (speedPlus + speedMinus) / (gyroPlus - gyroMinus) * Double.pi / 180
        let expectedAccel = 9.80665
        var seen: [String: Any]?
        for _ in 0..<50 where seen == nil {
            state.sensorTimestamp &+= 12_000
            try send(state)
            seen = sdl.waitForState(timeout: .milliseconds(100), slice: true) { report in
                guard let gyro = report["gyro"] as? [Double], let accel = report["accel"] as? [Double] else { return false }
                return abs(gyro[0] - expectedGyro) < expectedGyro * 0.005 && abs(accel[1] - expectedAccel) < 0.05
            }
        }
        XCTAssertNotNil(seen, "expected gyro x \(expectedGyro) rad/s and accel y \(expectedAccel) m/s²; SDL saw \(sdl.lastState)")
    }

    /// SDL's rumble at full strength (firmware 0x0224: no halving), its stop within one report, the
    /// LED, the player index and a raw trigger effect through SDL_GameControllerSendEffect.
    /// SDL_hidapi_ps4.c's units from a DualShock 4's calibration (its Bluetooth form, as the
    /// host's pad answers): deg/s = (raw − bias) × (speed+ + speed−) / (|plus − bias| + |minus − bias|),
    /// g = (raw − (plus − range/2)) × 2 / range.
    func checkDualShock4Motion(sdl: SDLProbe, calibration: [UInt8], send: (GamepadState) throws -> Void) throws {
        let blob = try DualShock4Calibration.bluetoothForm(calibration)
        func le16(_ offset: Int) -> Double { Double(Int16(bitPattern: UInt16(blob[offset]) | UInt16(blob[offset + 1]) << 8)) }
        // Bluetooth order: biases 1,3,5; plus 7,9,11; minus 13,15,17; speeds 19,21; accel plus/minus pairs 23..33.
        let pitchBias = le16(1), pitchPlus = le16(7), pitchMinus = le16(13), speed = le16(19) + le16(21)
        let accelYPlus = le16(27), accelYMinus = le16(29)
        let range = accelYPlus - accelYMinus, accelBias = (accelYPlus - (range / 2).rounded(.towardZero))
        var state = Self.padOnForAWhile
        let gyroRaw: Int16 = 8000, accelRaw: Int16 = 4000
        state.motion.first.gyro = Vector3(x: gyroRaw, y: 0, z: 0)
        state.motion.first.accel = Vector3(x: 0, y: accelRaw, z: 0)
        let expectedGyro = (Double(gyroRaw) - pitchBias) * speed / (abs(pitchPlus - pitchBias) + abs(pitchMinus - pitchBias)) * Double.pi / 180
        let expectedAccel = (Double(accelRaw) - accelBias) * 2 / range * 9.80665
        var seen: [String: Any]?
        for _ in 0..<50 where seen == nil {
            state.sensorTimestamp &+= 750
            try send(state)
            seen = sdl.waitForState(timeout: .milliseconds(100), slice: true) { report in
                guard let gyro = report["gyro"] as? [Double], let accel = report["accel"] as? [Double] else { return false }
                return abs(gyro[0] - expectedGyro) < abs(expectedGyro) * 0.005 && abs(accel[1] - expectedAccel) < abs(expectedAccel) * 0.005
            }
        }
        XCTAssertNotNil(seen, "expected gyro x \(expectedGyro) rad/s and accel y \(expectedAccel) m/s²; SDL saw \(sdl.lastState)")
    }

    func checkFeedback(sdl: SDLProbe, forwarded: Bool = false, outputs: (Duration, ([UInt8]) -> Bool) -> [UInt8]?) throws {
        var passed: [String] = []
        func decoded(_ match: @escaping (DecodedDualSenseOutput) -> Bool) -> DecodedDualSenseOutput? {
            passed = []
            return outputs(.seconds(5)) { report in
                guard let output = try? DualSenseOutputDecoder.decode(report) else { passed.append("undecodable \(report.prefix(4))"); return false }
                if match(output) { return true }
                passed.append(output.summary)
                return false
            }.flatMap { try? DualSenseOutputDecoder.decode($0) }
        }
        XCTAssertEqual(sdl.command("rumble 65535 32896 10000")["rc"] as? Int, 0)
        XCTAssertNotNil(decoded { $0.motors == MotorLevels(low: 255, high: 128) }, "SDL's full-strength rumble")
        if forwarded {
            try expectStop(sdl: sdl, outputs: outputs)
        } else {
            XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
            // The very next report that mentions the motors must be the stop.
            let stop = decoded { $0.motors != nil }
            XCTAssertEqual(stop?.motors, MotorLevels(low: 0, high: 0), "SDL's stop did not stop the motors: \(String(describing: stop))")
        }
        XCTAssertEqual(sdl.command("led 255 0 128")["rc"] as? Int, 0)
        XCTAssertNotNil(decoded { $0.lightbar == RGBColor(red: 255, green: 0, blue: 128) }, "SDL's LED; the pad got \(passed)")
        let player = anotherPlayerIndex(sdl)
        XCTAssertEqual(sdl.command("player \(player)")["rc"] as? Int, 0)
        // SDL_hidapi_ps5.c: player index 1 lights 0x0A, index 2 lights 0x15.
        XCTAssertNotNil(decoded { $0.playerLEDs?.mask == (player == 1 ? 0x0A : 0x15) }, "SDL's player index \(player); the pad got \(passed)")
        // A raw effects block: EnableBits1 0x04 (right trigger), the block at offset 10.
        var effects = [UInt8](repeating: 0, count: 47)
        effects[0] = 0x04
        let block = try TriggerEffect.feedback(position: 3, strength: 6).encoded()
        effects.replaceSubrange(10..<10 + block.count, with: block)
        XCTAssertEqual(sdl.command("effect " + effects.map { String(format: "%02x", $0) }.joined())["rc"] as? Int, 0)
        XCTAssertNotNil(decoded { $0.rightTrigger == .feedback(position: 3, strength: 6) }, "SDL's trigger effect; the pad got \(passed)")
        effects.replaceSubrange(10..<10 + block.count, with: try TriggerEffect.off.encoded())
        XCTAssertEqual(sdl.command("effect " + effects.map { String(format: "%02x", $0) }.joined())["rc"] as? Int, 0)
        XCTAssertNotNil(decoded { $0.rightTrigger == .off }, "SDL's trigger effect off")
    }
}

extension SDLClientTests {
    /// 1, or 2 where the pad is player 1 already. SDL gives each gamepad the first free player index
    /// as it appears, and setting the index a pad already has sends nothing (SDL_joystick.c:
    /// SDL_PrivateJoystickAdded and SDL_SetJoystickIDForPlayerIndex, SDL 2 and 3). SDL 3's HIDAPI
    /// also sees the physical USB-bus pad behind a forwarded one, which may take index 0 first.
    func anotherPlayerIndex(_ sdl: SDLProbe) -> Int {
        (sdl.command("info")["player_index"] as? Int) == 1 ? 2 : 1
    }

    /// SDL stops the rumble; across the link the physical pad falls silent within a second, at most
    /// a renewal already on its way gets there first, and no motor report follows the stop.
    func expectStop(sdl: SDLProbe, motors decode: @escaping ([UInt8]) -> MotorLevels? = { (try? DualSenseOutputDecoder.decode($0))?.motors },
                    outputs: (Duration, ([UInt8]) -> Bool) -> [UInt8]?) throws {
        XCTAssertEqual(sdl.command("rumble 0 0 0")["rc"] as? Int, 0)
        let stopped = MonotonicInstant.now
        var renewals = 0
        let stop = outputs(.seconds(2)) { report in
            guard let motors = decode(report) else { return false }
            if motors == MotorLevels(low: 0, high: 0) { return true }
            renewals += 1
            return false
        }
        XCTAssertNotNil(stop, "SDL's stop never reached the physical pad")
        XCTAssertLessThan(MonotonicInstant.now - stopped, .seconds(1), "the stop took more than a second")
        XCTAssertLessThanOrEqual(renewals, 2, "the motors were renewed \(renewals) times after SDL's stop")
        let later = outputs(.seconds(2)) { report in
            guard let motors = decode(report) else { return false }
            return motors != MotorLevels(low: 0, high: 0)
        }
        XCTAssertNil(later, "the motors ran again after SDL's stop")
    }
}

/// Answers a uinput pad's force-feedback requests on a thread of its own and keeps the uploads.
final class ServicedRumble {
    private let lock = NSLock()
    private var uploads: [UInputRumbleReceiver.UploadedEffect] = []
    private var running = true
    private let thread: Thread

    init(_ pad: UInputGamepad) {
        let descriptor = pad.descriptor
        let box = Box()
        thread = Thread {
            let receiver = UInputRumbleReceiver(uinput: descriptor)  // this thread's alone
            while let owner = box.owner, owner.lock.withLock({ owner.running }) {
                _ = Poll.wait([descriptor], timeout: .milliseconds(50))
                for case .uploaded(let effect) in (try? receiver.service()) ?? [] { owner.lock.withLock { owner.uploads.append(effect) } }
            }
        }
        box.owner = self
        thread.start()
    }

    private final class Box: @unchecked Sendable { weak var owner: ServicedRumble? }

    func uploaded() -> [UInputRumbleReceiver.UploadedEffect] { lock.withLock { uploads } }
    func stop() { lock.withLock { running = false } }
}

/// sdl-probe (SDL 2) or sdl3-probe (SDL 3) as a subprocess: one command line in, one JSON line out.
final class SDLProbe {
    /// Which SDL a probe runs: the two speak the same commands and answer with the same keys.
    enum Library: CaseIterable, CustomStringConvertible {
        /// The system's libsdl2, Debian's SDL 3.2 (built from its source), and sid's SDL 3.4 as
        /// Debian ships it (run with sid's own libraries: tools/sdl34-runtime.sh), for the drivers
        /// 3.2 lacks.
        case sdl2, sdl3, sdl34

        var executable: URL {
            let path = switch self { case .sdl2: ".build/sdl-probe"; case .sdl3: ".build/sdl3-probe"; case .sdl34: ".build/sdl34-probe" }
            return repositoryRoot.appendingPathComponent(path)
        }
        var builder: String {
            switch self { case .sdl2: "tools/build-sdl-probe.sh"; case .sdl3: "tools/build-sdl3.sh"; case .sdl34: "tools/sdl34-runtime.sh" }
        }
        var description: String { switch self { case .sdl2: "SDL 2"; case .sdl3: "SDL 3"; case .sdl34: "SDL 3.4" } }
    }

    let library: Library
    let process = Process()
    private let input = Pipe(), output = Pipe(), errors = Pipe()
    private var pending = Data()
    private(set) var info: [String: Any] = [:]
    private(set) var lastState: [String: Any] = [:]

    struct NotFound: Error, CustomStringConvertible { let description: String }

    /// - Parameter opensHidSteamPad: the pad is one hid-steam drives (a Deck's controls). SDL's
    ///   HIDAPI driver opens its hidraw node as SDL starts, and hid-steam then removes the pad's
    ///   evdev devices while SDL's Linux driver sorts /dev/input by joystick numbers it reads from
    ///   sysfs as it sorts: the order changes under the sort, and SDL 3.2's `SDL_qsort` (before
    ///   SDL's commit 5ad9b6b, "Add bounds checks in SDL_qsort", 3.4.0) then reads past the
    ///   array and the process dies (seen in the guest: 2 of 8 loaded runs; backtrace
    ///   `sort_entries` ← `LINUX_ScanInputDevices`). SDL's classic joystick scan sorts by name
    ///   alone, so the probe uses it there (docs/pad-families.md).
    init(_ library: Library, hidapi: Bool, path: String, wait: Int = 15, opensHidSteamPad: Bool = false) throws {
        self.library = library
        process.executableURL = library.executable
        process.arguments = ["--hidapi", hidapi ? "on" : "off", "--path", path, "--wait", String(wait)]
        if opensHidSteamPad {
            process.environment = ProcessInfo.processInfo.environment.merging(["SDL_JOYSTICK_LINUX_CLASSIC": "1"]) { $1 }
        }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        guard let first = readJSON(timeout: .seconds(wait + 10)) else {
            let ended = !process.isRunning
            process.terminate()
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
            let how = ended ? "it ended (\(process.terminationReason == .uncaughtSignal ? "signal" : "status") \(process.terminationStatus))" : "no answer"
            throw NotFound(description: "\(library) (hidapi \(hidapi)) did not open \(path): \(how): \(stderr)")
        }
        info = first
        print("\(library): SDL \(first["sdl_version"] ?? "?") (hidapi \(hidapi)) opened \(path) as \(first["type"] ?? "?")")
    }

    func command(_ line: String) -> [String: Any] {
        send(line)
        return reply()
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
    func reply() -> [String: Any] { readJSON(timeout: .seconds(10)) ?? [:] }

    /// Asks for the state until `condition` holds on it.
    /// `slice`: one pass of the caller's own resend-and-look loop, whose running out is expected.
    func waitForState(timeout: Duration = .seconds(5), slice: Bool = false, _ condition: ([String: Any]) -> Bool) -> [String: Any]? {
        eventually(timeout: timeout, expiryIsExpected: slice) { () -> [String: Any]? in
            lastState = command("state")
            return condition(lastState) ? lastState : nil
        }
    }

    func quit() {
        if process.isRunning { input.fileHandleForWriting.write(Data("quit\n".utf8)) }
        process.waitUntilExit()
    }

    private func readJSON(timeout: Duration) -> [String: Any]? {
        let deadline = MonotonicInstant.now + timeout
        let fd = FileDescriptor(rawValue: output.fileHandleForReading.fileDescriptor)
        while MonotonicInstant.now < deadline {
            if let newline = pending.firstIndex(of: 0x0a) {
                let line = pending[..<newline]
                pending.removeSubrange(...newline)
                return (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
            }
            guard Poll.wait([fd], timeout: .milliseconds(100))[0].readable else {
                if !process.isRunning { return nil }
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(fd.rawValue, &buffer, buffer.count)
            if count <= 0 { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
        return nil
    }
}
