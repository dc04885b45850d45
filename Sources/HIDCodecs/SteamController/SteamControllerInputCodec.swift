/// The Steam Controller (2026, "Triton"; 28de:1302 wired, 1303 Bluetooth, 1304 through its puck,
/// 1305 Nereid) as its vendor HID interface reports it: numbered reports, the state in 0x42
/// (54 bytes with its id) or, over Bluetooth, 0x45 (46: no quaternion) or 0x47 (46, with clocks). Offsets from the kernel's
/// 2026 hid-steam and SDL's `TritonMTUFull_t` (controller_structs.h), held to a real puck's
/// capture (docs/research/valve-pads.md §5). All values little-endian; offsets include the id.
public enum SteamControllerLayout {
    public static let state: UInt8 = 0x42
    public static let stateLength = 54
    /// Over Bluetooth: the state without the quaternion.
    public static let stateWithoutQuaternion: UInt8 = 0x45
    public static let stateWithoutQuaternionLength = 46
    /// The state with the trackpads' own clock (0x47, 46 bytes; SDL 3.4.10's `TritonMTUNoQuat32TS_t`,
    /// from source: no capture holds one): a u16 trackpad clock at 18 moves the pads two bytes on,
    /// and the IMU's clock is a u16 in 32 µs ticks at 32 (wrapping every 2.1 s). Sticks, triggers,
    /// buttons and the IMU's values sit where 0x42 has them.
    public static let stateWithClocks: UInt8 = 0x47
    public static let stateWithClocksLength = 46
    static let clockedPadShift = 2
    static let clockedIMUClock = 32
    static let clockedIMUTickMicros: UInt32 = 32
    /// Battery: charge state at 1 (0 reset, 1 discharging, 2 charging, 3 validating its source,
    /// 4 done), level % at 2; millivolts, currents and temperature after.
    public static let battery: UInt8 = 0x43
    public static let batteryLength = 15
    /// Reports the interface also sends that carry no control: lizard mouse (0x40) and keyboard
    /// (0x41), an unknown 0x44 and the puck's status (0x7B, about twice a second).
    public static let others: Set<UInt8> = [0x40, 0x41, 0x44, 0x7B]
    /// A receiver's slot says a controller came (2) or went (1): 0x79, or 0x46 (SDL reads both).
    public static let wirelessStatus: UInt8 = 0x79
    public static let wirelessStatusVariant: UInt8 = 0x46
    public static let disconnected: UInt8 = 1
    public static let connected: UInt8 = 2

    public static let sequence = 1          // u8, +1 a report
    public static let buttons = 2           // u32
    public static let triggers = 6          // s16 left, right: 0...32767
    public static let leftStick = 10        // s16 x, y: ±32767, +y up
    public static let rightStick = 14
    public static let leftPad = 18          // s16 x, y, then u16 pressure
    public static let rightPad = 24
    /// Within a pad's six bytes: its u16 pressure, 0...32767 (SDL divides by 32768).
    public static let padPressure = 4
    public static let imuClock = 30         // u32 µs
    public static let accel = 34            // s16 x, y, z: 16384 a g
    public static let gyro = 40             // s16 x, y, z: 16 a degree a second
    /// One past the last byte the state's fields read (the quaternion after it is not read).
    public static let fieldsEnd = gyro + 6
    public static let gyroPerDegreePerSecond: Int32 = 16
    public static let accelPerG: Int32 = 16384

