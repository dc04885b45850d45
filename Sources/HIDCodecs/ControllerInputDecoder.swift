public enum InputReportError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case unknownReport(id: UInt8, length: Int, kind: PadKind)
    case tooShort(id: UInt8, got: Int, need: Int)
    case badChecksum(id: UInt8)

    public var description: String {
        switch self {
        case .empty: return "empty input report"
        case .unknownReport(let id, let length, let kind):
            return "\(kind.name) does not send a \(length)-byte input report \(hexByte(id)); is the pad kind right?"
        case .tooShort(let id, let got, let need): return "input report \(hexByte(id)) is \(got) bytes, needs \(need); it was truncated"
        case .badChecksum(let id): return "Bluetooth input report \(hexByte(id)) fails its CRC32 check (seed 0xA1); dropped"
        }
    }
}

/// A button map turned into one table per button byte: three loads per report instead of a loop over bits.
struct ButtonLookup: Sendable {
    private let table: [UInt32]   // 3 × 256 entries

    init(_ map: [ButtonBit]) {
        var table = [UInt32](repeating: 0, count: 3 * 256)
        for bit in map where bit.byte < 3 {
            for value in 0..<256 where UInt8(value) & bit.mask != 0 { table[bit.byte * 256 + value] |= bit.button.rawValue }
        }
        self.table = table
    }

    @inline(__always)
    func buttons(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> GamepadButtons {
        table.withUnsafeBufferPointer { t in
            GamepadButtons(rawValue: t[Int(b0)] | t[256 + Int(b1)] | t[512 + Int(b2)])
        }
    }
}

/// Decodes a pad's input reports into a `GamepadState` without allocating.
/// Keeps counts so a caller can tell a noisy link (bad CRCs, cut-off reports) from a quiet one.
public struct ControllerInputDecoder: Sendable {
    public let kind: PadKind
    public private(set) var decodedReports = 0
    public private(set) var rejectedChecksums = 0
    /// Reports shorter than their layout (`tooShort`): a truncated read or a transport that cuts reports.
    public private(set) var rejectedTruncated = 0

    private let full: PlayStationInputLayout
    private let bluetooth: PlayStationInputLayout
    private let simple: PlayStationInputLayout
    /// Lookup tables built once from the layouts' button maps (same map for USB and Bluetooth full reports).
    private let fullButtons: ButtonLookup
    private let simpleButtons: ButtonLookup
    /// The Xbox over Bluetooth's layout, compiled from its own descriptor.
    private var descriptorDecoder: DescriptorGamepadDecoder?
    private enum LayoutChoice { case full, simple, bluetooth }

