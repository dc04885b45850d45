/// Rumble strength for the two classic motors, 0 (off) to 255: the one type for it in every layer
/// (output reports, the renderer, evdev force feedback). `low` is the heavy, low-frequency motor
/// (left on PlayStation pads, evdev's strong_magnitude); `high` the light one (weak_magnitude).
public struct MotorLevels: Hashable, Sendable, CustomStringConvertible {
    public var low: UInt8
    public var high: UInt8

    public init(low: UInt8, high: UInt8) { self.low = low; self.high = high }

    public static let silent = MotorLevels(low: 0, high: 0)
    public var isSilent: Bool { low == 0 && high == 0 }
    public var description: String { "low=\(low) high=\(high)" }

    /// The motors one by one, for per-motor rules (throttling).
    public enum Motor: CaseIterable, Sendable { case low, high }
    public subscript(motor: Motor) -> UInt8 {
        get { motor == .low ? low : high }
        set { if motor == .low { low = newValue } else { high = newValue } }
    }
}
