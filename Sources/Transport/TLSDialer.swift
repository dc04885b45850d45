import COpenSSL
import Foundation
import MonotonicTime
import PadSystem

public enum TLSDialer {
    /// How long `connect` keeps trying TCP before it says the host is unreachable.
    public static let connectTimeout: Duration = .seconds(10)

    /// Connects to `host:port` and completes the TLS handshake, presenting `identity` if given.
    /// `host` may be a name with several addresses (IPv6 and IPv4): each is tried in the
    /// resolver's order within the one `connectTimeout` (RFC 8305's idea, one attempt at a time).
    /// The handshake then has `timeout`, so a host that accepts TCP but never finishes TLS (frozen,
    /// overloaded, not padgate) is reported after it instead of hanging.
    /// `from`: a local address to connect from (tests that play several machines).
    public static func connect(host: String, port: UInt16, identity: TLSIdentity?, timeout: Duration = TLSConnection.stepTimeout,
                               from: String? = nil, within: Duration = connectTimeout) throws -> TLSConnection {
        let addresses: [SocketAddress]
        do { addresses = try SocketAddress.resolveAll(host, port: port) } catch { throw NetworkError.badAddress(error) }
        let name = addresses.count == 1 && addresses[0].host == host ? addresses[0].description : "\(host) port \(port)"
        return try connect(addresses, named: name, identity: identity, timeout: timeout, from: from, within: within)
    }

    /// The addresses a discovery found when there are some (`named` for messages), else `host`'s.
    public static func connect(host: String, port: UInt16, discovered: [SocketAddress], named name: String,
                               identity: TLSIdentity?, within: Duration = connectTimeout) throws -> TLSConnection {
        discovered.isEmpty
            ? try connect(host: host, port: port, identity: identity, within: within)
            : try connect(discovered, named: name, identity: identity, within: within)
    }

    /// Connects to the first of `addresses` that answers (those a discovery found, say).
    /// `within`: how long TCP may take (`connectTimeout` unless a caller has less to spend).
    public static func connect(_ addresses: [SocketAddress], named name: String, identity: TLSIdentity?,
                               timeout: Duration = TLSConnection.stepTimeout, from: String? = nil, within: Duration = connectTimeout) throws -> TLSConnection {
        let context = try TLSContext.make(server: false, identity: identity, requirePeerCertificate: false)
        defer { SSL_CTX_free(context) }
        let local = try from.map { text throws(NetworkError) in try NetworkError.parse(text, port: 0) }
        let connectDeadline = MonotonicInstant.now + within
        while true {
            let (socket, address) = try connectTCP(addresses, named: name, deadline: connectDeadline, window: within, from: local)
            let deadline = MonotonicInstant.now + timeout
            do {
                return try TLSConnection(context: context, socket: socket, server: false, peer: address, deadline: deadline)
            } catch TLSError.timedOut {
                throw TLSError.handshakeTimedOut(name)
            } catch TLSError.unreachable where MonotonicInstant.now < connectDeadline {
                // A lossy LAN's lost neighbour probes break a connection as it starts, as they
                // fail a connect: another one, within the same budget.
                if SignalTrap.sleep(.milliseconds(250)) { throw TLSError.interrupted }
            }
        }
    }

    /// Tries each address in turn, with a fresh SYN at least every 2 s, until one connects or
    /// `deadline`: the kernel's own SYN backoff (1, 2, 4, 8 s) spends a 10 s budget on four tries,
    /// which a link losing 20 % each way fails one time in 60; fresh attempts make that about one
    /// in 10⁴. "No route to host" is retried too: on a lossy LAN it means the ARP or neighbour
    /// probes were lost, not that the host is gone. A refused port, or an address of a family this
    /// machine cannot reach, moves on to the next address; when every address refuses, it fails.
    static func connectTCP(_ addresses: [SocketAddress], named name: String, deadline: MonotonicInstant, window budget: Duration = connectTimeout,
                           from: SocketAddress?) throws -> (Socket, SocketAddress) {
        let candidates = addresses.filter { from == nil || $0.family == from!.family }
        guard !candidates.isEmpty else { throw TLSError.io("cannot connect to \(name): no address of the family of \(from!)") }
        var window: Duration = .seconds(1)
        var lastTransientError: Errno?
        while true {
            var permanent: [(SocketAddress, Errno)] = []
            var roundEnd = MonotonicInstant.now
            for address in candidates {
                let attemptEnd = min(deadline, .now + window)
                roundEnd = attemptEnd
                switch try attempt(address, until: attemptEnd, from: from) {
                case .connected(let socket):
                    socket.setNoDelay()
                    return (socket, address)
                case .timedOut:
                    break
                case .unreachable(let code):
                    lastTransientError = code
                case .failed(let code):
                    permanent.append((address, code))
                }
                guard MonotonicInstant.now < deadline else { break }
            }
            if permanent.count == candidates.count {
                let (address, code) = permanent[0]
                let which = candidates.count == 1 ? "\(name)" : "\(name) (\(address), and \(candidates.count - 1) more address\(candidates.count == 2 ? "" : "es"))"
                throw TLSError.io("cannot connect to \(which): \(code) — is 'padgate serve' running there?")
            }
            // The kernel answers at once while the neighbour entry is still failed; wait out the window.
            if roundEnd > .now, SignalTrap.sleep(roundEnd - .now) { throw TLSError.interrupted }
            guard MonotonicInstant.now < deadline else { break }
            window = .seconds(2)
        }
        if let code = lastTransientError {
            throw TLSError.io("cannot connect to \(name): \(code) for \(budget) — is the host up and on this network?")
        }
        throw TLSError.timedOut("connecting to \(name) (is the host up and the port open?)")
    }

    private enum Attempt {
        case connected(Socket)
        case timedOut
        /// EHOSTUNREACH / ENETUNREACH: worth another try before the deadline.
        case unreachable(Errno)
        /// Refused, or a family this machine has no socket for: the next address may do better.
        case failed(Errno)
    }

    /// One connect(2).
    private static func attempt(_ target: SocketAddress, until: MonotonicInstant, from: SocketAddress?) throws -> Attempt {
        let socket: Socket
        do {
            socket = try Socket.stream(target.family, from: from)
        } catch where from == nil && error.errno == .addressFamilyNotSupported {
            return .failed(error.errno)
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
            // poll(2) also wakes for a connect that ended without a peer and without its error
            // in SO_ERROR (seen on a lossy link as neighbour probes failed): not connected.
            if failure == nil && !socket.isConnected { return .unreachable(.hostUnreachable) }
        }
        switch failure {
        case nil: return .connected(socket)
        case .hostUnreachable?, .networkUnreachable?: return .unreachable(failure!)
        case let code?: return .failed(code)
        }
    }
}
