/// Rumble strength for the two classic motors, 0 (off) to 255. `low` is the heavy, low-frequency
/// motor (left on PlayStation pads, evdev's strong_magnitude); `high` the light one (weak_magnitude).
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

/// One rumble command from a host or a tool. Rumble is state, not an event: each message says
/// "the motors should be at `levels`, for at most `timeToLive` unless renewed".
public struct RumbleMessage: Hashable, Sendable {
    /// Increases with every message the sender makes; the newest one wins.
    public var sequence: UInt64
    public var levels: MotorLevels
    /// The lease: without a newer message within this time the renderer silences the pad.
    public var timeToLive: Duration

    public init(sequence: UInt64, levels: MotorLevels, timeToLive: Duration) {
        self.sequence = sequence; self.levels = levels; self.timeToLive = timeToLive
    }
}

/// What a sink must do to the pad.
public enum RumbleAction: Hashable, Sendable, CustomStringConvertible {
    /// Run the motors at these levels now, for a finite segment: the pad (or the kernel) must fall
    /// silent by itself after `segment` unless another `play` re-arms it before then.
    case play(MotorLevels, segment: Duration)
    /// Silence both motors now.
    case stop

    public var description: String {
        switch self {
        case .play(let l, let s): "play \(l) for \(s)"
        case .stop: "stop"
        }
    }
}
