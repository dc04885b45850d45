/// The Steam Deck's controls as its vendor interface (USB interface 2, 28de:1205) reports them:
/// 64-byte reports without a report id, `01 00 09 40` (version 1, type 9 "Deck state", 64) then
/// the state, every 4 ms. Offsets from hid-steam's comment above `steam_do_deck_input_event` and
/// SDL's `SteamDeckStatePacket_t` (controller_structs.h), checked against a real Deck's recording
/// (docs/research/valve-pads.md §4). All values little-endian.
public enum SteamDeckLayout {
    public static let length = 64
    /// Bytes 0–3 of every state report.
    public static let header: [UInt8] = [0x01, 0x00, 0x09, 0x40]
    public static let sequence = 4          // u32, +1 a report
    public static let buttons = 8           // u64
    public static let leftPad = 16          // s16 x, y: valid while touched
    public static let rightPad = 20
    public static let accel = 24            // s16 x, y, z: 16384 a g
    public static let gyro = 30             // s16 x, y, z: 16 a degree a second
    public static let quaternion = 36       // s16 w, x, y, z
    public static let triggers = 44         // u16 left, right: 0...32767
    public static let leftStick = 48        // s16 x, y: ±32767, +y up
    public static let rightStick = 52
    public static let padPressure = 56      // u16 left, right: 0...32767
    /// One past the last byte a field reads: the size check `hid-playstation.c` makes of its structs.
    public static let fieldsEnd = padPressure + 4
    /// The Deck has no sensor clock: hid-steam and SDL take 4000 µs a report.
    public static let reportMicros: UInt32 = 4000
    /// Per degree a second and per g (hid-steam's STEAM_DECK_GYRO_RES_PER_DPS, _ACCEL_RES_PER_G).
    public static let gyroPerDegreePerSecond: Int32 = 16
    public static let accelPerG: Int32 = 16384

    /// Button bits (byte from `buttons`, mask): hid-steam's and SDL's masks agree.
    public static let buttonMap: [(byte: Int, mask: UInt8, button: GamepadButtons)] = [
        (0, 0x01, .r2), (0, 0x02, .l2), (0, 0x04, .r1), (0, 0x08, .l1),
        (0, 0x10, .north), (0, 0x20, .east), (0, 0x40, .west), (0, 0x80, .south),   // Y B X A
        (1, 0x10, .create), (1, 0x20, .ps), (1, 0x40, .options),                    // View, Steam, ≡
        // The back grips as the kernel numbers them (BTN_TRIGGER_HAPPY1…4 on 6.x: L4, R4, L5, R5),
        // the codes the DualSense Edge's paddles and Fn buttons have.
        (1, 0x80, .fnLeft), (2, 0x01, .fnRight),                                    // L5, R5
        (5, 0x02, .paddleLeft), (5, 0x04, .paddleRight),                            // L4, R4
        (2, 0x02, .leftPadClick), (2, 0x04, .rightPadClick),
        (2, 0x40, .l3), (3, 0x04, .r3),
        (5, 0x40, .leftStickTouch), (5, 0x80, .rightStickTouch),
        (6, 0x04, .quickAccess),
    ]
    static let dpadByte = 1
    static let dpadUp: UInt8 = 0x01, dpadRight: UInt8 = 0x02, dpadLeft: UInt8 = 0x04, dpadDown: UInt8 = 0x08
    static let padTouchByte = 2
    static let leftPadTouch: UInt8 = 0x08, rightPadTouch: UInt8 = 0x10
}

/// The commands the Deck takes, as 64-byte feature reports on report 0 (`[command, length,
/// payload…]`; hidraw's buffer leads with the report number 0). Opcodes and layouts from SDL's
/// controller_constants.h / controller_structs.h and hid-steam (docs/research/valve-pads.md §4.4).
public enum SteamDeckCommands {
    public static let featureLength = 64
    public static let rumble: UInt8 = 0xEB
    /// A trackpad's haptic pulse (`ID_TRIGGER_HAPTIC_PULSE`): hid-steam sends one to each pad
    /// when it switches the Deck's mode.
    public static let hapticPulse: UInt8 = 0x8F
    /// What hid-steam sends a Deck when it switches it to its gamepad mode: clearing the digital
    /// mappings (0x81) and setting values (0x87) to turn lizard mode off (then the pulses). The
    /// switch back sends 0x85, 0x8E and the pulses: a pulse alone is no answer.
    public static let answersASwitchToGamepadMode: Set<UInt8> = [0x81, 0x87]

