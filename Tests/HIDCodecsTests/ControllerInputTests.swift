import XCTest
@testable import HIDCodecs

final class ControllerInputTests: XCTestCase {
    /// Value of the first field with this usage (nth occurrence for repeated vendor usages).
    static func values(_ fields: [DecodedField], _ usage: Usage) -> [Int64] {
        fields.filter { $0.field.usage == usage }.flatMap(\.values)
    }

    /// Typed DualSense Edge decode against the descriptor-driven decode of the same bytes: every field the Edge
    /// descriptor describes (sticks, triggers, hat, 15 buttons, the vendor bits/bytes that hold the Edge buttons,
    /// motion, timestamp, touch and status) must agree. The generic path is itself checked against hid-tools.
    func testEdgeRecordingTypedDecodeAgreesWithDescriptorDecode() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
        var decoder = ControllerInputDecoder(kind: .dualSenseEdge)!
        var state = GamepadState()
        let gd = { (id: UInt16) in Usage(page: 0x01, id: id) }
        let buttonOrder: [GamepadButtons] = [.west, .south, .east, .north, .l1, .r1, .l2, .r2, .create, .options, .l3, .r3, .ps, .touchpad, .mute]
        var touchesSeen = 0, buttonsSeen = GamepadButtons()
        for event in recording.events {
            try decoder.decode(event.data, into: &state)
            let (_, f) = try GenericReportDecoder.decodeInput(event.data, descriptor: descriptor)
            XCTAssertEqual(state.leftStick, StickPosition(x: UInt16(Self.values(f, gd(0x30))[0]), y: UInt16(Self.values(f, gd(0x31))[0])))
            XCTAssertEqual(state.rightStick, StickPosition(x: UInt16(Self.values(f, gd(0x32))[0]), y: UInt16(Self.values(f, gd(0x35))[0])))
            XCTAssertEqual(Int64(state.l2), Self.values(f, gd(0x33))[0])
            XCTAssertEqual(Int64(state.r2), Self.values(f, gd(0x34))[0])
            XCTAssertEqual(Int64(state.dpad.rawValue), min(Self.values(f, gd(0x39))[0], 8))
            XCTAssertEqual(Int64(state.sequence), Self.values(f, Usage(rawValue: 0xFF00_0020))[0])
            let hidButtons = (1...15).map { Self.values(f, Usage(page: 0x09, id: UInt16($0)))[0] }
            XCTAssertEqual(buttonOrder.map { state.buttons.contains($0) ? Int64(1) : 0 }, hidButtons)
            // Vendor bits 0xff000021 follow the 15 buttons: index 1...4 are the Edge's Fn and paddle buttons.
            let vendorBits = Self.values(f, Usage(rawValue: 0xFF00_0021))
            XCTAssertEqual([GamepadButtons.fnLeft, .fnRight, .paddleLeft, .paddleRight].map { state.buttons.contains($0) ? Int64(1) : 0 },
                           Array(vendorBits[1...4]))
            // Vendor bytes 0xff000022 start at report byte 12: gyro at 16, accel at 22, timestamp at 28, touch at 33, status at 53.
            let v = Self.values(f, Usage(rawValue: 0xFF00_0022)).map { UInt8($0) }
            func s16(_ byte: Int) -> Int16 { Int16(bitPattern: UInt16(v[byte - 12]) | UInt16(v[byte - 11]) << 8) }
            XCTAssertEqual(state.gyro, Vector3(x: s16(16), y: s16(18), z: s16(20)))
            XCTAssertEqual(state.accel, Vector3(x: s16(22), y: s16(24), z: s16(26)))
            XCTAssertEqual(state.sensorTimestamp, UInt32(UInt16(bitPattern: s16(28))) | UInt32(UInt16(bitPattern: s16(30))) << 16)
            XCTAssertEqual(state.touch0.active, v[33 - 12] & 0x80 == 0)
            XCTAssertEqual(Int(state.touch0.x), Int(v[34 - 12]) | Int(v[35 - 12] & 0x0F) << 8)
            XCTAssertEqual(state.battery?.percent, min((v[53 - 12] & 0x0F) * 10 + 5, 100))
            if state.touch0.active { touchesSeen += 1 }
            buttonsSeen.formUnion(state.buttons)
        }
        XCTAssertEqual(decoder.decodedReports, 1972)
        XCTAssertGreaterThan(touchesSeen, 0, "the recording includes touchpad use")
        XCTAssertTrue(buttonsSeen.isEmpty, "this recording has no button presses; testEdgeButtonBits covers them")
    }

    /// The Edge recording never presses a button, so press each one in turn in a recorded report and let the
    /// descriptor decode (checked against hid-tools above) say which usage that bit is.
    func testEdgeButtonBitsAgreeWithDescriptor() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
        let buttonOrder: [GamepadButtons] = [.west, .south, .east, .north, .l1, .r1, .l2, .r2, .create, .options, .l3, .r3, .ps, .touchpad, .mute]
        var decoder = ControllerInputDecoder(kind: .dualSenseEdge)!
        var state = GamepadState()
        var seen = GamepadButtons()
        for bit in 4..<24 {   // byte 8 high nibble (face buttons), bytes 9 and 10
            var report = recording.events[0].data
            report[8 + bit / 8] |= 1 << UInt8(bit % 8)
            try decoder.decode(report, into: &state)
            let (_, f) = try GenericReportDecoder.decodeInput(report, descriptor: descriptor)
            let hidButtons = (1...15).map { Self.values(f, Usage(page: 0x09, id: UInt16($0)))[0] }
            XCTAssertEqual(buttonOrder.map { state.buttons.contains($0) ? Int64(1) : 0 }, hidButtons, "bit \(bit)")
            let vendorBits = Self.values(f, Usage(rawValue: 0xFF00_0021))
            XCTAssertEqual([GamepadButtons.fnLeft, .fnRight, .paddleLeft, .paddleRight].map { state.buttons.contains($0) ? Int64(1) : 0 },
                           Array(vendorBits[1...4]), "bit \(bit)")
            seen.formUnion(state.buttons)
        }
        XCTAssertEqual(seen, GamepadButtons(buttonOrder).union([.fnLeft, .fnRight, .paddleLeft, .paddleRight]))
    }

    func testBluetoothSimpleRecordingMatchesDescriptorDecode() throws {
        let recording = try HIDRecording(text: Fixture.text("recordings/dualsense_bt_djm00n_simple01.hid"))
        let descriptor = try ReportDescriptor(bytes: recording.devices[0].descriptor)
        var decoder = ControllerInputDecoder(kind: .dualSense)!
        var state = GamepadState()
        for event in recording.events {
            try decoder.decode(event.data, into: &state)
            XCTAssertEqual(state.format, .dualSenseBluetoothSimple)
            XCTAssertFalse(state.hasMotion)
            let (_, f) = try GenericReportDecoder.decodeInput(event.data, descriptor: descriptor)
            // In the Bluetooth descriptor Z/Rz are the right stick and Rx/Ry the triggers.
            XCTAssertEqual(state.leftStick, StickPosition(x: UInt16(Self.values(f, Usage(page: 1, id: 0x30))[0]), y: UInt16(Self.values(f, Usage(page: 1, id: 0x31))[0])))
            XCTAssertEqual(state.rightStick, StickPosition(x: UInt16(Self.values(f, Usage(page: 1, id: 0x32))[0]), y: UInt16(Self.values(f, Usage(page: 1, id: 0x35))[0])))
            XCTAssertEqual(Int64(state.l2), Self.values(f, Usage(page: 1, id: 0x33))[0])
            XCTAssertEqual(Int64(state.dpad.rawValue), min(Self.values(f, Usage(page: 1, id: 0x39))[0], 8))
            let hidButtons = (1...14).map { Self.values(f, Usage(page: 0x09, id: UInt16($0)))[0] }
            let ours: [GamepadButtons] = [.west, .south, .east, .north, .l1, .r1, .l2, .r2, .create, .options, .l3, .r3, .ps, .touchpad]
            XCTAssertEqual(ours.map { state.buttons.contains($0) ? Int64(1) : 0 }, hidButtons)
        }
    }

    func testBluetoothFullReportWithBadChecksumIsRejectedAndCounted() throws {
        let vectors = try Fixture.json("input_vectors/hidtools_kernel_selftest_vectors.json")
        let device = (vectors["devices"] as! [String: [String: Any]])["dualsense_bt"]!
        var report = Fixture.hex((device["cases"] as! [[String: Any]])[0]["initial_report"] as! String)
        var decoder = ControllerInputDecoder(kind: .dualSense)!
        var state = GamepadState()
        try decoder.decode(report, into: &state)
        XCTAssertEqual(state.format, .dualSenseBluetooth)
        report[5] ^= 0x40
        XCTAssertThrowsError(try decoder.decode(report, into: &state)) { XCTAssertEqual($0 as? InputReportError, .badChecksum(id: 0x31)) }
        XCTAssertEqual(decoder.rejectedChecksums, 1)
        XCTAssertEqual(decoder.decodedReports, 1)
    }

    func testShortAndUnknownReportsThrowTypedErrors() {
        var state = GamepadState()
        var ds = ControllerInputDecoder(kind: .dualSense)!
        XCTAssertThrowsError(try ds.decode([], into: &state)) { XCTAssertEqual($0 as? InputReportError, .empty) }
        XCTAssertThrowsError(try ds.decode([0x31, 0x00, 0x80], into: &state)) { XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x31, got: 3, need: 78)) }
        XCTAssertThrowsError(try ds.decode([0x01, 0x80], into: &state)) { XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x01, got: 2, need: 10)) }
        XCTAssertThrowsError(try ds.decode([0x99, 0x00], into: &state)) { XCTAssertEqual($0 as? InputReportError, .unknownReport(id: 0x99, length: 2, kind: .dualSense)) }
        var ds4 = ControllerInputDecoder(kind: .dualShock4)!
        XCTAssertThrowsError(try ds4.decode([UInt8](repeating: 0, count: 78).replacing(at: 0, with: 0x11), into: &state)) {
            XCTAssertEqual($0 as? InputReportError, .badChecksum(id: 0x11))
        }
        var sw = ControllerInputDecoder(kind: .switchPro)!
        XCTAssertThrowsError(try sw.decode([0x30, 0, 0], into: &state)) { XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x30, got: 3, need: 49)) }
    }

    /// USB full reports and Bluetooth short reports share id 0x01. A full report cut anywhere from 11 to 63 bytes
    /// must not be read as the 10-byte short layout (its bytes 5...9 would become buttons and triggers).
    func testTruncatedFullReportsAreTooShortNotShortLayout() throws {
        let edge = try HIDRecording(text: Fixture.text("recordings/dualsense_edge_usb_dsegde.hid"))
        let full = edge.events[0].data
        var state = GamepadState()
        for model in [PadKind.dualSense, .dualShock4] {
            var decoder = ControllerInputDecoder(kind: model)!
            for length in [11, 32, 63] {
                XCTAssertThrowsError(try decoder.decode(Array(full.prefix(length)), into: &state), "\(model) \(length)") {
                    XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x01, got: length, need: 64))
                }
            }
            XCTAssertThrowsError(try decoder.decode(Array(full.prefix(9)), into: &state)) {
                XCTAssertEqual($0 as? InputReportError, .tooShort(id: 0x01, got: 9, need: 10))
            }
            XCTAssertEqual(decoder.rejectedTruncated, 4, "\(model)")
            XCTAssertEqual(decoder.decodedReports, 0)
            try decoder.decode(Array(full.prefix(10)), into: &state)
            XCTAssertTrue([.dualSenseBluetoothSimple, .dualShock4BluetoothSimple].contains(state.format), "exactly 10 bytes is the short layout")
            try decoder.decode(full, into: &state)
            XCTAssertEqual(decoder.decodedReports, 2)
            XCTAssertEqual(decoder.rejectedTruncated, 4)
        }
    }

    func testRandomReportsNeverCrash() {
        var state = GamepadState()
        for model in PadKind.allCases {
            guard var decoder = ControllerInputDecoder(kind: model) else { continue }
            for _ in 0..<3000 {
                var bytes = (0..<Int.random(in: 0...80)).map { _ in UInt8.random(in: 0...255) }
                if !bytes.isEmpty { bytes[0] = [0x01, 0x11, 0x30, 0x31].randomElement()! }
                _ = try? decoder.decode(bytes, into: &state)
            }
        }
    }

    /// Switch Pro 0x30 layout from dekuNukem/Nintendo_Switch_Reverse_Engineering (bluetooth_hid_notes.md):
    /// byte 3 right buttons (Y=0x01 X=0x02 B=0x04 A=0x08 R=0x40 ZR=0x80), byte 4 shared (minus 0x01, plus 0x02, home 0x10,
    /// capture 0x20), byte 5 left (down 0x01 up 0x02 right 0x04 left 0x08 L=0x40 ZL=0x80), sticks as 12-bit pairs at 6 and 9,
    /// IMU from 13: three samples of accel xyz + gyro xyz, int16 LE.
    func testSwitchProFullReportFields() throws {
        var report = [UInt8](repeating: 0, count: 49)
        report[0] = 0x30; report[1] = 0x42; report[2] = 0x91      // timer, battery full (8) + charging
        report[3] = 0x08 | 0x80                                   // A + ZR
        report[4] = 0x10                                          // Home
        report[5] = 0x02 | 0x04 | 0x40                            // up + right + L
        report[6] = 0x34; report[7] = 0x82; report[8] = 0x7A      // left stick x = 0x234, y = 0x7A8
        report[9] = 0xFF; report[10] = 0x0F; report[11] = 0x00     // right stick x = 0xFFF, y = 0
        report[13] = 0x10; report[14] = 0x00                       // sample 0 accel x = 16
        report[19] = 0xFE; report[20] = 0xFF                       // sample 0 gyro x = -2
        report[25] = 0x05                                          // sample 1 accel x = 5
        var decoder = ControllerInputDecoder(kind: .switchPro)!
        var state = GamepadState()
        try decoder.decode(report, into: &state)
        XCTAssertEqual(state.buttons, [.east, .r2, .ps, .l1])
        XCTAssertEqual(state.dpad, .upRight)
        XCTAssertEqual(state.leftStick, StickPosition(x: 0x234, y: 0x7A8))
        XCTAssertEqual(state.rightStick, StickPosition(x: 0xFFF, y: 0))
        XCTAssertEqual(state.motion.first.accel.x, 16)
        XCTAssertEqual(state.motion.first.gyro.x, -2)
        XCTAssertEqual(state.motion.second.accel.x, 5)
        XCTAssertEqual(state.motion.count, 3)
        XCTAssertEqual(state.battery, BatteryStatus(percent: 100, state: .charging))
        XCTAssertEqual(state.r2, 255)
    }
}

extension Array where Element == UInt8 {
    func replacing(at index: Int, with value: UInt8) -> [UInt8] { var copy = self; copy[index] = value; return copy }
}
