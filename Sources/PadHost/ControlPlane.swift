import Foundation
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import Transport
import WireProtocol

/// The host's TCP side: accepts connections, and gives each one a thread of its own for the steps
/// that wait on the peer (TLS handshake, hello, pairing), all under deadlines and within the
/// limits; watches established sessions' connections for their end. It never touches a pad: a
/// session it admits goes to the input path through that path's mailbox.
///
/// Sendable: the connection threads share `shared` (behind `lock`), the gate (a `LockedBox`), the
/// statistics and the mailboxes, all synchronised; `established` and `throttle` are the control
/// thread's alone; `observers` and `logger` are set before `run`.
final class ControlPlane: @unchecked Sendable {
    enum Command {
        /// A connection through hello: watch it until it closes.
        case established(session: UInt32, connection: TLSConnection)
        /// The input path closed the session (idle): drop its connection.
        case close(session: UInt32, why: String)
    }

    let configuration: PadServer.Configuration
    let identity: TLSIdentity
    let listener: TLSListener
    let paired: LockedStore
    let input: InputPath
    let statistics: SharedStatistics
    let mailbox = Mailbox<Command>()

    /// Who is told what happens here; set before `run`.
    struct Observers {
        /// Whether a PIN is armed, each time that changes (the LAN announcement says so).
        var pairingChanged: ((Bool) -> Void)?
        /// Each client that paired: its stored name and fingerprint, and the gate whose PIN it used.
        var paired: ((String, String, PairingGate) -> Void)?
        /// Each session's client fingerprint as the session starts.
        var sessionStarted: ((String) -> Void)?
    }
    var observers = Observers()

    /// Set by `enablePairing` before `run`, or by the host's control socket while it runs.
    var gate: PairingGate? {
        get { storedGate.value }
        set {
            storedGate.update { $0 = newValue }
            observers.pairingChanged?(newValue != nil)
        }
    }
    private let storedGate = LockedBox<PairingGate?>(nil)
    var logger = Logger(label: "padgate.host.control") {
        didSet { peers = Self.rateLimited(logger) }
    }
    /// For what peers do: a few lines per reason (`limit` metadata) per window.
    private var peers = ControlPlane.rateLimited(Logger(label: "padgate.host.control"))

    static func rateLimited(_ logger: Logger) -> Logger {
        var limited = logger
        limited.handler = RateLimitedLogHandler(wrapping: logger.handler)
        return limited
    }

    /// A line about what a peer did, limited per reason.
    func note(_ reason: String, _ message: Logger.Message) {
        peers.warning(message, metadata: [RateLimitedLogHandler.reasonKey: "\(reason)"])
    }

    /// A connection in its handshake, with its own duplicate of the socket: cutting it off
    /// (`shutdown` on the duplicate) can never hit a descriptor its thread already closed and the
    /// kernel gave to someone else. Out of descriptors there is no duplicate: the connection is
    /// still served, and sits out its deadline if it must be cut off.
    private struct Pending { let address: String; let cutOff: OwnedDescriptor?; let since: MonotonicInstant; var evicted = false }
    /// What the connection threads share with the control thread, behind `lock`.
    private struct Shared {
        var pending: [Int: Pending] = [:]
        var nextPendingID = 0
        var sessionIDs: Set<UInt32> = []
        var stopping = false
    }
    private let lock = NSLock()
    private var shared = Shared()
    private let finished = DispatchSemaphore(value: 0)

    /// Only the control thread touches these.
    private var established: [UInt32: TLSConnection] = [:]
    private var throttle: AcceptThrottle
    /// Accepts per wake-up, so a connection flood cannot keep this loop from its other work.
    static let acceptsPerWake = 32

    init(configuration: PadServer.Configuration, identity: TLSIdentity, listener: TLSListener, paired: LockedStore,
         input: InputPath, statistics: SharedStatistics) {
        self.configuration = configuration
        self.identity = identity
        self.listener = listener
        self.paired = paired
        self.input = input
        self.statistics = statistics
        throttle = AcceptThrottle(limits: configuration.limits, now: .now)
    }