    /// Button bits (byte from `buttons`, mask), the kernel's and SDL's table: A B X Y, "…", R3, ≡,
    /// the grips R4 R5 L4 L5 (on the bits the Deck's grips have: paddles and Fn), R1, View, L3,
    /// Steam, L1, the sticks' touch, the pads' clicks, and the triggers' full press.
    public static let buttonMap: [(byte: Int, mask: UInt8, button: GamepadButtons)] = [
        (0, 0x01, .south), (0, 0x02, .east), (0, 0x04, .west), (0, 0x08, .north),
        (0, 0x10, .quickAccess), (0, 0x20, .r3), (0, 0x40, .options), (0, 0x80, .paddleRight),
        (1, 0x01, .fnRight), (1, 0x02, .r1), (1, 0x40, .create), (1, 0x80, .l3),
        (2, 0x01, .ps), (2, 0x02, .paddleLeft), (2, 0x04, .fnLeft), (2, 0x08, .l1),
        (2, 0x10, .rightStickTouch), (2, 0x40, .rightPadClick), (2, 0x80, .r2),
        (3, 0x01, .leftStickTouch), (3, 0x04, .leftPadClick), (3, 0x08, .l2),
    ]
    static let dpadByte = 1
    static let dpadDown: UInt8 = 0x04, dpadRight: UInt8 = 0x08, dpadLeft: UInt8 = 0x10, dpadUp: UInt8 = 0x20
    static let rightPadTouch = (byte: 2, mask: UInt8(0x20))
    static let leftPadTouch = (byte: 3, mask: UInt8(0x02))
}

/// What the Steam Controller (2026) takes: HID output reports, not the Deck's feature commands
/// (its firmware ignores the Deck's 0xEB). Layouts from the 2026 hid-steam and SDL's
/// controller_structs.h (docs/research/valve-pads.md §5.5).
public enum SteamControllerCommands {
    public static let rumbleReport: UInt8 = 0x80
    public static let rumbleLength = 10

    /// Report 0x80: type 0, intensity 0, the low-frequency motor's speed (u16) and gain 2 dB, the
    /// high-frequency one's and gain 0 (hid-steam's values). A level of 255 is speed 65535.
    public static func rumble(_ levels: MotorLevels) -> [UInt8] {
        let low = UInt16(levels.low) * 257, high = UInt16(levels.high) * 257
        return [rumbleReport, 0, 0, 0, UInt8(low & 0xff), UInt8(low >> 8), 2, UInt8(high & 0xff), UInt8(high >> 8), 0]
    }

    /// The motors' speeds of a report 0x80 (low-frequency, high-frequency); nil for another report.
    public static func rumbleSpeeds(_ report: [UInt8]) -> (low: UInt16, high: UInt16)? {
        guard report.count >= rumbleLength, report[0] == rumbleReport else { return nil }
        return (UInt16(report[4]) | UInt16(report[5]) << 8, UInt16(report[7]) | UInt16(report[8]) << 8)
    }

    /// Report 0x81: a pulse train on a trackpad: the pad (`Trackpad.pulseNumber`, as the Deck's
    /// 0x8F: the 2026 hid-steam's `steam_haptic_pulse` numbers both families' alike), each pulse's
    /// time on and off in µs and the count, u16 each. No gain: SDL's 10-byte form with one was a
    /// bug it fixed (docs/research/valve-pads.md §5.5). 8 bytes with the id, the size the
    /// controller's descriptor gives the report.
    public static let pulseReport: UInt8 = 0x81
    public static let pulseLength = 8

    public static func pulse(pad: Trackpad, onMicros: UInt16, offMicros: UInt16, count: UInt16) -> [UInt8] {
        [pulseReport, pad.pulseNumber, UInt8(onMicros & 0xff), UInt8(onMicros >> 8), UInt8(offMicros & 0xff), UInt8(offMicros >> 8),
         UInt8(count & 0xff), UInt8(count >> 8)]
    }

    /// The pulse train a report 0x81 asks for; nil for another report, one too short or a pad
    /// the controller does not have.
    public static func pulse(_ report: [UInt8]) -> (pad: Trackpad, onMicros: UInt16, offMicros: UInt16, count: UInt16)? {
        guard report.count >= pulseLength, report[0] == pulseReport, let pad = Trackpad(pulseNumber: report[1]) else { return nil }
        func u16(_ o: Int) -> UInt16 { UInt16(report[o]) | UInt16(report[o + 1]) << 8 }
        return (pad, u16(2), u16(4), u16(6))
    }

