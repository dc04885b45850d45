import COpenSSL
import Foundation
import Glibc

/// A TLS 1.3 connection over TCP carrying length-prefixed control frames. Certificates are not
/// checked against any CA: padgate pins the peer's fingerprint (known hosts, paired clients).
public final class TLSConnection {
    let ssl: OpaquePointer
    let context: OpaquePointer
    public let socket: Int32
    public let peerAddress: String
    /// The peer's certificate fingerprint, nil if it sent none (an unpaired client).
    public let peerFingerprint: String?

    init(context: OpaquePointer, socket: Int32, server: Bool, peerAddress: String) throws {
        guard let ssl = SSL_new(context) else { close(socket); throw TLSError.openssl("SSL_new") }
        self.ssl = ssl
        self.context = context
        SSL_CTX_up_ref(context)
        self.socket = socket
        self.peerAddress = peerAddress
        SSL_set_fd(ssl, socket)
        let rc = server ? SSL_accept(ssl) : SSL_connect(ssl)
        guard rc == 1 else {
            let detail = TLSError.queue()
            SSL_free(ssl); SSL_CTX_free(context); close(socket)
            throw TLSError.handshake(detail)
        }
        if let certificate = padgate_ssl_peer_certificate(ssl) {
            peerFingerprint = try? TLSIdentity.fingerprint(of: certificate)
            X509_free(certificate)
        } else {
            peerFingerprint = nil
        }
    }

    deinit {
        SSL_shutdown(ssl)
        SSL_free(ssl)
        SSL_CTX_free(context)
        close(socket)
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
    public func send(_ frame: [UInt8]) throws {
        guard frame.count <= Int(UInt16.max) else { throw TLSError.io("control frame too long") }
        let bytes = [UInt8(frame.count >> 8), UInt8(frame.count & 0xff)] + frame
        guard SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count) else { throw TLSError.closed }
    }

    /// Receives one frame; throws `.closed` when the peer is gone.
    public func receive() throws -> [UInt8] {
        let header = try read(count: 2)
        return try read(count: Int(header[0]) << 8 | Int(header[1]))
    }

    private func read(count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress! + got, Int32(count - got)) }
            guard n > 0 else { throw TLSError.closed }
            got += Int(n)
        }
        return out
    }

    /// Bytes already decrypted and waiting: poll(2) on the socket does not see them.
    public var hasBufferedData: Bool { SSL_pending(ssl) > 0 }
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
        guard bound == 0, listen(fd, 8) == 0 else {
            let code = errno
            close(fd); SSL_CTX_free(context)
            throw TLSError.io("cannot listen on \(address):\(port): \(String(cString: strerror(code)))")
        }
        self.context = context
        socket = fd
        self.port = SocketAddress.localPort(of: fd)
    }

    deinit { close(socket); SSL_CTX_free(context) }

    /// Accepts one connection and completes the TLS handshake.
    public func accept() throws -> TLSConnection {
        var peer = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = withUnsafeMutablePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(socket, $0, &length) } }
        guard fd >= 0 else { throw TLSError.io("accept failed: \(String(cString: strerror(errno)))") }
        SocketAddress.setNoDelay(fd)
        return try TLSConnection(context: context, socket: fd, server: true, peerAddress: SocketAddress.describe(peer))
    }
}

public enum TLSDialer {
    /// Connects to `host:port` and completes the TLS handshake, presenting `identity` if given.
    public static func connect(host: String, port: UInt16, identity: TLSIdentity?, timeout: Duration = .seconds(5)) throws -> TLSConnection {
        let context = try TLSContext.make(server: false, identity: identity, requirePeerCertificate: false)
        defer { SSL_CTX_free(context) }
        let (fd, address) = try SocketAddress.connectTCP(host: host, port: port, timeout: timeout)
        return try TLSConnection(context: context, socket: fd, server: false, peerAddress: address)
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

    static func connectTCP(host: String, port: UInt16, timeout: Duration) throws -> (Int32, String) {
        var addr = try resolve(host, port: port)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var tv = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw TLSError.io("cannot connect to \(host):\(port): \(String(cString: strerror(code))) — is 'padgate serve' running there?")
        }
        setNoDelay(fd)
        return (fd, describe(addr))
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

    public static func describe(_ addr: sockaddr_in) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var copy = addr.sin_addr
        inet_ntop(AF_INET, &copy, &buffer, socklen_t(buffer.count))
        return "\(String(cString: buffer)):\(UInt16(bigEndian: addr.sin_port))"
    }
}
