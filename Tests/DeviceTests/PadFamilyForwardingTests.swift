import Feedback
import Foundation
import HIDCodecs
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices

/// Every pad family arrives on the host as itself (`serve --virtual auto`): the host's virtual pad
/// has the physical pad's ids, descriptor and calibration, is bound by the family's own kernel
/// driver, shows the same input on its evdev nodes as the physical pad's driver does, and the
/// game's feedback reaches the physical pad as that pad's own output reports.
final class PadFamilyForwardingTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-family-\(UUID())") }
    override func tearDown() { try? FileManager.default.removeItem(at: state) }

    /// A USB DualShock 4 with a calibration no default has becomes a Bluetooth DualShock 4 on the
    /// host (hid-sony on this 6.1 kernel) that answers with the same calibration in its Bluetooth
    /// form and the same version report: every control reads the same on both kernels' evdev
    /// nodes, motion within 1 LSB, and the game's lightbar and rumble come back as DS4 reports.
    func testAForwardedDualShock4IsADualShock4WithThePadsOwnCalibration() throws {
        try checkForwardedDualShock4(physicalBus: .usb)
    }

    /// The same over Bluetooth: the pad's calibration travels in its own 0x05 form, CRC and all,
    /// and the game's feedback comes back as the pad's Bluetooth report 0x11.
    func testAForwardedBluetoothDualShock4IsADualShock4WithThePadsOwnCalibration() throws {
        try checkForwardedDualShock4(physicalBus: .bluetooth)
    }

    func checkForwardedDualShock4(physicalBus: PadBus) throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        var version = DualShock4IdentityData.versionInfo
        version[41] = 0x77   // firmware version low byte: not the default
        let physical = try EmulatedPlayStationPad(kind: .dualShock4, bus: physicalBus, calibration: EmulatedDualShock4Tests.calibration, firmwareInfo: version)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        XCTAssertEqual(physicalPad.kind, .dualShock4)

        let port = String(27800 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "auto"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // --shared: the test reads the physical pad's nodes beside forward, to compare them with the host's.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.hidraw), "--quiet", "--shared"], includeStandardError: true)
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.hidraw != nil && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual pad; serve said \(serve.snapshot())")
        XCTAssertEqual(virtualPad.kind, .dualShock4, "a forwarded DualShock 4 must be a DualShock 4 on the host")
        XCTAssertEqual(virtualPad.vendorID, 0x054c)
        XCTAssertEqual(virtualPad.productID, 0x05c4)
        XCTAssertTrue(forward.snapshot().contains { $0.contains("from \(physicalPad.hidraw!)") }, "forward did not read the pad from hidraw: \(forward.snapshot())")

        // The physical pad's reports, in the host pad's (Bluetooth) forms.
        let host = try HIDRawDevice(path: try XCTUnwrap(virtualPad.hidraw))
        XCTAssertEqual(try host.featureReport(0x05, length: 41), try DualShock4Calibration.bluetoothForm(EmulatedDualShock4Tests.calibration))
        XCTAssertEqual(try host.featureReport(0xa3, length: 49), version)

        // Controls: the same on both evdev nodes (the same driver reads both).
        let physicalReader = try LivePadReader(pad: physicalPad), hostReader = try LivePadReader(pad: virtualPad)
        var input = GamepadState.dualSenseAtRest
        input.sensorTimestamp = 1000
        let steps: [(GamepadButtons, DPad, StickPosition, StickPosition, UInt8, UInt8)] = [
            ([.south, .l1, .options], .up, StickPosition(x: 0, y: 255), StickPosition(x: 200, y: 60), 255, 0),
            ([.north, .west, .r3, .ps, .touchpad], .downLeft, StickPosition(x: 255, y: 1), StickPosition(x: 3, y: 254), 7, 201),
            ([.east, .create, .l3, .r1], .none, StickPosition(x: 128, y: 128), StickPosition(x: 128, y: 128), 0, 255),
        ]
        for (buttons, dpad, left, right, l2, r2) in steps {
            input.buttons = buttons; input.dpad = dpad; input.leftStick = left; input.rightStick = right; input.l2 = l2; input.r2 = r2
            input.apply(.touch(slot: 0, x: 300 + UInt16(l2), y: 100 + UInt16(r2)))
            var last: (physical: LivePadState, host: LivePadState) = (.init(), .init())
            let matched = try eventually(timeout: .seconds(10)) { () throws -> Bool? in
                input.sensorTimestamp &+= 750
                try physical.send(input)
                _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
                _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
                last = (physicalReader.snapshot(), hostReader.snapshot())
                let p = last.physical, h = last.host
                guard Set(p.buttons) == Set(buttons.names), p.left_stick == [Int32(left.x), Int32(left.y)], p.l2 == Int32(l2) else { return nil }
                return Set(h.buttons) == Set(p.buttons) && h.dpad == p.dpad && h.left_stick == p.left_stick && h.right_stick == p.right_stick
                    && h.l2 == p.l2 && h.r2 == p.r2 && h.touch.map { [$0.x, $0.y] } == p.touch.map { [$0.x, $0.y] } ? true : nil
            }
            XCTAssertNotNil(matched, "\(buttons.names) \(dpad): client evdev \(last.physical), host evdev \(last.host)")
        }

        // Motion: each raw vector reads the same on both kernels' evdev nodes within 1 LSB.
        try checkMotionForwarded(from: physical, input: &input, sensorStep: 750, timeout: .seconds(10),
                                 physicalReader: physicalReader, hostReader: hostReader)

        // Feedback: the host kernel's lightbar (three LED class devices, red, green and blue, named
        // "<hid device>:red" by hid-sony up to 6.1 and "<gamepad input>:red" by hid-playstation from
        // 6.2) and force-feedback rumble reach the physical pad as its own report (USB 0x05, Bluetooth 0x11).
        _ = physical.takeOutputs()
        let leds = LEDClassDevices(pad: virtualPad)
        let colourLEDs = try XCTUnwrap(leds.colourLEDs, "no red/green/blue LEDs on kernel \(KernelVersion.running): \(leds.directories)")
        let prefix = KernelVersion.running < .playStationDrivesDualShock4 ? virtualPad.id.split(separator: "/").last.map(String.init) ?? "?"
            : try XCTUnwrap(virtualPad.gamepadNode.flatMap { inputDeviceName(of: $0.path) })
        XCTAssertEqual(colourLEDs.red, "/sys/class/leds/\(prefix):red")
        try leds.setColor(RGBColor(red: 10, green: 200, blue: 30))
        var seenReports: [String] = []
        func decoded(_ report: [UInt8]) -> DecodedDualShock4Output? {
            let output = try? DualShock4OutputDecoder.decode(report)
            seenReports.append(output.map { "\($0.motors.map { "\($0)" } ?? "-") \($0.lightbar.map { "\($0)" } ?? "-")" } ?? "undecodable \(report.prefix(4))")
            return output
        }
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { decoded($0)?.lightbar == RGBColor(red: 10, green: 200, blue: 30) },
                        "the game's lightbar never reached the physical pad: \(seenReports)")
        let ownReport: UInt8 = physicalBus == .usb ? 0x05 : 0x11
        XCTAssertEqual(physical.takeOutputs().filter { $0.first != ownReport }, [], "the physical pad got reports not its own")

        var options = PadFeedback.Options()
        options.rumblePath = .evdev
        let feedback = PadFeedback(pad: virtualPad, options: options)
        try feedback.rumble(MotorLevels(low: 180, high: 90), for: .milliseconds(600))
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { decoded($0)?.motors == MotorLevels(low: 180, high: 90) },
                        "the game's rumble never reached the physical pad: \(seenReports)")
        feedback.close()
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { decoded($0)?.motors == MotorLevels(low: 0, high: 0) },
                        "the stop never reached the physical pad: \(seenReports)")
    }

    /// An Xbox One S over Bluetooth becomes an Xbox One S over Bluetooth on the host (hid-microsoft
    /// on both sides): every control reads the same on both kernels' evdev nodes, the battery
    /// the same on both power supplies, and what the host's pad is told to rumble (the kernel's
    /// force feedback, and a game's report 0x03 with the trigger motors) reaches the physical pad
    /// as its own report 0x03 with the same magnitudes.
    func testAForwardedXboxOverBluetoothIsAnXboxOneWithTriggerRumble() throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let physical = try EmulatedXboxOne()
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.uniq == physical.uniq && $0.hidraw != nil && $0.gamepadNode != nil }
        }, "the emulated Xbox pad never showed up with a hidraw and a gamepad node")
        XCTAssertEqual(physicalPad.kind, .xbox)

        let port = String(27850 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "auto"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // --shared: the test reads the physical pad's nodes beside forward, to compare them with the host's.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.hidraw), "--quiet", "--shared"], includeStandardError: true)
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.isHostVirtualPad && $0.hidraw != nil && $0.gamepadNode != nil }
        }, "the host never created its virtual pad; serve said \(serve.snapshot())")
        XCTAssertEqual(virtualPad.kind, .xbox)
        XCTAssertEqual(virtualPad.bus, .bluetooth)
        XCTAssertEqual(virtualPad.productID, 0x02fd, "the physical pad's own product id")
        XCTAssertTrue(forward.snapshot().contains { $0.contains("from \(physicalPad.hidraw!)") }, "forward did not read the pad from hidraw: \(forward.snapshot())")

        // Controls, the triggers' 10 bits included (they travel at full resolution). Each step
        // moves every axis by more than the input core's fuzz, which would hold the old value.
        let physicalReader = try LivePadReader(pad: physicalPad), hostReader = try LivePadReader(pad: virtualPad)
        let steps: [(GamepadButtons, DPad, [Int16], UInt16, UInt16)] = [
            ([.south, .l1, .options], .up, [-32768, 32767, 1234, -4321], 1023, 0),
            ([.north, .west, .r3, .ps], .downLeft, [32767, -32768, -1, 0], 777, 601),
            ([.east, .l3, .r1], .none, [0, 0, 0, 0], 1, 1022),
        ]
        for (buttons, dpad, sticks, l2, r2) in steps {
            var report = XboxOneSBluetooth.stateReport(buttons: buttons, dpad: dpad, leftX: sticks[0], leftY: sticks[1], rightX: sticks[2], rightY: sticks[3], l2: 0, r2: 0)
            report[9] = UInt8(l2 & 0xff); report[10] = UInt8(l2 >> 8); report[11] = UInt8(r2 & 0xff); report[12] = UInt8(r2 >> 8)
            var last: (physical: LivePadState, host: LivePadState) = (.init(), .init())
            let matched = try eventually(timeout: .seconds(10)) { () throws -> Bool? in
                try physical.send(report)
                _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
                _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
                last = (physicalReader.snapshot(), hostReader.snapshot())
                let p = last.physical, h = last.host
                guard Set(p.buttons) == Set(buttons.names), p.l2 == Int32(l2), p.r2 == Int32(r2) else { return nil }
                return Set(h.buttons) == Set(p.buttons) && h.dpad == p.dpad && h.left_stick == p.left_stick && h.right_stick == p.right_stick
                    && h.l2 == p.l2 && h.r2 == p.r2 ? true : nil
            }
            XCTAssertNotNil(matched, "\(buttons.names) \(dpad) \(sticks) \(l2)/\(r2): client evdev \(last.physical), host evdev \(last.host)")
        }

        // View: AC Back on this pad, hid-microsoft's KEY_BACK (158) on both nodes.
        var view = XboxOneSBluetooth.stateReport(buttons: [.create], dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0, l2: 0, r2: 0)
        let keyBack: UInt32 = 158
        XCTAssertNotNil(try eventually(timeout: .seconds(10)) { () throws -> Bool? in
            try physical.send(view)
            _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
            _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
            return physicalReader.gamepad?.value(type: EvdevCode.EV_KEY, code: keyBack) == 1
                && hostReader.gamepad?.value(type: EvdevCode.EV_KEY, code: keyBack) == 1 ? true : nil
        }, "View (KEY_BACK) on the client's and the host's evdev nodes")
        view = XboxOneSBluetooth.stateReport(buttons: [], dpad: .none, leftX: 0, leftY: 0, rightX: 0, rightY: 0, l2: 0, r2: 0)
        try physical.send(view)

        // Battery: the same charge on both kernels' power supplies.
        try physical.send(XboxOneSBluetooth.batteryReport(percent: 50))
        func capacity(_ pad: Pad) -> String? {
            let hidName = pad.id.split(separator: "/").last.map(String.init) ?? "?"
            let directory = "/sys/bus/hid/devices/\(hidName)/power_supply"
            guard let supply = try? FileManager.default.contentsOfDirectory(atPath: directory).first else { return nil }
            return (try? String(contentsOfFile: "\(directory)/\(supply)/capacity", encoding: .ascii))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var capacities: (String?, String?) = (nil, nil)
        XCTAssertNotNil(eventually(timeout: .seconds(10)) { () -> Bool? in
            try? physical.send(XboxOneSBluetooth.batteryReport(percent: 50))
            capacities = (capacity(physicalPad), capacity(virtualPad))
            return capacities.0 != nil && capacities.0 == capacities.1 && capacities.0 != "100" ? true : nil
        }, "battery capacity: client \(capacities.0 ?? "none"), host \(capacities.1 ?? "none")")

        // Feedback: the host kernel's force feedback (two motors, 0-100 in hid-microsoft's
        // arithmetic: 180 × 257 × 100 / 65535 = 70, 90 × 257 × 100 / 65535 = 35).
        _ = physical.takeOutputs()
        var seen: [String] = []
        func rumble(_ report: [UInt8]) -> XboxRumbleReport? {
            let decoded = try? XboxRumbleReport(decoding: report)
            seen.append(decoded.map { "\($0.enable.rawValue) \($0.leftTrigger) \($0.rightTrigger) \($0.strong) \($0.weak) \($0.duration10ms)" }
                        ?? "other \(report.prefix(3))")
            return decoded
        }
        var options = PadFeedback.Options()
        options.rumblePath = .evdev
        let feedback = PadFeedback(pad: virtualPad, options: options)
        try feedback.rumble(MotorLevels(low: 180, high: 90), for: .milliseconds(600))
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.strong == 70 && $0.weak == 35 && $0.duration10ms > 0 } ?? false },
                        "the kernel's rumble never reached the physical pad: \(seen)")
        feedback.close()
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.strong == 0 && $0.weak == 0 } ?? false },
                        "the stop never reached the physical pad: \(seen)")

        // A game's report 0x03 (SDL's layout) with the trigger motors.
        let host = try HIDRawDevice(path: try XCTUnwrap(virtualPad.hidraw))
        seen = []
        try host.write([0x03, 0x0F, 40, 60, 10, 20, 0xFF, 0x00, 0xEB])
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) {
            rumble($0).map { $0.leftTrigger == 40 && $0.rightTrigger == 60 && $0.strong == 10 && $0.weak == 20 && $0.enable == .all } ?? false
        }, "the game's trigger rumble never reached the physical pad: \(seen)")
        try host.write([0x03, 0x0F, 0, 0, 0, 0, 0xFF, 0x00, 0xEB])
        XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { rumble($0).map { $0.bytes[2...5].allSatisfy { $0 == 0 } } ?? false },
                        "the game's stop never reached the physical pad: \(seen)")
    }

    /// A Switch Pro (read through evdev, where hid-nintendo has done its handshake) becomes a
    /// Switch Pro on the host that answers SPI reads with the physical pad's own calibration
    /// blocks, read from its flash by the client: every control reads the same on both kernels'
    /// evdev nodes, sticks exactly and motion within 1 LSB; the host kernel's rumble comes back as
    /// HD rumble frames, a game's player lights as the physical pad's own lights subcommand.
    func testAForwardedSwitchProIsASwitchProWithThePadsOwnCalibration() throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let calibration = EmulatedSwitchProTests.calibration
        let physical = try EmulatedSwitchPro(calibration: calibration)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(EmulatedSwitchProTests.padFor(physical, udev: udev))

        let port = String(27750 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", "auto"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // --shared: the test reads the physical pad's nodes beside forward, to compare them with the host's.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.gamepadNode?.path), "--shared"], includeStandardError: true)
        defer { forward.interrupt() }
        // Whatever ends the test early, both processes say what they saw.
        do {
            let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
                udev.pads().first { $0.isHostVirtualPad && $0.hidraw != nil && $0.gamepadNode != nil && $0.node(.motion) != nil }
            }, "the host never created its virtual pad; serve said \(serve.snapshot()), forward said \(forward.snapshot())")
            XCTAssertEqual(virtualPad.kind, .switchPro)
            XCTAssertTrue(forward.snapshot().contains { $0.contains("SPI calibration goes to the host") }, "forward did not say how it reads the pad: \(forward.snapshot())")

            // The host pad's flash holds the physical pad's calibration.
            let hosted = try SwitchProSPI.readCalibration(hidraw: try XCTUnwrap(virtualPad.hidraw))
            XCTAssertEqual(hosted, calibration)

            // Controls: the same on both evdev nodes (each step far from the last: the input core's fuzz).
            let physicalReader = try LivePadReader(pad: physicalPad), hostReader = try LivePadReader(pad: virtualPad)
            let steps: [(GamepadButtons, DPad, (UInt16, UInt16), (UInt16, UInt16))] = [
                ([.east, .l1, .l2, .options, .capture], .up, (3400, 650), (1100, 3000)),
                ([.south, .west, .r1, .r2, .ps, .r3], .downRight, (700, 3300), (3350, 900)),
                ([.north, .create, .l3], .none, (2050, 2010), (1980, 2040)),
            ]
            var controls = SwitchProReports.Controls()
            for (buttons, dpad, left, right) in steps {
                controls.buttons = buttons; controls.dpad = dpad; controls.left = left; controls.right = right
                var last: (physical: LivePadState, host: LivePadState) = (.init(), .init())
                let matched = try eventually(timeout: .seconds(10)) { () throws -> Bool? in
                    try physical.send(controls)
                    _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
                    _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
                    last = (physicalReader.snapshot(), hostReader.snapshot())
                    let p = last.physical, h = last.host
                    guard Set(p.buttons) == Set(buttons.names) else { return nil }
                    return Set(h.buttons) == Set(p.buttons) && h.dpad == p.dpad && h.left_stick == p.left_stick && h.right_stick == p.right_stick ? true : nil
                }
                XCTAssertNotNil(matched, "\(buttons.names) \(dpad) \(left) \(right): client evdev \(last.physical), host evdev \(last.host)")
            }

            // Motion through the pad's IMU calibration, within 1 LSB on both nodes.
            var imu = SwitchProReports.IMUSample()
            for (accel, gyro) in [((Int16(-3000), Int16(4100), Int16(250)), (Int16(1200), Int16(-800), Int16(33))),
                                  ((9000, -12000, 4096), (-15000, 20000, -7)), ((1, -1, 16000), (5, -5, 30000))] {
                imu.accel = accel; imu.gyro = gyro
                var last: (physical: [Int32], host: [Int32]) = ([], [])
                let matched = try eventually(timeout: .seconds(10)) { () throws -> Bool? in
                    try physical.send(controls, imu: imu)
                    _ = Poll.wait(physicalReader.descriptors + hostReader.descriptors, timeout: .milliseconds(20))
                    _ = try physicalReader.readAvailable(); _ = try hostReader.readAvailable()
                    let p = physicalReader.snapshot(), h = hostReader.snapshot()
                    last = ((p.gyro ?? []) + (p.accel ?? []), (h.gyro ?? []) + (h.accel ?? []))
                    guard last.physical.count == 6, last.host.count == 6, last.physical[0] == SwitchProMath.gyro(gyro.0, calibration.imu.gyro[0]) else { return nil }
                    return zip(last.physical, last.host).allSatisfy { abs($0 - $1) <= 1 } ? true : nil
                }
                XCTAssertNotNil(matched, "gyro+accel for raw \(gyro) \(accel): client evdev \(last.physical), host evdev \(last.host)")
            }

            // Feedback: the host kernel's force feedback becomes HD rumble frames at the physical pad.
            _ = physical.takeOutputs()
            func levels(_ report: [UInt8]) -> MotorLevels? { SwitchProReports.output(report)?.rumble.flatMap(SwitchHDRumble.levels) }
            var options = PadFeedback.Options()
            options.rumblePath = .evdev
            let feedback = PadFeedback(pad: virtualPad, options: options)
            try feedback.rumble(MotorLevels(low: 200, high: 120), for: .milliseconds(800))
            XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(5)) { levels($0).map { $0.low > 100 && $0.high > 40 } ?? false },
                            "the host's rumble never reached the physical pad")
            feedback.close()
            var seen: [MotorLevels] = []
            let stopped = physical.waitForOutput(timeout: .seconds(5)) { report in
                guard let l = levels(report) else { return false }
                seen.append(l)
                return l == .silent
            }
            if stopped == nil { print("rumble frames at the physical pad after the stop: \(seen.suffix(20))\nserve said: \(serve.snapshot())\nforward said: \(forward.snapshot())") }
            XCTAssertNotNil(stopped, "the stop never reached the physical pad")

            // A game's player lights (subcommand 0x30 on the host pad) light the physical pad's.
            let host = try HIDRawDevice(path: try XCTUnwrap(virtualPad.hidraw))
            var lights = [UInt8](repeating: 0, count: SwitchProReports.length)
            lights[0] = 0x01; lights[1] = 0x05
            lights.replaceSubrange(2..<10, with: [0x00, 0x01, 0x40, 0x40, 0x00, 0x01, 0x40, 0x40])
            lights[10] = 0x30; lights[11] = 0x05
            try host.write(lights)
            var subcommands: [String] = []
            XCTAssertNotNil(physical.waitForOutput(timeout: .seconds(10)) { report in
                guard let output = SwitchProReports.output(report), let id = output.subcommand else { return false }
                subcommands.append(String(format: "%02x:%02x", id, output.arguments.first ?? 0))
                return id == 0x30 && output.arguments.first.map { $0 & 0x0F } == 0x05
            }, "the game's player lights never reached the physical pad: subcommands \(subcommands)")
        } catch {
            print("serve said: \(serve.snapshot())\nforward said: \(forward.snapshot())")
            throw error
        }
    }
}
