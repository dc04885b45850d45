import Foundation
import Logging
import MonotonicTime
import PadDevices
import PadSystem
import Transport
import WireProtocol

/// `padgate forward`: one client session to a host. Sends each pad's state when it changes and
/// re-sends it as the host's keep-alive; applies the host's feedback; on any link loss silences
/// the pads and reconnects with backoff and jitter.
public final class PadForwarder {
    public struct Configuration {
        public var host: String
        public var port: UInt16 = 47800
        /// Addresses a discovery found (dialled in order instead of resolving `host`), and the
        /// name the host announced: trust still comes from the pinned identity alone.
        public var discoveredAddresses: [SocketAddress] = []
        public var announcedName: String?
        /// Whether a host this client has no entry for is pinned on first use (`forward`'s
        /// documented default). `probe` turns it off: a link test never makes a host trusted;
        /// trust comes from pairing.
        public var pinsUnknownHosts = true
        public var clientName = ProcessInfo.processInfo.hostName
        public var resendSchedule: SnapshotSender.Schedule = .standard
        public var pingInterval: Duration = .seconds(1)
        /// Nothing authentic from the host for this long: it is gone (docs/wire.md, "Liveness").
        public var hostSilenceLimit: Duration = .seconds(2)
        /// Once the host has been quiet this long, pings go out every `urgentPingInterval`, so that
        /// loss alone almost never adds up to `hostSilenceLimit`.
        public var quietAfter: Duration = .milliseconds(500)
        public var urgentPingInterval: Duration = .milliseconds(100)
        /// A session's first pings go `urgentPingInterval` apart: the link's jitter, which a pad's
        /// haptics playout starts from, is then measured from several round trips within a second
        /// of connecting, not from the first two a second apart (one change, often the session's
        /// cold start) when a game's first haptics come.
        public var startingPings = 8
        /// Zero bytes each ping carries: `probe` pads its pings to an input datagram's size.
        public var pingPadding: UInt16 = 0
        /// Round trips the link meter keeps for percentiles (`probe` keeps a whole run's).
        public var keptRoundTrips = 256
        public init(host: String) { self.host = host }
    }

    public struct Status: Sendable {
        public var connected = false
        public var pads = 0
        public var roundTrip: Duration?
        /// The link as the pings read it (`LinkMeter.figures`): the same figures `host status` shows.
        public var link = LinkFigures()
        public var sent = 0
        public var received = 0
        public var rejected = 0
        public var lastFeedback = ""
        /// Haptics blocks the host sent (each 5 ms of the coils' signal).
        public var hapticsBlocks = 0
        public var speakerFrames = 0
        /// The host's session id for this client (it is in every datagram's header).
        public var session: UInt32?
    }

    public let configuration: Configuration
    let identity: TLSIdentity?
    var knownHosts: KnownHostStore
    public private(set) var status = Status()
    public var logger = Logger(label: "padgate.client")
    public var onStatus: ((Status) -> Void)?
    /// Pads plugged in or unplugged, prepared on another thread (opening a pad can wait on the
    /// kernel) and taken by the forwarding loop between two reports.
    public enum SourceChange { case add(PadSource), remove(PadSource) }
    public let changes = Mailbox<SourceChange>()

    /// The loop's per-report state, touched only by the forwarding thread (changes from others
    /// come through `changes`): no runtime exclusivity checks on it.
    @exclusivity(unchecked) var pads: [ForwardedPad] = []
    var sources: [PadSource] { pads.map(\.source) }
    var connection: TLSConnection?
    var link: DatagramLink?
    @exclusivity(unchecked) var outbox = OutgoingPayloads()
    var pingID: UInt32 = 0
    var nextPing = MonotonicInstant.now
    /// Off while `probe` waits for its last pongs.
    private var pinging = true
    /// Stored, not lazy: a lazy property is read and written back whole, which copies its samples.
    private var linkMeter: LinkMeter
    /// A pong counts only for one of the last this many pings (a few seconds of `probe`'s rate).
    static let pongWindow: UInt32 = 1024
    static let pingsPerPass = 4

    /// The time to the next ping once `sent` pings of this session went out: urgent while the
    /// host is quiet or the session is young (`startingPings`), the steady interval otherwise.
    static func pingInterval(after sent: Int, quiet: Bool, _ configuration: Configuration) -> Duration {
        quiet || sent < configuration.startingPings ? min(configuration.urgentPingInterval, configuration.pingInterval) : configuration.pingInterval
    }

