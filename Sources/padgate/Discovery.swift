import Foundation
import HIDCodecs
import HostDiscovery
import MonotonicTime
import PadClient
import PadSystem
import Transport
import WireProtocol

/// The CLI's side of LAN discovery: `hosts --discover`, and `forward` / `pair` without HOST. A
/// discovered host is only ever a place to connect to: `forward` goes to a host whose identity
/// this client pinned, and the TLS handshake checks that identity as for a typed address.
enum Discovery {
    static let defaultBrowseSeconds = 2.0

    /// A host found on the LAN and what it is to this client. `verified`: for a record that
    /// claims an identity this client pinned, whether a TLS handshake at the record's own address
    /// and port showed that identity (a record is a stranger's bytes: copying a fingerprint costs
    /// nothing, answering with its key is what only the host can do); nil when not checked.
    struct Candidate {
        var host: DiscoveredHost
        var standing: KnownHostStore.Standing
        var verified: Bool?
        /// HOST:PORT to type to reach it without discovery.
        var address: String { host.addresses.first.map { HostAndPort(host: $0.host, port: host.port).description } ?? host.domainName }
        /// Paired, and shown to be: the only kind `forward` and `probe` pick.
        var isPaired: Bool { standing == .paired && verified == true }
        /// Where a listing puts it.
        var rank: Int { isPaired ? 0 : standing == .changed ? 1 : standing == .paired ? 2 : 3 }
        /// What `hosts --discover --json` calls it.
        var status: String { standing == .paired && verified != true ? "unverified" : standing.rawValue }
    }

    /// The most records that claim a pinned identity, and of those with a PIN armed, checked by a
    /// handshake per browse (distinct addresses and ports, paired ones first), how many at once,
    /// and the time each has: at most 4 s however many strangers announce.
    static let maxVerified = 64
    static let verifyingAtOnce = 32
    static let verifyTimeout: Duration = .seconds(2)
    /// Records of hosts this client has not paired with shown at most (paired ones always are).
    static let maxStrangersShown = 64

