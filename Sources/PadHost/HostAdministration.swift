import Foundation
import Logging
import MonotonicTime
import PadFamilies
import PadSystem
import Transport
import WireProtocol

/// The running host's local control socket (`padgate host pair|clients|revoke|status`): one JSON
/// request a connection, one JSON reply (for `pair`, a second when the PIN was used or expired).
/// Peers are told apart by their kernel credentials alone (docs/service.md, "Managing a running
/// host"): root, the host's own user, or a member of its admin group; anyone else is refused
/// before a byte is read. Runs on its own thread and reaches the input path only through its
/// mailbox, so an administrator never delays a client's input.
public final class HostAdministration: @unchecked Sendable {
    /// Who may manage the host, besides root.
    public struct Access: Sendable {
        public var uid: uid_t
        public var adminGroup: gid_t?
        public init(uid: uid_t, adminGroup: gid_t?) { self.uid = uid; self.adminGroup = adminGroup }

        func allows(_ peer: PeerCredentials) -> Bool {
            peer.uid == 0 || peer.uid == uid || adminGroup.map { peer.groups.contains($0) } == true
        }
    }

    /// What a request may take, and how long a peer may take to send it.
    public static let maxRequestBytes = 4096
    public static let requestDeadline: Duration = .seconds(2)
    public static let socketName = "control.sock"
    /// Connections still sending their request, at once and per uid (docs/service.md): beyond the
    /// per-uid limit the uid's oldest makes room; beyond the overall one, the oldest of the uid
    /// that holds the most, if it holds more than the newcomer's. Idle connections cannot keep an
    /// administrator out, and one uid cannot crowd out the others.
    public static let maxConnections = 32
    public static let maxConnectionsPerUID = 8
    /// Accepts per wake-up, so that a flood of connections cannot keep the loop from its deadlines.
    static let acceptsPerWake = 16

    private let server: PadServer
    private let listener: OwnedDescriptor
    /// Held until the host ends: the socket is this host's alone.
    private let claim: RuntimeDirectoryClaim
    public let path: String
    private let access: Access
    private let activity: ClientActivity
    private let started = MonotonicInstant.now
    private let startedAt = Date()
    private let wake = WakePipe()
    private let lock = NSLock()
    private var stopping = false
    /// The `host pair` whose PIN is armed, if any: at most one, since one PIN is armed at a time
    /// (docs/service.md, "Pairing from the control socket"). Under `lock`.
    private var requester: Requester?
    private var requesters = 0
    private let finished = DispatchSemaphore(value: 0)
    public var logger = Logger(label: "padgate.host.admin") {
        didSet { peers = ControlPlane.rateLimited(logger) }
    }
    /// For what local peers do (refusals, evictions, accept failures): a few lines per reason per
    /// window, with a count of the rest, as on the network side.
    private var peers = ControlPlane.rateLimited(Logger(label: "padgate.host.admin"))

    /// A connection still sending its request; only the loop's thread touches these.
    private final class Reading {
        let connection: OwnedDescriptor
        let peer: PeerCredentials
        let since: MonotonicInstant
        var received: [UInt8] = []
        init(_ connection: OwnedDescriptor, _ peer: PeerCredentials, since: MonotonicInstant) {
            self.connection = connection; self.peer = peer; self.since = since
        }
    }
    private var reading: [Int: Reading] = [:]
    private var nextReading = 0
    /// When accepting may go on: the same pause after running out of descriptors as the network side.
    private var throttle: AcceptThrottle

    /// A `host pair` waiting for its PIN to be used: its connection, who it is, its own gate.
    private struct Requester { let id: Int; let connection: OwnedDescriptor; let who: String; let gate: PairingGate }