    /// nil for kinds without a typed decoder (`PadKind.hasTypedDecoder`): read those through evdev.
    /// A kind that `decodesThroughDescriptor` needs its report `descriptor`: nil without one, or
    /// when it describes no gamepad controls.
    public init?(kind: PadKind, descriptor: ReportDescriptor? = nil) {
        self.kind = kind
        switch kind {
        case .generic:
            return nil
        case .xbox:
            guard let descriptor, let decoder = DescriptorGamepadDecoder(descriptor: descriptor, map: XboxBluetoothLayout.usages) else { return nil }
            descriptorDecoder = decoder
            full = PlayStationLayouts.dualSenseUSB()   // unused: every report goes through the descriptor
            bluetooth = PlayStationLayouts.dualSenseBluetooth()
            simple = PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple)
        case .dualSense, .switchPro:
            full = PlayStationLayouts.dualSenseUSB()
            bluetooth = PlayStationLayouts.dualSenseBluetooth()
            simple = PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple)
        case .dualSenseEdge:
            full = PlayStationLayouts.dualSenseUSB(buttons: PlayStationLayouts.dualSenseEdgeButtons)
            bluetooth = PlayStationLayouts.dualSenseBluetooth(buttons: PlayStationLayouts.dualSenseEdgeButtons)
            simple = PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple)
        case .dualShock4:
            full = PlayStationLayouts.dualShock4USB
            bluetooth = PlayStationLayouts.dualShock4Bluetooth
            simple = PlayStationLayouts.bluetoothSimple(format: .dualShock4BluetoothSimple)
        }
        fullButtons = ButtonLookup(full.buttonMap)
        simpleButtons = ButtonLookup(simple.buttonMap)
    }

    public mutating func decode(_ report: [UInt8], into state: inout GamepadState) throws(InputReportError) {
        let result: Result<Void, InputReportError> = report.withUnsafeBytes { raw in
            do throws(InputReportError) { try decode(raw, into: &state); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    public mutating func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        guard report.count > 0 else { throw .empty }
        do throws(InputReportError) {
            try decodeReport(report, into: &state)
        } catch .tooShort(let id, let got, let need) {
            rejectedTruncated += 1
            throw .tooShort(id: id, got: got, need: need)
        }
        decodedReports += 1
    }

    private mutating func decodeReport(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        let id = report[0]
        if descriptorDecoder != nil {
            try descriptorDecoder!.decode(report, into: &state, kind: kind)  // in place: no copy of its plans
            return
        }
        if kind == .switchPro {
            guard id == SwitchProLayout.reportID else { throw .unknownReport(id: id, length: report.count, kind: kind) }
            try Self.decodeSwitchPro(report, into: &state)
            return
        }
        // Pick the layout without copying it (a copy would retain its button table on every report).
        let choice: LayoutChoice
        if id == bluetooth.reportID {
            choice = .bluetooth
        } else if id == 0x01 {
            // USB full reports and Bluetooth short reports share id 0x01; the length tells them apart. Only the
            // exact short length is the short layout: 11...63 bytes is a cut-off full report, not a short one.
            choice = report.count == simple.length ? .simple : .full
        } else {
            throw .unknownReport(id: id, length: report.count, kind: kind)
        }
        switch choice {
        case .full:
            guard report.count >= full.length else {
                // Under 10 bytes the report is too short for either layout; name the shorter one.
                throw .tooShort(id: id, got: report.count, need: report.count < simple.length ? simple.length : full.length)
            }
            Self.decodePlayStation(report, layout: full, buttons: fullButtons, into: &state)
        case .simple:
            Self.decodePlayStation(report, layout: simple, buttons: simpleButtons, into: &state)
        case .bluetooth:
            guard report.count >= bluetooth.length else { throw .tooShort(id: id, got: report.count, need: bluetooth.length) }
            guard BluetoothCRC.verify(seed: .input, report: UnsafeRawBufferPointer(rebasing: report[0..<bluetooth.length])) else {
                rejectedChecksums += 1
                throw .badChecksum(id: id)
            }
            Self.decodePlayStation(report, layout: bluetooth, buttons: fullButtons, into: &state)
        }
    }

    @inline(__always)
    static func buttons(_ r: UnsafeRawBufferPointer, at offset: Int, map: [ButtonBit]) -> GamepadButtons {
        var result = GamepadButtons()
        for bit in map where r[offset + bit.byte] & bit.mask != 0 { result.insert(bit.button) }
        return result
    }

    @inline(__always)
    static func touchPoint(_ r: UnsafeRawBufferPointer, at o: Int) -> TouchPoint {
        // contact: bit 7 set = no finger, low 7 bits = id; then 12-bit x, 12-bit y packed in 3 bytes.
        let contact = r[o]
        return TouchPoint(id: contact & 0x7F, active: contact & 0x80 == 0,
                          x: UInt16(r[o + 1]) | UInt16(r[o + 2] & 0x0F) << 8,
                          y: UInt16(r[o + 2] >> 4) | UInt16(r[o + 3]) << 4)
    }

    @inline(__always)
    static func vector(_ r: UnsafeRawBufferPointer, at o: Int) -> Vector3 {
        Vector3(x: r.loadLittleEndianInt16(at: o), y: r.loadLittleEndianInt16(at: o + 2), z: r.loadLittleEndianInt16(at: o + 4))
    }

    static func decodePlayStation(_ r: UnsafeRawBufferPointer, layout l: PlayStationInputLayout, buttons lookup: ButtonLookup,
                                  into s: inout GamepadState) {
        let b = l.base
        s.format = l.format
        s.leftStick = StickPosition(x: UInt16(r[b + l.leftX]), y: UInt16(r[b + l.leftY]))
        s.rightStick = StickPosition(x: UInt16(r[b + l.rightX]), y: UInt16(r[b + l.rightY]))
        s.l2 = r[b + l.l2]
        s.r2 = r[b + l.r2]
        s.dpad = DPad(hat: r[b + l.buttons] & 0x0F)
        s.buttons = lookup.buttons(r[b + l.buttons], r[b + l.buttons + 1], r[b + l.buttons + 2])
        s.sequence = l.sequence.map { r[b + $0] } ?? (r[b + l.buttons + 2] >> 2)
        if let gyro = l.gyro, let accel = l.accel {
            s.hasMotion = true
            s.motion.first = MotionSample(gyro: vector(r, at: b + gyro), accel: vector(r, at: b + accel))
            s.motion.count = 1
        } else {
            s.hasMotion = false
            s.motion.count = 0
        }
        if let ts = l.sensorTimestamp {
            s.sensorTimestamp = l.sensorTimestampIs32Bit ? r.loadLittleEndianUInt32(at: b + ts) : UInt32(r.loadLittleEndianUInt16(at: b + ts))
        }
        if let touch = l.touchPoints {
            s.hasTouch = true
            s.touch0 = touchPoint(r, at: b + touch)
            s.touch1 = touchPoint(r, at: b + touch + 4)
        } else {
            s.hasTouch = false
        }
        switch l.batteryEncoding {
        case .none:
            s.battery = nil
        case .dualSense:
            let status = r[b + l.status!]
            s.battery = dualSenseBattery(status)
            // SDL's PS5StatePacket_t: the byte after the battery is the connection state, bit 0 headphones, bit 1 microphone.
            let connection = r[b + l.status! + 1]
            s.headphonesConnected = connection & 0x01 != 0
            s.microphoneConnected = connection & 0x02 != 0
        case .dualShock4:
            let status = r[b + l.status!]
            s.battery = dualShock4Battery(status)
            s.headphonesConnected = status & 0x20 != 0
            s.microphoneConnected = status & 0x40 != 0
        }
    }

    /// hid-playstation's dualsense_parse_report: low nibble is tenths, high nibble the charging state.
    @inline(__always)
    static func dualSenseBattery(_ status: UInt8) -> BatteryStatus {
        let level = status & 0x0F
        let percent = min(level * 10 + 5, 100)
        switch status >> 4 {
        case 0x0: return BatteryStatus(percent: percent, state: .discharging)
        case 0x1: return BatteryStatus(percent: percent, state: .charging)
        case 0x2: return BatteryStatus(percent: 100, state: .full)
        case 0xA: return BatteryStatus(percent: 0, state: .notCharging)
        case 0xB: return BatteryStatus(percent: 0, state: .error)
        default: return BatteryStatus(percent: 0, state: .unknown)
        }
    }

    /// hid-playstation's dualshock4_parse_report: bit 4 says a cable is plugged in.
    @inline(__always)
    static func dualShock4Battery(_ status: UInt8) -> BatteryStatus {
        let level = status & 0x0F
        if status & 0x10 != 0 {
            if level < 10 { return BatteryStatus(percent: level * 10 + 5, state: .charging) }
            if level == 10 { return BatteryStatus(percent: 100, state: .charging) }
            if level == 11 { return BatteryStatus(percent: 100, state: .full) }
            return BatteryStatus(percent: 0, state: .error)
        }
        return BatteryStatus(percent: level < 10 ? level * 10 + 5 : 100, state: .discharging)
    }

    static func decodeSwitchPro(_ r: UnsafeRawBufferPointer, into s: inout GamepadState) throws(InputReportError) {
        guard r.count >= SwitchProLayout.minimumLength else {
            throw .tooShort(id: r[0], got: r.count, need: SwitchProLayout.minimumLength)
        }
        s.format = .switchProFull
        s.sequence = r[1]
        // Byte 2: battery level in the high nibble (0 empty ... 8 full), bit 4 charging.
        let batteryNibble = r[2] >> 4
        s.battery = BatteryStatus(percent: UInt8(min(Int(batteryNibble & 0x0E) * 100 / 8, 100)),
                                  state: batteryNibble & 0x01 != 0 ? .charging : .discharging)
        s.buttons = buttons(r, at: SwitchProLayout.buttons, map: SwitchProLayout.buttonMap)
        let left = r[SwitchProLayout.buttons + 2]
        let up = left & SwitchProLayout.dpadUp != 0, down = left & SwitchProLayout.dpadDown != 0
        let right = left & SwitchProLayout.dpadRight != 0, leftPressed = left & SwitchProLayout.dpadLeft != 0
        switch (up, right, down, leftPressed) {
        case (true, false, _, false): s.dpad = .up
        case (true, true, _, _): s.dpad = .upRight
        case (false, true, false, _): s.dpad = .right
        case (_, true, true, _): s.dpad = .downRight
        case (_, false, true, false): s.dpad = .down
        case (_, _, true, true): s.dpad = .downLeft
        case (false, _, false, true): s.dpad = .left
        case (true, _, _, true): s.dpad = .upLeft
        default: s.dpad = .none
        }
        func stick(_ o: Int) -> StickPosition {
            StickPosition(x: UInt16(r[o]) | UInt16(r[o + 1] & 0x0F) << 8, y: UInt16(r[o + 1] >> 4) | UInt16(r[o + 2]) << 4)
        }
        s.leftStick = stick(SwitchProLayout.leftStick)
        s.rightStick = stick(SwitchProLayout.rightStick)
        s.l2 = s.buttons.contains(.l2) ? 255 : 0
        s.r2 = s.buttons.contains(.r2) ? 255 : 0
        func sample(_ i: Int) -> MotionSample {
            let o = SwitchProLayout.imu + i * SwitchProLayout.imuSampleSize
            return MotionSample(gyro: vector(r, at: o + 6), accel: vector(r, at: o))
        }
        s.hasMotion = true
        s.motion.first = sample(0)
        s.motion.second = sample(1)
        s.motion.third = sample(2)
        s.motion.count = 3
        s.hasTouch = false
        s.headphonesConnected = false
        s.microphoneConnected = false
    }
}
