public struct RGBColor: Hashable, Sendable {
    public var red: UInt8, green: UInt8, blue: UInt8
    public init(red: UInt8, green: UInt8, blue: UInt8) { self.red = red; self.green = green; self.blue = blue }
}

/// Player indicator LEDs: five bits, left to right, plus "switch instantly instead of fading" (bit 5).
public struct PlayerLEDs: Hashable, Sendable {
    public var mask: UInt8
    public var instant: Bool
    public init(mask: UInt8, instant: Bool = false) { self.mask = mask & 0x1F; self.instant = instant }

    /// dualsensectl's (and the kernel's) patterns for players 1...7; 0 = all off.
    public static let playerPatterns: [UInt8] = [0x00, 0x04, 0x0A, 0x15, 0x1B, 0x1F, 0x11, 0x0E]

    public init(player: Int, instant: Bool = false) throws(OutputStateError) {
        guard Self.playerPatterns.indices.contains(player) else { throw .outOfRange(parameter: "player", value: player, valid: "0 (off) to 7") }
        self.init(mask: Self.playerPatterns[player], instant: instant)
    }

    var byte: UInt8 { mask | (instant ? 0x20 : 0) }
}

public enum MicLED: UInt8, Hashable, Sendable { case off = 0, on = 1, pulse = 2 }

public enum OutputStateError: Error, Equatable, Sendable, CustomStringConvertible {
    case outOfRange(parameter: String, value: Int, valid: String)
    case trigger(TriggerEffectError)
    public var description: String {
        switch self {
        case .outOfRange(let p, let v, let valid): return "\(p) is \(v); it must be \(valid)"
        case .trigger(let e): return e.description
        }
    }
}

/// Everything we can set on a DualSense, cumulatively: nil means "never set, leave it to the pad".
public struct DualSenseOutputState: Hashable, Sendable {
    /// Rumble in DualShock 4 compatibility mode: `low` drives the left (heavy) motor, `high` the right.
    public var rumble: MotorLevels?
    public var lightbar: RGBColor?
    /// `on`/`off` of the lightbar itself (valid_flag2 LIGHTBAR_SETUP).
    public var lightbarEnabled: Bool?
    public var playerLEDs: PlayerLEDs?
    /// Player/mic LED brightness: 0 high, 1 medium, 2 low.
    public var ledBrightness: UInt8?
    public var micLED: MicLED?
    public var micMuted: Bool?
    public var rightTrigger: TriggerEffect?
    public var leftTrigger: TriggerEffect?

    public init() {}
}

/// Byte positions in `struct dualsense_output_report_common` (hid-playstation, dualsensectl, SDL's DS5EffectsState_t).
enum DualSenseOutputOffsets {
    static let validFlag0 = 0, validFlag1 = 1, motorRight = 2, motorLeft = 3
    static let micLED = 8, powerSaveControl = 9, rightTrigger = 10, leftTrigger = 21
    static let validFlag2 = 38, lightbarSetup = 41, ledBrightness = 42, playerLEDs = 43, lightbarRed = 44
    static let commonSize = 47
    static let usbLength = 63, usbCommon = 1
    static let btLength = 78, btCommon = 3
}

/// Valid-flag bits (names from hid-playstation / dualsensectl).
enum DualSenseValidFlag {
    static let compatibleVibration: UInt8 = 1 << 0, hapticsSelect: UInt8 = 1 << 1
    static let rightTriggerMotor: UInt8 = 1 << 2, leftTriggerMotor: UInt8 = 1 << 3
    static let micMuteLED: UInt8 = 1 << 0, powerSaveControl: UInt8 = 1 << 1, lightbarControl: UInt8 = 1 << 2
    static let playerIndicator: UInt8 = 1 << 4
    static let ledBrightness: UInt8 = 1 << 0, lightbarSetup: UInt8 = 1 << 1
    static let powerSaveMicMute: UInt8 = 1 << 4
}

/// Turns the cumulative state into output reports. Only fields that are set and changed since the
/// last encoded report get their valid flag, so the pad does not re-run animations (e.g. player LED fades).
/// Bluetooth reports carry a 4-bit sequence number that advances with every report.
public struct DualSenseOutputEncoder: Sendable {
    public private(set) var lastSent = DualSenseOutputState()
    public private(set) var sequence: UInt8 = 0

    public init() {}

