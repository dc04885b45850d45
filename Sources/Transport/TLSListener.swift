import COpenSSL
import MonotonicTime
import PadSystem

/// The host's TCP listener; connections go through `acceptTCP` and `handshake` (or `accept` for a
/// single peer).
///
/// Sendable: immutable after init; connection threads complete handshakes on the one SSL_CTX,
/// which OpenSSL lets any number of threads make connections from.
public final class TLSListener: @unchecked Sendable {
    let context: OpaquePointer
    let socket: Socket
    public let port: UInt16

    /// Listens on `address:port` (port 0 picks a free one).
    public init(identity: TLSIdentity, address: String = "::", port: UInt16) throws {
        let local = try NetworkError.parse(address, port: port)
        let context = try TLSContext.make(server: true, identity: identity, requirePeerCertificate: false)
        do {
            socket = try Socket.listening(on: local)
        } catch {
            SSL_CTX_free(context)
            throw NetworkError.cannotListen(local, error.errno)
        }
        self.context = context
        self.port = socket.localAddress?.port ?? port
    }

    deinit { SSL_CTX_free(context) }

    /// Where it listens, with the port the kernel picked.
    public var localAddress: SocketAddress? { socket.localAddress }

    /// What to poll for incoming connections.
    public var descriptor: FileDescriptor { socket.descriptor }

    /// Accepts one pending TCP connection without waiting (the listening socket is non-blocking).
    /// The TLS handshake is the caller's next step, on its own deadline (`handshake`).
    public func acceptTCP() -> AcceptResult {
        while true {
            do {
                guard let (connection, peer) = try socket.accept() else { return .nothing }
                connection.setNoDelay()
                return .accepted(PendingTCP(socket: connection, peer: peer))
            } catch {
                // A connection that died in the queue is not the listener's failure: take the next.
                if error.errno == .connectionAborted || error.errno == .protocolError { continue }
                return error.errno.isResourceShortage ? .outOfResources(error.errno) : .failed(error.errno)
            }
        }
    }

    public enum AcceptResult {
        case accepted(PendingTCP)
        case nothing
        /// Out of descriptors or memory: the caller stops accepting for a while rather than spin.
        case outOfResources(Errno)
        case failed(Errno)
    }

    /// Waits for one connection and completes its handshake, all by `deadline`: for a single peer
    /// (tests, tools). A server with many peers uses `acceptTCP` and `handshake` on their own threads.
    public func accept(deadline: MonotonicInstant = .now + TLSConnection.stepTimeout) throws -> TLSConnection {
        while true {
            switch acceptTCP() {
            case .accepted(let pending): return try handshake(pending, deadline: deadline)
            case .nothing:
                guard Poll.wait(for: .readable, on: socket.descriptor, until: deadline) else {
                    throw SignalTrap.fired ? TLSError.interrupted : TLSError.timedOut("waiting for a connection")
                }
            case .outOfResources(let why), .failed(let why): throw TLSError.io("accept failed: \(why)")
            }
        }
    }

    /// Completes the server side of the TLS handshake by `deadline`.
    public func handshake(_ pending: PendingTCP, deadline: MonotonicInstant) throws -> TLSConnection {
        try TLSConnection(context: context, socket: pending.socket, server: true, peer: pending.peer, deadline: deadline)
    }
}

/// A TCP connection accepted but not yet through TLS; `TLSListener.handshake` takes its socket over.
public struct PendingTCP: Sendable {
    let socket: Socket
    public let peer: SocketAddress
    public var peerHost: String { peer.host }
    /// A descriptor of its own on the connection, for cutting it off from another thread
    /// (`shutdownSocket`) without racing the handshake thread's close.
    public func cutOffHandle() throws(SystemCallError) -> OwnedDescriptor { try socket.duplicate() }
    /// Closes a connection refused before its handshake.
    public func drop() { socket.close() }
}