    /// Listens at `<directory>/control.sock` of the directory this host claimed (no other host
    /// runs there, so a socket file found there is stale and replaced). `activity`: where
    /// paired-at and last-seen are kept.
    public init(server: PadServer, claim: RuntimeDirectoryClaim, access: Access, activityFile: URL) throws {
        self.server = server
        self.access = access
        self.claim = claim
        path = claim.directory.appendingPathComponent(Self.socketName).path
        // The kernel's credentials decide, so the socket itself may be reached by anyone who can
        // reach the directory (systemd's RuntimeDirectoryMode narrows that further).
        listener = try LocalSocket.listening(at: path, mode: 0o666)
        activity = ClientActivity(file: activityFile)
        throttle = AcceptThrottle(limits: server.configuration.limits, now: .now)
        server.control.observers.paired = { [weak self] name, fingerprint, gate in self?.paired(name: name, fingerprint: fingerprint, gate: gate) }
        server.control.observers.sessionStarted = { [activity] fingerprint in activity.seen(fingerprint) }
    }

    public func start() {
        let thread = Thread { [self] in serve(); finished.signal() }
        thread.name = "padgate control socket"
        thread.start()
    }

    public func stop() {
        lock.withLock { stopping = true }
        wake.wake()
        finished.wait()
        unlink(path)
    }

    // MARK: the loop

    enum Wake { case wake, listener, reading(Int), requester(Int) }

    /// One poll(2) over the listener, every connection still sending its request and the waiting
    /// `host pair`: no peer waits on another, and none can hold the loop (each has its deadline).
    private func serve() {
        var pollSet = PollSet<Wake>()
        var readyReads: [Int] = []
        while !lock.withLock({ stopping }) {
            let now = MonotonicInstant.now
            let paused = throttle.isPaused(now: now)
            // The waiting `host pair` is watched too: its hanging up (Ctrl-C, a kill) disarms its PIN.
            let waiting = lock.withLock { requester.map { ($0.id, $0.connection) } }
            pollSet.removeAll()
            pollSet.add(wake.descriptor, .wake)
            if !paused { pollSet.add(listener.descriptor, .listener) }
            for (id, entry) in reading { pollSet.add(entry.connection.descriptor, .reading(id)) }
            if let waiting { pollSet.add(waiting.1.descriptor, .requester(waiting.0)) }
            var deadline = now + .seconds(1)
            if let oldest = reading.values.map(\.since).min() { deadline = min(deadline, oldest + Self.requestDeadline) }
            if let until = throttle.pausedUntil { deadline = min(deadline, until) }
            var accepting = false, hungUp: Int?
            readyReads.removeAll(keepingCapacity: true)
            pollSet.wait(timeout: max(deadline - now, .zero)) { wake, _ in
                switch wake {
                case .wake: break
                case .listener: accepting = true
                case .reading(let id): readyReads.append(id)
                case .requester(let id): hungUp = id
                }
            }
            wake.drain()
            if let hungUp, let waiting, waiting.0 == hungUp { requesterHungUp(waiting.0, waiting.1) }
            for id in readyReads { readMore(id) }
            expireReading(now: .now)
            if accepting { acceptConnections() }
        }
        for entry in reading.values { reply(entry.connection, HostControl.Failure("the host is stopping")) }
        reading = [:]
        lock.withLock {
            if let waiting = requester { reply(waiting.connection, HostControl.Failure("the host is stopping")) }
            requester = nil
        }
    }

    private func acceptConnections() {
        for _ in 0..<Self.acceptsPerWake {
            let accepted: (OwnedDescriptor, PeerCredentials)?
            do {
                accepted = try LocalSocket.accept(listener)
            } catch where error.errno.isResourceShortage {
                // As the network side does: leave the backlog to the kernel for a while, not spin on it.
                let pause = throttle.outOfResources(now: .now)
                note("control accept", "control socket: cannot accept (\(error.errno)): pausing its accepts for \(pause)")
                return
            } catch {
                note("control accept", "control socket: accept failed: \(error)")
                return
            }
            guard let (connection, peer) = accepted else { return }
            throttle.accepted()
            guard access.allows(peer) else {
                // Answered without reading: a local stream socket keeps the reply for the peer to
                // read even when its request stays unread, and reading would let it make us wait.
                note("control uid \(peer.uid)", "control socket: refused uid \(peer.uid) (pid \(peer.pid))")
                reply(connection, HostControl.Failure("permission denied: uid \(peer.uid) may not manage this host (root, the host's user or its admin group may)"))
                continue
            }
            admit(connection, peer)
        }
    }

