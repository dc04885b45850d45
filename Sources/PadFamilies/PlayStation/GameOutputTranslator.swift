import PadDevices
import HIDCodecs
import WireProtocol

/// Turns the output reports a game writes to a PlayStation pad into what the client's pad must do:
/// a rumble lease for the motors, one HID-output message for lights and triggers. Shared by the
/// uhid pads and the in-process stand-in, so all speak for the game in the same way.
public struct GameOutputTranslator {
    public let slot: PadSlot
    /// The pad the game writes to: a DualShock 4's reports have another layout.
    public let kind: PadKind
    var sequence = WireSequence(0)
    /// How long a game's motor level holds without renewal; the host renews it (ClientPads).
    public static let rumbleLeaseMillis: UInt16 = 500

    public init(slot: PadSlot, kind: PadKind = .dualSense) { self.slot = slot; self.kind = kind }

    /// Reports that are not output reports of the pad (or are corrupt) give no messages.
    public mutating func messages(for report: [UInt8]) -> [WireMessage] {
        if kind == .dualShock4 { return dualShock4Messages(for: report) }
        guard let decoded = try? DualSenseOutputDecoder.decode(report) else { return [] }
        var messages: [WireMessage] = []
        if let motors = decoded.motors { messages.append(rumble(motors)) }
        var output = HIDOutputMessage(slot: slot, sequence: sequence)
        if let color = decoded.lightbar {
            output.fields.insert(.lightbar); output.red = color.red; output.green = color.green; output.blue = color.blue
        }
        if let leds = decoded.playerLEDs { output.fields.insert(.playerLEDs); output.playerLEDMask = leds.mask }
        if let mic = decoded.micLED { output.fields.insert(.micLED); output.micLED = mic.rawValue }
        // An all-zero block is "no effect set", which the wire refuses: leave the trigger as it is.
        if let left = decoded.leftTrigger, let block = try? left.encoded(), block.contains(where: { $0 != 0 }) {
            output.fields.insert(.leftTrigger); output.leftTrigger = TriggerBlock(block)
        }
        if let right = decoded.rightTrigger, let block = try? right.encoded(), block.contains(where: { $0 != 0 }) {
            output.fields.insert(.rightTrigger); output.rightTrigger = TriggerBlock(block)
        }
        if !output.fields.isEmpty {
            sequence = sequence.next
            output.sequence = sequence
            messages.append(.hidOutput(output))
        }
        return messages
    }

    /// A rumble lease for a game's motor levels (`low`: the pad's left, heavy motor).
    func rumble(_ motors: MotorLevels) -> WireMessage {
        .rumble(.unnumbered(slot: slot, levels: motors, ttlMillis: Self.rumbleLeaseMillis))
    }

    /// A DualShock 4's report 0x05 (USB) or 0x11 (Bluetooth, CRC checked): motors and lightbar.
    mutating func dualShock4Messages(for report: [UInt8]) -> [WireMessage] {
        guard let decoded = try? DualShock4OutputDecoder.decode(report) else { return [] }
        var messages: [WireMessage] = []
        if let motors = decoded.motors { messages.append(rumble(motors)) }
        if let color = decoded.lightbar {
            sequence = sequence.next
            var output = HIDOutputMessage(slot: slot, sequence: sequence)
            output.fields = .lightbar
            output.red = color.red; output.green = color.green; output.blue = color.blue
            messages.append(.hidOutput(output))
        }
        return messages
    }
}
