import Foundation
import WireProtocol
import XCTest
@testable import HIDCodecs

/// The Steam Controller (2026), held to a real controller's hidraw streams through its puck
/// (Fixtures/valve, README there) and to the kernel's and SDL's layout (docs/research/valve-pads.md §5).
final class SteamControllerTests: XCTestCase {
    /// The stream split into reports by id, with the sizes its descriptor declares (ids included):
    /// the split the fixtures' README states, which consumes both files exactly.
    static let sizes: [UInt8: Int] = [0x42: 54, 0x43: 15, 0x7b: 13, 0x40: 6, 0x41: 9, 0x44: 6, 0x45: 46, 0x79: 2]

    static func reports(_ name: String) throws -> [[UInt8]] {
        let bytes = [UInt8](try Fixture.data("valve/\(name).hidraw.bin"))
        var reports: [[UInt8]] = []
        var at = 0
        while at < bytes.count {
            let size = try XCTUnwrap(sizes[bytes[at]], "report id \(bytes[at]) at \(at)")
            reports.append(Array(bytes[at..<min(at + size, bytes.count)]))
            at += size
        }
        XCTAssertEqual(at, bytes.count, "the split consumes the stream")
        return reports
    }

    func testTheLayoutFitsItsReports() {
        XCTAssertLessThanOrEqual(SteamControllerLayout.fieldsEnd, SteamControllerLayout.stateWithoutQuaternionLength)
        XCTAssertEqual(PadKind(vendorID: 0x28de, productID: 0x1304), .steamController)
        XCTAssertEqual(PadKind(vendorID: 0x28de, productID: 0x1302), .steamController)
        XCTAssertEqual(PadKind.steamController.canonicalIDs?.product, 0x1302, "the wired controller")
    }

    func testAStillControllerDecodesWholeAtRest() throws {
        let reports = try Self.reports("steam_controller_2026_1304_puck_slot0_idle")
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        var states = 0, sequences: [UInt8] = []
        for report in reports {
            try decoder.decode(report, into: &state)
            guard report[0] == 0x42 else { continue }
            states += 1
            sequences.append(state.sequence)
            XCTAssertEqual(state.buttons, [], "nothing pressed")
            XCTAssertEqual(state.dpad, .none)
            let wire = PadSnapshots.controls(state, slot: PadSlot(0))
            // At rest, within the sticks' bias the capture shows (a few hundred of 32767).
            for axis in [wire.leftX, wire.leftY, wire.rightX, wire.rightY] { XCTAssertLessThan(abs(Int(axis)), 1000) }
            XCTAssertFalse(state.touch0.active || state.touch1.active)
            XCTAssertEqual([state.touch0.pressure, state.touch1.pressure], [0, 0], "the capture's pads press nothing")
        }
        XCTAssertEqual(states, 1325, "the README's count of state reports")
        XCTAssertTrue(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "+1 every report")
        XCTAssertEqual(decoder.rejectedTruncated + decoder.rejectedChecksums, 0)
        // The IMU is off in the capture: its last sample held, (831, 14567, 6670) on the
        // controller's axes, about 1 g; on the DualSense's axes (x, z, −y).
        XCTAssertEqual(state.accel, Vector3(x: 831, y: 6670, z: -14567))
        // The battery report: discharging at 60 %.
        XCTAssertEqual(state.battery, BatteryStatus(percent: 60, state: .discharging))
    }

    func testTheSteamButtonIsPsWhereTheCaptureHoldsIt() throws {
        let reports = try Self.reports("steam_controller_2026_1304_puck_slot0_steam_press")
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        var states = 0, pressed = 0
        for report in reports {
            try decoder.decode(report, into: &state)
            guard report[0] == 0x42 else { continue }
            states += 1
            if state.buttons == [.ps] { pressed += 1 } else { XCTAssertEqual(state.buttons, []) }
        }
        XCTAssertEqual(states, 1327)
        XCTAssertEqual(pressed, 1249, "the README's count of reports with Steam held")
    }

