import ArgumentParser
import Feedback
import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem

/// Options every command that acts on a pad's outputs shares: which pad (`--pad`), or `--dry-run`
/// to print the report for a model and bus instead of sending it.
struct PadOutputOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The pad: an index from 'padgate list', one of its /dev nodes, or vid:pid. Default: the first pad.",
                               valueName: "PAD"))
    var pad: String?

    @Flag(help: "Print the output report as hex instead of sending it (no pad needed; see --bus and --model).")
    var dryRun = false

    @Option(help: "With --dry-run: the bus to build the report for, usb or bt.")
    var bus: PadBus = .usb

    @Option(help: "With --dry-run: which pad's reports, dualsense, dualsense-edge or dualshock4 (DualShock 4 supports lightbar and rumble).")
    var model: PlayStationKind = .dualSense

    @Flag(help: "Bluetooth PlayStation pads not bound to hid-playstation: accept that output reports switch them to full reports.")
    var btFullReports = false

    @Option(help: "Rumble path: auto (evdev force feedback where the driver has it, else hidraw), evdev or hidraw.")
    var rumblePath: PadFeedback.RumblePath = .automatic

    /// Prints the report; only called with --dry-run.
    func deliver(_ report: [UInt8]) throws {
        print(Hex.encode(report))
    }

    /// The selected pad's feedback, closed (motors stopped) when `body` returns or throws.
    func withPad(_ body: (PadFeedback) throws -> Void) throws {
        let selector = try pad.map { try PadSelector($0) }
        let target = try PadSelector.select(selector, from: try Udev().pads())
        var options = PadFeedback.Options()
        options.allowBluetoothFullReports = btFullReports
        options.rumblePath = rumblePath
        let feedback = PadFeedback(pad: target, options: options)
        SignalTrap.install { feedback.close() }
        defer { feedback.close() }
        try body(feedback)
        try feedback.finishLights()
    }

    func dualSenseReport(_ state: DualSenseOutputState) throws -> [UInt8] {
        guard model.kind.isDualSenseFamily else { throw ValidationError("this command needs a DualSense (--model dualsense)") }
        var encoder = DualSenseOutputEncoder()
        do { return try encoder.encode(state, bus: bus) } catch { throw ValidationError("\(error)") }
    }
}

/// A number as dualsensectl reads it (strtol base 0: decimal, 0x hex, 0-prefixed octal) within `range`.
func parseNumber(_ word: String, _ name: String, range: ClosedRange<Int> = 0...255) throws -> Int {
    guard let value = NumberArgument.parse(word), range.contains(value) else {
        throw ValidationError("\(name) must be a number from \(range.lowerBound) to \(range.upperBound) (\(NumberArgument.forms)), got '\(word)'")
    }
    return value
}

func parseByte(_ word: String, _ name: String) throws -> UInt8 { UInt8(try parseNumber(word, name)) }

struct LightbarCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "lightbar",
        abstract: "Set the lightbar colour (R G B [BRIGHTNESS], 0-255) or turn it on/off.",
        discussion: "As dualsensectl: the colour is scaled by BRIGHTNESS/255 (default 255).")

    // A negative number is a value to refuse with its range, not an unknown option.
    @Argument(parsing: .allUnrecognized, help: "R G B [BRIGHTNESS], or 'on' / 'off'.")
    var values: [String]

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        if values.count == 1, let word = values.first, word == "on" || word == "off" {
            if !output.dryRun { return try output.withPad { try $0.setLightbar(enabled: word == "on") } }
            var state = DualSenseOutputState()
            state.lightbarEnabled = word == "on"
            return try output.deliver(output.dualSenseReport(state))
        }
        guard values.count == 3 || values.count == 4 else { throw ValidationError("lightbar takes R G B [BRIGHTNESS] or on/off") }
        let r = try parseByte(values[0], "RED"), g = try parseByte(values[1], "GREEN"), b = try parseByte(values[2], "BLUE")
        let brightness = values.count == 4 ? try parseByte(values[3], "BRIGHTNESS") : 255
        let scale = { (c: UInt8) in UInt8(Int(brightness) * Int(c) / 255) }
        let color = RGBColor(red: scale(r), green: scale(g), blue: scale(b))
        if !output.dryRun { return try output.withPad { try $0.setLightbar(color) } }
        if output.model.kind == .dualShock4 {
            var ds4 = DualShock4OutputState()
            ds4.lightbar = color
            return try output.deliver(ds4.encoded(bus: output.bus))
        }
        var state = DualSenseOutputState()
        state.lightbar = color
        try output.deliver(output.dualSenseReport(state))
    }
}

struct PlayerLEDsCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "player-leds",
        abstract: "Light the player indicator for player 1-7, or 0 for off; 'instant' skips the fade.")

    @Argument(help: "Player number 0-7.")
    var player: String

    @Argument(help: "Write 'instant' to switch without fading.")
    var instant: String?

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        if let instant, instant != "instant" { throw ValidationError("the second argument can only be 'instant'") }
        var state = DualSenseOutputState()
        let number = try parseNumber(player, "PLAYER", range: 0...(PlayerLEDs.playerPatterns.count - 1))
        do { state.playerLEDs = try PlayerLEDs(player: number, instant: instant != nil) } catch { throw ValidationError("\(error)") }
        if !output.dryRun, let leds = state.playerLEDs { return try output.withPad { try $0.setPlayerLEDs(leds) } }
        try output.deliver(output.dualSenseReport(state))
    }
}