    /// Commands go in feature report 1 (the puck's own in 2): `[1, command, length, payload…]`,
    /// 64 bytes with the id (SDL_hidapi_steam_triton.c).
    public static let commandReport: UInt8 = 0x01
    public static let commandLength = 64
    /// The settings command (the Deck's 0x87): `(setting u8, value u16le)` triples.
    public static let setSettings: UInt8 = 0x87
    public static let lizardModeSetting: UInt8 = 9
    public static let imuModeSetting: UInt8 = 0x30
    /// IMU mode bits: raw accelerometer (0x08) and raw gyro (0x10).
    public static let imuRawAccelAndGyro: UInt16 = 0x18

    /// Feature report 1 setting each `(setting, value)`.
    public static func settings(_ values: [(setting: UInt8, value: UInt16)]) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: commandLength)
        report[0] = commandReport
        report[1] = setSettings
        report[2] = UInt8(3 * values.count)
        for (i, v) in values.enumerated() {
            report.replaceSubrange((3 + 3 * i)..<(6 + 3 * i), with: [v.setting, UInt8(v.value & 0xff), UInt8(v.value >> 8)])
        }
        return report
    }

    /// Lizard mode off: the controller then sends its state (0x42) instead of mouse and keyboard
    /// reports, and falls back to them about 8 s after the last such command (SDL and Steam send
    /// it every 3 s).
    public static let lizardModeOff = settings([(lizardModeSetting, 0)])
    public static let lizardModeResend = Duration.seconds(3)
    /// The IMU on: raw accelerometer and gyro in the state report.
    public static let imuOn = settings([(imuModeSetting, imuRawAccelAndGyro)])

    /// The settings a feature report 1 sets; nil for another report.
    public static func settingValues(_ report: [UInt8]) -> [(setting: UInt8, value: UInt16)]? {
        guard report.count >= 3, report[0] == commandReport, report[1] == setSettings else { return nil }
        let count = min(Int(report[2]), report.count - 3) / 3
        return (0..<count).map { i -> (setting: UInt8, value: UInt16) in
            let o = 3 + 3 * i
            let low = UInt16(report[o + 1]), high = UInt16(report[o + 2])
            return (report[o], low | high << 8)
        }
    }
}

/// The Steam Controller's reports into `GamepadState`: sticks, triggers at 15 bits, the two
/// trackpads as the two touch points (left first, each over the whole touch space), the IMU on the
/// DualSense's axes (x, z, −y: the kernel's mapping, as the Deck's) with its own µs clock, and
/// the battery from its own report. The reports without controls are read and change nothing.
public struct SteamControllerInputCodec: PadInputCodec {
    public let kind = PadKind.steamController
    public var readsMotionWithAClock: Bool { true }
    public var nominalCalibration: MotionCalibration { Self.calibration }
    public init() {}

    public func decode(_ r: UnsafeRawBufferPointer, into s: inout GamepadState) throws(InputReportError) {
        typealias L = SteamControllerLayout
        guard let id = r.first else { throw .empty }
        switch id {
        case L.state, L.stateWithoutQuaternion, L.stateWithClocks:
            let need = switch id { case L.state: L.stateLength; case L.stateWithClocks: L.stateWithClocksLength; default: L.stateWithoutQuaternionLength }
            guard r.count >= need else { throw .tooShort(id: id, got: r.count, need: need) }
            decodeState(r, into: &s, clocked: id == L.stateWithClocks)
        case L.wirelessStatus, L.wirelessStatusVariant:
            guard r.count >= 2 else { throw .tooShort(id: id, got: r.count, need: 2) }
            switch r[1] {
            case L.disconnected:
                // Nothing of the controller that left stays held for the next to arrive with.
                let battery = s.battery
                s = GamepadState()
                s.battery = battery
                s.link = .disconnected
            case L.connected: s.link = .connected
            default: break
            }
        case L.battery:
            guard r.count >= L.batteryLength else { throw .tooShort(id: id, got: r.count, need: L.batteryLength) }
            let state: ChargingState = switch r[1] { case 1: .discharging; case 2: .charging; case 4: .full; default: .unknown }
            s.battery = BatteryStatus(percent: min(r[2], 100), state: state)
        default:
            guard L.others.contains(id) else { throw .unknownReport(id: id, length: r.count, kind: kind) }
        }
    }

