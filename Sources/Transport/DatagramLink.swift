import Foundation
import Glibc

/// A UDP socket whose datagrams are sealed one way and opened the other.
public final class DatagramLink {
    public let socket: Int32
    let sealer: DatagramSealer
    let opener: DatagramOpener
    /// Where sealed datagrams go; the host learns it from the client's first authentic datagram.
    public var peer: sockaddr_in?
    /// Used by the one thread that sends (and receives) on the link, per datagram: unchecked.
    @exclusivity(unchecked) private var sendBuffer = [UInt8](repeating: 0, count: 1500)
    @exclusivity(unchecked) private var receiveBuffer = [UInt8](repeating: 0, count: 2048)
    @exclusivity(unchecked) private var openBuffer = [UInt8](repeating: 0, count: 2048)
    public private(set) var sent = 0
    public private(set) var received = 0

    /// Binds a UDP socket on `address:port` (0: any free port).
    public static func bindSocket(address: String = "0.0.0.0", port: UInt16 = 0) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var addr = try SocketAddress.ipv4(address, port: port)
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw TLSError.io("cannot bind UDP \(address):\(port): \(String(cString: strerror(code)))")
        }
        return fd
    }

    public init(socket: Int32, sealer: DatagramSealer, opener: DatagramOpener, peer: sockaddr_in? = nil) {
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
        guard var peer else { return false }
        let n = try sendBuffer.withUnsafeMutableBytes { try sealer.seal(payload, into: $0) }
        let rc = sendBuffer.withUnsafeBytes { bytes in
            withUnsafePointer(to: &peer) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socket, bytes.baseAddress, n, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            } }
        }
        if rc == n { sent += 1 }
        return rc == n
    }

    /// Receives and opens one datagram, if any is queued. `body` gets the payload and sender.
    /// Returns false when the socket had nothing.
    public func receiveOne(_ body: (UnsafeRawBufferPointer, sockaddr_in) -> Void) -> Bool {
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = receiveBuffer.withUnsafeMutableBytes { buffer in
            withUnsafeMutablePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(socket, buffer.baseAddress, buffer.count, 0, $0, &length)
            } }
        }
        guard n >= 0 else { return false }
        let opened = receiveBuffer.withUnsafeBytes { datagram in
            openBuffer.withUnsafeMutableBytes { opener.open(UnsafeRawBufferPointer(rebasing: datagram[0..<n]), into: $0) }
        }
        guard let count = opened else { return true }
        received += 1
        openBuffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count]), from) }
        return true
    }
}