    /// True when `report` (one of this encoder's) flags no field. Never send one: the pad does not
    /// read it as "nothing changed" but as "motors back to audio haptics", which stops a running
    /// rumble (SDL's stop report is exactly that; docs/hid-codecs.md, "Output reports").
    public static func flagsNothing(_ report: [UInt8]) -> Bool {
        typealias O = DualSenseOutputOffsets
        let common = report.first == 0x31 ? O.btCommon : O.usbCommon
        guard report.count >= common + O.commonSize else { return false }
        return report[common + O.validFlag0] == 0 && report[common + O.validFlag1] == 0 && report[common + O.validFlag2] == 0
    }

    /// `changedOnly: false` flags every set field (for the first report after connecting).
    /// A state with nothing (changed) to say gives a report that `flagsNothing`: don't send it.
    public mutating func encode(_ state: DualSenseOutputState, bus: PadBus, changedOnly: Bool = true) throws(OutputStateError) -> [UInt8] {
        typealias O = DualSenseOutputOffsets
        typealias F = DualSenseValidFlag
        var common = [UInt8](repeating: 0, count: O.commonSize)
        let previous = changedOnly ? lastSent : DualSenseOutputState()
        func changed<T: Equatable>(_ new: T?, _ old: T?) -> T? { (new != nil && (new != old || !changedOnly)) ? new : nil }

        if let r = state.rumble, !(changedOnly && previous.rumble.map { $0 == r } == true) {
            common[O.validFlag0] |= F.compatibleVibration | F.hapticsSelect
            common[O.motorLeft] = r.low
            common[O.motorRight] = r.high
        }
        for (effect, old, offset, flag) in [(state.rightTrigger, previous.rightTrigger, O.rightTrigger, F.rightTriggerMotor),
                                            (state.leftTrigger, previous.leftTrigger, O.leftTrigger, F.leftTriggerMotor)] {
            if let e = changed(effect, old) {
                let block: [UInt8]
                do { block = try e.encoded() } catch { throw .trigger(error) }
                common.replaceSubrange(offset..<offset + TriggerEffect.blockSize, with: block)
                common[O.validFlag0] |= flag
            }
        }
        if let led = changed(state.micLED, previous.micLED) {
            common[O.validFlag1] |= F.micMuteLED
            common[O.micLED] = led.rawValue
        }
        if let muted = changed(state.micMuted, previous.micMuted) {
            common[O.validFlag1] |= F.powerSaveControl
            common[O.powerSaveControl] = muted ? F.powerSaveMicMute : 0
        }
        if let color = changed(state.lightbar, previous.lightbar) {
            common[O.validFlag1] |= F.lightbarControl
            common[O.lightbarRed] = color.red; common[O.lightbarRed + 1] = color.green; common[O.lightbarRed + 2] = color.blue
        }
        if let leds = changed(state.playerLEDs, previous.playerLEDs) {
            common[O.validFlag1] |= F.playerIndicator
            common[O.playerLEDs] = leds.byte
        }
        if let brightness = changed(state.ledBrightness, previous.ledBrightness) {
            guard brightness <= 2 else { throw .outOfRange(parameter: "LED brightness", value: Int(brightness), valid: "0 (high), 1 or 2 (low)") }
            common[O.validFlag2] |= F.ledBrightness
            common[O.ledBrightness] = brightness
        }
        if let enabled = changed(state.lightbarEnabled, previous.lightbarEnabled) {
            common[O.validFlag2] |= F.lightbarSetup
            common[O.lightbarSetup] = enabled ? 0x01 : 0x02   // LIGHT_ON / LIGHT_OUT
        }
        lastSent = state

        switch bus {
        case .usb:
            var report = [UInt8](repeating: 0, count: O.usbLength)
            report[0] = 0x02
            report.replaceSubrange(O.usbCommon..<O.usbCommon + O.commonSize, with: common)
            return report
        case .bluetooth:
            var report = [UInt8](repeating: 0, count: O.btLength)
            report[0] = 0x31
            report[1] = sequence << 4
            report[2] = 0x10   // tag the firmware requires (hid-playstation: DS_OUTPUT_TAG)
            report.replaceSubrange(O.btCommon..<O.btCommon + O.commonSize, with: common)
            BluetoothCRC.stamp(seed: .output, report: &report)
            sequence = (sequence + 1) & 0x0F
            return report
        }
    }
}

/// Lightbar blinking: on and off times in centiseconds (0...255 each).
public struct LightbarBlink: Hashable, Sendable {
    public var on: UInt8, off: UInt8
    public init(on: UInt8, off: UInt8) { self.on = on; self.off = off }
}
