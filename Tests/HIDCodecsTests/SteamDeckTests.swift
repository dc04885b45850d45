import Foundation
import WireProtocol
import XCTest
@testable import HIDCodecs

/// The Steam Deck's state report, held to a real Deck's recording (Fixtures/valve, README there)
/// and to what hid-steam and SDL say of it (docs/research/valve-pads.md §4).
final class SteamDeckTests: XCTestCase {
    static func recording() throws -> HIDRecording {
        try HIDRecording(text: Fixture.text("valve/steam_deck_1205_lcd_gamepad_iface2.hid"))
    }

    func testTheLayoutFitsItsReportAndTheRecordingIsTheDecksOwn() throws {
        XCTAssertLessThanOrEqual(SteamDeckLayout.fieldsEnd, SteamDeckLayout.length)
        let recording = try Self.recording()
        XCTAssertEqual(recording.devices.first?.vendorID, 0x28de)
        XCTAssertEqual(recording.devices.first.flatMap { d in d.productID.map { PadKind(vendorID: d.vendorID!, productID: $0) } }, .steamDeck)
        XCTAssertEqual(Array(try Fixture.data("valve/steam_deck_1205_iface2_gamepad.rdesc.bin")), recording.devices.first?.descriptor)
    }

    func testEveryRecordedReportDecodesOnTheDecksOwnClock() throws {
        let recording = try Self.recording()
        var decoder = ControllerInputDecoder(SteamDeckInputCodec())
        var state = GamepadState()
        var stamps: [UInt32] = []
        for event in recording.events {
            try decoder.decode(event.data, into: &state)
            stamps.append(state.sensorMicros)
        }
        XCTAssertEqual(decoder.decodedReports, 5228)
        XCTAssertEqual(decoder.rejectedTruncated + decoder.rejectedChecksums, 0)
        // u32 sequence 591909...597136 without a gap: 4000 µs a report, as hid-steam counts.
        XCTAssertEqual(stamps.first, 591_909 &* 4000)
        XCTAssertEqual(stamps.last, 597_136 &* 4000)
        XCTAssertTrue(zip(stamps, stamps.dropFirst()).allSatisfy { $1 &- $0 == 4000 })
    }

