import PadSystem

/// A UDP socket whose datagrams are sealed one way and opened the other.
public final class DatagramLink {
    public let socket: Socket
    let sealer: DatagramSealer
    let opener: DatagramOpener
    /// Where sealed datagrams go; the host learns it from the client's first authentic datagram.
    public var peer: SocketAddress?
    /// Used by the one thread that sends (and receives) on the link, per datagram: unchecked.
    @exclusivity(unchecked) private var sendBuffer = [UInt8](repeating: 0, count: 1500)
    private let inbox = DatagramInbox()
    public private(set) var sent = 0
    public private(set) var received = 0

    /// Binds a UDP socket on `address:port` (0: any free port).
    public static func bindSocket(address: String = "0.0.0.0", port: UInt16 = 0) throws(NetworkError) -> Socket {
        try bindSocket(to: try NetworkError.parse(address, port: port))
    }

    public static func bindSocket(to local: SocketAddress) throws(NetworkError) -> Socket {
        do { return try Socket.datagram(boundTo: local) } catch { throw .cannotBind(local, error.errno) }
    }

    public init(socket: Socket, sealer: DatagramSealer, opener: DatagramOpener, peer: SocketAddress? = nil) {
        self.socket = socket
        self.sealer = sealer
        self.opener = opener
        self.peer = peer
    }

    public var rejected: [DatagramRejection: Int] { opener.rejected }

    /// Seals `payload` and sends it to the peer. Returns false if there is no peer yet or the
    /// kernel refused (a full buffer is a lost datagram, which the protocol tolerates).
    @discardableResult
    public func send(payload: UnsafeRawBufferPointer) throws -> Bool {
        guard let peer else { return false }
        let n = try sendBuffer.withUnsafeMutableBytes { try sealer.seal(payload, into: $0) }
        let taken = sendBuffer.withUnsafeBytes { bytes in (try? socket.send(UnsafeRawBufferPointer(rebasing: bytes[0..<n]), to: peer)) ?? -1 }
        if taken == n { sent += 1 }
        return taken == n
    }

    /// Receives and opens one datagram, if any is queued. `body` gets the payload and sender.
    /// Returns false when the socket had nothing.
    public func receiveOne(_ body: (UnsafeRawBufferPointer, SocketAddress) -> Void) -> Bool {
        let opener = self.opener
        switch inbox.receiveOne(from: socket, opener: { _ in opener }, { payload, from in received += 1; body(payload, from) }) {
        case .nothing: return false
        default: return true
        }
    }
}
