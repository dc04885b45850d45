import Foundation
import Glibc
import PadDevices
import Transport
import WireProtocol

/// `padgate serve`: accepts clients over TLS, receives their pads' datagrams, drives virtual pads,
/// and sends the games' feedback back. One thread, one poll(2): nothing spins while idle.
public final class PadServer {
    public struct Configuration {
        public var address = "0.0.0.0"
        public var port: UInt16 = 47800
        public var maxPads = 4
        public var stateLease: Duration = .milliseconds(1000)
        /// Accept only clients whose certificate fingerprint was stored by pairing.
        public var requirePairing = false
        public init() {}
    }

    final class Client {
        let connection: TLSConnection
        let session: UInt32
        let link: DatagramLink
        let opener: DatagramOpener
        let pads: HostSession
        let name: String
        init(connection: TLSConnection, session: UInt32, link: DatagramLink, opener: DatagramOpener, pads: HostSession, name: String) {
            self.connection = connection; self.session = session; self.link = link; self.opener = opener; self.pads = pads; self.name = name
        }
    }

    public let configuration: Configuration
    public let identity: TLSIdentity
    let listener: TLSListener
    let udp: Int32
    let makePad: VirtualPadFactory
    var pairedClients: FingerprintStore
    var clients: [Client] = []
    /// Set by `serve --pair`: the PIN a pairing client must know. A new one after every failure,
    /// so each PIN allows exactly one guess.
    public var pairingPIN: String?
    public var onPINChanged: ((String) -> Void)?
    public var log: (String) -> Void = { FileHandle.standardError.write(Data(("padgate serve: " + $0 + "\n").utf8)) }
    public private(set) var wireCounters = WireCodec.Counters()
    /// Datagrams dropped before they reached a pad, by reason: clients gone and connected.
    public var rejectedDatagrams: [DatagramRejection: Int] {
        clients.reduce(rejectedByGoneClients) { $0.merging($1.opener.rejected, uniquingKeysWith: +) }
    }
    private var rejectedByGoneClients: [DatagramRejection: Int] = [:]
    private var payload = [UInt8](repeating: 0, count: 1400)
    private var datagram = [UInt8](repeating: 0, count: 2048)
    private var opened = [UInt8](repeating: 0, count: 2048)

    public var port: UInt16 { listener.port }

    public init(configuration: Configuration, identity: TLSIdentity, pairedClients: FingerprintStore, makePad: @escaping VirtualPadFactory) throws {
        self.configuration = configuration
        self.identity = identity
        self.pairedClients = pairedClients
        self.makePad = makePad
        listener = try TLSListener(identity: identity, address: configuration.address, port: configuration.port)
        udp = try DatagramLink.bindSocket(address: configuration.address, port: listener.port)
    }

    deinit {
        for client in clients { client.pads.close() }
        close(udp)
    }

    /// Serves until `stop` says so (checked at least every `tick`).
    public func run(tick: Duration = .milliseconds(250), until stop: () -> Bool) {
        while !stop() {
            let polled = clients  // the poll set's order; accepting below may add clients
            let feedbackFDs = polled.flatMap { $0.pads.pads.values.flatMap(\.feedbackDescriptors) }
            let fds = [listener.socket, udp] + polled.map(\.connection.socket) + feedbackFDs
            let deadline = clients.flatMap { [$0.pads.nextLeaseDeadline(), $0.pads.nextRenewal()].compactMap { $0 } }.min()
            let wait = deadline.map { min(max($0 - ContinuousClock.now, .zero), tick) } ?? tick
            let ready = Poll.wait(fds, timeout: wait)
            if ready[0].readable { acceptClient() }
            if ready[1].readable { receiveDatagrams() }
            for (index, client) in polled.enumerated() where ready[2 + index].readable || ready[2 + index].hungUp {
                if !client.connection.hasBufferedData, (try? client.connection.receive()) == nil { disconnect(client, why: "closed the connection") }
            }
            let now = ContinuousClock.now
            for client in clients {
                client.pads.expireLeases(now: now)
                send(client.pads.feedback(now: now), to: client)
            }
        }
        for client in clients { disconnect(client, why: "server stopping") }
    }

