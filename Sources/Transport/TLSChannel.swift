import COpenSSL
import Foundation
import Glibc

/// A TLS 1.3 connection over TCP carrying length-prefixed control frames. Certificates are not
/// checked against any CA: padgate pins the peer's fingerprint (known hosts, paired clients).
///
/// The socket is non-blocking and every step takes a deadline: a peer that stops halfway through a
/// handshake or a frame costs its own connection a timeout, never anyone else a wait.
public final class TLSConnection {
    let ssl: OpaquePointer
    let context: OpaquePointer
    public let socket: Int32
    public let peerAddress: String
    /// The peer's IPv4 address alone, for limits per source.
    public let peerHost: String
    /// The peer's certificate fingerprint, nil if it sent none (an unpaired client).
    public let peerFingerprint: String?

    /// How long one control step (a handshake, a frame) may take when the caller names no deadline.
    public static let stepTimeout: Duration = .seconds(5)

    init(context: OpaquePointer, socket: Int32, server: Bool, peer: sockaddr_in, deadline: ContinuousClock.Instant) throws {
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        guard let ssl = SSL_new(context) else { close(socket); throw TLSError.openssl("SSL_new") }
        self.ssl = ssl
        self.context = context
        SSL_CTX_up_ref(context)
        self.socket = socket
        peerAddress = SocketAddress.describe(peer)
        peerHost = SocketAddress.describeHost(peer)
        SSL_set_fd(ssl, socket)
        do {
            _ = try Self.drive(ssl, socket: socket, deadline: deadline, step: "the TLS handshake") { server ? SSL_accept($0) : SSL_connect($0) }
        } catch {
            SSL_free(ssl); SSL_CTX_free(context); close(socket)
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
        close(socket)
    }

    /// Runs one OpenSSL call on the non-blocking socket until it completes, waiting in poll(2) for
    /// what it needs until `deadline`. Returns the call's positive result.
    static func drive(_ ssl: OpaquePointer, socket: Int32, deadline: ContinuousClock.Instant, step: String,
                      _ call: (OpaquePointer) -> Int32) throws -> Int32 {
        while true {
            ERR_clear_error()
            let rc = call(ssl)
            if rc > 0 { return rc }
            let events: Int16
            switch SSL_get_error(ssl, rc) {
            case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
            case SSL_ERROR_ZERO_RETURN: throw TLSError.closed
            case SSL_ERROR_SYSCALL where rc == 0 || errno == ECONNRESET || errno == EPIPE: throw TLSError.closed
            default:
                let detail = TLSError.queue()
                throw step == "the TLS handshake" ? TLSError.handshake(detail.isEmpty ? "the peer broke off" : detail) : TLSError.closed
            }
            guard try SocketWait.until(socket, events: events, deadline: deadline) else { throw TLSError.timedOut(step) }
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
    public func send(_ frame: [UInt8], deadline: ContinuousClock.Instant = .now + stepTimeout) throws {
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
    public func receive(deadline: ContinuousClock.Instant = .now + stepTimeout) throws -> [UInt8] {
        let header = try read(count: 2, deadline: deadline)
        let length = Int(header[0]) << 8 | Int(header[1])
        guard length <= ControlMessage.maxFrameBytes else { throw TLSError.io("the peer announced a control frame of \(length) bytes") }
        return try read(count: length, deadline: deadline)
    }

    private func read(count: Int, deadline: ContinuousClock.Instant) throws -> [UInt8] {
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

    /// Bytes already decrypted and waiting: poll(2) on the socket does not see them.
    public var hasBufferedData: Bool { SSL_pending(ssl) > 0 }
}

/// Waiting for one socket with a deadline; EINTR is retried, never mistaken for the deadline.
enum SocketWait {
    /// True when `events` happened (or the socket failed, which the next call reports), false at the deadline.
    static func until(_ socket: Int32, events: Int16, deadline: ContinuousClock.Instant) throws -> Bool {
        while true {
            let left = deadline - .now
            guard left > .zero else { return false }
            var fd = pollfd(fd: socket, events: events, revents: 0)
            let ms = Int32(clamping: (left + .nanoseconds(999_999)).components.seconds * 1000
                           + (left + .nanoseconds(999_999)).components.attoseconds / 1_000_000_000_000_000)
            let n = poll(&fd, 1, max(ms, 1))
            if n > 0 { return true }
            if n < 0 && errno != EINTR { throw TLSError.io("poll failed: \(String(cString: strerror(errno)))") }
        }
    }
}

/// Makes TLS 1.3 contexts with an identity.
enum TLSContext {
    static func make(server: Bool, identity: TLSIdentity?, requirePeerCertificate: Bool) throws -> OpaquePointer {
        _ = ignoreBrokenPipes
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

/// OpenSSL writes to the socket with write(2): a peer that has gone would kill the process with
/// SIGPIPE instead of giving an error padgate can handle. Any TLS use turns that signal off.
let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN); return () }()

public final class TLSListener {
    let context: OpaquePointer
    public let socket: Int32
    public let port: UInt16

    /// Listens on `address:port` (port 0 picks a free one).
    public init(identity: TLSIdentity, address: String = "0.0.0.0", port: UInt16) throws {
        let context = try TLSContext.make(server: true, identity: identity, requirePeerCertificate: false)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = try SocketAddress.ipv4(address, port: port)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd); SSL_CTX_free(context)
            throw TLSError.io("cannot listen on \(address):\(port): \(String(cString: strerror(code)))")
        }
        self.context = context
        socket = fd
        self.port = SocketAddress.localPort(of: fd)
    }

    deinit { close(socket); SSL_CTX_free(context) }

    /// Accepts one pending TCP connection without waiting (the listening socket is non-blocking).
    /// The TLS handshake is the caller's next step, on its own deadline (`handshake`).
    public func acceptTCP() -> AcceptResult {
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        while true {
            let fd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(socket, $0, &length) }
            }
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                SocketAddress.setNoDelay(fd)
                return .accepted(PendingTCP(socket: fd, peer: peer))
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO: continue
            case EAGAIN: return .nothing
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfResources(String(cString: strerror(errno)))
            default: return .failed(String(cString: strerror(errno)))
            }
        }
    }

