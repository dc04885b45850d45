import Logging
import PadSystem

/// Where log lines go, chosen in one place (`Padgate.main`): every logger in padgate, the host's
/// and client's included, writes through the handler and from the level picked here.
enum LogSetup {
    static func bootstrap(command: String, level: Logger.Level = .info) {
        LoggingSystem.bootstrap { label in
            TerminalLogHandler(label: label, level: level, prefix: { prefix(for: $0, command: command) })
        }
    }

    /// Who speaks, as people have read it: the command's own name (`padgate serve: `); in the
    /// demo, where host and client share a process, `host: ` and `pad side: `. Lines of the
    /// `padgate` logger carry their own words and get none.
    static func prefix(for label: String, command: String) -> String {
        if label == consoleLabel { return "" }
        if command == "demo" {
            if label.hasPrefix("padgate.host") { return "host: " }
            if label.hasPrefix("padgate.client") { return "pad side: " }
        }
        return command.isEmpty ? "padgate: " : "padgate \(command): "
    }
}

/// The command's own lines, said with its name (`padgate serve: listening on …`).
let commandLog = Logger(label: "padgate.cli")
/// Lines that carry their own words (progress, warnings), said as they are.
let console = Logger(label: consoleLabel)
/// A constant, not `console.label`: the handler factory runs while `console` is being made.
private let consoleLabel = "padgate"
