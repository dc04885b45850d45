/// Reads DualSense output reports back into typed fields: what a game (or the kernel) asked the pad
/// to do. Only fields whose valid-flag bit is set are reported; everything else is nil, because the
/// pad ignores those bytes. Layout: hid-playstation's `dualsense_output_report_{usb,bt}` and
/// `dualsense_output_report_common` (the same offsets `DualSenseOutputEncoder` writes).

/// Which flag asked for classic rumble. Firmware from feature version 2.21 (and every DualSense Edge)
/// takes "vibration v2" (valid_flag2 bit 2); older firmware valid_flag0 bit 0. hid-playstation picks
/// one from the firmware-info report; both come with HAPTICS_SELECT (valid_flag0 bit 1).
/// `audioHaptics`: a report with every valid flag clear hands the motors back to audio haptics,
/// which is silent here: it is SDL's rumble stop (docs/hid-codecs.md, "Output reports").
public enum RumbleFlavour: String, Hashable, Sendable {
    case compatible, compatibleV2 = "compatible-v2", audioHaptics = "audio-haptics"
}

/// valid_flag2 LIGHTBAR_SETUP: 1 turns the lightbar on, 2 fades it out and hands it to the host.
public enum LightbarSetupCommand: Hashable, Sendable, CustomStringConvertible {
    case lightOn, fadeOut, other(UInt8)
    init(byte: UInt8) { self = byte == 0x01 ? .lightOn : byte == 0x02 ? .fadeOut : .other(byte) }
    public var description: String {
        switch self { case .lightOn: "on"; case .fadeOut: "fade-out"; case .other(let b): "0x" + String(b, radix: 16) }
    }
}

public struct DecodedDualSenseOutput: Hashable, Sendable {
    public var bus: PadBus
    /// Bluetooth only: the 4-bit sequence number (high nibble of byte 1) and the tag byte (0x10 from
    /// the kernel; nil in SDL 2's layout, which has none).
    public var sequence: UInt8?
    public var tag: UInt8?
    /// Bluetooth only: where the settings start.
    public var bluetoothLayout: DualSenseBluetoothOutputLayout?
    var flag0: UInt8 = 0, flag1: UInt8 = 0, flag2: UInt8 = 0

    /// The compatibility-rumble motors: `low` is the left (heavy) one, `high` the right.
    public var motors: MotorLevels?
    public var rumbleFlavour: RumbleFlavour?
    public var rightTrigger: TriggerEffect?
    public var leftTrigger: TriggerEffect?
    public var micLED: MicLED?
    public var micMuted: Bool?
    public var lightbar: RGBColor?
    /// valid_flag1 RELEASE_LEDS: the host gives the player LEDs back to the firmware.
    public var releaseLEDs = false
    public var playerLEDs: PlayerLEDs?
    public var ledBrightness: UInt8?
    public var lightbarSetup: LightbarSetupCommand?

    public init(bus: PadBus) { self.bus = bus }

    public static func == (a: Self, b: Self) -> Bool {
        a.bus == b.bus && a.sequence == b.sequence && a.tag == b.tag && a.flag0 == b.flag0 && a.flag1 == b.flag1
            && a.flag2 == b.flag2 && a.motors == b.motors && a.rumbleFlavour == b.rumbleFlavour && a.rightTrigger == b.rightTrigger
            && a.leftTrigger == b.leftTrigger && a.micLED == b.micLED && a.micMuted == b.micMuted && a.lightbar == b.lightbar
            && a.releaseLEDs == b.releaseLEDs && a.playerLEDs == b.playerLEDs && a.ledBrightness == b.ledBrightness
            && a.lightbarSetup == b.lightbarSetup && a.bluetoothLayout == b.bluetoothLayout
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(flag0); hasher.combine(flag1); hasher.combine(flag2); hasher.combine(motors) }

    /// True when the report changes nothing the decoder knows about (e.g. audio-only reports).
    public var isEmpty: Bool {
        motors == nil && rightTrigger == nil && leftTrigger == nil && micLED == nil && micMuted == nil && lightbar == nil
            && !releaseLEDs && playerLEDs == nil && ledBrightness == nil && lightbarSetup == nil
    }

    /// Folds this report into a cumulative state, as the pad itself does: unflagged fields keep their value.
    public func apply(to state: inout DualSenseOutputState) {
        if let m = motors { state.rumble = m }
        if let t = rightTrigger { state.rightTrigger = t }
        if let t = leftTrigger { state.leftTrigger = t }
        if let v = micLED { state.micLED = v }
        if let v = micMuted { state.micMuted = v }
        if let v = lightbar { state.lightbar = v }
        if let v = playerLEDs { state.playerLEDs = v }
        if let v = ledBrightness { state.ledBrightness = v }
        switch lightbarSetup {
        case .lightOn?: state.lightbarEnabled = true
        case .fadeOut?: state.lightbarEnabled = false
        case .other?, nil: break
        }
    }
}

