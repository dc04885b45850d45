/// The DualSense's, DualSense Edge's and DualShock 4's input reports: the full report over USB,
/// the full Bluetooth report (CRC-checked) and the short Bluetooth report a pad sends before its
/// driver asks for full ones.
public struct PlayStationInputCodec: PadInputCodec {
    public let kind: PadKind
    public var readsMotionWithAClock: Bool { true }
    private let full: PlayStationInputLayout
    private let bluetooth: PlayStationInputLayout
    private let simple: PlayStationInputLayout
    /// Lookup tables built once from the layouts' button maps (same map for USB and Bluetooth full reports).
    private let fullButtons: ButtonLookup
    private let simpleButtons: ButtonLookup
    private enum LayoutChoice { case full, simple, bluetooth }

    init(kind: PadKind, full: PlayStationInputLayout, bluetooth: PlayStationInputLayout, simple: PlayStationInputLayout) {
        self.kind = kind
        self.full = full
        self.bluetooth = bluetooth
        self.simple = simple
        fullButtons = ButtonLookup(full.buttonMap)
        simpleButtons = ButtonLookup(simple.buttonMap)
    }

    public static let dualSense = PlayStationInputCodec(
        kind: .dualSense, full: PlayStationLayouts.dualSenseUSB(), bluetooth: PlayStationLayouts.dualSenseBluetooth(),
        simple: PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple))
    public static let dualSenseEdge = PlayStationInputCodec(
        kind: .dualSenseEdge, full: PlayStationLayouts.dualSenseUSB(buttons: PlayStationLayouts.dualSenseEdgeButtons),
        bluetooth: PlayStationLayouts.dualSenseBluetooth(buttons: PlayStationLayouts.dualSenseEdgeButtons),
        simple: PlayStationLayouts.bluetoothSimple(format: .dualSenseBluetoothSimple))
    public static let dualShock4 = PlayStationInputCodec(
        kind: .dualShock4, full: PlayStationLayouts.dualShock4USB, bluetooth: PlayStationLayouts.dualShock4Bluetooth,
        simple: PlayStationLayouts.bluetoothSimple(format: .dualShock4BluetoothSimple))

    public func decode(_ report: UnsafeRawBufferPointer, into state: inout GamepadState) throws(InputReportError) {
        guard let id = report.first else { throw .empty }
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
                throw .badChecksum(id: id)
            }
            Self.decodePlayStation(report, layout: bluetooth, buttons: fullButtons, into: &state)
        }
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
            s.motion.first = MotionSample(gyro: ReportFields.vector(r, at: b + gyro), accel: ReportFields.vector(r, at: b + accel))
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
            s.touch0 = ReportFields.touchPoint(r, at: b + touch)
            s.touch1 = ReportFields.touchPoint(r, at: b + touch + 4)
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

}
