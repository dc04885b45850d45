import HIDCodecs

/// Turns a decoded pad state into the wire's units (docs/wire.md, "Units, on purpose").
public enum PadSnapshots {
    /// Buttons, d-pad, sticks and triggers. The sequence is the sender's to assign.
    public static func controls(_ s: GamepadState, slot: PadSlot) -> PadStateSnapshot {
        let range: StickRange = s.format.stickBits == 12 ? .twelveBit : s.format.stickBits == 16 ? .sixteenBit : .eightBit
        return PadStateSnapshot(slot: slot, buttons: s.buttons.rawValue, dpad: s.dpad.rawValue,
                                leftX: range.signed(s.leftStick.x), leftY: range.signed(s.leftStick.y, invert: range.invertsY),
                                rightX: range.signed(s.rightStick.x), rightY: range.signed(s.rightStick.y, invert: range.invertsY),
                                l2: s.l2, r2: s.r2, l2Fine: s.l2Fine, r2Fine: s.r2Fine)
    }

    public static func touch(_ s: GamepadState, slot: PadSlot) -> TouchSnapshot {
        TouchSnapshot(slot: slot, first: contact(s.touch0), second: contact(s.touch1))
    }

    static func contact(_ t: TouchPoint) -> WireTouchContact {
        WireTouchContact(id: t.id, active: t.active, x: t.active ? t.x : 0, y: t.active ? t.y : 0, pressure: t.pressure.map { t.active ? $0 : 0 })
    }

    /// One IMU sample in degrees per second and g, through the pad's own calibration.
    public static func motion(_ sample: MotionSample, timestampMicros: UInt32, calibration: MotionCalibration) -> WireMotionSample {
        let dps = Float(MotionCalibration.gyroResolutionPerDegreePerSecond)
        let g = Float(MotionCalibration.accelResolutionPerG)
        return WireMotionSample(
            timestampMicros: timestampMicros,
            gyroX: Float(calibration.gyro.x.apply(sample.gyro.x)) / dps,
            gyroY: Float(calibration.gyro.y.apply(sample.gyro.y)) / dps,
            gyroZ: Float(calibration.gyro.z.apply(sample.gyro.z)) / dps,
            accelX: Float(calibration.accel.x.apply(sample.accel.x)) / g,
            accelY: Float(calibration.accel.y.apply(sample.accel.y)) / g,
            accelZ: Float(calibration.accel.z.apply(sample.accel.z)) / g)
    }

    enum StickRange {
        case eightBit, twelveBit, sixteenBit
        var scale: StickScale {
            switch self {
            case .eightBit: StickScale(minimum: 0, maximum: 255)
            case .twelveBit: StickScale(minimum: 0, maximum: 4095)
            case .sixteenBit: StickScale(minimum: 0, maximum: 65535)
            }
        }
        /// Switch sticks report +y up; evdev and the wire have +y down.
        var invertsY: Bool { self == .twelveBit }

        func signed(_ raw: UInt16, invert: Bool = false) -> Int16 {
            // PlayStation sticks, four per report: `StickScale(0...255).wire` with its divisors
            // as constants (centre 128, halves of 128 and 127), so no division is left.
            if self == .eightBit {
                let v = Int32(raw & 0xff) - 128
                return Int16(truncatingIfNeeded: v < 0 ? v * 256 : v * 32767 / 127)
            }
            let v = scale.wire(Int32(raw))
            return invert ? (v == .min ? .max : -v) : v
        }
    }
}

/// A stick axis between its raw range and the wire's i16: the range's centre is exactly 0 and
/// each half is scaled to its own end, so a DualSense's 0/128/255 become -32768/0/32767 and every
/// raw value comes back unchanged on the other side (`raw(wire(x)) == x` for spans up to 16 bits).
public struct StickScale: Hashable, Sendable {
    public let minimum: Int32
    public let maximum: Int32
    public init(minimum: Int32, maximum: Int32) { self.minimum = minimum; self.maximum = max(maximum, minimum) }

    var centre: Int32 { minimum + Int32((Int64(maximum) - Int64(minimum) + 1) / 2) }

    public func wire(_ raw: Int32) -> Int16 {
        let v = Int64(min(max(raw, minimum), maximum)) - Int64(centre)
        let below = Int64(centre) - Int64(minimum), above = Int64(maximum) - Int64(centre)
        if v < 0 { return below == 0 ? 0 : Int16(clamping: v * 32768 / below) }
        return above == 0 ? 0 : Int16(clamping: v * 32767 / above)
    }

    public func raw(_ wire: Int16) -> Int32 {
        let w = Int64(wire)
        let below = Int64(centre) - Int64(minimum), above = Int64(maximum) - Int64(centre)
        // Rounded, not truncated: `wire` truncated, so the nearest raw value is the original one.
        let offset = w < 0 ? -((-w * below + 16384) / 32768) : (w * above + 16383) / 32767
        return Int32(clamping: Int64(centre) + offset)
    }
}