public enum DualSenseOutputDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case unknownReportID(UInt8)
    case tooShort(reportID: UInt8, length: Int, needed: Int)
    case badCRC(expected: UInt32, found: UInt32)

    public var description: String {
        switch self {
        case .empty: return "the output report is empty"
        case .unknownReportID(let id):
            return "report id \(hexByte(id)) is not a DualSense output report (0x02 over USB, 0x31 over Bluetooth)"
        case .tooShort(let id, let length, let needed):
            return "output report \(hexByte(id)) has \(length) bytes; it needs at least \(needed)"
        case .badCRC(let expected, let found):
            return "Bluetooth output report CRC is 0x\(String(found, radix: 16)), expected 0x\(String(expected, radix: 16)) (seed 0xa2): the report is corrupt or not for a DualSense; the pad would drop it"
        }
    }
}

/// The two Bluetooth 0x31 output layouts a DualSense accepts. The kernel, dualsensectl and SDL 3.4
/// write `31, seq << 4, 0x10` and the settings from byte 3; SDL 2 (to 2.32) and pydualsense write
/// `31 02` and the settings from byte 2. Byte 1's low nibble tells them apart: 0 in the first, 2 in
/// the second.
public enum DualSenseBluetoothOutputLayout: String, Hashable, Sendable {
    case tagged, untagged

    init(byte1: UInt8) { self = byte1 & 0x0F == 0x02 ? .untagged : .tagged }

    var settingsOffset: Int { self == .tagged ? DualSenseOutputOffsets.btCommon : DualSenseOutputOffsets.btCommon - 1 }
}

public enum DualSenseOutputDecoder {
    /// Decodes a USB (0x02) or Bluetooth (0x31, CRC-checked) output report.
    public static func decode(_ report: [UInt8]) throws(DualSenseOutputDecodeError) -> DecodedDualSenseOutput {
        typealias O = DualSenseOutputOffsets
        guard let id = report.first else { throw .empty }
        var decoded: DecodedDualSenseOutput
        let commonStart: Int
        switch id {
        case 0x02:
            // pydualsense sends 64 bytes, the kernel 63: anything holding the common block is fine.
            guard report.count >= O.usbCommon + O.commonSize else {
                throw .tooShort(reportID: id, length: report.count, needed: O.usbCommon + O.commonSize)
            }
            decoded = DecodedDualSenseOutput(bus: .usb)
            commonStart = O.usbCommon
        case 0x31:
            guard report.count >= O.btLength else { throw .tooShort(reportID: id, length: report.count, needed: O.btLength) }
            let body = Array(report[0..<O.btLength])
            let expected = BluetoothCRC.checksum(seed: .output, over: Array(body[0..<O.btLength - 4]))
            let found = UInt32(body[74]) | UInt32(body[75]) << 8 | UInt32(body[76]) << 16 | UInt32(body[77]) << 24
            guard expected == found else { throw .badCRC(expected: expected, found: found) }
            decoded = DecodedDualSenseOutput(bus: .bluetooth)
            let layout = DualSenseBluetoothOutputLayout(byte1: report[1])
            decoded.bluetoothLayout = layout
            decoded.sequence = report[1] >> 4
            decoded.tag = layout == .tagged ? report[2] : nil
            commonStart = layout.settingsOffset
        default:
            throw .unknownReportID(id)
        }
        decodeCommon(report[commonStart..<commonStart + O.commonSize], into: &decoded)
        return decoded
    }