    /// A place among the connections still sending their request, made by the per-uid and
    /// overall limits (see `maxConnections`).
    private func admit(_ connection: OwnedDescriptor, _ peer: PeerCredentials) {
        let mine = reading.filter { $0.value.peer.uid == peer.uid }
        if mine.count >= Self.maxConnectionsPerUID, let oldest = mine.min(by: { $0.value.since < $1.value.since }) {
            drop(oldest.key, "dropped: uid \(peer.uid) has more than \(Self.maxConnectionsPerUID) control connections waiting",
                 log: "control socket: uid \(peer.uid) holds \(Self.maxConnectionsPerUID) idle connections; dropped its oldest")
        } else if reading.count >= Self.maxConnections {
            let counts = Dictionary(grouping: reading.values, by: { $0.peer.uid }).mapValues(\.count)
            guard let (crowded, held) = counts.max(by: { $0.value < $1.value }), held > mine.count + 1,
                  let oldest = reading.filter({ $0.value.peer.uid == crowded }).min(by: { $0.value.since < $1.value.since }) else {
                note("control busy", "control socket: refused uid \(peer.uid): \(Self.maxConnections) connections waiting")
                reply(connection, HostControl.Failure("the control socket is busy (\(Self.maxConnections) connections waiting); try again"))
                return
            }
            drop(oldest.key, "dropped to make room for another user's request",
                 log: "control socket: uid \(crowded) holds \(held) idle connections; dropped its oldest for uid \(peer.uid)")
        }
        try? connection.descriptor.setNonBlocking()
        nextReading += 1
        reading[nextReading] = Reading(connection, peer, since: .now)
        readMore(nextReading)  // a request usually comes with the connection
    }

    private func drop(_ id: Int, _ answer: String, log: Logger.Message) {
        guard let entry = reading.removeValue(forKey: id) else { return }
        note("control limit", log)
        reply(entry.connection, HostControl.Failure(answer))
    }

