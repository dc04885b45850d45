import Foundation
import Logging
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import Transport
import WireProtocol

/// One client with a session, as the input path sees it.
final class ClientSession {
    let id: UInt32
    let name: PeerName
    let address: String
    /// The client's certificate fingerprint: what pairing recorded, what `host revoke` names.
    var fingerprint = ""
    let opener: DatagramOpener
    let link: DatagramLink
    let pads: ClientPads
    let workshop: PadWorkshop?
    var lastAuthentic: MonotonicInstant
    /// What this client may send (docs/security.md, "Fairness"): checked before any message is decoded.
    var budget: SessionBudget

    init(id: UInt32, name: PeerName, address: String, opener: DatagramOpener, link: DatagramLink, pads: ClientPads,
         workshop: PadWorkshop?, budget: SessionBudget.Limits, now: MonotonicInstant) {
        self.id = id; self.name = name; self.address = address; self.opener = opener; self.link = link
        self.pads = pads; self.workshop = workshop; lastAuthentic = now
        self.budget = SessionBudget(limits: budget, now: now)
    }
}

/// The input path: sealed datagrams in, virtual pads driven, leases watched, games' feedback out.
/// It owns the UDP socket and every session's pads, and waits on nothing but its own poll(2): the
/// control plane hands it sessions through `mailbox`, the pad workshops hand it made pads the same way.
final class InputPath {
    enum Command {
        case add(ClientSession)
        case remove(session: UInt32, why: String)
        case run(() -> Void)
    }

    let configuration: PadServer.Configuration
    let udp: Socket
    let makePad: VirtualPadFactory
    let statistics: SharedStatistics
    let mailbox = Mailbox<Command>()
    var sessions: [UInt32: ClientSession] = [:]
    var logger = Logger(label: "padgate.host.input")
    var heartbeat: (() -> Void)?
    /// Tells the control plane to close a session's TCP connection (the session went idle).
    var closeConnection: (UInt32, String) -> Void = { _, _ in }
    private var wire = WireCodec.Counters()
    private var rejectedByGoneClients: [DatagramRejection: Int] = [:]
    private var outbox = OutgoingPayloads()
    private let inbox = DatagramInbox()
    private var replies: [WireMessage] = []
    /// The games' feedback of one pass, kept between passes: it must not allocate per pass.
    private var feedback: [WireMessage] = []
    /// What woke the input path; the set is rebuilt only when sessions or pads come or go, so a
    /// pass allocates nothing.
    enum Wake { case mailbox, datagrams, feedback, signal }
    private var pollSet = PollSet<Wake>()
    private var pollSetStale = true
    private var idleSessions: [UInt32] = []
    private var retiredLeaseExpiries = 0, retiredGraceRemovals = 0, retiredOverBudget = 0
    private var publishedAt = MonotonicInstant.now

    /// Whether pads are kernel devices worth a workshop thread; in-process pads are made inline.
    let makesPadsInBackground: Bool
    /// Every session's pads' player numbers.
    let players: PlayerNumbers
    /// Each client's workshop, shared by its sessions (keyed by its certificate's fingerprint):
    /// after a reconnect, the new session's pads are made only once the old session's are
    /// unplugged, in order. They have the same addresses (the kernel refuses a second pad with
    /// one) and should get the same joystick numbers back. Another client's never waits for them.
    private let workshops = LockedBox<[String: WeakWorkshop]>([:])
    /// The workshops' queued makes and removals (`closeAll` waits for them).
    private let padWork = DispatchGroup()
    /// The most a stopping server waits for its pads' removals: a driver's unplug takes hundreds
    /// of ms on a busy machine; one that never returns must not hold the stop for ever (a signal's
    /// watchdog ends `serve` sooner anyway).
    static let unplugLimit: Duration = .seconds(5)
    private struct WeakWorkshop { weak var workshop: PadWorkshop? }

    init(configuration: PadServer.Configuration, udp: Socket, makePad: @escaping VirtualPadFactory, statistics: SharedStatistics,
         makesPadsInBackground: Bool = true) {
        self.configuration = configuration
        self.udp = udp
        self.makePad = makePad
        self.statistics = statistics
        self.makesPadsInBackground = makesPadsInBackground
        players = PlayerNumbers(capacity: configuration.limits.maxClients * configuration.limits.maxPadsPerClient, grace: PlayerSlots.defaultGrace)
        players.evict = { [unowned self] session, owner in sessions[session]?.pads.evict(owner) }
    }

