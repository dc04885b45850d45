import ArgumentParser
import Foundation
import HIDCodecs
import PadSystem
import Transport

/// `padgate hosts`: the hosts this client has pinned (known_hosts, as OpenSSH keeps them, but keyed
/// by each host's identity), `hosts --discover` for the ones announcing themselves on the LAN, and
/// `hosts forget`, the way out after a host was reinstalled (its new identity is refused until then).
struct HostsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hosts",
        abstract: "List the hosts this client has paired with or those on the LAN, or forget one.",
        discussion: "A host's identity is pinned when you pair with it (or on first connection), whatever address it was reached at. If the host was reinstalled, 'forward' refuses its new identity until you run 'padgate hosts forget HOST' and pair again. --discover lists the hosts announcing themselves on the LAN (DNS-SD through avahi-daemon); being found never makes a host trusted.",
        subcommands: [List.self, Forget.self],
        defaultSubcommand: List.self)

    static var store: KnownHostStore {
        get throws { try KnownHostStore(url: PadgatePaths.knownHostsFile) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The pinned hosts and their identities, or (--discover) the hosts on the LAN.")
        @OptionGroup var logging: LoggingOptions
        @Flag(help: "JSON: an array of {host, name, fingerprint, addresses}; with --discover, {name, addresses, port, fingerprint, status, pairing}.")
        var json = false
        @Flag(help: "Browse the LAN for hosts announcing themselves (through avahi-daemon) instead of listing pinned ones.")
        var discover = false
        @Option(help: "Seconds to browse for (with --discover).", transform: SecondsOption.parse) var browse: Double = Discovery.defaultBrowseSeconds

        func run() throws {
            if discover { return try Discovery.list(json: json, seconds: browse) }
            let hosts = try HostsCommand.store.hosts
            if json {
                print(JSONValue.array(hosts.map { host in
                    JSONValue.object([("host", .string(host.addresses.first ?? host.name)), ("name", .string(host.name)),
                                      ("fingerprint", .string(host.fingerprint)), ("addresses", .array(host.addresses.map(JSONValue.string)))])
                }).serialized(pretty: true))
            } else if hosts.isEmpty {
                print("no hosts yet: 'padgate pair HOST' pins one")
            } else {
                for host in hosts {
                    let also = host.addresses.dropFirst()
                    // A name may have come from a LAN advert: escaped for the terminal.
                    print("\(PeerName.escaped(host.addresses.first ?? host.name))  \(host.fingerprint)\(also.isEmpty ? "" : "  (also \(PeerName.escaped(also.joined(separator: ", "))))")")
                }
            }
        }
    }

    struct Forget: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "forget", abstract: "Forget a host's pinned identity (HOST[:PORT], its name, or its fingerprint).")
        @OptionGroup var logging: LoggingOptions
        @Argument(help: "HOST[:PORT] as it was reached, the host's name, or its fingerprint.") var host: String

        func run() throws {
            var store = try HostsCommand.store
            let typed = HostAndPort(host, defaultPort: ServeCommand.defaultPort)?.description
            guard let forgotten = try store.forget(host) ?? typed.flatMap({ try store.forget($0) }) else {
                throw InputFile.ReadError("no pinned host '\(PeerName.echoed(host))' (see 'padgate hosts')")
            }
            let again = PeerName.escaped(forgotten.addresses.first ?? forgotten.name)
            print("forgot \(again) (\(forgotten.fingerprint)); 'padgate pair \(again)' pins its identity again")
        }
    }
}

extension HostsCommand.List: LoggingCommand {}
extension HostsCommand.Forget: LoggingCommand {}