    var limits: PadServer.Limits { configuration.limits }

    /// The control plane and its connection threads run below the input path: a flood of TLS
    /// handshakes (each a few hundred microseconds of elliptic-curve work) must yield the CPU to
    /// the paired clients' input, which needs microseconds per report.
    static func yieldToInput() { ThreadPriority.setNiceness(ThreadPriority.peerWork) }

    enum ControlWake { case mailbox, listener, connection(UInt32) }

    func run() {
        Self.yieldToInput()
        var pollSet = PollSet<ControlWake>()
        var readyConnections: [UInt32] = []
        while !lock.withLock({ shared.stopping }) {
            let now = MonotonicInstant.now
            let paused = throttle.isPaused(now: now)
            pollSet.removeAll()  // keeps its storage: the set changes with every session
            pollSet.add(mailbox.descriptor, .mailbox)
            if !paused { pollSet.add(listener.descriptor, .listener) }
            for (id, connection) in established { pollSet.add(connection.descriptor, .connection(id)) }
            var deadline = now + .seconds(1)
            if let until = throttle.pausedUntil { deadline = min(deadline, until) }
            if let gate { deadline = min(deadline, gate.nextExpiry) }
            var commands = false, accepting = false
            readyConnections.removeAll(keepingCapacity: true)
            pollSet.wait(timeout: max(deadline - now, .zero)) { wake, _ in
                switch wake {
                case .mailbox: commands = true
                case .listener: accepting = true
                case .connection(let id): readyConnections.append(id)
                }
            }
            if commands { mailbox.drain(perform) }
            if accepting { acceptConnections() }
            for id in readyConnections {
                guard let connection = established[id] else { continue }
                switch connection.checkIncoming() {
                case .nothing: continue
                case .closed: endSession(id, why: "closed the connection")
                case .data: endSession(id, why: "sent control data after hello (not padgate's protocol); disconnected")
                }
            }
            gate?.tick(now: .now)
        }
        shutDown()
        finished.signal()
    }

