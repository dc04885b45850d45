import COpenSSL
import Foundation
import PadSystem

public enum TLSDialer {
    /// How long `connect` keeps trying TCP before it says the host is unreachable.
    public static let connectTimeout: Duration = .seconds(10)

    /// Connects to `host:port` and completes the TLS handshake, presenting `identity` if given.
    /// The TCP connect has `connectTimeout` (lost SYNs are retried); the handshake then has
    /// `timeout`, so a host that accepts TCP but never finishes TLS (frozen, overloaded, not
    /// padgate) is reported after it instead of hanging.
    /// `from`: a local address to connect from (tests that play several machines).
    public static func connect(host: String, port: UInt16, identity: TLSIdentity?, timeout: Duration = TLSConnection.stepTimeout,
                               from: String? = nil) throws -> TLSConnection {
        let context = try TLSContext.make(server: false, identity: identity, requirePeerCertificate: false)
        defer { SSL_CTX_free(context) }
        let address = try NetworkError.resolve(host, port: port)
        let local = try from.map { text throws(NetworkError) in try NetworkError.parse(text, port: 0) }
        let socket = try connectTCP(address, named: "\(host):\(port)", deadline: .now + connectTimeout, from: local)
        let deadline = ContinuousClock.now + timeout
        do {
            return try TLSConnection(context: context, socket: socket, server: false, peer: address, deadline: deadline)
        } catch TLSError.timedOut {
            throw TLSError.timedOut("the TLS handshake with \(host):\(port) (is 'padgate serve' running there, and not overloaded?)")
        }
    }

    /// Connects with a fresh SYN at least every 2 s until `deadline`: the kernel's own SYN backoff
    /// (1, 2, 4, 8 s) spends a 10 s budget on four tries, which a link losing 20 % each way fails
    /// one time in 60; fresh attempts make that about one in 10⁴. "No route to host" is retried
    /// too: on a lossy LAN it means the ARP probes were lost, not that the host is gone. A refused
    /// port fails at once.
    static func connectTCP(_ address: SocketAddress, named name: String, deadline: ContinuousClock.Instant, from: SocketAddress?) throws -> Socket {
        var window: Duration = .seconds(1)
        var lastTransientError: Errno?
        while true {
            let attemptEnd = min(deadline, .now + window)
            switch try attempt(address, until: attemptEnd, from: from, named: name) {
            case .connected(let socket):
                socket.setNoDelay()
                return socket
            case .timedOut:
                break
            case .unreachable(let code):
                lastTransientError = code
                // The kernel answers at once while the neighbour entry is still failed; wait out the window.
                if SignalTrap.sleep(attemptEnd - .now) { throw TLSError.interrupted }
            }
            guard attemptEnd < deadline else { break }
            window = .seconds(2)
        }
        if let code = lastTransientError {
            throw TLSError.io("cannot connect to \(name): \(code) for \(connectTimeout) — is the host up and on this network?")
        }
        throw TLSError.timedOut("connecting to \(name) (is the host up and the port open?)")
    }

    private enum Attempt {
        case connected(Socket)
        case timedOut
        /// EHOSTUNREACH / ENETUNREACH: worth another try before the deadline.
        case unreachable(Errno)
    }

    /// One connect(2).
    private static func attempt(_ target: SocketAddress, until: ContinuousClock.Instant, from: SocketAddress?, named name: String) throws -> Attempt {
        let socket: Socket
        do {
            socket = try Socket.stream(target.family, from: from)
        } catch {
            throw from.map { NetworkError.cannotBind($0, error.errno) } ?? TLSError.io("cannot make a socket: \(error.errno)")
        }
        var failure: Errno?
        var pending = false
        do { pending = try !socket.connect(to: target) } catch { failure = error.errno }
        if pending {
            guard Poll.wait(for: .writable, on: socket.descriptor, until: until) else {
                if SignalTrap.fired { throw TLSError.interrupted }
                return .timedOut
            }
            failure = socket.pendingError()
        }
        switch failure {
        case nil: return .connected(socket)
        case .hostUnreachable?, .networkUnreachable?: return .unreachable(failure!)
        case let code?: throw TLSError.io("cannot connect to \(name): \(code) — is 'padgate serve' running there?")
        }
    }
}
