import Feedback
import Foundation
import HIDCodecs
@testable import PadFamilies
import PadSystem
import XCTest
@testable import PadDevices

/// End to end against the real kernel: an emulated physical DualSense → `padgate forward` →
/// `padgate serve` → a virtual DualSense (uhid, hid-playstation) whose evdev nodes show the same
/// input; feedback played on the virtual pad arrives back at the physical one.
final class ForwardingTests: XCTestCase {
    override func setUpWithError() throws { try requireDeviceAccess() }

    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-fwd-\(UUID())") }

    func testInputFeedbackAndReleaseAcrossTheLink() throws { try inputFeedbackAndRelease(virtual: "dualsense", hostBus: .bluetooth) }

    /// The same against the host's DualSense as a USB device on vhci-hcd (`--virtual usb`).
    func testInputFeedbackAndReleaseAcrossTheLinkToAUSBHostPad() throws {
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        try inputFeedbackAndRelease(virtual: "usb", hostBus: .usb)
    }

    /// Two DualSenses whose identity reports are equal (issue 42: any two emulated ones, the
    /// demo's) forwarded by one client as USB host pads: each gets its own address, so
    /// hid-playstation binds both (before, both got one address and the second was refused,
    /// "Duplicate device found for MAC address": a game saw one pad).
    func testTwoPadsWithEqualReportsBecomeTwoHostPads() throws {
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let first = try EmulatedPlayStationPad(bus: .usb), second = try EmulatedPlayStationPad(bus: .usb)
        defer { first.stop(); second.stop() }
        let udev = try Udev()
        let pads = [try XCTUnwrap(padFor(first, udev: udev)), try XCTUnwrap(padFor(second, udev: udev))]
        let port = String(27950 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", "usb"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forwards = try pads.map { try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", $0.evdev[0].path, "--quiet"]) }
        defer { forwards.forEach { $0.interrupt() } }
        // Two USB devices enumerated on vhci-hcd and probed by usbhid, snd-usb-audio and
        // hid-playstation one after the other: 19 s on an idle guest, 30 s once with both cores busy.
        let hostPads = eventually(timeout: .seconds(90)) { () -> [Pad]? in
            let made = udev.pads().filter { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.hidraw != nil }
            return made.count == 2 ? made : nil
        }
        XCTAssertNotNil(hostPads, "both host pads bound by hid-playstation (hidraw and evdev): \(udev.pads().filter(\.isHostVirtualPad).map { "\($0.name) \($0.uniq) hidraw \($0.hidraw ?? "none") nodes \($0.evdev.map(\.role))" })\nserve said: \(serve.snapshot())")
        if let hostPads { XCTAssertEqual(Set(hostPads.map(\.uniq)).count, 2, "two addresses: \(hostPads.map(\.uniq))") }
    }

    func inputFeedbackAndRelease(virtual: String, hostBus: PadBus) throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let physical = try EmulatedPlayStationPad(bus: .usb)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))

        let port = String(27900 + Int.random(in: 0..<50))
        let serve = try startPairedServe(["--virtual", virtual], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // --shared: the test reads the physical pad's nodes beside forward, to compare them with the host's.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet", "--shared"])
        defer { forward.interrupt() }

        let virtualPad = try XCTUnwrap(eventually(timeout: HostPadBudget.made) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual DualSense")
        XCTAssertEqual(virtualPad.kind, .dualSense)
        XCTAssertEqual(virtualPad.bus, hostBus)
        let reader = try LivePadReader(pad: virtualPad)

        // Input: buttons, sticks, triggers, touch, motion.
        var input = GamepadState.dualSenseAtRest
        input.buttons = [.south, .r1]
        input.dpad = .left
        input.leftStick = StickPosition(x: 255, y: 0)
        input.l2 = 200
        input.apply(.touch(slot: 0, x: 640, y: 360))
        input.motion.first.gyro = Vector3(x: 1477, y: 0, z: 0)
        var seen: LivePadState?
        for _ in 0..<200 where seen == nil {
            input.sensorTimestamp &+= 12_000  // 4 ms in the pad's 1/3 µs ticks
            try physical.send(input)
            seen = try waitForState(reader, timeout: .milliseconds(50), expiryIsExpected: true) {
                $0.buttons.contains("south") && $0.buttons.contains("r1") && $0.dpad == "left" && $0.left_stick == [255, 0]
                    && $0.l2 == 200 && $0.touch.contains { $0.x == 640 && $0.y == 360 }
            }
        }
        XCTAssertNotNil(seen, "the virtual pad never showed the physical pad's input: \(reader.snapshot())")
        // Motion: the kernel reports gyro in 1/1024 deg/s on both pads, so the same rotation must
        // read the same on both sides (a mis-scaled gyro would be off by a constant factor).
        let physicalReader = try LivePadReader(pad: physicalPad)
        var gyros: (virtual: Int32, physical: Int32)?
        for _ in 0..<100 where gyros == nil {
            input.sensorTimestamp &+= 12_000
            try physical.send(input)
            _ = Poll.wait(physicalReader.descriptors + reader.descriptors, timeout: .milliseconds(30))
            _ = try physicalReader.readAvailable()
            _ = try reader.readAvailable()
            if let g0 = physicalReader.snapshot().gyro?[0], let g1 = reader.snapshot().gyro?[0], g0 > 80_000, abs(g1 - g0) < 256 {
                gyros = (g1, g0)
            }
        }
        XCTAssertNotNil(gyros, "gyro x: virtual \(reader.snapshot().gyro ?? []), physical \(physicalReader.snapshot().gyro ?? [])")

        // Feedback: a game's lightbar (through the LED class device) and rumble (force feedback)
        // on the virtual pad come back to the physical pad as output reports.
        _ = physical.takeOutputs()
        try LEDClassDevices(pad: virtualPad).setColor(RGBColor(red: 10, green: 200, blue: 30))
        let lightbar = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.lightbar == RGBColor(red: 10, green: 200, blue: 30)
        }
        XCTAssertNotNil(lightbar, "the game's lightbar never reached the physical pad")

        let feedback = PadFeedback(pad: virtualPad)
        try feedback.rumble(MotorLevels(low: 180, high: 90), for: .milliseconds(600))
        let rumble = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.motors == MotorLevels(low: 180, high: 90)
        }
        XCTAssertNotNil(rumble, "the game's rumble never reached the physical pad")
        feedback.close()
        let stopped = physical.waitForOutput(timeout: .seconds(5)) { report in
            (try? DualSenseOutputDecoder.decode(report))?.motors == MotorLevels(low: 0, high: 0)
        }
        XCTAssertNotNil(stopped, "the stop never reached the physical pad")

        // A killed client: the host releases everything within its state lease and removes the pad.
        input.buttons = [.east]
        for _ in 0..<20 { try physical.send(input); usleep(10_000) }
        XCTAssertNotNil(try waitForState(reader) { $0.buttons == ["east"] })
        kill(forward.process.processIdentifier, SIGKILL)
        let released = try waitForState(reader, timeout: .seconds(4)) { $0.buttons.isEmpty && $0.left_stick == [128, 128] }
        XCTAssertNotNil(released, "a killed client left a button held on the host")
        XCTAssertNotNil(eventually(timeout: .seconds(5)) { udev.pads().contains { $0.isHostVirtualPad } ? nil : true },
                        "the virtual pad was not removed")
        if hostBus == .usb {
            XCTAssertTrue(VHCI.ports().allSatisfy { $0.devid >> 16 != VHCI.Mark.host.rawValue }, "a vhci port still holds the host's pad")
        }
    }

    /// A calibration no padgate default has: gyro bias and asymmetric ranges, a slower speed, an
    /// accelerometer off centre. Within the 4× of nominal the parsers accept.
    static let edgeCalibration = dualSenseCalibrationReport(
        gyroBias: [40, 80, 120], gyroPlus: [9100, 9250, 9400], gyroMinus: [-7300, -7390, -7480], speedPlus: 540, speedMinus: 530,
        accelPlus: [8350, 8290, 8230], accelMinus: [-8010, -7985, -7960])

    /// Raw fidelity: a DualSense Edge with its own calibration, forwarded (read from hidraw), is an
    /// Edge on the host that answers the driver with the physical pad's calibration and firmware,
    /// so the host kernel's calibrated motion equals the client kernel's within 1 LSB, and the
    /// back paddles and Fn buttons (which no evdev node of this kernel carries) arrive. Read
    /// through evdev instead (`forward --evdev`), every one of these checks fails: the host shows
    /// a plain DualSense with padgate's default reports, its gyro hundreds of LSB off, no paddles.
    func testAForwardedEdgeIsAnEdgeWithThePadsOwnCalibrationAndPaddles() throws { try forwardedEdge(virtual: "dualsense", hostBus: .bluetooth) }

    /// The same against the host's Edge as a USB device on vhci-hcd.
    func testAForwardedEdgeIsAUSBEdgeWithThePadsOwnCalibrationAndPaddles() throws {
        if let reason = VHCI.unavailableReason() { try skipLoudly(reason) }
        try forwardedEdge(virtual: "usb", hostBus: .usb)
    }

    func forwardedEdge(virtual: String, hostBus: PadBus) throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        var firmware = DualSenseIdentityData.firmwareInfo
        firmware[DualSenseIdentityData.updateVersionOffset] = 0x31  // not the default either
        let physical = try EmulatedPlayStationPad(kind: .dualSenseEdge, bus: .usb, calibration: Self.edgeCalibration, firmwareInfo: firmware)
        defer { physical.stop() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(padFor(physical, udev: udev))
        XCTAssertEqual(physicalPad.kind, .dualSenseEdge)

        let port = String(27950 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", virtual], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        // --shared: the test reads the physical pad's nodes beside forward, to compare them with the host's.
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", physicalPad.evdev[0].path, "--quiet", "--shared"], includeStandardError: true)
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: HostPadBudget.made) {
            udev.pads().first { $0.isHostVirtualPad && $0.hasItsInputNodes && $0.hidraw != nil && $0.capabilities.contains(.battery) }
        }, "the host never created its virtual pad")
        XCTAssertEqual(virtualPad.kind, .dualSenseEdge, "a forwarded Edge must be an Edge on the host")
        XCTAssertEqual(virtualPad.bus, hostBus)
        XCTAssertTrue(forward.snapshot().contains { $0.contains("from \(physicalPad.hidraw!)") }, "forward did not read the pad from hidraw: \(forward.snapshot())")

        // The host pad answers with the physical pad's feature reports (over Bluetooth its own
        // CRC replaces the last four bytes).
        let host = try HIDRawDevice(path: try XCTUnwrap(virtualPad.hidraw))
        XCTAssertEqual(Array(try host.featureReport(0x05, length: 41).prefix(37)), Array(Self.edgeCalibration.prefix(37)))
        XCTAssertEqual(Array(try host.featureReport(0x20, length: 64).prefix(60)), Array(firmware.prefix(60)))

        // Motion: three raw vectors; each must read the same on both kernels' evdev nodes.
        let physicalReader = try LivePadReader(pad: physicalPad), hostReader = try LivePadReader(pad: virtualPad)
        var input = GamepadState.dualSenseAtRest
        try checkMotionForwarded(from: physical, input: &input, sensorStep: 12_000, timeout: .seconds(5),
                                 physicalReader: physicalReader, hostReader: hostReader)

        // Paddles and Fn buttons: read back from the host pad's raw reports.
        input.buttons = [.paddleLeft, .fnRight, .south]
        try host.setNonBlocking()
        var decoder = ControllerInputDecoder(PlayStationInputCodec.dualSenseEdge)
        var seen = GamepadState()
        var buffer = [UInt8](repeating: 0, count: 128)
        let arrived = try eventually(timeout: .seconds(5)) { () throws -> Bool? in
            try physical.send(input)
            usleep(10_000)
            while case let n = try buffer.withUnsafeMutableBufferPointer({ try host.read(into: $0, timeout: .zero) }), n > 0 {
                if (try? decoder.decode(Array(buffer[0..<n]), into: &seen)) != nil, seen.buttons.contains([.paddleLeft, .fnRight, .south]) { return true }
            }
            return nil
        }
        XCTAssertNotNil(arrived, "the paddles never reached the host pad: last buttons \(seen.buttons.names)")
    }

    /// An Xbox over Bluetooth is read from hidraw through its own report descriptor: the host's
    /// virtual Xbox pad shows what the pad's buttons mean (SDL's and Android's reading of the
    /// report), not what a generic HID mapping makes of their numbers. The Xbox button of the
    /// older firmware comes alone in report 0x02, as AC Home, which hid-microsoft turns into
    /// KEY_HOMEPAGE: through evdev (PADGATE_XBOX_EVDEV=1 runs this test with `--evdev`) it is lost.
    func testAForwardedXboxOverBluetoothIsReadThroughItsDescriptor() throws {
        setenv("PADGATE_STATE_DIR", state.path, 1)
        defer { unsetenv("PADGATE_STATE_DIR") }
        let descriptor = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent(
            "Tests/HIDCodecsTests/Fixtures/descriptors/xboxone_s_02fd_bt_android_cts.rdesc.bin")))
        let uniq = "padgate-xbox-\(UInt16.random(in: 0...UInt16.max))"
        // It answers the kernel's battery GET_REPORTs, as a real pad does; unanswered, each held
        // udevd for uhid's 5 s timeout (35 s over one Xbox pad under emulation).
        let physical = try RespondingUHIDDevice(UHIDDevice.Identity(name: "Xbox Wireless Controller", uniq: uniq, bus: .bluetooth,
                                                                    vendorID: 0x045e, productID: 0x02fd), descriptor: descriptor)
        defer { physical.destroy() }
        let udev = try Udev()
        let physicalPad = try XCTUnwrap(eventually(timeout: .seconds(30)) {
            udev.pads().first { $0.uniq == uniq && $0.hidraw != nil && $0.gamepadNode != nil }
        }, "the emulated Xbox pad never showed up in udev with a hidraw and a gamepad node")
        XCTAssertEqual(physicalPad.kind, .xbox)

        let port = String(27950 + Int.random(in: 0..<40))
        let serve = try startPairedServe(["--virtual", "xbox"], host: "127.0.0.1", port: port)
        defer { serve.interrupt() }
        let forward = try PadgateProcess(["forward", "127.0.0.1:\(port)", "--pad", try XCTUnwrap(physicalPad.hidraw), "--quiet"]
                                         + (ProcessInfo.processInfo.environment["PADGATE_XBOX_EVDEV"] != nil ? ["--evdev"] : []), includeStandardError: true)
        defer { forward.interrupt() }
        let virtualPad = try XCTUnwrap(eventually(timeout: .seconds(60)) { udev.pads().first { $0.isHostVirtualPad } },
                                       "the host never created its virtual pad; forward said \(forward.snapshot()), serve said \(serve.snapshot())")
        XCTAssertTrue(forward.snapshot().contains { $0.contains("from \(physicalPad.hidraw!)") }, "forward did not read the pad from hidraw: \(forward.snapshot())")
        // xpad's codes, which the host's Xbox pad keeps: X is BTN_X, LB BTN_TL, the Xbox button
        // BTN_MODE, the d-pad ABS_HAT0X, LT ABS_Z (0...255).
        let host = try EvdevDevice(path: try XCTUnwrap(virtualPad.gamepadNode?.path))
        func keys() -> [UInt32] {
            [EvdevCode.BTN_A, EvdevCode.BTN_B, EvdevCode.BTN_X, EvdevCode.BTN_Y, EvdevCode.BTN_TL, EvdevCode.BTN_TR, EvdevCode.BTN_SELECT,
             EvdevCode.BTN_START, EvdevCode.BTN_MODE].filter { host.value(type: EvdevCode.EV_KEY, code: $0) == 1 }
        }
        func shows(_ expected: [UInt32], hat: Int32, trigger: Int32, stickX: Int32) -> Bool {
            _ = try? host.readAvailable { _ in }
            return keys() == expected && host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X) == hat
                && host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z) == trigger && host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X) == stickX
        }
        func hostState() -> String {
            "keys \(keys().map { String($0, radix: 16) }), hat x \(host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_HAT0X)), "
                + "LT \(host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_Z)), stick x \(host.value(type: EvdevCode.EV_ABS, code: EvdevCode.ABS_X))"
        }

        // Report 0x01 of the CTS layout: X (Button 4) and LB held, the hat right, the left trigger
        // full, the left stick full right; then the Xbox button through report 0x02.
        let held: [UInt8] = [0x01, 0xff, 0xff, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x03, 0x00, 0x00, 0x03, 0x48, 0x00, 0x00]
        let shown = eventually(timeout: .seconds(10)) { () -> Bool? in
            try? physical.input(held)
            try? physical.input([0x02, 0x01])
            usleep(20_000)
            return shows([EvdevCode.BTN_X, EvdevCode.BTN_TL, EvdevCode.BTN_MODE], hat: 1, trigger: 255, stickX: 32767) ? true : nil
        }
        XCTAssertNotNil(shown, "the host's Xbox pad never showed X, LB and the Xbox button, d-pad right, LT full, stick right: \(hostState())")

        // Releasing the Xbox button (report 0x02) leaves report 0x01's buttons held, and the reverse.
        try physical.input([0x02, 0x00])
        XCTAssertNotNil(eventually { shows([EvdevCode.BTN_X, EvdevCode.BTN_TL], hat: 1, trigger: 255, stickX: 32767) ? true : nil }, hostState())
        try physical.input([0x02, 0x01])
        try physical.input([0x01, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
        XCTAssertNotNil(eventually { shows([EvdevCode.BTN_MODE], hat: 0, trigger: 0, stickX: -1) ? true : nil }, hostState())
    }
}
