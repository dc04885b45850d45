import ArgumentParser
import Foundation
import HIDCodecs
import Transport

/// `padgate hosts`: the hosts this client has pinned (known_hosts, as OpenSSH keeps them), and
/// `hosts forget`, the way out after a host was reinstalled (its new identity is refused until then).
struct HostsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hosts",
        abstract: "List the hosts this client has paired with, or forget one.",
        discussion: "A host's identity is pinned when you pair with it (or on first connection). If the host was reinstalled, 'forward' refuses its new identity until you run 'padgate hosts forget HOST' and pair again.",
        subcommands: [List.self, Forget.self],
        defaultSubcommand: List.self)

    static var store: FingerprintStore {
        get throws { try FingerprintStore(url: PadgatePaths.configDirectory.appendingPathComponent("known_hosts")) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The pinned hosts and their identities.")
        @OptionGroup var logging: LoggingOptions
        @Flag(help: "One JSON array of {host, fingerprint}.") var json = false

        func run() throws {
            let entries = try HostsCommand.store.entries.sorted { $0.key < $1.key }
            if json {
                print(JSONValue.array(entries.map { JSONValue.object([("host", .string($0.key)), ("fingerprint", .string($0.value))]) }).serialized(pretty: true))
            } else if entries.isEmpty {
                print("no hosts yet: 'padgate pair HOST' pins one")
            } else {
                for (host, fingerprint) in entries { print("\(host)  \(fingerprint)") }
            }
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "forget", abstract: "Forget a host's pinned identity (HOST[:PORT] or its fingerprint).")
        @OptionGroup var logging: LoggingOptions
        @Argument(help: "HOST[:PORT] as it was paired, or the host's fingerprint.") var host: String

        func run() throws {
            var store = try HostsCommand.store
            let key: String? = store.entries.keys.first { $0 == host }
                ?? HostAddress(argument: host).map { "\($0.host):\($0.port)" }.flatMap { store.entries[$0] == nil ? nil : $0 }
                ?? store.entries.first { $0.value == host }?.key
            guard let key, try store.forget(key) else {
                throw InputFile.ReadError("no pinned host '\(host.prefix(80))' (see 'padgate hosts')")
            }
            print("forgot \(key); 'padgate pair \(key)' pins its identity again")
        }
    }
}

extension HostsCommand.List: LoggingCommand {}
extension HostsCommand.Forget: LoggingCommand {}