    /// Reads what connection `id` has sent; a whole line is its request, handled at once.
    private func readMore(_ id: Int) {
        guard let entry = reading[id] else { return }
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count: Int
            do { count = try buffer.withUnsafeMutableBytes { try entry.connection.descriptor.read(into: $0) } } catch let error as SystemCallError where error.errno == .wouldBlock { return } catch { count = 0 }
            guard count > 0 else { reading[id] = nil; return }  // gone before asking
            entry.received += buffer[..<count]
            if let end = entry.received.firstIndex(of: 0x0a) {
                reading[id] = nil
                guard end <= Self.maxRequestBytes else { return reply(entry.connection, Self.malformed) }
                let request: HostControl.Request
                do { request = try HostControl.decode(HostControl.Request.self, from: Data(entry.received[..<end])) } catch let refusal as HostControl.Request.Refusal {
                    return reply(entry.connection, HostControl.Failure("\(refusal)"))
                } catch {
                    return reply(entry.connection, Self.malformed)
                }
                return handle(entry.connection, request, peer: entry.peer)
            }
            guard entry.received.count <= Self.maxRequestBytes else {
                reading[id] = nil
                return reply(entry.connection, Self.malformed)
            }
        }
    }

    private static let malformed = HostControl.Failure("expected one JSON request line of at most \(maxRequestBytes) bytes within \(requestDeadline)")

    private func expireReading(now: MonotonicInstant) {
        for (id, entry) in reading where now - entry.since >= Self.requestDeadline {
            reading[id] = nil
            reply(entry.connection, Self.malformed)
        }
    }

    /// A line about what a local peer did, limited per reason.
    private func note(_ reason: String, _ message: Logger.Message) {
        peers.warning(message, metadata: [RateLimitedLogHandler.reasonKey: "\(reason)"])
    }

    private func handle(_ connection: OwnedDescriptor, _ request: HostControl.Request, peer: PeerCredentials) {
        switch request {
        case .status: reply(connection, status())
        case .clients: reply(connection, HostControl.Clients(clients: clients()))
        case .revoke(let who):
            switch revoke(who) {
            case .success(let revoked): reply(connection, revoked)
            case .failure(let failure): reply(connection, failure)
            }
        case .pair: armPairing(connection, peer: peer)
        }
    }

    private func reply(_ connection: OwnedDescriptor, _ answer: some Encodable) {
        guard var data = try? HostControl.encode(answer) else { return }
        data.append(0x0a)
        _ = try? data.withUnsafeBytes { try connection.descriptor.writeAll($0) }
    }

    // MARK: the commands

    /// Runs `body` on the input path's thread and waits for it (at most a second: the input path
    /// wakes for its mailbox at once).
    private func onInputPath<T>(_ body: @escaping (InputPath) -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = LockedBox<T?>(nil)
        let input = server.input
        input.mailbox.post(.run { let answer = body(input); result.update { $0 = answer }; done.signal() })
        return done.wait(timeout: .now() + 1) == .success ? result.value : nil
    }

    /// A session, named by the paired record its certificate matches: the name in its hello is
    /// the peer's own claim, so it is kept apart (`helloName`) and never stands for who it is.
    struct SessionSummary {
        var id: UInt32, name: String?, helloName: String, address: String, fingerprint: String, pads: [String], lastHeardMilliseconds: Int, received: UInt64, rejected: Int
        var link: LinkFigures?
        /// Authentic datagrams dropped over the session's budget, by reason.
        var overBudget: [SessionBudget.Excess: Int] = [:]
    }

    private func sessions() -> [SessionSummary] {
        let names = Dictionary(server.paired.entries.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        return onInputPath { input in
            let now = MonotonicInstant.now
            return input.sessions.values.sorted { $0.id < $1.id }.map { session in
                SessionSummary(id: session.id, name: names[session.fingerprint], helloName: session.name.raw, address: session.address, fingerprint: session.fingerprint,
                               pads: session.pads.virtualPadsBySlot.map(Self.padLine),
                               lastHeardMilliseconds: Int((now - session.lastAuthentic) / .milliseconds(1)),
                               received: session.opener.window.highest,
                               rejected: session.opener.rejected.values.reduce(0, +), link: session.pads.clientFigures,
                               overBudget: session.budget.dropped)
            }
        } ?? []
    }

    /// Every player number: its pad and client, or how long it has waited for them.
    private func players() -> [HostControl.Status.Player] {
        let names = Dictionary(server.paired.entries.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        return onInputPath { input in
            let now = MonotonicInstant.now
            var list: [HostControl.Status.Player] = []
            for session in input.sessions.values {
                let lines = Dictionary(uniqueKeysWithValues: session.pads.virtualPadsBySlot.map { ($0.slot, Self.padLine($0)) })
                for (slot, number) in session.pads.playersBySlot {
                    guard let number, let line = lines[slot] else { continue }
                    list.append(.init(player: number, client: names[session.fingerprint], fingerprint: session.fingerprint,
                                      session: String(session.id, radix: 16), pad: line, absentSeconds: nil))
                }
            }
            for waiting in input.players.slots.waiting(now: now) {
                let fingerprint = String(decoding: waiting.owner.client.bytes, as: UTF8.self)
                list.append(.init(player: waiting.number, client: names[fingerprint], fingerprint: fingerprint,
                                  session: nil, pad: nil, absentSeconds: Int(waiting.absent / .seconds(1))))
            }
            return list.sorted { $0.player < $1.player }
        } ?? []
    }

    /// One pad in `host status`: what it is, how games reach it (and why, if not as itself), and
    /// what the physical pad can do, as its client said.
    static func padLine(_ entry: (slot: PadSlot, pad: any VirtualPad)) -> String {
        let can = entry.pad.arrival.capabilities.names
        return "\(entry.slot): \(entry.pad.arrival.type.displayName) (\(entry.pad.presentation))" + (can.isEmpty ? "" : "; the pad has \(can.joined(separator: ", "))")
    }

    private func status() -> HostControl.Status {
        let statistics = server.statistics
        let live = sessions()
        let pairing = pairingState()
        return HostControl.Status(
            uptimeSeconds: Int((MonotonicInstant.now - started) / .seconds(1)),
            listening: "port \(server.port)",
            identity: server.identity.fingerprint,
            pairingPINArmed: pairing.armed,
            pairingArmedBy: pairing.by,
            pairingExpiresInSeconds: pairing.expiresIn,
            sessions: live.map { session in
                HostControl.Status.Session(
                    session: String(session.id, radix: 16), client: session.name, paired: session.name != nil,
                    helloName: session.helloName, address: session.address,
                    fingerprint: session.fingerprint, pads: session.pads, lastHeardMilliseconds: session.lastHeardMilliseconds,
                    datagramsReceived: session.received, datagramsRejected: session.rejected,
                    datagramsOverBudget: session.overBudget.values.reduce(0, +),
                    overBudget: Dictionary(uniqueKeysWithValues: session.overBudget.map { ($0.key.rawValue, $0.value) }),
                    // As the client measures it (its pings carry the figures): the host only echoes.
                    link: session.link.map { link in
                        HostControl.Status.Link(roundTripMilliseconds: Double(link.roundTripMicros) / 1000, jitterMilliseconds: Double(link.jitterMicros) / 1000,
                                                lossToHostPercent: Double(link.lossToHostPermille) / 10, lossToClientPercent: Double(link.lossToClientPermille) / 10)
                    })
            },
            players: players(),
            messagesDecoded: statistics.wire.messages,
            datagramsRejected: Dictionary(uniqueKeysWithValues: statistics.datagramsRejected.map { ("\($0.key)", $0.value) }),
            connectionsRefused: statistics.refusedConnections,
            leaseExpiries: statistics.leaseExpiries)
    }

    private func clients() -> [HostControl.Clients.Client] {
        let live = sessions()
        return server.paired.entries.sorted { $0.key < $1.key }.map { name, fingerprint in
            let connected = live.filter { $0.fingerprint == fingerprint }
            return HostControl.Clients.Client(
                name: name, fingerprint: fingerprint,
                pairedAt: activity.pairedAt(fingerprint).map(ClientActivity.format),
                lastSeen: connected.isEmpty ? activity.lastSeen(fingerprint).map(ClientActivity.format) : ClientActivity.format(Date()),
                connected: !connected.isEmpty, pads: connected.flatMap(\.pads))
        }
    }

    /// Forgets the client and ends its sessions at once: pads released and removed on the input
    /// path, the connection closed by the control plane.
    private func revoke(_ who: String) -> Result<HostControl.Revoked, HostControl.Failure> {
        let forgotten: (name: String, fingerprint: String)?
        do { forgotten = try server.paired.forget(who) } catch { return .failure(.init("could not rewrite the paired clients: \(error)")) }
        guard let forgotten else { return .failure(.init("no paired client '\(PeerName.echoed(who))' (see 'padgate host clients')")) }
        let control = server.control
        let ended = onInputPath { input -> Int in
            let ids = input.sessions.values.filter { $0.fingerprint == forgotten.fingerprint }.map(\.id)
            for id in ids {
                input.remove(id, why: "revoked by the host's administrator")
                control.mailbox.post(.close(session: id, why: "revoked"))
            }
            return ids.count
        } ?? 0
        logger.notice("revoked \(PeerName.escaped(forgotten.name)) (\(forgotten.fingerprint)); \(ended) session(s) ended")
        return .success(HostControl.Revoked(revoked: forgotten.name, fingerprint: forgotten.fingerprint, sessionsEnded: ended))
    }

    // MARK: pairing: one PIN armed at a time

    /// Which PIN is armed, by whom, for how long: what `host status` shows (the serve log says
    /// the same as each change happens).
    private func pairingState() -> (armed: Bool, by: String?, expiresIn: Int?) {
        lock.withLock {
            guard let gate = server.control.gate, !gate.isRetired else { return (false, nil, nil) }
            let left = max(0, Int(((gate.nextExpiry - .now) / .milliseconds(1) + 999) / 1000))
            return (true, requester?.who ?? "serve --pair", left)
        }
    }

    /// `host pair`: a fresh single-use PIN of its own, armed in place of whatever was armed, which
    /// is told so: a waiting `host pair` ends ("replaced"), `serve --pair`'s PIN is retired with a
    /// line in the serve log and comes back, with a new PIN, when this one ends.
    private func armPairing(_ connection: OwnedDescriptor, peer: PeerCredentials) {
        let who = "'padgate host pair' (uid \(peer.uid), pid \(peer.pid))"
        let id = lock.withLock { requesters += 1; return requesters }
        let gate = PairingGate(policy: PairingGate.Policy(), makePIN: Pairing.newPIN) { [weak self] pin, why in self?.rotated(id, pin: pin, why: why) }
        lock.withLock {
            let previous = requester
            let standing = previous == nil ? server.control.gate : nil
            previous?.gate.retire()
            standing?.retire()
            requester = Requester(id: id, connection: connection, who: who, gate: gate)
            server.control.gate = gate
            if let previous {
                reply(previous.connection, HostControl.PairReply.replaced(by: who))
                logger.notice("pairing: the PIN of \(previous.who) was replaced by a new one of \(who); it no longer works")
            } else if let standing {
                logger.notice("pairing: serve --pair's PIN \(standing.currentPIN) was replaced by the PIN of \(who); it no longer works, and serve --pair's pairing comes back when that one ends")
            }
            logger.notice("pairing: a PIN armed by \(who), valid \(gate.policy.pinLifetime), once")
            reply(connection, HostControl.PairReply.armed(pin: gate.currentPIN, expiresInSeconds: Int(gate.policy.pinLifetime / .seconds(1))))
        }
        wake.wake()  // the loop watches the new requester's connection
    }

    /// Ends the waiting `host pair` `id` (if it is still the one): its PIN is retired, it hears
    /// `answer`, and `serve --pair`'s own pairing comes back (or pairing closes).
    private func endRequest(_ id: Int, answer: HostControl.PairReply, log: String) {
        lock.withLock {
            guard let current = requester, current.id == id else { return }
            requester = nil
            current.gate.retire()
            reply(current.connection, answer)
            current.connection.descriptor.shutdownSocket()
            let resumed = server.standingPairing.value != nil
            logger.notice("pairing: \(log); \(resumed ? "serve --pair's pairing again" : "pairing closed")")
            if server.control.gate === current.gate || server.control.gate == nil { server.resumeStandingPairing() }
        }
    }

    /// A waiting `host pair`'s connection became readable: it hung up (Ctrl-C, killed) or sent
    /// something it should not. Either way its PIN goes at once.
    private func requesterHungUp(_ id: Int, _ connection: OwnedDescriptor) {
        var byte: UInt8 = 0
        _ = try? connection.descriptor.setNonBlocking()
        let read = (try? withUnsafeMutableBytes(of: &byte) { try connection.descriptor.read(into: $0) }) ?? 0
        guard read >= 0 else { return }
        let who = lock.withLock { requester?.id == id ? requester?.who : nil } ?? "a 'padgate host pair'"
        endRequest(id, answer: .cancelled, log: "\(who) ended before a client paired: its PIN no longer works")
    }

    /// A rotation of a `host pair`'s gate (control plane's thread).
    private func rotated(_ id: Int, pin: String, why: PairingGate.Rotation) {
        switch why {
        case .first, .resumed, .used: return  // shown by the reply; a use is told by `paired`
        case .expired:
            endRequest(id, answer: .expired, log: "the PIN of a 'padgate host pair' expired before a client paired")
        case .tooManyFailures:
            lock.withLock {
                guard let current = requester, current.id == id else { return }
                reply(current.connection, HostControl.PairReply.newPIN(pin: pin, reason: "too many wrong PINs"))
                logger.notice("pairing: too many wrong PINs; \(current.who) shows a new PIN")
            }
        }
    }

    /// A client paired (a connection thread): if with a `host pair`'s PIN, that one hears who and
    /// ends; `serve --pair`'s own PINs rotate by themselves.
    private func paired(name: String, fingerprint: String, gate: PairingGate) {
        activity.paired(fingerprint)
        guard let id = lock.withLock({ requester?.gate === gate ? requester?.id : nil }) else { return }
        endRequest(id, answer: .paired(name: name, fingerprint: fingerprint), log: "a client paired with the PIN of a 'padgate host pair'")
    }
}

/// One host per runtime directory: the host holds an exclusive `flock(2)` on `serve.lock` there for
/// as long as it runs, so a second `serve` given the same directory refuses to start instead of
/// taking the control socket over (which left the first host running but unreachable). The
/// kernel drops the lock when the process ends however it ends, so a socket left by a host that
/// crashed is stale exactly when the lock is free, and the next host replaces it.
public final class RuntimeDirectoryClaim: @unchecked Sendable {
    public static let lockName = "serve.lock"

    public enum Failure: Error, CustomStringConvertible {
        /// Another host holds the directory (its pid, as it wrote it, if readable).
        case held(directory: String, pid: Int32?)
        case cannot(String)

        public var description: String {
            switch self {
            case .held(let directory, let pid):
                return "another 'padgate serve'\(pid.map { " (pid \($0))" } ?? "") is running with the runtime directory \(directory), "
                    + "and one host per directory can own its control socket: stop that one (e.g. 'systemctl stop padgate-serve'), "
                    + "or start this one with PADGATE_RUNTIME_DIR set to a directory of its own"
            case .cannot(let why): return why
            }
        }
    }

    public let directory: URL
    private let lock: OwnedDescriptor

    /// Creates `directory` (0750) if needed and takes its lock, or throws `.held` at once.
    public init(directory: URL) throws(Failure) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        } catch {
            throw .cannot("cannot create \(directory.path): \(error.localizedDescription)")
        }
        let path = directory.appendingPathComponent(Self.lockName).path
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard opened >= 0 else { throw .cannot("cannot open \(path): \(Errno(rawValue: errno))") }
        lock = OwnedDescriptor(FileDescriptor(rawValue: opened))
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let why = errno
            guard why == EWOULDBLOCK else { throw .cannot("cannot lock \(path): \(Errno(rawValue: why))") }
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(opened, &buffer, buffer.count, 0)
            let pid = count > 0 ? Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            throw .held(directory: directory.path, pid: pid)
        }
        // Who holds it, for the next one's message (advisory: the lock itself is what counts).
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(opened, 0)
        _ = pwrite(opened, text, text.count, 0)
    }
}

