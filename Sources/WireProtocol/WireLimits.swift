import HIDCodecs

/// What an honest padgate peer can send, in one place: the decoder refuses (and counts) anything
/// outside it, so that no value from the network reaches a virtual pad, a motor or a log unchecked
/// (docs/wire.md, "Limits").
public enum WireLimits {
    /// Slots a client may use: 0..<maxSlots (the host's --max-pads is at most this).
    public static let maxSlots: UInt8 = 16
    /// Gyro in deg/s and accelerometer in g, either sign. The DualSense's and DS4's sensors span
    /// ±2000 deg/s and ±4 g (hid-playstation's ranges); twice that leaves room for calibration
    /// scales and is still far inside what the virtual pads' 16-bit reports carry.
    public static let maxGyroDegreesPerSecond: Float = 4000
    public static let maxAccelG: Float = 8
    /// The touch space (the DualSense touchpad's own coordinate space).
    public static let touchWidth = TouchPoint.width
    public static let touchHeight = TouchPoint.height
    /// Touch contact ids are 7-bit on the pads.
    public static let maxTouchID: UInt8 = 127
    /// The longest rumble one lease may ask for; the client's renderer caps it further.
    public static let maxRumbleTTLMillis: UInt16 = 10_000
    /// The fastest motion rate a host may ask for (the DualSense reports at 250 Hz over USB, 1 kHz at most).
    public static let maxMotionHertz: UInt16 = 1000
    /// Every `GamepadButtons` bit padgate knows (its one table); others are refused.
    public static let knownButtons: UInt32 = GamepadButtons.known.rawValue
    /// Every `HIDOutputMessage.Fields` bit.
    public static let knownOutputFields: UInt8 = 0x1F
    /// `ChargingState` raw values (HIDCodecs).
    public static let maxChargingState: UInt8 = 5

    static func checkSlot(_ raw: UInt8) throws(WireError) -> PadSlot {
        guard raw < maxSlots else { throw .malformed("slot \(raw) (at most \(maxSlots - 1))") }
        return PadSlot(raw)
    }

    /// How far a full-resolution trigger may be from its 8-bit value spread over 16 bits (two
    /// 8-bit steps: one for rounding on either side); further, one of the two is a lie.
    public static let maxFineTriggerDrift = 2 * 257

    static func checkFineTrigger(_ fine: UInt16, coarse: UInt8) throws(WireError) -> UInt16 {
        guard abs(Int(fine) - Int(coarse) * 257) <= maxFineTriggerDrift else {
            throw .malformed("trigger \(fine) at full resolution but \(coarse) in 8 bits")
        }
        return fine
    }

    static func checkMotion(_ sample: WireMotionSample) throws(WireError) {
        for gyro in [sample.gyroX, sample.gyroY, sample.gyroZ] where !(gyro.isFinite && abs(gyro) <= maxGyroDegreesPerSecond) {
            throw .malformed("gyro value \(gyro) (finite, within ±\(maxGyroDegreesPerSecond) deg/s)")
        }
        for accel in [sample.accelX, sample.accelY, sample.accelZ] where !(accel.isFinite && abs(accel) <= maxAccelG) {
            throw .malformed("accelerometer value \(accel) (finite, within ±\(maxAccelG) g)")
        }
    }

    static func checkTouch(_ contact: WireTouchContact) throws(WireError) {
        guard contact.id <= maxTouchID else { throw .malformed("touch id \(contact.id)") }
        guard contact.x < touchWidth, contact.y < touchHeight else { throw .malformed("touch at \(contact.x),\(contact.y) (outside \(touchWidth)x\(touchHeight))") }
    }

    /// A contact's pressure: none on a lifted finger (it would press a pad nobody touches).
    static func checkPressure(_ pressure: UInt16, of contact: WireTouchContact) throws(WireError) -> UInt16 {
        guard contact.active || pressure == 0 else { throw .malformed("pressure \(pressure) on a lifted touch") }
        return pressure
    }

    /// A pad's name: UTF-8 without control characters (it becomes a kernel device name and is logged).
    static func checkName(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> String {
        guard let name = String(validating: bytes, as: UTF8.self) else { throw .malformed("a pad name that is not UTF-8") }
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator: throw .malformed("a pad name with control characters")
            default: continue
            }
        }
        return name
    }
}