    func acceptClient() {
        let connection: TLSConnection
        do { connection = try listener.accept() } catch { log("handshake failed: \(error)"); return }
        do {
            let first = try ControlMessage(decoding: connection.receive())
            if case .pairStart(let share, let clientName) = first { return pair(connection, share: share, clientName: clientName) }
            guard case .hello(let version, let name) = first else { throw TLSError.io("expected hello") }
            guard version == ControlMessage.protocolVersion else {
                try connection.send(ControlMessage.refused(reason: "protocol version \(version) is not supported; update padgate").encoded())
                return
            }
            if configuration.requirePairing {
                guard let fingerprint = connection.peerFingerprint, pairedClients.contains(fingerprint: fingerprint) else {
                    let reason = TLSError.notPaired(fingerprint: connection.peerFingerprint ?? "a client without a certificate").description
                    try connection.send(ControlMessage.refused(reason: reason).encoded())
                    log("refused \(connection.peerAddress): not paired")
                    return
                }
            }
            let keys = try ControlMessage.datagramKeys(connection)
            var session: UInt32 = 0
            while session == 0 || clients.contains(where: { $0.session == session }) { session = UInt32.random(in: 1...UInt32.max) }
            let opener = try DatagramOpener(keys: keys.clientToHost, session: session)
            let link = DatagramLink(socket: udp, sealer: try DatagramSealer(keys: keys.hostToClient, session: session), opener: opener)
            let pads = HostSession(maxPads: configuration.maxPads, stateLease: configuration.stateLease, makePad: makePad)
            pads.log = { [log] in log("client '\(name)': \($0)") }
            clients.append(Client(connection: connection, session: session, link: link, opener: opener, pads: pads, name: name))
            try connection.send(ControlMessage.welcome(session: session, udpPort: listener.port,
                                                       leaseMillis: UInt16(configuration.stateLease / .milliseconds(1)),
                                                       maxPads: UInt8(configuration.maxPads)).encoded())
            log("client '\(name)' connected from \(connection.peerAddress)")
        } catch {
            log("client from \(connection.peerAddress) failed to set up: \(error)")
        }
    }

    func receiveDatagrams() {
        while true {
            var from = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let n = datagram.withUnsafeMutableBytes { b in
                withUnsafeMutablePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(udp, b.baseAddress, b.count, 0, $0, &length) } }
            }
            guard n > 0 else { return }
            // The session id picks the client; its key decides whether the datagram is genuine.
            guard n >= 8 else { continue }
            let session = datagram[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard let client = clients.first(where: { $0.session == session }) else { rejectedByGoneClients[.wrongSession, default: 0] += 1; continue }
            let count = datagram.withUnsafeBytes { d in opened.withUnsafeMutableBytes { client.opener.open(UnsafeRawBufferPointer(rebasing: d[0..<n]), into: $0) } }
            guard let count else { continue }
            client.link.peer = from
            let now = ContinuousClock.now
            var replies: [WireMessage] = []
            opened.withUnsafeBytes { WireCodec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), counters: &wireCounters) { message in
                replies += client.pads.handle(message, now: now)
            } }
            send(replies, to: client)
        }
    }

    func send(_ messages: [WireMessage], to client: Client) {
        guard !messages.isEmpty else { return }
        WirePayloads.pack(messages, into: &payload) { _ = try? client.link.send(payload: $0) }
    }

    func disconnect(_ client: Client, why: String) {
        client.pads.close()
        rejectedByGoneClients.merge(client.opener.rejected, uniquingKeysWith: +)
        clients.removeAll { $0 === client }
        log("client '\(client.name)' \(why); its pads were released and removed")
    }

    func pair(_ connection: TLSConnection, share: [UInt8], clientName: String) {
        guard let pin = pairingPIN else {
            try? connection.send(ControlMessage.refused(reason: "pairing is not enabled on this host: start it with 'padgate serve --pair'").encoded())
            return
        }
        do {
            let name = try Pairing.pairAsHost(connection, hostIdentity: identity, pin: pin, clientShare: share, clientName: clientName)
            try pairedClients.remember(name, fingerprint: connection.peerFingerprint ?? "")
            log("paired with '\(name)' (\(connection.peerFingerprint ?? ""))")
        } catch {
            log("pairing from \(connection.peerAddress) failed: \(error)")
            let fresh = Pairing.newPIN()
            pairingPIN = fresh
            onPINChanged?(fresh)
        }
    }
}