    public enum AcceptResult {
        case accepted(PendingTCP)
        case nothing
        /// Out of descriptors or memory: the caller stops accepting for a while rather than spin.
        case outOfResources(String)
        case failed(String)
    }

    /// Waits for one connection and completes its handshake, all by `deadline`: for a single peer
    /// (tests, tools). A server with many peers uses `acceptTCP` and `handshake` on their own threads.
    public func accept(deadline: ContinuousClock.Instant = .now + TLSConnection.stepTimeout) throws -> TLSConnection {
        while true {
            switch acceptTCP() {
            case .accepted(let pending): return try handshake(pending, deadline: deadline)
            case .nothing:
                guard try SocketWait.until(socket, events: Int16(POLLIN), deadline: deadline) else { throw TLSError.timedOut("waiting for a connection") }
            case .outOfResources(let why), .failed(let why): throw TLSError.io("accept failed: \(why)")
            }
        }
    }

    /// Completes the server side of the TLS handshake by `deadline`.
    public func handshake(_ pending: PendingTCP, deadline: ContinuousClock.Instant) throws -> TLSConnection {
        try TLSConnection(context: context, socket: pending.socket, server: true, peer: pending.peer, deadline: deadline)
    }
}

/// A TCP connection accepted but not yet through TLS; `TLSListener.handshake` takes its socket over.
public struct PendingTCP {
    public let socket: Int32
    public let peer: sockaddr_in
    public var peerHost: String { SocketAddress.describeHost(peer) }
    /// Closes a connection refused before its handshake.
    public func drop() { close(socket) }
}

public enum TLSDialer {
    /// Connects to `host:port` and completes the TLS handshake, presenting `identity` if given.
    /// The TCP connect has `SocketAddress.connectTimeout` (lost SYNs are retried); the handshake
    /// then has `timeout`, so a host that accepts TCP but never finishes TLS (frozen, overloaded,
    /// not padgate) is reported after it instead of hanging.
    /// `from`: a local IPv4 address to connect from (tests that play several machines).
    public static func connect(host: String, port: UInt16, identity: TLSIdentity?, timeout: Duration = TLSConnection.stepTimeout,
                               from: String? = nil) throws -> TLSConnection {
        let context = try TLSContext.make(server: false, identity: identity, requirePeerCertificate: false)
        defer { SSL_CTX_free(context) }
        let (fd, address) = try SocketAddress.connectTCP(host: host, port: port, deadline: .now + SocketAddress.connectTimeout, from: from)
        let deadline = ContinuousClock.now + timeout
        do {
            return try TLSConnection(context: context, socket: fd, server: false, peer: address, deadline: deadline)
        } catch TLSError.timedOut {
            throw TLSError.timedOut("the TLS handshake with \(host):\(port) (is 'padgate serve' running there, and not overloaded?)")
        }
    }
}