    /// When the last authentic datagram came from the host (the welcome counts as one).
    var lastHeard = MonotonicInstant.now
    let origin = MonotonicInstant.now
    var wireCounters = WireCodec.Counters()

    public init(configuration: Configuration, identity: TLSIdentity?, knownHosts: KnownHostStore) {
        self.configuration = configuration
        self.identity = identity
        self.knownHosts = knownHosts
        linkMeter = LinkMeter(keptSamples: configuration.keptRoundTrips)
    }

    deinit { for pad in pads { pad.source.silence() } }

    public func add(_ source: PadSource) {
        pads.append(ForwardedPad(source, schedule: configuration.resendSchedule))
        status.pads = pads.count
        if link != nil {
            send(announcement(pads.count - 1, now: .now))
            source.sessionStarted()
        }
    }

    func announcement(_ index: Int, now: MonotonicInstant) -> [WireMessage] {
        pads[index].announcement(now: now)
    }

    /// A controller came onto a receiver's slot or left it: the host is told (`ForwardedPad.presenceChange`).
    func announcePresence(_ index: Int, now: MonotonicInstant) {
        guard let change = pads[index].presenceChange(now: now) else { return }
        let source = pads[index].source
        logger.notice("\(source.arrival.name): \(source.present ? "a controller came onto its slot" : "its controller left its slot")",
                      metadata: ["slot": "\(source.arrival.slot.rawValue)"])
        send(change)
    }

    public func remove(_ source: PadSource) {
        guard let index = pads.firstIndex(where: { $0.source === source }) else { return }
        source.silence()
        if link != nil, pads[index].announced { send([.removal(source.arrival.slot)]) }
        pads.remove(at: index)
        status.pads = pads.count
    }

    func apply(_ change: SourceChange) {
        switch change {
        case .add(let source): add(source)
        case .remove(let source): remove(source)
        }
    }

    /// Connects, announces the pads, and forwards until `stop()`; reconnects after link loss.
    /// The calling thread carries input meanwhile (`ThreadPriority.raisedForInput`).
    public func run(until stop: () -> Bool) {
        ThreadPriority.raisedForInput { reconnecting(until: stop) }
    }

    func reconnecting(until stop: () -> Bool) {
        var backoff: Duration = .milliseconds(250)
        while !stop() {
            do {
                try connect()
                backoff = .milliseconds(250)
                try forward(until: stop)
            } catch TLSError.interrupted {
                break  // a signal: the caller's stop() says so too
            } catch let error as TLSError where error.isFatalForClient {
                logger.error("\(error)")
                return
            } catch {
                logger.warning("\(error)")
            }
            dropLink()
            guard !stop() else { break }
            // Exponential backoff with jitter, so many clients do not return to a restarted host at once.
            let jitter = Duration.milliseconds(Int.random(in: 0...Int(backoff / .milliseconds(1)) / 2))
            logger.info("reconnecting in \(backoff + jitter)")
            let until = MonotonicInstant.now + backoff + jitter
            while MonotonicInstant.now < until && !stop() {
                _ = Poll.wait([changes.descriptor, SignalTrap.descriptor] + pads.flatMap(\.source.descriptors), timeout: min(until - .now, .milliseconds(50)))
                changes.drain(apply)  // pads plugged in meanwhile are announced on reconnect
                // The pads stay read meanwhile (their queues hold the newest, a controller's leaving
                // included) and their upkeep runs (a Steam Controller keeps lizard mode off).
                for pad in pads {
                    _ = try? pad.source.readInput()
                    if let due = pad.source.feedbackDeadline, due <= .now { try? pad.source.pumpFeedback() }
                }
            }
            backoff = min(backoff * 2, .seconds(8))
        }
        dropLink()
    }

