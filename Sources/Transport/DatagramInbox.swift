import PadSystem

/// The one receive path for sealed datagrams, the client's and the host's: one recvfrom into a
/// kept buffer, the opener the header's session id picks, the payload opened into another kept
/// buffer. Nothing is allocated per datagram.
public final class DatagramInbox {
    @exclusivity(unchecked) private var datagram = [UInt8](repeating: 0, count: 2048)
    @exclusivity(unchecked) private var opened = [UInt8](repeating: 0, count: 2048)

    public init() {}

    public enum Receipt: Equatable {
        /// Nothing queued (or the socket failed, which the next poll reports).
        case nothing
        /// No opener for it: shorter than a header (`.truncated`) or for no session here (`.wrongSession`).
        case unrouted(DatagramRejection)
        /// Its opener refused it (and counted why).
        case rejected
        case opened
    }

    /// Receives one datagram from `socket`. `opener` gets the session id its header names (nil
    /// when it is shorter than a header) and returns the opener for it, or nil. An opened payload
    /// goes to `body` with its sender.
    @inline(__always)
    public func receiveOne(from socket: Socket, opener: (UInt32?) -> DatagramOpener?,
                                    _ body: (UnsafeRawBufferPointer, SocketAddress) -> Void) -> Receipt {
        guard let (n, from) = datagram.withUnsafeMutableBytes({ try? socket.receive(into: $0) }) ?? nil else { return .nothing }
        return datagram.withUnsafeBytes { buffer in
            let sealed = UnsafeRawBufferPointer(rebasing: buffer[0..<n])
            let session = DatagramFormat.session(of: sealed)
            guard let opener = opener(session) else { return .unrouted(session == nil ? .truncated : .wrongSession) }
            guard let count = opened.withUnsafeMutableBytes({ opener.open(sealed, into: $0) }) else { return .rejected }
            opened.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count]), from) }
            return .opened
        }
    }
}
