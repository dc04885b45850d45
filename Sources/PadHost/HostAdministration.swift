import Foundation
import Logging
import MonotonicTime
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

    private let server: PadServer
    private let listener: OwnedDescriptor
    public let path: String
    private let access: Access
    private let activity: ClientActivity
    private let started = MonotonicInstant.now
    private let startedAt = Date()
    private let wake = WakePipe()
    private let lock = NSLock()
    private var stopping = false
    private var pending: [PendingPairing] = []
    private let finished = DispatchSemaphore(value: 0)
    public var logger = Logger(label: "padgate.host.admin")

    /// A `host pair` waiting for its PIN to be used.
    private struct PendingPairing { let connection: OwnedDescriptor; let pin: String; let expires: MonotonicInstant }

    /// Listens at `<directory>/control.sock`. `activity`: where paired-at and last-seen are kept.
    public init(server: PadServer, directory: URL, access: Access, activityFile: URL) throws {
        self.server = server
        self.access = access
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        path = directory.appendingPathComponent(Self.socketName).path
        // The kernel's credentials decide, so the socket itself may be reached by anyone who can
        // reach the directory (systemd's RuntimeDirectoryMode narrows that further).
        listener = try LocalSocket.listening(at: path, mode: 0o666)
        activity = ClientActivity(file: activityFile)
        server.control.observers.paired = { [weak self] name, fingerprint in self?.paired(name: name, fingerprint: fingerprint) }
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

    private func serve() {
        while !lock.withLock({ stopping }) {
            let now = MonotonicInstant.now
            let waits = lock.withLock { pending.map(\.expires) }
            let timeout = waits.min().map { max($0 - now, .zero) } ?? .seconds(1)
            let ready = Poll.wait([listener.descriptor, wake.descriptor], timeout: timeout)
            wake.drain()
            expirePairings(now: .now)
            guard ready[0].readable else { continue }
            while let (connection, peer) = try? LocalSocket.accept(listener) {
                guard access.allows(peer) else {
                    // Read what it sent (briefly) before answering: closing on unread bytes resets the
                    // connection, and the refusal would be lost.
                    _ = readRequest(connection, within: .milliseconds(200))
                    reply(connection, ["error": "permission denied: uid \(peer.uid) may not manage this host (root, the host's user or its admin group may)"])
                    logger.warning("control socket: refused uid \(peer.uid) (pid \(peer.pid))")
                    continue
                }
                handle(connection)
            }
        }
        lock.withLock { for waiting in pending { reply(waiting.connection, ["error": "the host is stopping"]) }; pending = [] }
    }

    private func handle(_ connection: OwnedDescriptor) {
        guard let request = readRequest(connection) else {
            return reply(connection, ["error": "expected one JSON request line of at most \(Self.maxRequestBytes) bytes within \(Self.requestDeadline)"])
        }
        switch request["command"] as? String {
        case "status": reply(connection, status())
        case "clients": reply(connection, ["clients": clients()])
        case "revoke":
            guard let who = request["client"] as? String, !who.isEmpty else { return reply(connection, ["error": "revoke needs a client name or fingerprint"]) }
            reply(connection, revoke(who))
        case "pair": armPairing(connection)
        default: reply(connection, ["error": "unknown command; the commands are status, clients, revoke, pair"])
        }
    }

    /// One line, bounded in size and time: a local peer that dawdles or floods is dropped.
    private func readRequest(_ connection: OwnedDescriptor, within limit: Duration = HostAdministration.requestDeadline) -> [String: Any]? {
        try? connection.descriptor.setNonBlocking()
        var reader = LineReader(connection.descriptor, limit: Self.maxRequestBytes)
        guard case .line(let line) = reader.next(until: .now + limit) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
    }

    private func reply(_ connection: OwnedDescriptor, _ object: [String: Any]) {
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
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
    }

    private func sessions() -> [SessionSummary] {
        let names = Dictionary(server.paired.entries.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        return onInputPath { input in
            let now = MonotonicInstant.now
            return input.sessions.values.sorted { $0.id < $1.id }.map { session in
                SessionSummary(id: session.id, name: names[session.fingerprint], helloName: session.name.raw, address: session.address, fingerprint: session.fingerprint,
                               pads: session.pads.virtualPadsBySlot.map { "\($0.slot): \($0.pad.arrival.type.displayName) (\($0.pad.presentation))" },
                               lastHeardMilliseconds: Int((now - session.lastAuthentic) / .milliseconds(1)),
                               received: session.opener.window.highest,
                               rejected: session.opener.rejected.values.reduce(0, +), link: session.pads.clientFigures)
            }
        } ?? []
    }

    private func status() -> [String: Any] {
        let statistics = server.statistics
        let live = sessions()
        return [
            "uptime_seconds": Int((MonotonicInstant.now - started) / .seconds(1)),
            "listening": "port \(server.port)",
            "identity": server.identity.fingerprint,
            "pairing_pin_armed": server.control.gate != nil,
            "sessions": live.map { session -> [String: Any] in
                ["session": String(session.id, radix: 16), "client": session.name ?? NSNull(), "paired": session.name != nil,
                 "hello_name": session.helloName, "address": session.address,
                 "fingerprint": session.fingerprint, "pads": session.pads, "last_heard_ms": session.lastHeardMilliseconds,
                 "datagrams_received": session.received, "datagrams_rejected": session.rejected,
                 // As the client measures it (its pings carry the figures): the host only echoes.
                 "link": session.link.map { link -> [String: Any] in
                     ["round_trip_ms": Double(link.roundTripMicros) / 1000, "jitter_ms": Double(link.jitterMicros) / 1000,
                      "loss_to_host_percent": Double(link.lossToHostPermille) / 10, "loss_to_client_percent": Double(link.lossToClientPermille) / 10]
                 } ?? NSNull()]
            },
            "messages_decoded": statistics.wire.messages,
            "datagrams_rejected": Dictionary(uniqueKeysWithValues: statistics.datagramsRejected.map { ("\($0.key)", $0.value) }),
            "connections_refused": statistics.refusedConnections,
            "lease_expiries": statistics.leaseExpiries,
        ]
    }

    private func clients() -> [[String: Any]] {
        let live = sessions()
        return server.paired.entries.sorted { $0.key < $1.key }.map { name, fingerprint in
            let connected = live.filter { $0.fingerprint == fingerprint }
            return ["name": name, "fingerprint": fingerprint,
                    "paired_at": activity.pairedAt(fingerprint).map(ClientActivity.format) ?? NSNull(),
                    "last_seen": connected.isEmpty ? (activity.lastSeen(fingerprint).map(ClientActivity.format) ?? NSNull()) : ClientActivity.format(Date()),
                    "connected": !connected.isEmpty, "pads": connected.flatMap(\.pads)] as [String: Any]
        }
    }

    /// Forgets the client and ends its sessions at once: pads released and removed on the input
    /// path, the connection closed by the control plane.
    private func revoke(_ who: String) -> [String: Any] {
        let forgotten: (name: String, fingerprint: String)?
        do { forgotten = try server.paired.forget(who) } catch { return ["error": "could not rewrite the paired clients: \(error)"] }
        guard let forgotten else { return ["error": "no paired client '\(PeerName.echoed(who))' (see 'padgate host clients')"] }
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
        return ["revoked": forgotten.name, "fingerprint": forgotten.fingerprint, "sessions_ended": ended]
    }

    private func armPairing(_ connection: OwnedDescriptor) {
        let pin = Pairing.newPIN()
        let gate = PairingGate(policy: PairingGate.Policy(), pin: pin, makePIN: Pairing.newPIN, onNewPIN: { _, _ in })
        server.control.gate = gate
        let expires = MonotonicInstant.now + gate.policy.pinLifetime
        reply(connection, ["pin": pin, "expires_in_seconds": Int(gate.policy.pinLifetime / .seconds(1))])
        lock.withLock { pending.append(PendingPairing(connection: connection, pin: pin, expires: expires)) }
        wake.wake()
    }

    /// A client paired (control plane's thread): the waiting `host pair` hears who, and the PIN is
    /// spent: pairing closes again until the next `host pair`.
    private func paired(name: String, fingerprint: String) {
        activity.paired(fingerprint)
        let waiting = lock.withLock { () -> [PendingPairing] in defer { pending = [] }; return pending }
        if waiting.isEmpty { return }  // `serve --pair` keeps its own rotation
        server.control.gate = nil
        for pairing in waiting { reply(pairing.connection, ["paired": name, "fingerprint": fingerprint]) }
    }

    private func expirePairings(now: MonotonicInstant) {
        let expired = lock.withLock { () -> [PendingPairing] in
            let gone = pending.filter { $0.expires <= now }
            pending.removeAll { $0.expires <= now }
            return gone
        }
        guard !expired.isEmpty else { return }
        if lock.withLock({ pending.isEmpty }) { server.control.gate = nil }
        for pairing in expired { reply(pairing.connection, ["expired": true]) }
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