    /// What one browse found, paired hosts first, then how long it browsed.
    static func find(seconds: Double, purpose: Purpose? = nil, identity: TLSIdentity? = nil) throws -> (candidates: [Candidate], known: KnownHostStore) {
        let known = try KnownHostStore(url: PadgatePaths.knownHostsFile)
        let pinnedNames = Set(known.hosts.map(\.name))
        let fingerprints = Set(known.hosts.map(\.fingerprint))
        let preferred: @Sendable (String) -> Bool = { name in
            // "padgate on NAME" (or Avahi's "padgate on NAME #2"): a host this client paired with, resolved first.
            guard name.hasPrefix("padgate on ") else { return false }
            let rest = name.dropFirst("padgate on ".count)
            return pinnedNames.contains(String(rest)) || pinnedNames.contains(String(rest.split(separator: " #").first ?? rest))
        }
        let enough: ([DiscoveredHost]) -> Bool = { hosts in
            switch purpose {
            case .forward: return hosts.contains { fingerprints.contains($0.advert.fingerprint) }
            case .pair: return hosts.contains { $0.advert.pairingOpen }
            case nil: return !hosts.isEmpty
            }
        }
        let hosts = try AvahiBrowser.browse(for: SecondsOption.duration(seconds), preferring: preferred, enough: enough)
        var candidates = hosts.map { host in
            let reachedAs = host.addresses.map { HostAndPort(host: $0.host, port: host.port).description }
            return Candidate(host: host, standing: known.standing(fingerprint: host.advert.fingerprint, name: host.advert.hostName, addresses: reachedAs))
        }
        // Paired first (not first come); what is shown is bounded by `shown`.
        candidates.sort { ($0.standing == .paired ? 0 : 1) < ($1.standing == .paired ? 0 : 1) }
        if let identity {
            verify(&candidates, identity: identity, including: { $0.standing == .paired || (purpose == .pair && $0.standing == .unknown && $0.host.advert.pairingOpen) })
        }
        // Then what matters most to the person: paired (and shown to be), changed, unverified, strangers.
        candidates = candidates.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element)
        return (candidates, known)
    }

    /// Checks the identity each record claims by a TLS handshake at its own addresses and port,
    /// a few at a time within `verifyTimeout` each; records that point at one endpoint are checked once.
    static func verify(_ candidates: inout [Candidate], identity: TLSIdentity, including: (Candidate) -> Bool) {
        struct Endpoint: Hashable { var addresses: [SocketAddress]; var port: UInt16 }
        var endpoints: [Endpoint] = []
        for candidate in candidates where including(candidate) {
            let endpoint = Endpoint(addresses: candidate.host.addresses, port: candidate.host.port)
            if !endpoints.contains(endpoint), endpoints.count < maxVerified { endpoints.append(endpoint) }
        }
        let presented = LockedBox<[Endpoint: String]>([:])
        // Threads of their own, not the CPU-bound pool: each mostly waits on the network.
        let group = DispatchGroup()
        let places = DispatchSemaphore(value: verifyingAtOnce)
        for endpoint in endpoints {
            places.wait()
            group.enter()
            let thread = Thread {
                defer { places.signal(); group.leave() }
                guard let connection = try? TLSDialer.connect(endpoint.addresses, named: endpoint.addresses.first?.description ?? "?", identity: identity,
                                                              timeout: verifyTimeout, within: verifyTimeout),
                      let fingerprint = connection.peerFingerprint else { return }
                presented.update { $0[endpoint] = fingerprint }
            }
            thread.stackSize = 512 << 10
            thread.start()
        }
        group.wait()
        let seen = presented.value
        for index in candidates.indices where including(candidates[index]) {
            let endpoint = Endpoint(addresses: candidates[index].host.addresses, port: candidates[index].host.port)
            candidates[index].verified = seen[endpoint].map { $0 == candidates[index].host.advert.fingerprint } ?? false
        }
    }

    static func list(json: Bool, seconds: Double) throws {
        let state = PadgatePaths.stateDirectory
        let identity = try? TLSIdentity(directory: state.appendingPathComponent("client"), commonName: "padgate client")
        let all = try find(seconds: seconds, identity: identity).candidates
        let found = shown(all)
        let hidden = all.count - found.count
        if json {
            print(JSONValue.array(found.map { candidate in
                let host = candidate.host
                return JSONValue.object([
                    ("name", .string(host.advert.hostName)), ("service", .string(host.instanceName)), ("domainName", .string(host.domainName)),
                    ("addresses", .array(host.addresses.map { .string($0.host) })), ("port", .int(Int64(host.port))),
                    ("fingerprint", .string(host.advert.fingerprint)), ("status", .string(candidate.status)),
                    ("pairing", .bool(host.advert.pairingOpen)), ("protocol", .int(Int64(host.advert.protocolVersion))),
                ])
            }).serialized(pretty: true))
        } else if found.isEmpty {
            print("no padgate host answered within \(SecondsOption.text(seconds)) (is 'padgate serve' running on this LAN, announcing?)")
        } else {
            for candidate in found { print(line(candidate)) }
            if hidden > 0 { print("… and \(hidden) more hosts this client has not paired with (not shown)") }
        }
    }

    /// What a listing shows: every paired host (shown to be), then the others up to a bound,
    /// changed and unverified ones first.
    static func shown(_ candidates: [Candidate]) -> [Candidate] {
        var strangers = 0
        return candidates.filter { candidate in
            guard !candidate.isPaired else { return true }
            strangers += 1
            return strangers <= maxStrangersShown
        }
    }

    static func line(_ candidate: Candidate) -> String {
        let host = candidate.host
        let status: String
        switch candidate.standing {
        case .paired: status = candidate.verified == true ? "paired" : "UNVERIFIED: announces a paired host's identity, which its address did not show"
        case .unknown: status = "not paired"
        case .changed: status = "CHANGED identity: refused until 'padgate hosts forget \(PeerName.escaped(host.advert.hostName))'"
        }
        // Every field is a stranger's bytes: escaped for the terminal.
        return "\(PeerName.escaped(host.advert.hostName))  \(host.addresses.map(\.host).joined(separator: ", ")) port \(host.port)  \(status)"
            + (host.advert.pairingOpen ? "  (PIN armed)" : "") + "  \(host.advert.fingerprint)"
    }

    enum Purpose { case forward, pair }

    /// Hosts a message lists at most (the rest are counted).
    static let maxListed = 8

    /// Where `forward` or `pair` connects: the typed address, else the one suitable host on the
    /// LAN (paired, and shown to be by its identity, for forward; a PIN armed at an endpoint that
    /// shows the identity its record claims, for pair; one host per identity); with several, the
    /// person picks one.
    static func target(_ typed: HostAddress?, for purpose: Purpose, identity: TLSIdentity? = nil) throws -> Target {
        if let typed { return Target(host: typed.host, port: typed.port, addresses: [], announcedName: nil, display: typed.description) }
        let started = MonotonicInstant.now
        let identity = try identity ?? TLSIdentity(directory: PadgatePaths.stateDirectory.appendingPathComponent("client"), commonName: "padgate client")
        let (found, known) = try find(seconds: defaultBrowseSeconds, purpose: purpose, identity: identity)
        let browsed = MonotonicInstant.now - started
        var suitable = found.filter { purpose == .forward ? $0.isPaired : $0.host.advert.pairingOpen && $0.standing != .changed && $0.verified == true }
        // Several records of one identity are one host (both address families, a copied record that
        // points at the host itself).
        var identities: Set<String> = []
        suitable = suitable.filter { identities.insert($0.host.advert.fingerprint).inserted }
        let verb = purpose == .forward ? "forward" : "pair"
        guard !suitable.isEmpty else {
            let want = purpose == .forward ? "no paired padgate host" : "no padgate host with a pairing PIN armed ('padgate serve --pair' or 'padgate host pair')"
            // True to the clock: the browse waits its whole window unless the daemon's every answer was in.
            let within = browsed >= SecondsOption.duration(defaultBrowseSeconds)
                ? "within \(SecondsOption.text(defaultBrowseSeconds))" : "(every answer avahi-daemon had, in \(LinkReport.milliseconds(browsed)))"
            let listed = found.prefix(maxListed).map { "  " + line($0) }.joined(separator: "\n")
            let more = found.count > maxListed ? "\n  … and \(found.count - maxListed) more" : ""
            let seen = found.isEmpty ? " (none answered at all)" : ":\n" + listed + more
            let next: String
            if purpose == .pair {
                next = "give HOST"
            } else if known.hosts.isEmpty {
                next = "pair with one first ('padgate pair HOST'), or give HOST"
            } else {
                let names = known.hosts.prefix(maxListed).map { PeerName.escaped($0.addresses.first ?? $0.name) }.joined(separator: ", ")
                next = "none of the hosts this client paired with (\(names)) answered showing its identity; give HOST"
            }
            throw InputFile.ReadError("\(want) answered on the LAN \(within)\(seen)\n\(next)")
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
            throw InputFile.ReadError("several hosts could \(verb); name one:\n" + suitable.prefix(maxListed).map { "  padgate \(verb) \($0.address)    # \(PeerName.escaped($0.host.advert.hostName))" }.joined(separator: "\n")
                                      + (suitable.count > maxListed ? "\n  … and \(suitable.count - maxListed) more" : ""))
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

        func connect(identity: TLSIdentity, within: Duration = TLSDialer.connectTimeout) throws -> TLSConnection {
            try TLSDialer.connect(host: host, port: port, discovered: addresses, named: display, identity: identity, within: within)
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