    /// Ends `run` and waits for it, and for every connection thread: their peers are cut off so
    /// that none sits out its deadline.
    func stop() {
        lock.withLock { shared.stopping = true }
        mailbox.wakeOnly()
        finished.wait()
        let deadline = MonotonicInstant.now + .seconds(3)
        while MonotonicInstant.now < deadline {
            let busy: Bool = lock.withLock {
                for entry in shared.pending.values { entry.cutOff?.descriptor.shutdownSocket() }
                return !shared.pending.isEmpty
            }
            if !busy { break }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    private func shutDown() {
        mailbox.drain(perform)
        for id in Array(established.keys) { endSession(id, why: "server stopping") }
    }

    func perform(_ command: Command) {
        switch command {
        case .established(let id, let connection):
            established[id] = connection
        case .close(let id, let why):
            if established.removeValue(forKey: id) != nil { logger.info("closed the connection of an idle session (\(why))") }
            _ = lock.withLock { shared.sessionIDs.remove(id) }
        }
    }

    func endSession(_ id: UInt32, why: String) {
        established[id] = nil
        _ = lock.withLock { shared.sessionIDs.remove(id) }
        input.mailbox.post(.remove(session: id, why: why))
    }

    // MARK: Accepting

    func acceptConnections() {
        for _ in 0..<Self.acceptsPerWake {
            guard throttle.mayAccept(now: .now) else {
                statistics.update { $0.acceptBackoffs += 1 }
                return
            }
            switch listener.acceptTCP() {
            case .nothing:
                return
            case .accepted(let pending):
                throttle.accepted()
                admit(pending)
            case .outOfResources(let why):
                // Not accepting for a while: the kernel keeps the backlog, and the loop does not spin.
                let pause = throttle.outOfResources(now: .now)
                statistics.update { $0.acceptBackoffs += 1 }
                note("accept", "cannot accept connections (\(why)): pausing accepts for \(pause)")
                return
            case .failed(let why):
                note("accept", "accept failed: \(why)")
                return
            }
        }
    }

    /// Within the limits, a thread of its own for the connection's handshake. Beyond the limit per
    /// address it is closed at once. When all pending places are taken, the oldest connection of the
    /// address holding the most makes room, if that address holds more than the newcomer's: idle
    /// connections from a few addresses cannot keep every new client out (OpenSSH's MaxStartups problem).
    func admit(_ connection: PendingTCP) {
        let address = connection.peerHost
        let now = MonotonicInstant.now
        guard throttle.takeHandshake(from: address, now: now) else {
            connection.drop()
            statistics.refuse("handshake rate")
            note("rate", "refused a connection from \(address): more TLS handshakes than this host starts per second")
            return
        }
        let id: Int? = lock.withLock {
            let live = shared.pending.filter { !$0.value.evicted }
            let fromAddress = live.values.filter { $0.address == address }.count
            guard !shared.stopping, fromAddress < limits.maxPendingPerAddress else { return nil }
            if live.count >= limits.maxPendingConnections {
                // The oldest connection of the addresses that hold the most (ties: the oldest of all of them).
                let counts = Dictionary(grouping: live, by: { $0.value.address }).mapValues(\.count)
                guard let held = counts.values.max(), held > fromAddress + 1,
                      let victim = live.filter({ counts[$0.value.address] == held }).min(by: { $0.value.since < $1.value.since }) else { return nil }
                shared.pending[victim.key]?.evicted = true
                victim.value.cutOff?.descriptor.shutdownSocket()
                statistics.refuse("evicted for a newer address")
            }
            shared.nextPendingID += 1
            shared.pending[shared.nextPendingID] = Pending(address: address, cutOff: try? connection.cutOffHandle(), since: now)
            return shared.nextPendingID
        }
        guard let id else {
            connection.drop()
            statistics.refuse("too many pending connections")
            note("pending", "refused a connection from \(address): too many connections still in their handshake")
            return
        }
        statistics.update { $0.acceptedConnections += 1; $0.pendingConnections += 1 }
        let thread = Thread { [self] in
            Self.yieldToInput()
            serve(connection)
            lock.withLock { if let entry = shared.pending.removeValue(forKey: id) { entry.cutOff?.close() } }
            statistics.update { $0.pendingConnections -= 1 }
        }
        thread.stackSize = 512 << 10
        thread.start()
    }

    // MARK: One connection, on its own thread

    func serve(_ pending: PendingTCP) {
        let address = pending.peerHost
        let deadline = MonotonicInstant.now + limits.handshakeTimeout
        let connection: TLSConnection
        do {
            connection = try listener.handshake(pending, deadline: deadline)
        } catch {
            if case TLSError.timedOut = error { statistics.refuse("handshake timed out") } else { statistics.refuse("handshake failed") }
            note("handshake", "TLS handshake with \(address) failed: \(error)")
            return
        }
        do {
            switch try ControlMessage(decoding: connection.receive(deadline: deadline)) {
            case .hello(let version, let name):
                try hello(connection, version: version, name: name)
            case .pairStart(let share, let name):
                pair(connection, share: share, name: name)
            default:
                refuse(connection, "expected hello", counted: "unexpected first frame")
            }
        } catch let error as ControlMessage.DecodingError {
            refuse(connection, "malformed control frame: \(error)", counted: "malformed control frame")
        } catch TLSError.closed {
            // What a client checking this host's identity does (`hosts --discover`, host-less
            // `forward`): the handshake, then goodbye. Counted; not worth a warning.
            statistics.refuse("closed after the handshake")
            logger.debug("\(address) closed the connection after the TLS handshake")
        } catch TLSError.timedOut {
            statistics.refuse("no hello in time")
            note("hello", "\(address) sent no hello within \(limits.handshakeTimeout); disconnected")
        } catch {
            statistics.refuse("connection failed")
            note("hello", "connection from \(address) failed: \(error)")
        }
    }

    func refuse(_ connection: TLSConnection, _ reason: String, counted: String) {
        statistics.refuse(counted)
        try? connection.send(ControlMessage.refused(reason: reason).encoded(), deadline: .now + .seconds(1))
        note(counted, "refused \(connection.peerAddress): \(reason)")
    }

    func hello(_ connection: TLSConnection, version: UInt8, name: PeerName) throws {
        guard version == ControlMessage.protocolVersion else {
            return refuse(connection, "protocol version \(version) is not supported; update padgate", counted: "protocol version")
        }
        if !configuration.acceptUnpairedClients {
            guard let fingerprint = connection.peerFingerprint, paired.contains(fingerprint: fingerprint) else {
                let reason = TLSError.notPaired(fingerprint: connection.peerFingerprint ?? "a client without a certificate").description
                return refuse(connection, reason, counted: "not paired")
            }
        }
        let keys = try ControlMessage.datagramKeys(connection)
        let id: UInt32? = lock.withLock {
            guard !shared.stopping, shared.sessionIDs.count < limits.maxClients else { return nil }
            var id: UInt32 = 0
            while id == 0 || shared.sessionIDs.contains(id) { id = UInt32.random(in: 1...UInt32.max) }
            shared.sessionIDs.insert(id)
            return id
        }
        guard let id else {
            return refuse(connection, "this host serves at most \(limits.maxClients) clients at once (serve --max-clients)", counted: "too many clients")
        }
        let pairedName = connection.peerFingerprint.flatMap(paired.name(for:))
        let session = try input.makeSession(id: id, name: name, pairedName: pairedName, fingerprint: connection.peerFingerprint ?? "",
                                            address: connection.peerAddress, keys: keys)
        session.fingerprint = connection.peerFingerprint ?? ""
        session.pads.clientIdentity = FeatureReportBytes(Array(session.fingerprint.utf8.prefix(FeatureReportBytes.capacity))) ?? .init()
        input.mailbox.post(.add(session))
        do {
            try connection.send(ControlMessage.welcome(session: id, udpPort: listener.port,
                                                       leaseMillis: UInt16(configuration.stateLease / .milliseconds(1)),
                                                       maxPads: UInt8(limits.maxPadsPerClient)).encoded())
        } catch {
            _ = lock.withLock { shared.sessionIDs.remove(id) }
            input.mailbox.post(.remove(session: id, why: "did not take its welcome (\(error))"))
            return
        }
        mailbox.post(.established(session: id, connection: connection))
        observers.sessionStarted?(session.fingerprint)
    }

    func pair(_ connection: TLSConnection, share: [UInt8], name: PeerName) {
        guard let gate else {
            return refuse(connection, "pairing is not enabled on this host: start it with 'padgate serve --pair'", counted: "pairing off")
        }
        guard let fingerprint = connection.peerFingerprint else {
            // Refused before the PIN is involved: such requests neither spend nor replace it.
            return refuse(connection, "a pairing client must present its certificate", counted: "pairing without certificate")
        }
        let address = connection.peerHost
        let ticket: PairingGate.Ticket
        switch gate.admit(address: address, now: .now) {
        case .failure(let refusal): return refuse(connection, refusal.description, counted: "pairing rate-limited")
        case .success(let admitted): ticket = admitted
        }
        var settled = false
        var stored = ""
        do {
            // The client is stored before it hears "paired": it reconnects at once, and must be
            // known by then.
            try Pairing.pairAsHost(connection, hostIdentity: identity, pin: ticket.pin, clientShare: share,
                                   deadline: .now + Pairing.exchangeTimeout) { () -> String? in
                settled = true
                guard gate.succeed(ticket, now: .now) else {
                    return "the PIN was used or replaced meanwhile: try again with the PIN the host shows now"
                }
                do { stored = try paired.remember(name, fingerprint: fingerprint) } catch {
                    return "the host could not store the pairing (\(error)); try again once it can"
                }
                return nil
            }
            logger.notice("paired with \(name) (\(fingerprint)) from \(address)")
            observers.paired?(stored, fingerprint, gate)
        } catch {
            if !settled { gate.fail(ticket, now: .now) }
            note("pairing", "pairing from \(address) failed: \(error)")
        }
    }
}