    private static func decodeCommon(_ bytes: ArraySlice<UInt8>, into d: inout DecodedDualSenseOutput) {
        typealias O = DualSenseOutputOffsets
        typealias F = DualSenseValidFlag
        let c = Array(bytes)
        d.flag0 = c[O.validFlag0]; d.flag1 = c[O.validFlag1]; d.flag2 = c[O.validFlag2]
        let v1 = d.flag0 & F.compatibleVibration != 0
        let v2 = d.flag2 & F.compatibleVibration2 != 0
        if v1 || v2 {
            d.motors = MotorLevels(low: c[O.motorLeft], high: c[O.motorRight])
            d.rumbleFlavour = v2 ? .compatibleV2 : .compatible
        } else if d.flag0 == 0 && d.flag1 == 0 && d.flag2 == 0 {
            // Nothing flagged at all: the pad leaves compatible rumble for audio haptics, and its
            // motors stop. A report that sets anything else (the kernel's lightbar-only report)
            // leaves the motors as they are, which is what its sender means.
            d.motors = .silent
            d.rumbleFlavour = .audioHaptics
        }
        func trigger(_ offset: Int) -> TriggerEffect {
            let block = Array(c[offset..<offset + TriggerEffect.blockSize])
            // A game may send a debug mode; report it verbatim rather than refusing the whole report.
            return (try? TriggerEffect(block: block)) ?? .raw(mode: block[0], parameters: Array(block[1...]))
        }
        if d.flag0 & F.rightTriggerMotor != 0 { d.rightTrigger = trigger(O.rightTrigger) }
        if d.flag0 & F.leftTriggerMotor != 0 { d.leftTrigger = trigger(O.leftTrigger) }
        if d.flag1 & F.micMuteLED != 0 { d.micLED = MicLED(rawValue: c[O.micLED] & 0x03) ?? .on }
        if d.flag1 & F.powerSaveControl != 0 { d.micMuted = c[O.powerSaveControl] & F.powerSaveMicMute != 0 }
        if d.flag1 & F.lightbarControl != 0 {
            d.lightbar = RGBColor(red: c[O.lightbarRed], green: c[O.lightbarRed + 1], blue: c[O.lightbarRed + 2])
        }
        d.releaseLEDs = d.flag1 & F.releaseLEDs != 0
        if d.flag1 & F.playerIndicator != 0 {
            d.playerLEDs = PlayerLEDs(mask: c[O.playerLEDs] & 0x1F, instant: c[O.playerLEDs] & 0x20 != 0)
        }
        if d.flag2 & F.ledBrightness != 0 { d.ledBrightness = c[O.ledBrightness] }
        if d.flag2 & F.lightbarSetup != 0 { d.lightbarSetup = LightbarSetupCommand(byte: c[O.lightbarSetup]) }
    }
}

extension DecodedDualSenseOutput {
    /// One line for people: only the fields the report sets.
    public var summary: String {
        var parts: [String] = []
        if let m = motors {
            parts.append(rumbleFlavour == .audioHaptics ? "rumble off (audio haptics)" : "rumble left=\(m.low) right=\(m.high)" + (rumbleFlavour == .compatibleV2 ? " (v2)" : ""))
        }
        if let t = rightTrigger { parts.append("right-trigger \(t.summary)") }
        if let t = leftTrigger { parts.append("left-trigger \(t.summary)") }
        if let c = lightbar { parts.append("lightbar \(c.red) \(c.green) \(c.blue)") }
        if let s = lightbarSetup { parts.append("lightbar-setup \(s)") }
        if let p = playerLEDs { parts.append("player-leds 0b" + String(p.mask, radix: 2).leftPadded(to: 5) + (p.instant ? " instant" : "")) }
        if let b = ledBrightness { parts.append("led-brightness \(b)") }
        if let m = micLED { parts.append("mic-led \(m)") }
        if let m = micMuted { parts.append(m ? "mic muted" : "mic unmuted") }
        if releaseLEDs { parts.append("release-leds") }
        return parts.isEmpty ? "(no known field)" : parts.joined(separator: ", ")
    }

    /// The same fields as an ordered JSON object (for `--json` output).
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [("transport", .string(bus.shortName))]
        if let s = sequence { fields.append(("sequence", .integer(s))) }
        if let m = motors {
            fields.append(("rumble", .object([("left", .integer(m.low)), ("right", .integer(m.high)),
                                              ("flavour", .string(rumbleFlavour?.rawValue ?? ""))])))
        }
        if let t = rightTrigger { fields.append(("right_trigger", t.json)) }
        if let t = leftTrigger { fields.append(("left_trigger", t.json)) }
        if let c = lightbar { fields.append(("lightbar", .array([.integer(c.red), .integer(c.green), .integer(c.blue)]))) }
        if let s = lightbarSetup { fields.append(("lightbar_setup", .string(s.description))) }
        if let p = playerLEDs { fields.append(("player_leds", .object([("mask", .integer(p.mask)), ("instant", .bool(p.instant))]))) }
        if let b = ledBrightness { fields.append(("led_brightness", .integer(b))) }
        if let m = micLED { fields.append(("mic_led", .string("\(m)"))) }
        if let m = micMuted { fields.append(("mic_muted", .bool(m))) }
        if releaseLEDs { fields.append(("release_leds", .bool(true))) }
        return .object(fields)
    }
}

extension TriggerEffect {
    /// The 11 bytes this effect stands for, as hex (raw effects included, debug modes too).
    var blockHex: String {
        let bytes: [UInt8]
        if case .raw(let mode, let p) = self { bytes = [mode] + p + [UInt8](repeating: 0, count: max(0, 10 - p.count)) }
        else { bytes = (try? encoded()) ?? [] }
        return bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    var summary: String {
        if case .raw = self { return "raw \(blockHex)" }
        return "\(self)"
    }

    var json: JSONValue { .object([("effect", .string(summary)), ("block", .string(blockHex))]) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Flags the encoder never sets but a game or the kernel may (hid-playstation names).
extension DualSenseValidFlag {
    static let releaseLEDs: UInt8 = 1 << 3            // valid_flag1
    static let compatibleVibration2: UInt8 = 1 << 2   // valid_flag2
}
