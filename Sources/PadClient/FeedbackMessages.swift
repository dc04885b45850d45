import Feedback
import HIDCodecs
import PadDevices
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

extension PadFeedback {
    /// The HID-level feedback a host sent, on this pad: what the message names, nothing else.
    func apply(_ output: HIDOutputMessage) throws {
        if let color = output.lightbarColor { try setLightbar(color) }
        if let leds = output.playerLEDs { try setPlayerLEDs(leds) }
        let left = output.leftTriggerEffect, right = output.rightTriggerEffect
        if left != nil || right != nil { try setTriggers(left: left, right: right) }
    }
}
