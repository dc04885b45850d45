/// Rumble strength for the motors, 0 (off) to 255: the one type for it in every layer (output
/// reports, the renderer, evdev force feedback). `low` is the heavy, low-frequency motor (left on
/// PlayStation pads, evdev's strong_magnitude); `high` the light one (weak_magnitude). The Xbox
/// One and Series pads have two more, one behind each trigger ("impulse triggers"); pads without
/// them, and evdev force feedback, leave those at 0.
public struct MotorLevels: Hashable, Sendable, CustomStringConvertible {
    public var low: UInt8
    public var high: UInt8
    public var leftTrigger: UInt8
    public var rightTrigger: UInt8

    public init(low: UInt8, high: UInt8, leftTrigger: UInt8 = 0, rightTrigger: UInt8 = 0) {
        self.low = low; self.high = high; self.leftTrigger = leftTrigger; self.rightTrigger = rightTrigger
    }

    public static let silent = MotorLevels(low: 0, high: 0)
    public var isSilent: Bool { low == 0 && high == 0 && leftTrigger == 0 && rightTrigger == 0 }
    public var description: String {
        leftTrigger == 0 && rightTrigger == 0 ? "low=\(low) high=\(high)"
            : "low=\(low) high=\(high) left-trigger=\(leftTrigger) right-trigger=\(rightTrigger)"
    }

    /// The motors one by one, for per-motor rules (throttling).
    public enum Motor: CaseIterable, Sendable { case low, high, leftTrigger, rightTrigger }
    public subscript(motor: Motor) -> UInt8 {
        get {
            switch motor {
            case .low: low
            case .high: high
            case .leftTrigger: leftTrigger
            case .rightTrigger: rightTrigger
            }
        }
        set {
            switch motor {
            case .low: low = newValue
            case .high: high = newValue
            case .leftTrigger: leftTrigger = newValue
            case .rightTrigger: rightTrigger = newValue
            }
        }
    }
}