    func connect() throws {
        let typed = HostAndPort(host: configuration.host, port: configuration.port).description
        let discovered = !configuration.discoveredAddresses.isEmpty
        // An announced name is a stranger's bytes: escaped wherever it is shown.
        let name = discovered ? "\(PeerName.escaped(configuration.announcedName ?? configuration.host)) (\(configuration.discoveredAddresses[0]))" : typed
        let tls = try TLSDialer.connect(host: configuration.host, port: configuration.port, discovered: configuration.discoveredAddresses,
                                        named: name, identity: identity)
        guard let fingerprint = tls.peerFingerprint else { throw TLSError.handshake("the host sent no certificate") }
        if !configuration.pinsUnknownHosts {
            // A known identity or a changed one is judged as always; an unknown one is not pinned.
            if try knownHosts.verdict(address: discovered ? nil : typed, name: configuration.announcedName, presented: fingerprint) == .firstUse {
                logger.notice("\(name) (\(fingerprint)) is not a host this client paired with: its identity is not pinned")
            }
        } else if try knownHosts.check(address: discovered ? nil : typed, name: configuration.announcedName, presented: fingerprint) == .firstUse {
            logger.notice("trusting \(name) on first use: \(fingerprint)")
        }
        try tls.send(ControlMessage.hello(version: ControlMessage.protocolVersion, clientName: PeerName(local: configuration.clientName)).encoded())
        switch try ControlMessage(decoding: tls.receive(deadline: .now + TLSConnection.stepTimeout)) {
        case .refused(let reason): throw TLSError.refused(reason)
        case .hello, .pairStart, .pairReply, .pairConfirm, .pairResult:
            throw TLSError.io("the host answered hello with something else")
        case .welcome(let session, let udpPort, _, _):
            let keys = try ControlMessage.datagramKeys(tls)
            // Datagrams go to the address the control connection reached, in its family.
            var peer = tls.peer
            peer.port = udpPort
            let socket = try DatagramLink.bindSocket(to: .any(peer.family, port: 0))
            link = DatagramLink(socket: socket, sealer: try DatagramSealer(keys: keys.clientToHost, session: session),
                                opener: try DatagramOpener(keys: keys.hostToClient, session: session), peer: peer)
            connection = tls
            lastHeard = .now
            nextPing = .now
            linkMeter.reset()
            status.connected = true
            status.session = session
            logger.notice("connected to \(name), session \(String(session, radix: 16))")
            pads = pads.map { ForwardedPad($0.source, schedule: configuration.resendSchedule) }
            send(pads.indices.flatMap { announcement($0, now: .now) })
            for pad in pads { pad.source.sessionStarted() }
        }
    }

    /// `padgate probe`: connects as `forward` does (the same handshake, keys and loop), pings at
    /// `configuration.pingInterval` for `length`, then stops pinging and waits for the last pongs.
    /// Throws as `forward` would (not paired, changed identity, no answer); never reconnects.
    public func measureLink(for length: Duration, until stop: () -> Bool) throws -> LinkReport {
        let measured = try measureLinkToItsEnd(for: length, until: stop)
        if let ending = measured.ending { throw ending }
        return measured.report
    }

    /// A link test and how it ended: `ending` is nil when it ran its length (or `stop` said so),
    /// else why the host was lost (it stalled, or its connection closed), and `report` is what
    /// was measured until then either way. Connecting throws as `forward` would.
    public struct LinkMeasurement {
        public var report: LinkReport
        public var ending: Error?
        /// From the first ping to the end.
        public var measured: Duration
    }

    public func measureLinkToItsEnd(for length: Duration, until stop: () -> Bool) throws -> LinkMeasurement {
        try connect()
        defer { dropLink() }
        let started = MonotonicInstant.now
        let end = started + length
        var ending: Error?
        do {
            try forward { stop() || MonotonicInstant.now >= end }
            pinging = false
            // Long enough for a pong of the last ping to come back on a slow link, short of the
            // host-silence limit that would end the loop.
            let drain = min(max(.milliseconds(500), (status.roundTrip ?? .zero) * 4), configuration.hostSilenceLimit / 2)
            let drainEnd = MonotonicInstant.now + drain
            try forward { stop() || MonotonicInstant.now >= drainEnd }
        } catch {
            ending = error
        }
        pinging = true
        var report = linkMeter.report(duplicatesToClient: link?.rejected[.replayed] ?? 0)
        if let ending { report.endedEarly = "the test ended early: \(ending)" }
        return LinkMeasurement(report: report, ending: ending, measured: MonotonicInstant.now - started)
    }

    func dropLink() {
        for pad in pads { pad.source.silence() }
        link?.socket.close()
        link = nil
        connection = nil
        status.connected = false
    }