/// When each paired client paired and was last seen, kept beside the paired-clients file
/// (`fingerprint pairedAt lastSeen` a line, seconds since 1970) so that a restart remembers them.
final class ClientActivity: @unchecked Sendable {
    private let file: URL
    private let lock = NSLock()
    private var records: [String: (paired: Date?, seen: Date?)] = [:]

    init(file: URL) {
        self.file = file
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3 else { continue }
            records[String(parts[0])] = (Double(parts[1]).map(Date.init(timeIntervalSince1970:)), Double(parts[2]).map(Date.init(timeIntervalSince1970:)))
        }
    }

    func paired(_ fingerprint: String) { update(fingerprint) { $0.paired = Date(); $0.seen = Date() } }
    func seen(_ fingerprint: String) { update(fingerprint) { $0.seen = Date() } }
    func pairedAt(_ fingerprint: String) -> Date? { lock.withLock { records[fingerprint]?.paired } }
    func lastSeen(_ fingerprint: String) -> Date? { lock.withLock { records[fingerprint]?.seen } }

    private func update(_ fingerprint: String, _ change: (inout (paired: Date?, seen: Date?)) -> Void) {
        guard !fingerprint.isEmpty else { return }
        let text: String = lock.withLock {
            var record = records[fingerprint] ?? (nil, nil)
            change(&record)
            records[fingerprint] = record
            return records.map { "\($0.key) \($0.value.paired.map { "\(Int($0.timeIntervalSince1970))" } ?? "-") \($0.value.seen.map { "\(Int($0.timeIntervalSince1970))" } ?? "-")" }
                .sorted().joined(separator: "\n") + "\n"
        }
        try? PrivateFiles.write(Data(text.utf8), to: file)
    }

    static func format(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
