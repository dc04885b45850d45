import ArgumentParser
import Foundation
import PadSystem

@main
struct Padgate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "padgate",
        abstract: "Linux gamepad input and haptics gateway.",
        discussion: "Lists, watches, emulates and inspects game controllers, and forwards them to a remote host.",
        version: "0.1.0",
        subcommands: [
            // device-layer commands
            ListCommand.self, WatchCommand.self, EmulateCommand.self, RecordCommand.self,
            // forwarding
            ServeCommand.self, HostCommand.self, ForwardCommand.self, PairCommand.self, HostsCommand.self, ProbeCommand.self, DemoCommand.self,
            // codec commands
            InspectCommand.self, CalibrateCommand.self, LightbarCommand.self, PlayerLEDsCommand.self,
            TriggerSubcommand.self, RumbleCommand.self, HapticsCommand.self,
            // set-up
            DoctorCommand.self, UdevRulesCommand.self,
        ]
    )

    /// ArgumentParser's own main, with the logging bootstrap between parsing and running: the
    /// one place a level and a handler are chosen, once the command is known.
    static func main() {
        do {
            var command = try parseAsRoot()
            LogSetup.bootstrap(command: type(of: command).configuration.commandName ?? "",
                               level: try LogSetup.level((command as? LoggingCommand)?.logging))
            try command.run()
        } catch {
            // ArgumentParser's own message and exit code, with every line escaped: an error may
            // quote what a file or a pad named (a recording's bytes, a device's name).
            let message = fullMessage(for: error)
            let code = exitCode(for: error)
            if !message.isEmpty {
                FileHandle(fileDescriptor: code.isSuccess ? 1 : 2).write(Data((TerminalText.escapedMessage(message) + "\n").utf8))
            }
            Foundation.exit(code.rawValue)
        }
    }
}