    func testShortUnknownAndRandomReportsAreRefusedNeverATrap() throws {
        var codec = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        XCTAssertThrowsError(try codec.decode([0x42] + [UInt8](repeating: 0, count: 40), into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x42, got: 41, need: 54))
        }
        XCTAssertThrowsError(try codec.decode([0x45] + [UInt8](repeating: 0, count: 40), into: &state))
        XCTAssertThrowsError(try codec.decode([0x09, 0x00], into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .unknownReport(id: 0x09, length: 2, kind: .steamController))
        }
        XCTAssertNoThrow(try codec.decode([0x7b] + [UInt8](repeating: 0, count: 12), into: &state), "the puck's status: no control")
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...80)).map { _ in UInt8.random(in: 0...255) }
            _ = try? codec.decode(bytes, into: &state)
        }
    }

    /// Report 0x80 as the 2026 hid-steam fills it: type 0, intensity 0, the low-frequency motor's
    /// speed and gain 2, the high-frequency one's and gain 0 (docs/research/valve-pads.md §5.5).
    func testTheRumbleReportIsTheKernelsLayout() throws {
        let report = SteamControllerCommands.rumble(MotorLevels(low: 255, high: 128))
        XCTAssertEqual(report, [0x80, 0x00, 0x00, 0x00, 0xff, 0xff, 0x02, 0x80, 0x80, 0x00])
        XCTAssertEqual(report.count, SteamControllerCommands.rumbleLength)
        let speeds = try XCTUnwrap(SteamControllerCommands.rumbleSpeeds(report))
        XCTAssertEqual([speeds.low, speeds.high], [65535, 32896])
        XCTAssertNil(SteamControllerCommands.rumbleSpeeds([0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
    }

    /// Report 0x81 as the 2026 hid-steam's `steam_haptic_pulse` lays it out for this controller:
    /// the pad numbered as the Deck's (0 the right, 1 the left), µs on, µs off, the count; its size
    /// is the real interface's output 0x81 (7 bytes after the id in the 372-byte descriptor).
    func testThePulseReportIsTheKernelsLayoutAtTheDescriptorsSize() throws {
        let report = SteamControllerCommands.pulse(pad: .left, onMicros: 0x0190, offMicros: 700, count: 5)
        XCTAssertEqual(report, [0x81, 0x01, 0x90, 0x01, 0xbc, 0x02, 0x05, 0x00])
        XCTAssertEqual(SteamControllerCommands.pulse(pad: .right, onMicros: 1, offMicros: 2, count: 3)[1], 0)
        XCTAssertEqual(SteamControllerCommands.pulse(pad: .both, onMicros: 1, offMicros: 2, count: 3)[1], 2)
        let real = try ReportDescriptor(bytes: [UInt8](try Fixture.data("valve/steam_controller_2026_triton_rdesc_372.bin")))
        let declared = real.reports(.output).first { $0.id?.rawValue == SteamControllerCommands.pulseReport }?.sizeBytes
        XCTAssertEqual(declared, report.count, "the descriptor's size (with the id, as `sizeBytes` counts it)")
        let back = try XCTUnwrap(SteamControllerCommands.pulse(report))
        XCTAssertEqual(back.pad, .left)
        XCTAssertEqual([back.onMicros, back.offMicros, back.count], [400, 700, 5])
        XCTAssertNil(SteamControllerCommands.pulse(Array(report.dropLast())), "too short")
        XCTAssertNil(SteamControllerCommands.pulse([0x81, 3, 0, 0, 0, 0, 0, 0]), "no fourth pad")
        XCTAssertNil(SteamControllerCommands.pulse(SteamControllerCommands.rumble(.silent)), "another report")
    }

    /// padgate's descriptor (written from the ids and sizes) declares every report the real
    /// interface's does, each at its size and kind, the lizard mouse and keyboard in collections of
    /// their own (Fixtures/valve: the 372-byte descriptor, README there).
    func testTheEmulatedDescriptorDeclaresTheRealInterfacesReports() throws {
        let real = try ReportDescriptor(bytes: [UInt8](try Fixture.data("valve/steam_controller_2026_triton_rdesc_372.bin")))
        let ours = try ReportDescriptor(bytes: SteamControllerReports.descriptor)
        XCTAssertEqual(real.bytes.count, 372)
        func sizes(_ d: ReportDescriptor, _ kind: ReportKind) -> [UInt8: Int] {
            Dictionary(uniqueKeysWithValues: d.reports(kind).map { ($0.id?.rawValue ?? 0, $0.sizeBytes) })
        }
        for kind in [ReportKind.input, .output, .feature] {
            XCTAssertEqual(sizes(ours, kind), sizes(real, kind), "\(kind) reports")
        }
        XCTAssertEqual(sizes(ours, .input)[0x42], SteamControllerLayout.stateLength)
        let applications = { (d: ReportDescriptor, id: UInt8) in d.reports(.input).first { $0.id?.rawValue == id }?.application }
        for id in [SteamControllerReports.lizardMouse, SteamControllerReports.lizardKeyboard, 0x42] {
            XCTAssertEqual(applications(ours, id), applications(real, id), "report \(id)'s collection")
        }
    }

    /// A state built from controls decodes back to them (the codec itself is held to the captures above).
    func testAStateBuiltFromControlsDecodesBack() throws {
        var c = SteamControllerReports.Controls()
        c.buttons = [.south, .paddleLeft, .r1, .leftStickTouch]
        c.dpad = .upRight
        c.leftStick = (12000, -32767)
        c.triggers = (32767, 100)
        c.rightPad = (-20000, 30000)
        c.padPressure = (0, 30000)
        c.gyro = Vector3(x: 160, y: -32, z: 0)
        let report = SteamControllerReports.state(c, sequence: 7, micros: 123_456)
        XCTAssertEqual(report.count, 54)
        XCTAssertEqual(Array(report[28...29]), [0x30, 0x75], "the right pad's pressure at 28 (the kernel's and SDL's layout)")
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var state = GamepadState()
        try decoder.decode(report, into: &state)
        XCTAssertEqual(state.buttons, c.buttons)
        XCTAssertEqual(state.dpad, .upRight)
        XCTAssertEqual(state.sequence, 7)
        XCTAssertEqual(state.sensorTimestamp, 123_456)
        XCTAssertEqual(state.leftStick, StickPosition(x: 12000 + 32768, y: 32768 + 32767), "unsigned, +y down")
        XCTAssertEqual(state.r2Fine, 200)
        XCTAssertEqual(state.l2Fine, 65534)
        XCTAssertFalse(state.touch0.active)
        XCTAssertTrue(state.touch1.active)
        XCTAssertEqual(state.touch1.pressure, 60000, "0...32767 to 16 bits")
        XCTAssertEqual(state.touch0.pressure, 0)
        XCTAssertEqual(state.motion.first.gyro, Vector3(x: 160, y: 0, z: 32), "on the DualSense's axes (x, z, −y)")
    }

    /// 0x47 (SDL 3.4.10's `TritonMTUNoQuat32TS_t`; no capture holds one): the 0x42 report's bytes
    /// moved to the struct's places, the trackpads' u16 clock at 18 and the IMU's u16 clock in
    /// 32 µs ticks at 32, decode to the same controls, with the IMU's clock carried across its wrap.
    func testTheStateWithClocksDecodesAsSDLsStructPlacesIt() throws {
        var c = SteamControllerReports.Controls()
        c.buttons = [.east, .paddleRight, .l1]
        c.leftStick = (-3000, 25000)
        c.triggers = (1000, 32767)
        c.leftPad = (20000, -10000)
        c.rightPad = (-20000, 30000)
        c.padPressure = (16384, 30000)
        c.gyro = Vector3(x: 160, y: -32, z: 0)
        c.accel = Vector3(x: 831, y: 14567, z: 6670)
        let full = SteamControllerReports.state(c, sequence: 9, micros: 0)
        func clocked(_ imuTicks: UInt16, sequence: UInt8) -> [UInt8] {
            var r = Array(full[0..<18]) + [0x34, 0x12] + Array(full[18..<30]) + [UInt8(imuTicks & 0xff), UInt8(imuTicks >> 8)] + Array(full[34..<46])
            r[0] = 0x47
            r[1] = sequence
            return r
        }
        XCTAssertEqual(clocked(0, sequence: 0).count, 46, "the struct's 45 bytes and the id")
        var decoder = ControllerInputDecoder(SteamControllerInputCodec())
        var expected = GamepadState(), state = GamepadState()
        try decoder.decode(full, into: &expected)
        var clocks: [UInt32] = []
        for (i, ticks) in [UInt16(65534), 65535, 1, 40].enumerated() {
            try decoder.decode(clocked(ticks, sequence: UInt8(i)), into: &state)
            clocks.append(state.sensorTimestamp)
            XCTAssertEqual(state.buttons, expected.buttons)
            XCTAssertEqual(state.leftStick, expected.leftStick)
            XCTAssertEqual([state.l2Fine, state.r2Fine], [expected.l2Fine, expected.r2Fine])
            XCTAssertEqual(state.touch0, expected.touch0, "the left pad two bytes on")
            XCTAssertEqual(state.touch1, expected.touch1, "the right pad two bytes on")
            XCTAssertTrue(state.touch0.active && state.touch1.active)
            XCTAssertEqual(state.motion.first, expected.motion.first)
            XCTAssertEqual(state.sequence, UInt8(i))
        }
        XCTAssertEqual(zip(clocks, clocks.dropFirst()).map { $1 &- $0 }, [32, 64, 39 * 32], "32 µs a tick, across the 16-bit wrap")
        XCTAssertThrowsError(try decoder.decode(Array(clocked(0, sequence: 0).prefix(45)), into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x47, got: 45, need: 46))
        }
    }

    /// The commands SDL sends it (SDL_hidapi_steam_triton.c): lizard mode off `[01] 87 03 09 00 00`
    /// and the IMU on `[01] 87 03 30 18 00`, in a 64-byte feature report 1.
    func testLizardModeOffAndTheIMUAreSDLsFeatureReports() {
        XCTAssertEqual(SteamControllerCommands.lizardModeOff, [0x01, 0x87, 0x03, 0x09, 0x00, 0x00] + [UInt8](repeating: 0, count: 58))
        XCTAssertEqual(SteamControllerCommands.imuOn, [0x01, 0x87, 0x03, 0x30, 0x18, 0x00] + [UInt8](repeating: 0, count: 58))
        XCTAssertEqual(SteamControllerCommands.settingValues(SteamControllerCommands.imuOn).map { $0.map { [Int($0.setting), Int($0.value)] } }, [[0x30, 0x18]])
        XCTAssertNil(SteamControllerCommands.settingValues([0x02, 0x87, 0x03]))
        XCTAssertEqual(SteamControllerCommands.settingValues([0x01, 0x87, 0xff, 0x09])?.count, 0, "a length past the report reads nothing past it")
    }
}
