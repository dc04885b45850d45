import HIDCodecs

/// Turns a decoded pad state into the wire's units (docs/wire.md, "Units, on purpose").
public enum PadSnapshots {
    /// Buttons, d-pad, sticks and triggers. The sequence is the sender's to assign.
    public static func controls(_ s: GamepadState, slot: PadSlot) -> PadStateSnapshot {
        let range: StickRange = s.format == .switchProFull ? .twelveBit : .eightBit
        return PadStateSnapshot(slot: slot, buttons: s.buttons.rawValue, dpad: s.dpad.rawValue,
                                leftX: range.signed(s.leftStick.x), leftY: range.signed(s.leftStick.y, invert: range.invertsY),
                                rightX: range.signed(s.rightStick.x), rightY: range.signed(s.rightStick.y, invert: range.invertsY),
                                l2: s.l2, r2: s.r2)
    }

    public static func touch(_ s: GamepadState, slot: PadSlot) -> TouchSnapshot {
        TouchSnapshot(slot: slot, first: contact(s.touch0), second: contact(s.touch1))
    }

    static func contact(_ t: TouchPoint) -> WireTouchContact {
        WireTouchContact(id: t.id, active: t.active, x: t.active ? t.x : 0, y: t.active ? t.y : 0)
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

    /// The sensor clock in microseconds: the DualSense counts in 1/3 µs (hid-playstation divides
    /// by 3), the DualShock 4 in 16-bit steps of 16/3 µs.
    public static func sensorMicros(_ s: GamepadState) -> UInt32 {
        switch s.format {
        case .dualShock4USB, .dualShock4Bluetooth, .dualShock4BluetoothSimple: return UInt32((UInt64(s.sensorTimestamp) * 16) / 3)
        default: return s.sensorTimestamp / 3
        }
    }

    enum StickRange {
        case eightBit, twelveBit
        var centre: Int32 { self == .eightBit ? 128 : 2048 }
        var maximum: Int32 { self == .eightBit ? 255 : 4095 }
        /// Switch sticks report +y up; evdev and the wire have +y down.
        var invertsY: Bool { self == .twelveBit }

        /// Maps so that the centre is exactly 0 and both ends reach the i16 limits.
        func signed(_ raw: UInt16, invert: Bool = false) -> Int16 {
            let v = Int32(min(UInt32(raw), UInt32(maximum))) - centre
            let scaled = v < 0 ? v * 32768 / centre : v * 32767 / (maximum - centre)
            return Int16(clamping: invert ? -scaled : scaled)
        }
    }
}