    /// `MsgSimpleRumbleCmd` as hid-steam sends it: type 0, intensity 0, the strong (low-frequency)
    /// motor's speed, the weak one's, gains 2 and 0 dB (hid-steam's `steam_haptic_rumble`).
    /// Speeds are 16-bit: a level of 255 is 65535.
    public static func rumble(_ levels: MotorLevels) -> [UInt8] {
        let strong = UInt16(levels.low) * 257, weak = UInt16(levels.high) * 257
        var report = [UInt8](repeating: 0, count: featureLength + 1)
        let body: [UInt8] = [rumble, 9, 0, 0, 0, UInt8(strong & 0xff), UInt8(strong >> 8), UInt8(weak & 0xff), UInt8(weak >> 8), 2, 0]
        report.replaceSubrange(1...body.count, with: body)
        return report
    }

    /// A pulse train on a trackpad (0x8F), as hid-steam's `steam_haptic_pulse` lays it out: the pad
    /// (`Trackpad.pulseNumber`), each pulse's time on and off in µs, the count, the gain in dB.
    /// 65 bytes, report number 0 first.
    public struct Pulse: Equatable, Sendable {
        public var pad: Trackpad
        public var onMicros: UInt16, offMicros: UInt16, count: UInt16
        public var gain: Int8
        public init(pad: Trackpad, onMicros: UInt16, offMicros: UInt16, count: UInt16, gain: Int8) {
            self.pad = pad; self.onMicros = onMicros; self.offMicros = offMicros; self.count = count; self.gain = gain
        }
    }

    public static func pulse(_ p: Pulse) -> [UInt8] {
        var report = [UInt8](repeating: 0, count: featureLength + 1)
        let body: [UInt8] = [hapticPulse, 8, p.pad.pulseNumber, UInt8(p.onMicros & 0xff), UInt8(p.onMicros >> 8), UInt8(p.offMicros & 0xff),
                             UInt8(p.offMicros >> 8), UInt8(p.count & 0xff), UInt8(p.count >> 8), UInt8(bitPattern: p.gain)]
        report.replaceSubrange(1...body.count, with: body)
        return report
    }

    /// The pulse train a command asks for (after the report number), nil for another command or
    /// one too short. SDL's `MsgFireHapticPulse` has a 16-bit gain where hid-steam has 8 bits: its
    /// low byte is read, the same for the gains either sends (a few dB either way).
    public static func pulse(_ command: [UInt8]) -> Pulse? {
        guard command.count >= 10, command[0] == hapticPulse, let pad = Trackpad(pulseNumber: command[2]) else { return nil }
        func u16(_ o: Int) -> UInt16 { UInt16(command[o]) | UInt16(command[o + 1]) << 8 }
        return Pulse(pad: pad, onMicros: u16(3), offMicros: u16(5), count: u16(7), gain: Int8(bitPattern: command[9]))
    }

    /// The motors' speeds of a rumble command (after the report number), nil for another command.
    public static func rumbleLevels(_ command: [UInt8]) -> (strong: UInt16, weak: UInt16)? {
        guard command.count >= 9, command[0] == rumble else { return nil }
        return (UInt16(command[5]) | UInt16(command[6]) << 8, UInt16(command[7]) | UInt16(command[8]) << 8)
    }
}

/// The Deck's state report into `GamepadState`: the trackpads are its two touch points (left pad
/// first, each one finger), the IMU's axes turned into the DualSense's (x, z, −y: hid-steam's and
/// SDL's mapping), the report counter its clock.
public struct SteamDeckInputCodec: PadInputCodec {
    public let kind = PadKind.steamDeck
    public var readsMotionWithAClock: Bool { true }
    public var nominalCalibration: MotionCalibration { Self.calibration }
    public init() {}

    public func decode(_ r: UnsafeRawBufferPointer, into s: inout GamepadState) throws(InputReportError) {
        guard let first = r.first else { throw .empty }
        guard r.count >= 4, r[0] == 0x01, r[1] == 0x00, r[2] == 0x09 else {
            throw .unknownReport(id: first, length: r.count, kind: kind)
        }
        guard r.count >= SteamDeckLayout.length else { throw .tooShort(id: first, got: r.count, need: SteamDeckLayout.length) }
        typealias L = SteamDeckLayout
        s.format = .steamDeck
        let b = L.buttons
        var buttons: GamepadButtons = []
        for bit in L.buttonMap where r[b + bit.byte] & bit.mask != 0 { buttons.insert(bit.button) }
        s.buttons = buttons
        let d = r[b + L.dpadByte]
        func held(_ mask: UInt8) -> Int32 { d & mask != 0 ? 1 : 0 }
        s.dpad = DPad(axes: (x: held(L.dpadRight) - held(L.dpadLeft), y: held(L.dpadDown) - held(L.dpadUp)))
        s.sequence = r[L.sequence]
        s.sensorTimestamp = r.loadLittleEndianUInt32(at: L.sequence) &* L.reportMicros
        s.leftStick = Self.stick(r, at: L.leftStick)
        s.rightStick = Self.stick(r, at: L.rightStick)
        let left = r.loadLittleEndianUInt16(at: L.triggers), right = r.loadLittleEndianUInt16(at: L.triggers + 2)
        s.l2Fine = min(left, 32767) * 2
        s.r2Fine = min(right, 32767) * 2
        s.l2 = UInt8(min(left, 32767) >> 7)
        s.r2 = UInt8(min(right, 32767) >> 7)
        let touch = r[b + L.padTouchByte]
        s.hasTouch = true
        s.touch0 = Self.pad(r, at: L.leftPad, id: 0, touched: touch & L.leftPadTouch != 0, pressureAt: L.padPressure)
        s.touch1 = Self.pad(r, at: L.rightPad, id: 1, touched: touch & L.rightPadTouch != 0, pressureAt: L.padPressure + 2)
        let gyro = ReportFields.vector(r, at: L.gyro), accel = ReportFields.vector(r, at: L.accel)
        s.hasMotion = true
        s.motion.first = MotionSample(gyro: Self.dualSenseAxes(gyro), accel: Self.dualSenseAxes(accel))
        s.motion.count = 1
        s.battery = nil
        s.headphonesConnected = false
        s.microphoneConnected = false
    }

