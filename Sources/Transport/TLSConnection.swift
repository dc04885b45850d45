import COpenSSL
import Foundation
import MonotonicTime
import PadSystem

/// A TLS 1.3 connection over TCP carrying length-prefixed control frames. Certificates are not
/// checked against any CA: padgate pins the peer's fingerprint (known hosts, paired clients).
///
/// The socket is non-blocking and every step takes a deadline: a peer that stops halfway through a
/// handshake or a frame costs its own connection a timeout, never anyone else a wait.
public final class TLSConnection {
    let ssl: OpaquePointer
    let context: OpaquePointer
    let socket: Socket
    public let peer: SocketAddress
    /// The peer's address and port, for messages.
    public var peerAddress: String { peer.description }
    /// The peer's address alone, for limits per source.
    public var peerHost: String { peer.host }
    /// The peer's certificate fingerprint, nil if it sent none (an unpaired client).
    public let peerFingerprint: String?

    /// How long one control step (a handshake, a frame) may take when the caller names no deadline.
    public static let stepTimeout: Duration = .seconds(5)

    init(context: OpaquePointer, socket: Socket, server: Bool, peer: SocketAddress, deadline: MonotonicInstant) throws {
        guard let ssl = SSL_new(context) else { throw TLSError.openssl("SSL_new") }
        self.ssl = ssl
        self.context = context
        SSL_CTX_up_ref(context)
        self.socket = socket
        self.peer = peer
        SSL_set_fd(ssl, socket.descriptor.rawValue)
        do {
            _ = try Self.drive(ssl, socket: socket, deadline: deadline, step: "the TLS handshake") { server ? SSL_accept($0) : SSL_connect($0) }
        } catch {
            SSL_free(ssl); SSL_CTX_free(context)
            throw error
        }
        if let certificate = padgate_ssl_peer_certificate(ssl) {
            peerFingerprint = try? TLSIdentity.fingerprint(of: certificate)
            X509_free(certificate)
        } else {
            peerFingerprint = nil
        }
    }

    deinit {
        SSL_shutdown(ssl)  // non-blocking: sends close_notify if the socket takes it, never waits
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// What to poll for the peer's records or its end.
    public var descriptor: FileDescriptor { socket.descriptor }

    /// Runs one OpenSSL call on the non-blocking socket until it completes, waiting in poll(2) for
    /// what it needs until `deadline`. Returns the call's positive result.
    static func drive(_ ssl: OpaquePointer, socket: Socket, deadline: MonotonicInstant, step: String,
                      _ call: (OpaquePointer) -> Int32) throws -> Int32 {
        while true {
            ERR_clear_error()
            let rc = call(ssl)
            let errno = Errno.current  // before anything else can change it
            if rc > 0 { return rc }
            let events: PollEvents
            let error = SSL_get_error(ssl, rc)
            switch error {
            case SSL_ERROR_WANT_READ: events = .readable
            case SSL_ERROR_WANT_WRITE: events = .writable
            case SSL_ERROR_ZERO_RETURN: throw TLSError.closed
            case SSL_ERROR_SYSCALL where rc == 0 || errno == .connectionReset || errno == .brokenPipe: throw TLSError.closed
            case SSL_ERROR_SYSCALL where errno == .hostUnreachable || errno == .networkUnreachable: throw TLSError.unreachable(step: step, errno)
            default:
                guard step == "the TLS handshake" else { throw TLSError.closed }
                // OpenSSL's queue, else what the socket said (a system call's failure leaves the queue empty).
                let detail = TLSError.queue()
                throw TLSError.handshake(detail != TLSError.noDetail ? detail
                                         : error == SSL_ERROR_SYSCALL ? "the connection failed: \(errno)" : "OpenSSL error \(error) with no detail")
            }
            guard Poll.wait(for: events, on: socket.descriptor, until: deadline) else { throw SignalTrap.fired ? TLSError.interrupted : TLSError.timedOut(step) }
        }
    }

    /// Keys bound to this TLS session (RFC 8446 exporter): both ends derive the same bytes, and
    /// nobody without the session's secrets can.
    public func exportKeyingMaterial(label: String, length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        guard SSL_export_keying_material(ssl, &out, length, label, label.utf8.count, nil, 0, 0) == 1 else {
            throw TLSError.openssl("exporting keying material")
        }
        return out
    }

    /// Sends one frame: `length u16 | bytes`.
    public func send(_ frame: [UInt8], deadline: MonotonicInstant = .now + stepTimeout) throws {
        guard frame.count <= ControlMessage.maxFrameBytes else { throw TLSError.io("control frame too long") }
        let bytes = [UInt8(frame.count >> 8), UInt8(frame.count & 0xff)] + frame
        // SSL_write on a non-blocking socket must be retried with the same buffer until it reports it all.
        _ = try bytes.withUnsafeBytes { buffer in
            try Self.drive(ssl, socket: socket, deadline: deadline, step: "sending a control frame") {
                SSL_write($0, buffer.baseAddress, Int32(buffer.count))
            }
        }
    }

    /// Receives one frame of at most `ControlMessage.maxFrameBytes`; throws `.closed` when the peer
    /// is gone and `.timedOut` when the whole frame is not there by `deadline`.
    public func receive(deadline: MonotonicInstant = .now + stepTimeout) throws -> [UInt8] {
        let header = try read(count: 2, deadline: deadline)
        let length = Int(header[0]) << 8 | Int(header[1])
        guard length <= ControlMessage.maxFrameBytes else { throw TLSError.io("the peer announced a control frame of \(length) bytes") }
        return try read(count: length, deadline: deadline)
    }

    private func read(count: Int, deadline: MonotonicInstant) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            got += Int(try out.withUnsafeMutableBytes { buffer in
                try Self.drive(ssl, socket: socket, deadline: deadline, step: "reading a control frame") {
                    SSL_read($0, buffer.baseAddress! + got, Int32(count - got))
                }
            })
        }
        return out
    }

    public enum Incoming: Equatable { case nothing, data, closed }

    /// What the peer sent, without waiting: for connections that should stay quiet (an established
    /// client sends nothing after hello), so any data is unexpected and any end is the peer leaving.
    public func checkIncoming() -> Incoming {
        var scratch = [UInt8](repeating: 0, count: 256)
        ERR_clear_error()
        let n = SSL_read(ssl, &scratch, Int32(scratch.count))
        if n > 0 { return .data }
        switch SSL_get_error(ssl, n) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .nothing
        default: return .closed
        }
    }

}

/// Makes TLS 1.3 contexts with an identity.
enum TLSContext {
    static func make(server: Bool, identity: TLSIdentity?, requirePeerCertificate: Bool) throws -> OpaquePointer {
        _ = Signals.ignoreBrokenPipes
        guard let context = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw TLSError.openssl("SSL_CTX_new")
        }
        padgate_ssl_ctx_require_tls13(context)
        if let identity {
            guard SSL_CTX_use_certificate(context, identity.certificate) == 1, SSL_CTX_use_PrivateKey(context, identity.key) == 1 else {
                SSL_CTX_free(context)
                throw TLSError.openssl("loading the identity")
            }
        }
        // Servers ask for a client certificate (paired clients present theirs); clients always check
        // the host's by fingerprint after the handshake.
        padgate_ssl_ctx_ask_peer_certificate(context, requirePeerCertificate ? 1 : 0)
        return context
    }
}
