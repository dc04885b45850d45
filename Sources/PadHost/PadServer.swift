import Foundation
import Logging
import PadDevices
import PadFamilies
import PadSystem
import Transport
import WireProtocol

/// `padgate serve`: accepts clients over TLS, receives their pads' datagrams, drives virtual pads,
/// and sends the games' feedback back.
///
/// Two loops on two threads (docs/security.md, "Structure"): the input path (`InputPath`: datagram
/// → session → virtual pad, leases, feedback) never touches a TCP peer, and the control plane
/// (`ControlPlane`: accept, TLS handshakes, hello, pairing, watching established connections) never
/// touches a pad. A connection that stalls costs its own thread a deadline, never the input a wait.
///
/// Sendable: it is configured (`logger`, `heartbeat`, observers) before `run`; while it runs, what
/// other threads read or call (`statistics`, `pairing`, `port`, the stop condition) is immutable
/// or behind the loops' locks and mailboxes.
/// A server configuration that cannot be served; the message names the option to change.
public enum ConfigurationError: Error, CustomStringConvertible, Equatable {
    case maxPadsOutOfRange(Int, allowed: ClosedRange<Int>)
    public var description: String {
        switch self {
        case .maxPadsOutOfRange(let value, let allowed): "--max-pads must be within \(allowed) (it was \(value))"
        }
    }
}

public final class PadServer: @unchecked Sendable {
    /// Every limit the host enforces, in one place (docs/security.md, "Limits").
    public struct Limits: Sendable {
        /// Clients with a session at once (`--max-clients`).
        public var maxClients = 8
        /// Pads one client may forward (`--max-pads`).
        public var maxPadsPerClient = 4
        /// Connections still in their handshake or hello at once, and from one address
        /// (like OpenSSH's MaxStartups): beyond them, a new connection is closed at once.
        public var maxPendingConnections = 32
        public var maxPendingPerAddress = 4
        /// TLS handshakes started per second, overall and per address (bursts allowed): what bounds
        /// the CPU strangers can make the host spend, since each costs a few hundred microseconds
        /// of elliptic-curve work before the host knows who is asking.
        public var handshakesPerSecond = 64
        public var handshakesPerSecondPerAddress = 4
        /// TLS handshake plus the first frame (OpenSSH's LoginGraceTime).
        public var handshakeTimeout: Duration = .seconds(5)
        /// A session whose client sent no authentic datagram for this long is closed. The client
        /// pings every second, so only a dead or frozen client reaches it.
        public var sessionIdleTimeout: Duration = .seconds(30)
        /// Datagrams the input path reads per wake-up before it looks at its timers again, so that
        /// a flood cannot starve the lease watchdog.
        public var datagramsPerWake = 64
        /// What one session may send: twice what its most pads at full rate send (SessionBudget).
        public var sessionBudget: SessionBudget.Limits {
            SessionBudget.Limits.forPads(maxPadsPerClient, bytesPerDatagram: OutgoingPayloads.payloadCapacity)
        }
        public static let maxPadsPerClientRange = 1...Int(ControlMessage.maxPadsRange.upperBound)
        public init() {}
    }

    public struct Configuration {
        /// `::` is both families (dual-stack); where the kernel has no IPv6, the host falls back
        /// to IPv4 alone (`0.0.0.0`).
        public var address = PadServer.everyAddress
        public var port: UInt16 = PadServer.defaultPort
        public var limits = Limits()
        public var stateLease: Duration = .milliseconds(1000)
        /// How long a stalled client's pad (every control released) stays before it is unplugged.
        public var padGrace: Duration = ClientPads.minimumPadGrace
        /// Off by default: any client that can reach the port could then type on this machine's pads.
        public var acceptUnpairedClients = false
        public init() {}
    }

    public static let defaultPort: UInt16 = 47800
    /// Listen on every address of both families.
    public static let everyAddress = "::"