struct TriggerSubcommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "Set an adaptive-trigger effect (dualsensectl's grammar).",
        discussion: TriggerCommand.usage)

    @Argument(parsing: .allUnrecognized, help: "left|right|both EFFECT PARAMS...")
    var words: [String]

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        let command: TriggerCommand
        do { command = try TriggerCommand(arguments: words) } catch { throw ValidationError("\(error)") }
        var state = DualSenseOutputState()
        if command.side != .left { state.rightTrigger = command.effect }
        if command.side != .right { state.leftTrigger = command.effect }
        if !output.dryRun {
            return try output.withPad { try $0.setTriggers(left: state.leftTrigger, right: state.rightTrigger) }
        }
        try output.deliver(output.dualSenseReport(state))
    }
}

struct RumbleCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "rumble",
        abstract: "Run the rumble motors: LOW drives the heavy left motor, HIGH the light right one (0-255).",
        discussion: """
            padgate rumble [--pad PAD] LOW HIGH [--for DURATION]     hold a level (default 1s), then stop
            padgate rumble [--pad PAD] --pattern NAME|FILE [--for DURATION]
                built-in patterns: pulse, ramp, heartbeat; a FILE has one 'LOW HIGH MILLISECONDS' per line.
                Without --for a pattern plays once; with it, it repeats for that long.
            padgate rumble LOW HIGH --dry-run [--bus usb|bt] [--model dualsense|dualsense-edge|dualshock4]
            DURATION: 500ms, 2s, 1.5s or a number of seconds. Ctrl-C stops the motors at once; a killed
            padgate stops them within one 200 ms segment where the pad's driver offers force feedback.
            """)

    @Argument(help: "Low-frequency (left) motor strength 0-255.")
    var low: String?

    @Argument(help: "High-frequency (right) motor strength 0-255.")
    var high: String?

    @Option(name: .customLong("for"), parsing: .unconditional, help: "How long to rumble: 500ms, 2s, 1.5s.")
    var duration: String?

    @Option(help: "A built-in pattern (pulse, ramp, heartbeat) or a pattern file.")
    var pattern: String?

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        let length = try duration.map { try parseDuration($0) }
        if let pattern {
            guard low == nil && high == nil else { throw ValidationError("give either LOW HIGH or --pattern, not both") }
            guard !output.dryRun else { throw ValidationError("--dry-run prints one report; it takes LOW HIGH, not --pattern") }
            let track = try loadPattern(pattern)
            return try output.withPad { feedback in
                try feedback.play(track: track.steps.map { ($0.levels, $0.duration) }, repeatUntil: length) { SignalTrap.fired }
            }
        }
        guard let low, let high else { throw ValidationError("rumble takes LOW HIGH (0-255 each) or --pattern NAME|FILE") }
        let l = try parseByte(low, "LOW"), h = try parseByte(high, "HIGH")
        if !output.dryRun {
            return try output.withPad { feedback in
                try feedback.rumble(MotorLevels(low: l, high: h), for: length ?? .seconds(1)) { SignalTrap.fired }
            }
        }
        if output.model.kind == .dualShock4 {
            var ds4 = DualShock4OutputState()
            ds4.rumble = MotorLevels(low: l, high: h)
            return try output.deliver(ds4.encoded(bus: output.bus))
        }
        var state = DualSenseOutputState()
        state.rumble = MotorLevels(low: l, high: h)
        try output.deliver(output.dualSenseReport(state))
    }

    private func loadPattern(_ name: String) throws -> RumblePattern {
        if let builtIn = RumblePattern.builtIn[name] { return builtIn }
        guard FileManager.default.fileExists(atPath: name) else {
            throw ValidationError("'\(name)' is neither a built-in pattern (\(RumblePattern.builtIn.keys.sorted().joined(separator: ", "))) nor a file")
        }
        let text = try InputFile.text(name, what: "--pattern")
        do { return try RumblePattern(text: text) } catch { throw ValidationError("\(name): \(error)") }
    }
}

/// The longest `--for` a command takes unless it names its own bound.
let longestDuration: Duration = .seconds(3600)

/// "500ms", "2s", "1.5s" or plain seconds, at most `maximum` (the message says the bound it checks).
func parseDuration(_ text: String, maximum: Duration = longestDuration) throws -> Duration {
    let lower = text.lowercased()
    let (number, scale): (Substring, Double) = lower.hasSuffix("ms") ? (lower.dropLast(2), 0.001)
        : lower.hasSuffix("s") ? (lower.dropLast(), 1) : (Substring(lower), 1)
    guard let value = Double(number), value >= 0, value.isFinite else {
        throw ValidationError("'\(text)' is not a duration: write 500ms, 2s or 1.5s")
    }
    guard value * scale <= maximum.seconds else {
        throw ValidationError("'\(text)' is too long: at most \(Int(maximum.seconds)) s")
    }
    return .milliseconds(Int((value * scale * 1000).rounded()))
}
