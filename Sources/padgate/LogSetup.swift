import ArgumentParser
import Foundation
import Logging
import PadSystem

/// Where log lines go, chosen in one place (`Padgate.main`): every logger in padgate, the host's
/// and client's included, writes through the handler and from the level picked here.
enum LogSetup {
    /// Under systemd, stderr is the journal's stream (`$JOURNAL_STREAM` names it): each line then
    /// starts with its syslog priority (`<6>`), which journald reads as the entry's priority.
    static func bootstrap(command: String, level: Logger.Level = .info) {
        let journal = JournalStream.isStandardError(ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in
            TerminalLogHandler(label: label, level: level, prefix: { prefix(for: $0, command: command) }, journalPriorities: journal)
        }
    }

    /// The level a command asked for: `--log-level`, else `$PADGATE_LOG_LEVEL`, else info.
    static func level(_ options: LoggingOptions?) throws -> Logger.Level {
        if let level = options?.logLevel { return level }
        guard let text = ProcessInfo.processInfo.environment["PADGATE_LOG_LEVEL"], !text.isEmpty else { return .info }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("PADGATE_LOG_LEVEL='\(text.prefix(40))' is not a level: \(LoggingOptions.levels)")
        }
        return level
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

/// `--log-level`, on every subcommand.
struct LoggingOptions: ParsableArguments {
    static let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")

    @Option(name: .customLong("log-level"), help: ArgumentHelp("How much to log: \(LoggingOptions.levels) (default info, or $PADGATE_LOG_LEVEL).",
                                                               valueName: "level"), transform: LoggingOptions.parse)
    var logLevel: Logger.Level?

    static func parse(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else { throw ValidationError("the levels are \(levels)") }
        return level
    }
}

/// The subcommands, which all take `LoggingOptions`.
protocol LoggingCommand { var logging: LoggingOptions { get } }
extension ListCommand: LoggingCommand {}
extension WatchCommand: LoggingCommand {}
extension EmulateCommand: LoggingCommand {}
extension RecordCommand: LoggingCommand {}
extension ServeCommand: LoggingCommand {}
extension ForwardCommand: LoggingCommand {}
extension PairCommand: LoggingCommand {}
extension DemoCommand: LoggingCommand {}
extension InspectCommand: LoggingCommand {}
extension CalibrateCommand: LoggingCommand {}
extension LightbarCommand: LoggingCommand {}
extension PlayerLEDsCommand: LoggingCommand {}
extension TriggerSubcommand: LoggingCommand {}
extension RumbleCommand: LoggingCommand {}