    /// What the host has done, for tests, benchmarks and the status line. Read at any time.
    public struct Statistics: Equatable, Sendable {
        public var sessions = 0
        public var pendingConnections = 0
        public var acceptedConnections = 0
        /// Connections closed before a session: by the limits, a failed or slow handshake, a bad frame.
        public var refusedConnections: [String: Int] = [:]
        public var acceptBackoffs = 0
        public var datagramsRejected: [DatagramRejection: Int] = [:]
        /// Authentic datagrams dropped over their session's budget, every session (SessionBudget).
        public var datagramsOverBudget = 0
        public var wire = WireCodec.Counters()
        public var leaseExpiries = 0
        public var graceRemovals = 0
        public var idleSessionsClosed = 0
    }

    public let configuration: Configuration
    public let identity: TLSIdentity
    let listener: TLSListener
    let udp: Socket
    let paired: LockedStore
    let input: InputPath
    let control: ControlPlane
    let shared = SharedStatistics()
    /// The host's logger; the input path and control plane log through it, with their own metadata.
    public var logger = Logger(label: "padgate.host") {
        didSet { input.logger = logger; control.logger = logger }
    }

    public var port: UInt16 { listener.port }
    public var statistics: Statistics { shared.snapshot }

    public init(configuration: Configuration, identity: TLSIdentity, pairedClients: FingerprintStore, makePad: @escaping VirtualPadFactory) throws {
        guard Limits.maxPadsPerClientRange.contains(configuration.limits.maxPadsPerClient) else {
            throw ConfigurationError.maxPadsOutOfRange(configuration.limits.maxPadsPerClient, allowed: Limits.maxPadsPerClientRange)
        }
        self.configuration = configuration
        self.identity = identity
        paired = LockedStore(pairedClients)
        (listener, udp) = try Self.bind(configuration, identity: identity)
        input = InputPath(configuration: configuration, udp: udp, makePad: makePad, statistics: shared)
        control = ControlPlane(configuration: configuration, identity: identity, listener: listener, paired: paired,
                               input: input, statistics: shared)
        input.closeConnection = { [control] session, why in control.mailbox.post(.close(session: session, why: why)) }
        input.logger = logger
        control.logger = logger
    }

    /// How often `--port 0` picks another port whose UDP twin was taken.
    static let portZeroAttempts = 8

    /// The TCP listener and the UDP socket on one port. The default, `::`, falls back to IPv4
    /// alone on a kernel without IPv6 (booted with ipv6.disable=1, or built without it).
    static func bind(_ configuration: Configuration, identity: TLSIdentity) throws -> (TLSListener, Socket) {
        func both(_ address: String) throws -> (TLSListener, Socket) {
            // Port 0: the kernel picks a free TCP port, and the UDP port of that number may be
            // another program's (a client's ephemeral socket): pick again, a few times.
            var attempt = 0
            while true {
                let listener = try TLSListener(identity: identity, address: address, port: configuration.port)
                let udp: Socket
                do {
                    udp = try DatagramLink.bindSocket(address: address, port: listener.port)
                } catch {
                    attempt += 1
                    if configuration.port == 0, attempt <= Self.portZeroAttempts, case .cannotBind(_, let code) = error, code == .addressInUse { continue }
                    throw error
                }
                return (listener, udp)
            }
        }
        guard configuration.address == everyAddress else { return try both(configuration.address) }
        do {
            return try both(everyAddress)
        } catch NetworkError.cannotListen(_, let code) where code == .addressFamilyNotSupported || code == .addressNotAvailable {
            return try both("0.0.0.0")
        }
    }

    /// Where the host listens (`[::]:47800`, or `0.0.0.0:47800` without IPv6).
    public var listeningAddress: SocketAddress? { listener.localAddress }

    /// Turns pairing on: a PIN (given, or drawn) that `onPIN` shows each time it changes.
    public func enablePairing(pin: String? = nil, policy: PairingGate.Policy = PairingGate.Policy(),
                              onPIN: @escaping (String, PairingGate.Rotation) -> Void) {
        standingPairing.update { $0 = (policy, onPIN) }
        control.gate = PairingGate(policy: policy, pin: pin, makePIN: Pairing.newPIN, onNewPIN: onPIN)
    }