    /// A session for a client the control plane accepted. Safe from any thread.
    /// `pairedName`: the paired record the client's certificate matches, which names it in the log
    /// (the hello's name is only the peer's claim; without a record it is shown as such).
    func makeSession(id: UInt32, name: PeerName, pairedName: String? = nil, fingerprint: String = "", address: String,
                     keys: (clientToHost: DirectionKeys, hostToClient: DirectionKeys)) throws -> ClientSession {
        let opener = try DatagramOpener(keys: keys.clientToHost, session: id)
        let link = DatagramLink(socket: udp, sealer: try DatagramSealer(keys: keys.hostToClient, session: id), opener: opener)
        let workshop = makesPadsInBackground ? workshop(for: fingerprint.isEmpty ? "session \(id)" : fingerprint) : nil
        let pads = ClientPads(maxPads: configuration.limits.maxPadsPerClient, stateLease: configuration.stateLease,
                               padGrace: configuration.padGrace, maker: workshop ?? InlinePadMaker(makePad))
        var sessionLogger = logger
        sessionLogger[metadataKey: "client"] = "\(pairedName.map { "'\(PeerName.escaped($0))'" } ?? "unpaired, calls itself \(name)")"
        sessionLogger[metadataKey: "session"] = "\(String(id, radix: 16))"
        pads.logger = sessionLogger
        pads.players = players
        pads.sessionID = id
        // Runs on the input path's thread, the only one that adds or removes a session's pads.
        pads.onPadsChanged = { [weak self] in self?.pollSetStale = true }
        pads.replayedDatagrams = { [opener] in opener.rejected[.replayed] ?? 0 }
        return ClientSession(id: id, name: name, address: address, opener: opener, link: link, pads: pads, workshop: workshop,
                             budget: configuration.limits.sessionBudget, now: .now)
    }

    /// The client's workshop: its live sessions' one, or a new one.
    private func workshop(for client: String) -> PadWorkshop {
        workshops.withLock { table in
            if let shared = table[client]?.workshop { return shared }
            table = table.filter { $0.value.workshop != nil }
            let made = PadWorkshop(label: String(client.prefix(11)), factory: makePad, outstanding: padWork, deliver: { [mailbox] work in mailbox.post(.run(work)) })
            table[client] = WeakWorkshop(workshop: made)
            return made
        }
    }

    func rebuildPollSet() {
        pollSet.removeAll()
        pollSet.add(mailbox.descriptor, .mailbox)
        pollSet.add(udp.descriptor, .datagrams)
        // A signal wakes the pass at once: `stop()` then ends it, not the next tick.
        pollSet.addSignalTrap(.signal)
        for session in sessions.values {
            for pad in session.pads.virtualPads { for descriptor in pad.feedbackDescriptors { pollSet.add(descriptor, .feedback) } }
        }
        pollSetStale = false
    }

    /// The calling thread carries input meanwhile (`ThreadPriority.raisedForInput`).
    func run(tick: Duration, until stop: () -> Bool) {
        ThreadPriority.raisedForInput { passes(tick: tick, until: stop) }
    }

    func passes(tick: Duration, until stop: () -> Bool) {
        while !stop() {
            heartbeat?()
            if pollSetStale { rebuildPollSet() }
            let now = MonotonicInstant.now
            var deadline = now + tick
            func consider(_ candidate: MonotonicInstant?) { if let candidate, candidate < deadline { deadline = candidate } }
            for session in sessions.values {
                consider(session.pads.nextLeaseDeadline())
                consider(session.pads.nextRenewal())
                consider(session.lastAuthentic + configuration.limits.sessionIdleTimeout)
            }
            var commands = false, datagrams = false
            pollSet.wait(timeout: max(deadline - now, .zero)) { wake, _ in
                switch wake {
                case .mailbox: commands = true
                case .datagrams: datagrams = true
                case .feedback: break  // every pad's feedback is taken below
                case .signal: break  // stop() says so
                }
            }
            // Commands first: a session added just now must be there for its first datagram.
            if commands { mailbox.drain(perform) }
            if datagrams { receiveDatagrams() }
            let after = MonotonicInstant.now
            idleSessions.removeAll(keepingCapacity: true)
            for session in sessions.values where after - session.lastAuthentic > configuration.limits.sessionIdleTimeout {
                idleSessions.append(session.id)
            }
            for id in idleSessions {
                remove(id, why: "sent nothing for \(configuration.limits.sessionIdleTimeout)")
                statistics.update { $0.idleSessionsClosed += 1 }
                closeConnection(id, "idle")
            }
            for session in sessions.values {
                session.pads.expireLeases(now: after)
                feedback.removeAll(keepingCapacity: true)
                session.pads.feedback(now: after, into: &feedback)
                send(feedback, to: session)
            }
            if after - publishedAt >= .milliseconds(50) { publish() }
        }
    }

