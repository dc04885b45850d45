import Foundation
import MonotonicTime
import PadSystem

/// PIN pairing over an established TLS connection (docs/pairing.md). SPAKE2 binds the PIN to
/// both certificates' fingerprints (the identities) and to this TLS session (the exporter as
/// associated data), so a man in the middle, who must run two TLS sessions, cannot make the
/// confirmations match; a wrong PIN gives an attacker one online guess and nothing to test offline.
public enum Pairing {
    static let exporterLabel = "EXPORTER-padgate-pairing-v1"

    /// A fresh 6-digit PIN from the system's CSPRNG.
    public static func newPIN() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }

    static func context(_ connection: TLSConnection, clientFingerprint: String, hostFingerprint: String, pin: String,
                        role: Spake2.Role) throws -> Spake2 {
        let binding = try connection.exportKeyingMaterial(label: exporterLabel, length: 32)
        return try Spake2(role: role, password: Array(pin.utf8), identityA: Array(clientFingerprint.utf8),
                          identityB: Array(hostFingerprint.utf8), aad: binding)
    }

    /// The client's side. Returns once the host has confirmed; throws `.wrongPIN` otherwise.
    /// How long a whole pairing exchange may take on either side: two scrypt runs and three frames.
    public static let exchangeTimeout: Duration = .seconds(20)

    public static func pairAsClient(_ connection: TLSConnection, clientIdentity: TLSIdentity, pin: String, clientName: PeerName) throws {
        guard let hostFingerprint = connection.peerFingerprint else { throw PairingError.protocolError("the host sent no certificate") }
        let stretched = try stretch(pin: pin, clientFingerprint: clientIdentity.fingerprint, hostFingerprint: hostFingerprint)
        try pairAsClient(connection, clientIdentity: clientIdentity, stretchedPIN: stretched, clientName: clientName)
    }

    /// The PIN stretched for this pair of peers (scrypt, the expensive part: tenths of a second on a
    /// desktop, seconds on a slow machine). A client computes it before the connection it pairs
    /// on, since a host gives the first frame only its handshake deadline (docs/pairing.md).
    public static func stretch(pin: String, clientFingerprint: String, hostFingerprint: String) throws -> StretchedPIN {
        StretchedPIN(hostFingerprint: hostFingerprint, scalar: try Spake2.passwordScalar(
            password: Array(pin.utf8), identityA: Array(clientFingerprint.utf8), identityB: Array(hostFingerprint.utf8),
            parameters: .pairingDefault))
    }

    /// A PIN stretched for one host identity.
    public struct StretchedPIN: Sendable {
        public let hostFingerprint: String
        let scalar: [UInt8]
    }

    /// The client's side with the PIN already stretched; the host must present the identity it
    /// was stretched for.
    public static func pairAsClient(_ connection: TLSConnection, clientIdentity: TLSIdentity, stretchedPIN: StretchedPIN, clientName: PeerName) throws {
        let deadline = MonotonicInstant.now + exchangeTimeout
        guard let hostFingerprint = connection.peerFingerprint else { throw PairingError.protocolError("the host sent no certificate") }
        guard hostFingerprint == stretchedPIN.hostFingerprint else {
            throw PairingError.protocolError("the host presented another identity on the second connection (\(hostFingerprint)); try again")
        }
        let binding = try connection.exportKeyingMaterial(label: exporterLabel, length: 32)
        let spake = try Spake2(role: .a, passwordScalar: stretchedPIN.scalar, identityA: Array(clientIdentity.fingerprint.utf8),
                               identityB: Array(hostFingerprint.utf8), aad: binding)
        try connection.send(ControlMessage.pairStart(share: spake.outboundMessage(), clientName: clientName).encoded(), deadline: deadline)
        let frame: [UInt8]
        do { frame = try connection.receive(deadline: deadline) } catch TLSError.closed { throw PairingError.closedBeforeAnswer }
        let reply = try ControlMessage(decoding: frame)
        guard case .pairReply(let share, let hostConfirmation) = reply else {
            if case .refused(let reason) = reply { throw PairingError.refused(reason) }
            throw PairingError.protocolError("unexpected reply to pairing")
        }
        let keys = try spake.finish(peerMessage: share)
        guard keys.isValidPeerConfirmation(hostConfirmation) else {
            try? connection.send(ControlMessage.pairConfirm(confirmation: []).encoded(), deadline: deadline)
            throw PairingError.wrongPIN
        }
        try connection.send(ControlMessage.pairConfirm(confirmation: keys.confirmationMAC).encoded(), deadline: deadline)
        guard case .pairResult(let accepted, let message) = try ControlMessage(decoding: connection.receive(deadline: deadline)) else {
            throw PairingError.protocolError("no pairing result")
        }
        guard accepted else { throw PairingError.refused(message) }
    }

    /// Whether `error` means the host left a connection unanswered (`againIfUnanswered`).
    static func unanswered(_ error: any Error) -> Bool {
        switch error {
        case TLSError.closed, TLSError.handshakeTimedOut, PairingError.closedBeforeAnswer: true
        default: false
        }
    }

    /// How many connections one pairing step may use when the host leaves them unanswered.
    public static let connectionsPerStep = 3
    /// How long `pair` keeps trying to reach the host over TCP: longer than a connection's
    /// `TLSDialer.connectTimeout`, since the person waits at both ends while the PIN is valid
    /// (2 minutes) and a lossy LAN's lost neighbour probes answer "No route to host" for seconds.
    public static let connectWindow: Duration = .seconds(30)
    static let retryPause: Duration = .milliseconds(300)

    /// Runs `step` (a connection and what it sends) again when the host left it unanswered: closed
    /// it before answering, or the TLS handshake ran past its deadline. A host gives a connection
    /// 5 s for its handshake and first frame, and the client its handshake 5 s, which a lossy
    /// link's retransmissions can spend (TCP's timer after a retransmitted SYN is 3 s, doubling);
    /// the host then never saw the PIN, so another connection spends nothing. Any answer from the
    /// host, a wrong PIN included, ends the tries.
    public static func againIfUnanswered<T>(onRetry: (_ attempt: Int) -> Void = { _ in }, _ step: () throws -> T) throws -> T {
        var attempt = 1
        while true {
            do {
                return try step()
            } catch let error where attempt < connectionsPerStep && Self.unanswered(error) {
                attempt += 1
                onRetry(attempt)
                // A host that closed it for its per-address handshake rate takes the next one after a pause.
                if SignalTrap.sleep(retryPause) { throw TLSError.interrupted }
            }
        }
    }

    /// The host's side, after it received `pairStart` and its pairing gate admitted the attempt.
    /// `approve` runs once the client has proved it knows the PIN, and decides whether the pairing
    /// stands: nil when it does (and the client is stored: the client hears "paired" only after,
    /// so its next connection is accepted), else why not (the host's PIN may have been spent or
    /// replaced meanwhile), which the client is told.
    public static func pairAsHost(_ connection: TLSConnection, hostIdentity: TLSIdentity, pin: String,
                                  clientShare: [UInt8], deadline: MonotonicInstant, approve: () -> String?) throws {
        guard let clientFingerprint = connection.peerFingerprint else {
            throw PairingError.protocolError("a pairing client must present its certificate")
        }
        let spake = try context(connection, clientFingerprint: clientFingerprint, hostFingerprint: hostIdentity.fingerprint, pin: pin, role: .b)
        let keys = try spake.finish(peerMessage: clientShare)
        try connection.send(ControlMessage.pairReply(share: spake.outboundMessage(), confirmation: keys.confirmationMAC).encoded(), deadline: deadline)
        guard case .pairConfirm(let confirmation) = try ControlMessage(decoding: connection.receive(deadline: deadline)),
              keys.isValidPeerConfirmation(confirmation) else {
            try? connection.send(ControlMessage.pairResult(accepted: false, message: "wrong PIN").encoded(), deadline: deadline)
            throw PairingError.wrongPIN
        }
        if let why = approve() {
            try? connection.send(ControlMessage.pairResult(accepted: false, message: why).encoded(), deadline: deadline)
            throw PairingError.refused(why)
        }
        try connection.send(ControlMessage.pairResult(accepted: true, message: "paired").encoded(), deadline: deadline)
    }
}

public enum PairingError: Error, Equatable, CustomStringConvertible {
    case wrongPIN
    case refused(String)
    case protocolError(String)
    /// The host closed the connection before it answered the first frame: its deadline for one
    /// (`PadServer.Limits.handshakeTimeout`, 5 s) ran out while a slow or lossy link retransmitted it. The
    /// host never saw the PIN, so another connection may try again.
    case closedBeforeAnswer

    public var description: String {
        switch self {
        case .wrongPIN: return "wrong PIN: check the PIN 'padgate serve --pair' shows on the host and try again"
        case .refused(let reason): return "the host refused pairing: \(displayable(peerText: reason))"
        case .protocolError(let what): return "pairing failed: \(what)"
        case .closedBeforeAnswer:
            return "the host closed the connection before answering (its deadline for the first frame ran out: a slow or lossy link?); the PIN was not used, so try again"
        }
    }
}