    /// A signed axis as the offset-binary 16-bit value `GamepadState` keeps, +y down as on evdev.
    @inline(__always)
    static func stick(_ r: UnsafeRawBufferPointer, at o: Int) -> StickPosition {
        let x = Int32(r.loadLittleEndianInt16(at: o)), y = Int32(r.loadLittleEndianInt16(at: o + 2))
        return StickPosition(x: UInt16(clamping: x + 32768), y: UInt16(clamping: 32768 - y))
    }

    /// A trackpad as one touch point over the whole touch space (`TouchPoint.width` × `height`,
    /// +y down), its id saying which pad: the pad's signed ±32767 (+y up) scaled into it; its
    /// pressure (u16 at `pressureAt`, 0...32767: SDL divides by 32768) to the full 16 bits.
    @inline(__always)
    static func pad(_ r: UnsafeRawBufferPointer, at o: Int, id: UInt8, touched: Bool, pressureAt p: Int) -> TouchPoint {
        guard touched else { return TouchPoint(id: id, pressure: 0) }
        let x = Int32(r.loadLittleEndianInt16(at: o)), y = Int32(r.loadLittleEndianInt16(at: o + 2))
        return TouchPoint(id: id, active: true, x: scaled(x + 32768, TouchPoint.width), y: scaled(32767 - y, TouchPoint.height),
                          pressure: min(r.loadLittleEndianUInt16(at: p), Self.fullPressure) * 2)
    }

    /// A Valve trackpad's full press, as its reports give it.
    public static let fullPressure: UInt16 = 32767

    /// 0...65535 to 0..<`size`.
    @inline(__always)
    static func scaled(_ v: Int32, _ size: UInt16) -> UInt16 { UInt16(clamping: (Int64(max(v, 0)) * Int64(size)) >> 16) }

    /// The Deck's (x, y, z) as the DualSense's axes: (x, z, −y).
    @inline(__always)
    static func dualSenseAxes(_ v: Vector3) -> Vector3 {
        Vector3(x: v.x, y: v.z, z: v.y == .min ? .max : -v.y)
    }

    /// What `forward` applies to the Deck's IMU so the wire's units (the DualSense's 1024 a degree
    /// a second, 8192 a g) hold: ×64 and ÷2.
    public static let calibration: MotionCalibration = {
        let gyro = AxisCalibration(bias: 0, numerator: MotionCalibration.gyroResolutionPerDegreePerSecond, denominator: SteamDeckLayout.gyroPerDegreePerSecond)
        let accel = AxisCalibration(bias: 0, numerator: MotionCalibration.accelResolutionPerG, denominator: SteamDeckLayout.accelPerG)
        return MotionCalibration(gyro: AxisTriple(x: gyro, y: gyro, z: gyro), accel: AxisTriple(x: accel, y: accel, z: accel), convention: .default)
    }()
}

/// Which of a pad's trackpads (a Steam Deck's two): the wire's numbers (docs/wire.md), each
/// family's command its own.
public enum Trackpad: UInt8, Sendable, Equatable {
    case left = 0, right = 1, both = 2

    /// The number Valve's pulse commands give the pad (the Deck's 0x8F, the Steam Controller's
    /// 0x81): swapped, "for legacy reasons" (hid-steam), 0 the right pad, 1 the left, 2 both.
    public var pulseNumber: UInt8 { switch self { case .right: 0; case .left: 1; case .both: 2 } }

    public init?(pulseNumber: UInt8) {
        switch pulseNumber {
        case 0: self = .right
        case 1: self = .left
        case 2: self = .both
        default: return nil
        }
    }
}

extension InputReportFormat {
    /// The Deck's state report: signed 16-bit sticks; its clock is its report counter × 4000 µs,
    /// already in µs when decoded.
    public static let steamDeck = InputReportFormat(name: "steamDeck", stickBits: 16, microsPerTick: (1, 1))
}