    /// `serve --pair`'s own pairing (its policy and where its PINs are shown), kept so that it
    /// comes back, with a new PIN shown as `resumed`, after a `padgate host pair` that replaced it.
    let standingPairing = LockedBox<(policy: PairingGate.Policy, onPIN: (String, PairingGate.Rotation) -> Void)?>(nil)

    /// Arms `serve --pair`'s pairing again with a fresh PIN, or closes pairing when the host was
    /// started without it. The gate now armed, if any.
    @discardableResult
    func resumeStandingPairing() -> PairingGate? {
        guard let standing = standingPairing.value else {
            control.gate = nil
            return nil
        }
        let gate = PairingGate(policy: standing.policy, makePIN: Pairing.newPIN) { pin, why in standing.onPIN(pin, why == .first ? .resumed : why) }
        control.gate = gate
        return gate
    }

    public var pairing: PairingGate? { control.gate }

    /// Told whether a pairing PIN is armed, each time that changes (from any thread).
    public var onPairingChanged: ((Bool) -> Void)? {
        get { control.observers.pairingChanged }
        set { control.observers.pairingChanged = newValue }
    }

    /// Called once per pass of the input loop (at least every `tick`): the service watchdog's
    /// ping goes here, so a wedged input loop is what stops it. Set before `run`.
    public var heartbeat: (() -> Void)? {
        get { input.heartbeat }
        set { input.heartbeat = newValue }
    }

    /// Serves until `stop` says so (checked at least every `tick`). The control plane runs on a
    /// thread of its own meanwhile; both are finished when this returns.
    public func run(tick: Duration = .milliseconds(250), until stop: () -> Bool) {
        let controlThread = Thread { [control] in control.run() }
        controlThread.stackSize = 1 << 20
        controlThread.start()
        input.run(tick: tick, until: stop)
        control.stop()
        input.closeAll(why: "server stopping")
    }
}

/// The paired-clients store, read by hello on one thread and written by pairing on another.
final class LockedStore: @unchecked Sendable {
    private let lock = NSLock()
    private var store: FingerprintStore
    init(_ store: FingerprintStore) { self.store = store }
    func contains(fingerprint: String) -> Bool { lock.withLock { store.contains(fingerprint: fingerprint) } }
    /// Two machines may share a name: the second is stored under the name and its fingerprint's
    /// start, so pairing one never unpairs the other.
    /// Returns the name it was stored under.
    @discardableResult
    func remember(_ name: PeerName, fingerprint: String) throws -> String {
        try lock.withLock {
            var key = name.raw
            if let existing = store.fingerprint(for: key), existing != fingerprint { key += " " + fingerprint.prefix(11) }
            try store.remember(key, fingerprint: fingerprint)
            return key
        }
    }

    var entries: [String: String] { lock.withLock { store.entries } }

    /// The name a paired client is stored under, found by its certificate's fingerprint.
    func name(for fingerprint: String) -> String? { lock.withLock { store.entries.first { $0.value == fingerprint }?.key } }

    /// Forgets the client named `nameOrFingerprint` (or holding that fingerprint); its entry, or nil.
    func forget(_ nameOrFingerprint: String) throws -> (name: String, fingerprint: String)? {
        try lock.withLock {
            guard let entry = store.entries.first(where: { $0.key == nameOrFingerprint })
                    ?? store.entries.first(where: { $0.value == nameOrFingerprint }) else { return nil }
            try store.forget(entry.key)
            return (entry.key, entry.value)
        }
    }
}

/// Statistics both loops publish into; a lock, taken once per loop pass at most.
final class SharedStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var value = PadServer.Statistics()
    var snapshot: PadServer.Statistics { lock.withLock { value } }
    func update(_ body: (inout PadServer.Statistics) -> Void) { lock.withLock { body(&value) } }
    func refuse(_ reason: String) { update { $0.refusedConnections[reason, default: 0] += 1 } }
}