    /// What woke the forwarding loop.
    enum Wake { case datagrams, control, changes, signal, source(Int), uplink }
    /// Kept between passes, so that a pass allocates nothing: rebuilt only when pads come or go.
    var pollSet = PollSet<Wake>()
    @exclusivity(unchecked) var readySources: [Bool] = []

    func rebuildPollSet(_ link: DatagramLink, _ connection: TLSConnection) {
        pollSet.removeAll()
        pollSet.add(link.socket.descriptor, .datagrams)
        pollSet.add(connection.descriptor, .control)
        pollSet.add(changes.descriptor, .changes)
        // A signal wakes the pass at once: `stop()` then ends it, not the next timeout.
        pollSet.addSignalTrap(.signal)
        for (index, pad) in pads.enumerated() {
            for descriptor in pad.source.descriptors { pollSet.add(descriptor, .source(index)) }
            if let descriptor = pad.source.uplinkDescriptor { pollSet.add(descriptor, .uplink) }
        }
        readySources = [Bool](repeating: false, count: pads.count)
    }

    /// The earliest of every timer the loop keeps: re-sends, feedback, the next ping, host silence.
    func nextDeadline() -> MonotonicInstant {
        var next = lastHeard + configuration.hostSilenceLimit + .milliseconds(1)
        if pinging { next = min(next, nextPing) }
        for pad in pads {
            if let due = pad.nextResend, due < next { next = due }
            if let due = pad.source.feedbackDeadline, due < next { next = due }
        }
        return next
    }

    func forward(until stop: () -> Bool) throws {
        guard let link, let connection else { return }
        rebuildPollSet(link, connection)
        while !stop() {
            let now = MonotonicInstant.now
            if now - lastHeard > configuration.hostSilenceLimit {
                // What arrived while this loop was busy counts: the socket is read before the verdict.
                receiveFeedback(link)
                if MonotonicInstant.now - lastHeard > configuration.hostSilenceLimit { throw TLSError.hostSilent(configuration.hostSilenceLimit) }
            }
            let wait = max(nextDeadline() - now, .zero)
            var datagrams = false, control = false, changed = false
            for index in readySources.indices { readySources[index] = false }
            pollSet.wait(timeout: min(wait, .milliseconds(500))) { wake, _ in
                switch wake {
                case .datagrams: datagrams = true
                case .control: control = true
                case .changes: changed = true
                case .signal: break  // stop() says so
                case .source(let index): readySources[index] = true
                case .uplink: break  // every pass takes what the pads' microphones recorded
                }
            }
            let woke = MonotonicInstant.now
            if changed {
                changes.drain(apply)
                rebuildPollSet(link, connection)  // the set of sources changed
                continue
            }
            // The host sends nothing after its welcome but TLS's own records: only its end matters.
            if control, connection.checkIncoming() != .nothing { throw TLSError.closed }
            if datagrams { receiveFeedback(link) }

            for i in pads.indices where readySources[i] {
                let source = pads[i].source
                do {
                    guard try source.readInput() else { continue }
                } catch {
                    logger.warning("\(source.arrival.name): \(error)", metadata: ["slot": "\(source.arrival.slot.rawValue)"])
                    remove(source)
                    return try forward(until: stop)
                }
                announcePresence(i, now: now)
                pads[i].collect(now: now, into: &outbox)
            }
            for i in pads.indices { pads[i].resendIfDue(now: now, into: &outbox) }
            for pad in pads { pad.source.takeUplink { outbox.append($0) } }
            // A pass that woke late sends the pings it owes (a few at most), so a probe keeps its
            // rate on a busy machine.
            var owed = 0
            while pinging && now >= nextPing && owed < Self.pingsPerPass {
                if owed > 0 { sendOutbox() }  // each owed ping in its own datagram, as if it had gone on time
                owed += 1
                pingID &+= 1
                linkMeter.sent(id: pingID)
                outbox.append(.ping(Probe(id: pingID, sentMicros: UInt64((now - origin) / .microseconds(1)), figures: linkMeter.figures,
                                          padding: configuration.pingPadding)))
                // A quiet host is asked often: one answer is enough to show it is alive. On a
                // steady cadence, so a probe's rate is the rate asked for.
                let interval = Self.pingInterval(after: linkMeter.sent, quiet: now - lastHeard >= configuration.quietAfter, configuration)
                nextPing = nextPing + interval
                if now - nextPing > interval * Self.pingsPerPass { nextPing = now + interval }
            }
            sendOutbox()
            for pad in pads { try? pad.source.pumpFeedback() }
            // A receiver's slot whose controller went quiet is removed at its deadline, read or not.
            for i in pads.indices { announcePresence(i, now: .now) }
            // A pass that was itself held up (a pad's driver slow to take a write) pinged nobody
            // meanwhile: the host's silence over that time is this loop's, not the host's. Ask it
            // at once instead of declaring it lost.
            let spent = MonotonicInstant.now - woke
            if spent > configuration.quietAfter {
                lastHeard = min(.now, lastHeard + spent)
                nextPing = min(nextPing, .now)
            }
            status.sent = link.sent
            status.received = link.received
            status.rejected = link.rejected.values.reduce(0, +)
            onStatus?(status)
        }
    }

