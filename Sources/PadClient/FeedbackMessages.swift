import Feedback
import HIDCodecs
import WireProtocol

/// The host's feedback messages in the terms a pad's outputs use, one place for every source.
extension RumbleMessage {
    /// The wire's 16-bit magnitudes to the motors' 8 bits; the 16-bit sequence widened for the renderer.
    init(_ lease: RumbleLease) {
        self.init(sequence: UInt64(lease.sequence.rawValue), levels: MotorLevels(low: UInt8(lease.low >> 8), high: UInt8(lease.high >> 8)),
                  timeToLive: .milliseconds(Int(lease.ttlMillis)))
    }
}

extension HIDOutputMessage {
    var lightbarColor: RGBColor? { fields.contains(.lightbar) ? RGBColor(red: red, green: green, blue: blue) : nil }
    var playerLEDs: PlayerLEDs? { fields.contains(.playerLEDs) ? PlayerLEDs(mask: playerLEDMask) : nil }
    /// Trigger blocks that do not decode (a mode padgate does not know) leave the trigger as it is.
    var leftTriggerEffect: TriggerEffect? { fields.contains(.leftTrigger) ? try? TriggerEffect(block: leftTrigger.array) : nil }
    var rightTriggerEffect: TriggerEffect? { fields.contains(.rightTrigger) ? try? TriggerEffect(block: rightTrigger.array) : nil }
}
