import Foundation
import HIDCodecs
import HostDiscovery
import PadClient
import PadSystem
import Transport

/// The CLI's side of LAN discovery: `hosts --discover`, and `forward` / `pair` without HOST. A
/// discovered host is only ever a place to connect to: `forward` goes to a host whose identity
/// this client pinned, and the TLS handshake checks that identity as for a typed address.
enum Discovery {
    static let defaultBrowseSeconds = 2.0

    struct Candidate {
        var host: DiscoveredHost
        var standing: KnownHostStore.Standing
        /// HOST:PORT to type to reach it without discovery.
        var address: String { host.addresses.first.map { HostAndPort(host: $0.host, port: host.port).description } ?? host.domainName }
    }

    static func find(seconds: Double) throws -> [Candidate] {
        let known = try KnownHostStore(url: PadgatePaths.knownHostsFile)
        return try AvahiBrowser.browse(for: SecondsOption.duration(seconds)).map { host in
            let reachedAs = host.addresses.map { HostAndPort(host: $0.host, port: host.port).description }
            return Candidate(host: host, standing: known.standing(fingerprint: host.advert.fingerprint, name: host.advert.hostName, addresses: reachedAs))
        }
    }

    static func list(json: Bool, seconds: Double) throws {
        let found = try find(seconds: seconds)
        if json {
            print(JSONValue.array(found.map { candidate in
                let host = candidate.host
                return JSONValue.object([
                    ("name", .string(host.advert.hostName)), ("service", .string(host.instanceName)), ("domainName", .string(host.domainName)),
                    ("addresses", .array(host.addresses.map { .string($0.host) })), ("port", .int(Int64(host.port))),
                    ("fingerprint", .string(host.advert.fingerprint)), ("status", .string(candidate.standing.rawValue)),
                    ("pairing", .bool(host.advert.pairingOpen)), ("protocol", .int(Int64(host.advert.protocolVersion))),
                ])
            }).serialized(pretty: true))
        } else if found.isEmpty {
            print("no padgate host answered within \(SecondsOption.text(seconds)) (is 'padgate serve' running on this LAN, announcing?)")
        } else {
            for candidate in found { print(line(candidate)) }
        }
    }

    static func line(_ candidate: Candidate) -> String {
        let host = candidate.host
        let status: String
        switch candidate.standing {
        case .paired: status = "paired"
        case .unknown: status = "not paired"
        case .changed: status = "CHANGED identity: refused until 'padgate hosts forget \(PeerName.escaped(host.advert.hostName))'"
        }
        // Every field is a stranger's bytes: escaped for the terminal.
        return "\(PeerName.escaped(host.advert.hostName))  \(host.addresses.map(\.host).joined(separator: ", ")) port \(host.port)  \(status)"
            + (host.advert.pairingOpen ? "  (PIN armed)" : "") + "  \(host.advert.fingerprint)"
    }

    enum Purpose { case forward, pair }

    /// Where `forward` or `pair` connects: the typed address, else the one suitable host on the
    /// LAN (paired for forward, a PIN armed for pair); with several, the person picks one.
    static func target(_ typed: HostAddress?, for purpose: Purpose) throws -> Target {
        if let typed { return Target(host: typed.host, port: typed.port, addresses: [], announcedName: nil, display: typed.description) }
        let found = try find(seconds: defaultBrowseSeconds)
        let suitable = found.filter { purpose == .forward ? $0.standing == .paired : $0.host.advert.pairingOpen }
        let verb = purpose == .forward ? "forward" : "pair"
        guard !suitable.isEmpty else {
            let want = purpose == .forward ? "no paired padgate host" : "no padgate host with a pairing PIN armed ('padgate serve --pair' or 'padgate host pair')"
            let seen = found.isEmpty ? " (none answered at all)" : ":\n" + found.map { "  " + line($0) }.joined(separator: "\n")
            let next = purpose == .forward ? "pair with one first ('padgate pair HOST'), or give HOST" : "give HOST"
            throw InputFile.ReadError("\(want) answered on the LAN within \(SecondsOption.text(defaultBrowseSeconds))\(seen)\n\(next)")
        }
        let chosen: Candidate
        if suitable.count == 1 {
            chosen = suitable[0]
        } else if FileDescriptor.standardInput.isTerminal {
            for (number, candidate) in suitable.enumerated() { print("  \(number + 1). \(line(candidate))") }
            TerminalOutput.write("Which host (number or name)? ")
            let answer = readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
            guard let pick = Int(answer).flatMap({ suitable.indices.contains($0 - 1) ? suitable[$0 - 1] : nil })
                    ?? suitable.first(where: { $0.host.advert.hostName == answer || $0.host.instanceName == answer }) else {
                throw InputFile.ReadError("'\(PeerName.echoed(answer))' is none of them")
            }
            chosen = pick
        } else {
            throw InputFile.ReadError("several hosts could \(verb); name one:\n" + suitable.map { "  padgate \(verb) \($0.address)    # \(PeerName.escaped($0.host.advert.hostName))" }.joined(separator: "\n"))
        }
        commandLog.info("found \(PeerName.escaped(chosen.host.advert.hostName)) on the LAN at \(chosen.address)")
        return Target(host: chosen.host.domainName, port: chosen.host.port, addresses: chosen.host.addresses,
                      announcedName: chosen.host.advert.hostName, display: PeerName.escaped(chosen.host.advert.hostName))
    }

    struct Target {
        var host: String
        var port: UInt16
        /// Discovered addresses, dialled in order (empty: resolve `host`).
        var addresses: [SocketAddress]
        var announcedName: String?
        var display: String
        /// The typed form worth remembering as an address (a discovered one changes with DHCP).
        var typedAddress: String? { addresses.isEmpty ? HostAndPort(host: host, port: port).description : nil }

        func connect(identity: TLSIdentity) throws -> TLSConnection {
            try TLSDialer.connect(host: host, port: port, discovered: addresses, named: display, identity: identity)
        }

        /// What `forward` and `probe` give their forwarder: where to go, and what was announced.
        var forwarding: PadForwarder.Configuration {
            var configuration = PadForwarder.Configuration(host: host)
            configuration.port = port
            configuration.discoveredAddresses = addresses
            configuration.announcedName = announcedName
            return configuration
        }
    }
}
