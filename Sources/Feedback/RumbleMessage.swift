import HIDCodecs

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