    private func decodeState(_ r: UnsafeRawBufferPointer, into s: inout GamepadState, clocked: Bool) {
        typealias L = SteamControllerLayout
        s.format = .steamController
        s.link = .connected
        var buttons: GamepadButtons = []
        for bit in L.buttonMap where r[L.buttons + bit.byte] & bit.mask != 0 { buttons.insert(bit.button) }
        s.buttons = buttons
        let d = r[L.buttons + L.dpadByte]
        func held(_ mask: UInt8) -> Int32 { d & mask != 0 ? 1 : 0 }
        s.dpad = DPad(axes: (x: held(L.dpadRight) - held(L.dpadLeft), y: held(L.dpadDown) - held(L.dpadUp)))
        s.sequence = r[L.sequence]
        if clocked {
            // The IMU's 16-bit tick count onto the µs clock the state keeps: the ticks since the
            // last report's (a whole number of ticks: the clock here only ever moves by them).
            let ticks = r.loadLittleEndianUInt16(at: L.clockedIMUClock)
            let last = UInt16(truncatingIfNeeded: s.sensorTimestamp / L.clockedIMUTickMicros)
            s.sensorTimestamp &+= UInt32(ticks &- last) &* L.clockedIMUTickMicros
        } else {
            s.sensorTimestamp = r.loadLittleEndianUInt32(at: L.imuClock)
        }
        let padShift = clocked ? L.clockedPadShift : 0
        s.leftStick = SteamDeckInputCodec.stick(r, at: L.leftStick)
        s.rightStick = SteamDeckInputCodec.stick(r, at: L.rightStick)
        let left = UInt16(clamping: max(0, r.loadLittleEndianInt16(at: L.triggers)))
        let right = UInt16(clamping: max(0, r.loadLittleEndianInt16(at: L.triggers + 2)))
        s.l2Fine = left * 2
        s.r2Fine = right * 2
        s.l2 = UInt8(left >> 7)
        s.r2 = UInt8(right >> 7)
        s.hasTouch = true
        s.touch0 = SteamDeckInputCodec.pad(r, at: L.leftPad + padShift, id: 0, touched: r[L.buttons + L.leftPadTouch.byte] & L.leftPadTouch.mask != 0,
                                           pressureAt: L.leftPad + padShift + L.padPressure)
        s.touch1 = SteamDeckInputCodec.pad(r, at: L.rightPad + padShift, id: 1, touched: r[L.buttons + L.rightPadTouch.byte] & L.rightPadTouch.mask != 0,
                                           pressureAt: L.rightPad + padShift + L.padPressure)
        let gyro = ReportFields.vector(r, at: L.gyro), accel = ReportFields.vector(r, at: L.accel)
        s.hasMotion = true
        s.motion.first = MotionSample(gyro: SteamDeckInputCodec.dualSenseAxes(gyro), accel: SteamDeckInputCodec.dualSenseAxes(accel))
        s.motion.count = 1
        s.headphonesConnected = false
        s.microphoneConnected = false
    }

    /// The IMU's scales (the Deck's: 16 a degree a second, 16384 a g) into the wire's units.
    public static let calibration: MotionCalibration = {
        let gyro = AxisCalibration(bias: 0, numerator: MotionCalibration.gyroResolutionPerDegreePerSecond,
                                   denominator: SteamControllerLayout.gyroPerDegreePerSecond)
        let accel = AxisCalibration(bias: 0, numerator: MotionCalibration.accelResolutionPerG, denominator: SteamControllerLayout.accelPerG)
        return MotionCalibration(gyro: AxisTriple(x: gyro, y: gyro, z: gyro), accel: AxisTriple(x: accel, y: accel, z: accel), convention: .default)
    }()
}

extension InputReportFormat {
    /// The Steam Controller's (2026) state report: signed 16-bit sticks, its IMU's own clock in µs.
    public static let steamController = InputReportFormat(name: "steamController", stickBits: 16, microsPerTick: (1, 1))
}
