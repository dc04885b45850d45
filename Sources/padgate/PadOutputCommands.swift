import ArgumentParser
import HIDCodecs

extension Transport: ExpressibleByArgument {}

/// Options every command that acts on a pad's outputs shares. The device layer will add `--pad SELECTOR`
/// here; until then only `--dry-run` (print the report instead of sending it) works.
struct PadOutputOptions: ParsableArguments {
    @Flag(help: "Print the output report as hex instead of sending it.")
    var dryRun = false

    @Option(help: "Transport to build the report for: usb or bt.")
    var bus: Transport = .usb

    @Option(help: "Pad model: dualsense or dualshock4 (DualShock 4 supports lightbar and rumble).")
    var model: OutputModel = .dualsense

    enum OutputModel: String, ExpressibleByArgument, CaseIterable { case dualsense, dualshock4 }

    /// Prints the report (dry run) or refuses: sending needs the device layer.
    func deliver(_ report: [UInt8]) throws {
        guard dryRun else { throw ValidationError("acting on a pad needs a device: pass --dry-run to print the report instead") }
        print(Hex.encode(report))
    }

    func dualSenseReport(_ state: DualSenseOutputState) throws -> [UInt8] {
        guard model == .dualsense else { throw ValidationError("this command needs a DualSense (--model dualsense)") }
        var encoder = DualSenseOutputEncoder()
        do { return try encoder.encode(state, transport: bus) } catch { throw ValidationError("\(error)") }
    }
}

/// Numbers as dualsensectl reads them: decimal or 0x-hex.
func parseByte(_ word: String, _ name: String, range: ClosedRange<Int> = 0...255) throws -> UInt8 {
    let value = word.lowercased().hasPrefix("0x") ? Int(word.dropFirst(2), radix: 16) : Int(word)
    guard let value, range.contains(value) else {
        throw ValidationError("\(name) must be a number from \(range.lowerBound) to \(range.upperBound), got '\(word)'")
    }
    return UInt8(value)
}

struct LightbarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lightbar",
        abstract: "Set the lightbar colour (R G B [BRIGHTNESS], 0-255) or turn it on/off.",
        discussion: "As dualsensectl: the colour is scaled by BRIGHTNESS/255 (default 255).")

    @Argument(help: "R G B [BRIGHTNESS], or 'on' / 'off'.")
    var values: [String]

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        if values.count == 1, let word = values.first, word == "on" || word == "off" {
            var state = DualSenseOutputState()
            state.lightbarEnabled = word == "on"
            return try output.deliver(output.dualSenseReport(state))
        }
        guard values.count == 3 || values.count == 4 else { throw ValidationError("lightbar takes R G B [BRIGHTNESS] or on/off") }
        let r = try parseByte(values[0], "RED"), g = try parseByte(values[1], "GREEN"), b = try parseByte(values[2], "BLUE")
        let brightness = values.count == 4 ? try parseByte(values[3], "BRIGHTNESS") : 255
        let scale = { (c: UInt8) in UInt8(Int(brightness) * Int(c) / 255) }
        let color = RGBColor(red: scale(r), green: scale(g), blue: scale(b))
        if output.model == .dualshock4 {
            var ds4 = DualShock4OutputState()
            ds4.lightbar = color
            return try output.deliver(ds4.encoded(transport: output.bus))
        }
        var state = DualSenseOutputState()
        state.lightbar = color
        try output.deliver(output.dualSenseReport(state))
    }
}

struct PlayerLEDsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "player-leds",
        abstract: "Light the player indicator for player 1-7, or 0 for off; 'instant' skips the fade.")

    @Argument(help: "Player number 0-7.")
    var player: Int

    @Argument(help: "Write 'instant' to switch without fading.")
    var instant: String?

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        if let instant, instant != "instant" { throw ValidationError("the second argument can only be 'instant'") }
        var state = DualSenseOutputState()
        do { state.playerLEDs = try PlayerLEDs(player: player, instant: instant != nil) } catch { throw ValidationError("\(error)") }
        try output.deliver(output.dualSenseReport(state))
    }
}

struct TriggerSubcommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trigger",
        abstract: "Set an adaptive-trigger effect (dualsensectl's grammar).",
        discussion: TriggerCommand.usage)

    @Argument(help: "left|right|both EFFECT PARAMS...")
    var words: [String]

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        let command: TriggerCommand
        do { command = try TriggerCommand(arguments: words) } catch { throw ValidationError("\(error)") }
        var state = DualSenseOutputState()
        if command.side != .left { state.rightTrigger = command.effect }
        if command.side != .right { state.leftTrigger = command.effect }
        try output.deliver(output.dualSenseReport(state))
    }
}

struct RumbleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rumble",
        abstract: "Run the rumble motors: LOW drives the heavy left motor, HIGH the light right one (0-255).")

    @Argument(help: "Low-frequency (left) motor strength 0-255.")
    var low: String

    @Argument(help: "High-frequency (right) motor strength 0-255.")
    var high: String

    @OptionGroup var output: PadOutputOptions

    func run() throws {
        let l = try parseByte(low, "LOW"), h = try parseByte(high, "HIGH")
        if output.model == .dualshock4 {
            var ds4 = DualShock4OutputState()
            ds4.rumbleLow = l; ds4.rumbleHigh = h
            return try output.deliver(ds4.encoded(transport: output.bus))
        }
        var state = DualSenseOutputState()
        state.rumble = (l, h)
        try output.deliver(output.dualSenseReport(state))
    }
}