    func testControlsReachTheirEndsAndTheBitsTheRecordingHolds() throws {
        let recording = try Self.recording()
        var decoder = ControllerInputDecoder(SteamDeckInputCodec())
        var state = GamepadState()
        var seen: GamepadButtons = []
        var directions = Set<DPad>()
        var leftX = (Int16.max, Int16.min), leftY = (Int16.max, Int16.min)
        var triggerTop: (UInt16, UInt16) = (0, 0)
        var rightPadTouched = 0, leftPadTouched = 0
        var rightPressureTop: UInt16 = 0
        var accel: [Double] = []
        for event in recording.events {
            try decoder.decode(event.data, into: &state)
            seen.formUnion(state.buttons)
            directions.insert(state.dpad)
            let wire = PadSnapshots.controls(state, slot: PadSlot(0))
            leftX = (min(leftX.0, wire.leftX), max(leftX.1, wire.leftX))
            leftY = (min(leftY.0, wire.leftY), max(leftY.1, wire.leftY))
            triggerTop = (max(triggerTop.0, wire.l2Wide), max(triggerTop.1, wire.r2Wide))
            // The full-press bits only near the top of the trigger (≥ 32283 of 32767 in the recording).
            if state.buttons.contains(.r2) { XCTAssertGreaterThanOrEqual(state.r2Fine ?? 0, 2 * 32283) }
            if state.buttons.contains(.l2) { XCTAssertGreaterThanOrEqual(state.l2Fine ?? 0, 2 * 32283) }
            if state.touch1.active { rightPadTouched += 1 }
            // The recording's right pad presses 0...32767 (SDL's scale), at least 5341 whenever it
            // clicks; the wire carries it at 16 bits. The untouched left pad presses nothing.
            if state.buttons.contains(.rightPadClick) { XCTAssertGreaterThanOrEqual(state.touch1.pressure ?? 0, 2 * 5341) }
            rightPressureTop = max(rightPressureTop, state.touch1.pressure ?? 0)
            XCTAssertEqual(state.touch0.pressure, 0)
            if state.touch0.active { leftPadTouched += 1 }
            let m = PadSnapshots.motion(state.motion.first, timestampMicros: 0, calibration: SteamDeckInputCodec.calibration)
            accel.append((Double(m.accelX * m.accelX) + Double(m.accelY * m.accelY) + Double(m.accelZ * m.accelZ)).squareRoot())
        }
        // Both sticks to ±32767 on the wire, +y down.
        XCTAssertLessThanOrEqual(leftX.0, -32767); XCTAssertGreaterThanOrEqual(leftX.1, 32766)
        XCTAssertLessThanOrEqual(leftY.0, -32767); XCTAssertGreaterThanOrEqual(leftY.1, 32766)
        // Triggers 0...32767, carried at full resolution (×2).
        XCTAssertGreaterThanOrEqual(triggerTop.0, 65532); XCTAssertGreaterThanOrEqual(triggerTop.1, 65532)
        // Pressed in the recording: A B X Y, the shoulders and full presses, L5 and R5, R4, L3, R3,
        // the right pad's click and the left stick's touch; never View, Steam, ≡, "…", L4 or the left pad.
        let pressed: GamepadButtons = [.south, .east, .west, .north, .l1, .r1, .l2, .r2, .fnLeft, .fnRight, .paddleRight, .l3, .r3,
                                       .rightPadClick, .leftStickTouch]
        XCTAssertEqual(seen.intersection(pressed), pressed, "seen \(seen.names)")
        let never: GamepadButtons = [.create, .ps, .options, .quickAccess, .paddleLeft, .leftPadClick]
        XCTAssertTrue(seen.isDisjoint(with: never), "seen \(seen.names)")
        XCTAssertEqual(seen.subtracting(PadKind.steamDeck.buttons), [], "only the Deck's own buttons")
        XCTAssertTrue(directions.isSuperset(of: [.up, .right, .down, .left]), "\(directions)")
        XCTAssertGreaterThan(rightPadTouched, 0)
        XCTAssertEqual(leftPadTouched, 0, "the left pad is untouched in the recording")
        XCTAssertGreaterThan(rightPressureTop, 2 * 5341, "the right pad's clicks pressed")
        // 16384 a g: the accelerometer reads 1 g in the middle of the recording's samples.
        let median = accel.sorted()[accel.count / 2]
        XCTAssertEqual(median, 1, accuracy: 0.08)
    }