    func receiveFeedback(_ link: DatagramLink) {
        while link.receiveOne({ payload, _ in
            lastHeard = .now
            WireCodec.decode(payload, counters: &wireCounters) { message in self.handle(message) }
        }) {}
    }

    func handle(_ message: WireMessage) {
        switch message {
        case .rumble(let lease):
            guard let index = pads.firstIndex(where: { $0.source.arrival.slot == lease.slot }) else { return }
            do { try pads[index].source.apply(lease) } catch {
                pads[index].rumbleFailures += 1
                if pads[index].rumbleFailures == 1 {
                    logger.warning("\(pads[index].source.arrival.name): the host's rumble cannot play: \(error) (said once; later failures are counted)",
                                   metadata: ["slot": "\(lease.slot.rawValue)"])
                }
            }
            status.lastFeedback = "rumble \(lease.low)/\(lease.high)"
        case .hidOutput(let output):
            guard let source = pads.first(where: { $0.source.arrival.slot == output.slot })?.source else { return }
            try? source.apply(output)
            status.lastFeedback = "hid output \(output.fields.rawValue)"
        case .haptics(let block):
            guard let source = pads.first(where: { $0.source.arrival.slot == block.slot })?.source else { return }
            status.hapticsBlocks += 1
            do { try source.apply(block) } catch {
                logger.warning("\(source.arrival.name): \(error)", metadata: ["slot": "\(block.slot.rawValue)"])
            }
        case .microphoneRequest(let request):
            guard let source = pads.first(where: { $0.source.arrival.slot == request.slot })?.source else { return }
            do { try source.apply(request) } catch {
                logger.warning("\(source.arrival.name): \(error)", metadata: ["slot": "\(request.slot.rawValue)"])
            }
        case .trackpadPulse(let pulse):
            guard let source = pads.first(where: { $0.source.arrival.slot == pulse.slot })?.source else { return }
            do { try source.apply(pulse) } catch {
                logger.warning("\(source.arrival.name): \(error)", metadata: ["slot": "\(pulse.slot.rawValue)"])
            }
        case .speaker(let frame):
            guard let source = pads.first(where: { $0.source.arrival.slot == frame.slot })?.source else { return }
            status.speakerFrames += 1
            do { try source.apply(frame) } catch {
                logger.warning("\(source.arrival.name): \(error)", metadata: ["slot": "\(frame.slot.rawValue)"])
            }
        case .pong(let probe):
            // Only an answer to one of the last pings counts: a host's bytes are checked like any peer's.
            let now = UInt64((MonotonicInstant.now - origin) / .microseconds(1))
            guard pingID &- probe.id < Self.pongWindow, probe.sentMicros <= now else { return }
            status.roundTrip = .microseconds(Int64(now - probe.sentMicros))
            linkMeter.answered(probe, roundTripMicros: UInt32(clamping: now - probe.sentMicros))
            status.link = linkMeter.figures
            // The pads' haptics playouts start from the link's measured jitter, not a guess.
            if let jitter = linkMeter.recentJitter { for pad in pads { pad.source.observeLink(jitter: jitter) } }
        default:
            break
        }
    }

    func send(_ messages: [WireMessage]) {
        for message in messages { outbox.append(message) }
        sendOutbox()
    }

    func sendOutbox() {
        guard let link else { return outbox.drain { _ in } }
        outbox.drain { _ = try? link.send(payload: $0) }
    }
}

extension TLSError {
    /// Errors a retry cannot fix: a changed host identity, a refusal.
    var isFatalForClient: Bool {
        switch self {
        case .fingerprintChanged, .notPaired, .refused: return true
        default: return false
        }
    }
}