    func perform(_ command: Command) {
        pollSetStale = true  // a session or a pad may come or go
        switch command {
        case .add(let session):
            sessions[session.id] = session
            session.pads.logger.notice("connected from \(session.address)")
        case .remove(let id, let why):
            remove(id, why: why)
        case .run(let work):
            work()
        }
    }

    func remove(_ id: UInt32, why: String) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        pollSetStale = true
        session.pads.close()
        retiredLeaseExpiries += session.pads.counters.leaseExpiries
        retiredGraceRemovals += session.pads.counters.graceRemovals
        retiredOverBudget += session.budget.droppedTotal
        rejectedByGoneClients.merge(session.opener.rejected, uniquingKeysWith: +)
        session.pads.logger.notice("\(why); its pads were released and removed")
    }

    func closeAll(why: String) {
        mailbox.drain(perform)
        for id in Array(sessions.keys) { remove(id, why: why) }
        // The server is stopped once its pads are gone, not once their removal is queued: a
        // process that exits meanwhile leaves a driver's removal (or a make it then drops) to its
        // exit, racing the exit's own teardown. A make that finishes now is delivered, and the
        // closed session hands the pad straight back for removal: hence twice.
        let limit = DispatchTime.now() + .milliseconds(Int(Self.unplugLimit / .milliseconds(1)))
        for _ in 0..<2 {
            _ = padWork.wait(timeout: limit)
            mailbox.drain(perform)
        }
        publish()
    }

    func receiveDatagrams() {
        for _ in 0..<configuration.limits.datagramsPerWake {
            // Each datagram answers for itself: one dropped over its budget sends nothing, not the
            // replies the one before it made (issue 59: a flood was answered pong for datagram).
            replies.removeAll(keepingCapacity: true)
            // The session id picks the client; its key decides whether the datagram is genuine.
            var sender: ClientSession?
            let receipt = inbox.receiveOne(from: udp, opener: { id in
                sender = id.flatMap { sessions[$0] }
                return sender?.opener
            }) { payload, from in
                guard let session = sender else { return }
                session.link.peer = from
                let now = MonotonicInstant.now
                session.lastAuthentic = now
                // Over its budget: dropped and counted before a single message is read.
                guard session.budget.admit(payload, now: now) else { return }
                WireCodec.decode(payload, counters: &wire) { message in session.pads.handle(message, now: now, replies: &replies) }
            }
            switch receipt {
            case .nothing: return  // drained
            case .unrouted(let why): rejectedByGoneClients[why, default: 0] += 1
            case .rejected: continue
            case .opened:
                if let sender { send(replies, to: sender) }
            }
        }
    }

    func send(_ messages: [WireMessage], to session: ClientSession) {
        guard !messages.isEmpty else { return }
        for message in messages { outbox.append(message) }
        outbox.drain { _ = try? session.link.send(payload: $0) }
    }

    /// The statistics' rejection table is rebuilt only when a count moved: merging dictionaries
    /// allocates, and this runs 20 times a second.
    private var publishedRejections = -1

    private func publish() {
        publishedAt = .now
        var expiries = retiredLeaseExpiries, graceRemovals = retiredGraceRemovals, overBudget = retiredOverBudget
        var rejections = rejectedByGoneClients.values.reduce(0, +)
        for session in sessions.values {
            rejections += session.opener.rejected.values.reduce(0, +)
            expiries += session.pads.counters.leaseExpiries
            graceRemovals += session.pads.counters.graceRemovals
            overBudget += session.budget.droppedTotal
        }
        var rejected: [DatagramRejection: Int]?
        if rejections != publishedRejections {
            var merged = rejectedByGoneClients
            for session in sessions.values { merged.merge(session.opener.rejected, uniquingKeysWith: +) }
            rejected = merged
            publishedRejections = rejections
        }
        let sessionCount = sessions.count, wire = self.wire
        statistics.update {
            $0.sessions = sessionCount
            if let rejected { $0.datagramsRejected = rejected }
            $0.wire = wire
            $0.leaseExpiries = expiries
            $0.graceRemovals = graceRemovals
            $0.datagramsOverBudget = overBudget
        }
    }
}