    func testShortForeignAndEmptyReportsAreRefusedAndCounted() throws {
        let report = try XCTUnwrap(Self.recording().events.first?.data)
        var decoder = ControllerInputDecoder(SteamDeckInputCodec())
        var state = GamepadState()
        XCTAssertThrowsError(try decoder.decode(Array(report.prefix(63)), into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x01, got: 63, need: 64))
        }
        var steamController2015 = report
        steamController2015[2] = 0x01   // type 1: the 2015 controller's state, not the Deck's
        XCTAssertThrowsError(try decoder.decode(steamController2015, into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .unknownReport(id: 0x01, length: 64, kind: .steamDeck))
        }
        XCTAssertThrowsError(try decoder.decode([], into: &state))
        XCTAssertThrowsError(try decoder.decode([0x01, 0x00], into: &state))
        XCTAssertEqual(decoder.rejectedTruncated, 1)
        XCTAssertEqual(decoder.decodedReports, 0)
        // Random bytes never crash, whatever they claim to be.
        for _ in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...80)).map { _ in UInt8.random(in: 0...255) }
            if bytes.count >= 3 { bytes[0] = 1; bytes[1] = 0; bytes[2] = 9 }
            _ = try? decoder.decode(bytes, into: &state)
        }
    }

    /// hid-steam's `steam_haptic_rumble` layout: `eb 09`, type 0, intensity 0, the strong motor's
    /// speed, the weak one's (u16 little-endian), gains 2 and 0; a 64-byte feature report on
    /// report 0 (hidraw's buffer leads with that 0).
    func testTheRumbleCommandIsTheKernelsLayout() {
        let report = SteamDeckCommands.rumble(MotorLevels(low: 255, high: 128))
        XCTAssertEqual(report.count, 65)
        XCTAssertEqual(Array(report.prefix(12)), [0x00, 0xEB, 0x09, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0x80, 0x80, 0x02, 0x00])
        XCTAssertTrue(report.dropFirst(12).allSatisfy { $0 == 0 })
        XCTAssertEqual(Array(SteamDeckCommands.rumble(.silent)[1...10]), [0xEB, 0x09, 0, 0, 0, 0, 0, 0, 0, 0x02])
    }

    /// The emulated Deck's descriptor is the real interface's; its state reports read back through
    /// the codec (held to the recording above) as what was sent; the serial answers hid-steam's
    /// `ae 16 01` in the form it checks (`ae`, length = characters + 1, attribute 1, ASCII).
    func testTheEmulatedDecksReportsAreTheDecksOwn() throws {
        XCTAssertEqual(SteamDeckReports.descriptor, Array(try Fixture.data("valve/steam_deck_1205_iface2_gamepad.rdesc.bin")))
        var controls = SteamDeckReports.Controls()
        controls.buttons = [.south, .fnLeft, .paddleRight, .quickAccess, .rightStickTouch]
        controls.dpad = .downLeft
        controls.leftStick = (-32767, 32767)
        controls.triggers = (100, 32767)
        controls.leftPad = (-1000, 2000)
        controls.gyro = Vector3(x: 16, y: -32, z: 48)
        let report = SteamDeckReports.state(controls, sequence: 591_909)
        XCTAssertEqual(Array(report.prefix(4)), [0x01, 0x00, 0x09, 0x40], "the recording's header")
        var decoder = ControllerInputDecoder(SteamDeckInputCodec())
        var state = GamepadState()
        try decoder.decode(report, into: &state)
        XCTAssertEqual(state.buttons, controls.buttons)
        XCTAssertEqual(state.dpad, .downLeft)
        XCTAssertEqual(PadSnapshots.controls(state, slot: PadSlot(0)).leftX, -32767)
        XCTAssertEqual(PadSnapshots.controls(state, slot: PadSlot(0)).leftY, -32767, "the Deck's up is the wire's up (−y)")
        XCTAssertEqual(state.r2Fine, 65534)
        XCTAssertTrue(state.touch0.active)
        XCTAssertFalse(state.touch1.active)
        // The left pad at (-1000, 2000) of ±32767 (+y up), in the touch space (1920 × 1080, +y down).
        XCTAssertEqual(state.touch0.x, UInt16((32768 - 1000) * 1920 / 65536))
        XCTAssertEqual(state.touch0.y, UInt16((32767 - 2000) * 1080 / 65536))
        // The corners stay inside the space the wire accepts, so a touched pad's contact crosses.
        var corners = controls
        corners.leftPad = (-32768, 32767)
        corners.rightPad = (32767, -32768)
        var cornerState = GamepadState()
        try decoder.decode(SteamDeckReports.state(corners, sequence: 1), into: &cornerState)
        XCTAssertEqual([cornerState.touch0.x, cornerState.touch0.y, cornerState.touch1.x, cornerState.touch1.y], [0, 0, 1919, 1079])
        let touch = PadSnapshots.touch(cornerState, slot: PadSlot(0))
        XCTAssertEqual(touch.second, WireTouchContact(id: 1, active: true, x: 1919, y: 1079, pressure: 0))
        // Pressure at bytes 56-59 (hid-steam's and SDL's layout), 0...32767 to 16 bits on the wire;
        // a lifted pad presses nothing there.
        var pressed = corners
        pressed.padPressure = (32767, 12345)
        let pressedReport = SteamDeckReports.state(pressed, sequence: 2)
        XCTAssertEqual(Array(pressedReport[56...59]), [0xff, 0x7f, 0x39, 0x30])
        var pressedState = GamepadState()
        try decoder.decode(pressedReport, into: &pressedState)
        XCTAssertEqual([pressedState.touch0.pressure, pressedState.touch1.pressure], [65534, 24690])
        pressed.leftPad = nil
        try decoder.decode(SteamDeckReports.state(pressed, sequence: 3), into: &pressedState)
        XCTAssertEqual(PadSnapshots.touch(pressedState, slot: PadSlot(0)).first.pressure, 0)
        XCTAssertEqual(state.motion.first.gyro, Vector3(x: 16, y: 48, z: 32), "the DualSense's axes: x, z, −y")
        XCTAssertEqual(state.sensorMicros, 591_909 &* 4000)
        let serial = SteamDeckReports.reply(to: [0xAE, 0x16, 0x01], serial: "FVAA12345678")
        XCTAssertEqual(serial.count, 65)
        XCTAssertEqual(Array(serial.prefix(16)), [0x00, 0xAE, 13, 0x01] + Array("FVAA12345678".utf8))
        XCTAssertEqual(Array(SteamDeckReports.reply(to: [0xEB, 0x09], serial: "x").prefix(3)), [0x00, 0xEB, 0x00], "others echoed")
        let attributes = try String(decoding: Fixture.data("valve/steam_deck_1205_feature_0x83_reply_second_hand.hex"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let recorded = stride(from: 0, to: attributes.count, by: 2).map { UInt8(attributes.dropFirst($0).prefix(2), radix: 16)! }
        let reply = SteamDeckReports.reply(to: [0x83, 0x00], serial: "x")
        // The second-hand reply says 45 bytes of records (`2d`) but holds 44: its last three
        // records (0d, 0c, 0e, all zero) lost a byte between them. Its header and first seven
        // records are held here; the reply's own length is 9 whole records.
        XCTAssertEqual(Array(reply[1...37]), Array(recorded.prefix(37)), "a Deck's own attributes reply")
        XCTAssertEqual(Array(reply[1...2]), [0x83, 45])
        XCTAssertEqual([reply[38], reply[43]], [0x0c, 0x0e], "the last two records' tags, five bytes apart")
    }

    /// `calibrate FILE.hid` on a Deck's recording: every report is a sample on the Deck's clock
    /// (5228 over 20.9 s, the recording's own count and span), read through the IMU's scale.
    func testARecordingOfADeckCalibratesOnItsOwnClock() throws {
        let run = try RecordedGyroCalibration(recording: Self.recording(), codecs: TestCodecs.catalogue)
        XCTAssertEqual(run.kind, .steamDeck)
        XCTAssertEqual(run.samples, 5228)
        XCTAssertEqual(run.seconds, 5227 * 0.004, accuracy: 0.01)
        XCTAssertEqual(run.calibration, SteamDeckInputCodec.calibration)
        XCTAssertEqual(run.rejectedReports, 0)
    }

    /// The trackpad pulse command as hid-steam sends it when it switches a Deck's mode
    /// (`steam_haptic_pulse(steam, STEAM_PAD_RIGHT, 0x190, 0, 1, 0)`, the pad number swapped to
    /// 0 on the report), read and written back byte for byte.
    func testTheTrackpadPulseCommandAsHidSteamSendsIt() throws {
        let sent: [UInt8] = [0x8F, 0x08, 0x00, 0x90, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00]
        let pulse = try XCTUnwrap(SteamDeckCommands.pulse(sent))
        XCTAssertEqual(pulse, SteamDeckCommands.Pulse(pad: .right, onMicros: 400, offMicros: 0, count: 1, gain: 0))
        let written = SteamDeckCommands.pulse(pulse)
        XCTAssertEqual(written.count, 65)
        XCTAssertEqual(Array(written[1...10]), sent)
        XCTAssertEqual(SteamDeckCommands.pulse([0x8F, 0x08, 0x01] + [UInt8](repeating: 0, count: 7))?.pad, .left)
        XCTAssertNil(SteamDeckCommands.pulse([0x8F, 0x08, 0x03] + [UInt8](repeating: 0, count: 7)), "no fourth pad")
        XCTAssertNil(SteamDeckCommands.pulse([0x8F, 0x08, 0x00]), "too short")
        XCTAssertNil(SteamDeckCommands.pulse([0xEB, 0x09] + [UInt8](repeating: 0, count: 9)), "a rumble command")
    }
}