/// IPv4 socket plumbing shared by the TCP and UDP sides.
public enum SocketAddress {
    public static func ipv4(_ address: String, port: UInt16) throws -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &addr.sin_addr) == 1 else { throw TLSError.io("'\(address)' is not an IPv4 address") }
        return addr
    }

    public static func resolve(_ host: String, port: UInt16) throws -> sockaddr_in {
        if let direct = try? ipv4(host, port: port) { return direct }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else {
            throw TLSError.io("cannot resolve '\(host)': check the host name")
        }
        defer { freeaddrinfo(result) }
        var addr = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
        addr.sin_port = port.bigEndian
        return addr
    }

    /// How long `connectTCP` keeps trying before it says the host is unreachable.
    public static let connectTimeout: Duration = .seconds(10)

    /// Connects with a fresh SYN at least every 2 s until `deadline`: the kernel's own SYN backoff
    /// (1, 2, 4, 8 s) spends a 10 s budget on four tries, which a link losing 20 % each way fails
    /// one time in 60; fresh attempts make that about one in 10⁴. "No route to host" is retried
    /// too: on a lossy LAN it means the ARP probes were lost, not that the host is gone. A refused
    /// port fails at once.
    static func connectTCP(host: String, port: UInt16, deadline: ContinuousClock.Instant, from: String? = nil) throws -> (Int32, sockaddr_in) {
        let addr = try resolve(host, port: port)
        let name = "\(host):\(port)"
        var window: Duration = .seconds(1)
        var lastTransientError: Int32?
        while true {
            let attemptEnd = min(deadline, .now + window)
            switch try attemptTCP(addr, until: attemptEnd, from: from, describing: name) {
            case .connected(let fd):
                setNoDelay(fd)
                return (fd, addr)
            case .timedOut:
                break
            case .unreachable(let code):
                lastTransientError = code
                // The kernel answers at once while the neighbour entry is still failed; wait out the window.
                let pause = attemptEnd - .now
                if pause > .zero { Thread.sleep(forTimeInterval: pause / .seconds(1)) }
            }
            guard attemptEnd < deadline else { break }
            window = .seconds(2)
        }
        if let code = lastTransientError {
            throw TLSError.io("cannot connect to \(name): \(String(cString: strerror(code))) for \(connectTimeout) — is the host up and on this network?")
        }
        throw TLSError.timedOut("connecting to \(name) (is the host up and the port open?)")
    }

    private enum ConnectAttempt {
        case connected(Int32)
        case timedOut
        /// EHOSTUNREACH / ENETUNREACH: worth another try before the deadline.
        case unreachable(Int32)
    }

    /// One connect(2).
    private static func attemptTCP(_ target: sockaddr_in, until: ContinuousClock.Instant, from: String?, describing name: String) throws -> ConnectAttempt {
        var addr = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw TLSError.io("cannot make a socket: \(String(cString: strerror(errno)))") }
        if let from {
            var local = try ipv4(from, port: 0)
            let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0 else { close(fd); throw TLSError.io("cannot connect from \(from): \(String(cString: strerror(errno)))") }
        }
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var code = rc == 0 ? 0 : errno
        if code == EINPROGRESS {
            guard (try? SocketWait.until(fd, events: Int16(POLLOUT), deadline: until)) == true else {
                close(fd)
                return .timedOut
            }
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
        }
        switch code {
        case 0:
            return .connected(fd)
        case EHOSTUNREACH, ENETUNREACH:
            close(fd)
            return .unreachable(code)
        default:
            close(fd)
            throw TLSError.io("cannot connect to \(name): \(String(cString: strerror(code))) — is 'padgate serve' running there?")
        }
    }

    static func setNoDelay(_ fd: Int32) {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    public static func localPort(of fd: Int32) -> UInt16 {
        var addr = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    public static func describeHost(_ addr: sockaddr_in) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var copy = addr.sin_addr
        inet_ntop(AF_INET, &copy, &buffer, socklen_t(buffer.count))
        return String(cString: buffer)
    }

    public static func describe(_ addr: sockaddr_in) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var copy = addr.sin_addr
        inet_ntop(AF_INET, &copy, &buffer, socklen_t(buffer.count))
        return "\(String(cString: buffer)):\(UInt16(bigEndian: addr.sin_port))"
    }
}
