import Foundation
import Glibc

/// A UDP socket whose datagrams are sealed one way and opened the other.
public final class DatagramLink {
    public let socket: Int32
    let sealer: DatagramSealer
    let opener: DatagramOpener
    /// Where sealed datagrams go; the host learns it from the client's first authentic datagram.
    public var peer: sockaddr_in?
    private var sendBuffer = [UInt8](repeating: 0, count: 1500)
    private var receiveBuffer = [UInt8](repeating: 0, count: 2048)
    private var openBuffer = [UInt8](repeating: 0, count: 2048)
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

/// The control channel's handshake and the per-session datagram keys.
public enum ControlMessage: Equatable, Sendable {
    case hello(version: UInt8, clientName: String)
    case welcome(session: UInt32, udpPort: UInt16, leaseMillis: UInt16, maxPads: UInt8)
    case refused(reason: String)
    /// Pairing (docs/pairing.md): SPAKE2 with the client as A and the host as B.
    case pairStart(share: [UInt8], clientName: String)
    case pairReply(share: [UInt8], confirmation: [UInt8])
    case pairConfirm(confirmation: [UInt8])
    case pairResult(accepted: Bool, message: String)

    public static let protocolVersion: UInt8 = 1
    static let exporterLabel = "EXPORTER-padgate-datagram-v1"

    public func encoded() -> [UInt8] {
        switch self {
        case .hello(let version, let name):
            return [0x01, version] + Array(name.utf8.prefix(200))
        case .welcome(let session, let port, let lease, let maxPads):
            return [0x02] + be(session, 4) + be(UInt32(port), 2) + be(UInt32(lease), 2) + [maxPads]
        case .refused(let reason):
            return [0x03] + Array(reason.utf8.prefix(1000))
        case .pairStart(let share, let name):
            return [0x10, UInt8(share.count)] + share + Array(name.utf8.prefix(200))
        case .pairReply(let share, let confirmation):
            return [0x11, UInt8(share.count)] + share + confirmation
        case .pairConfirm(let confirmation):
            return [0x12] + confirmation
        case .pairResult(let accepted, let message):
            return [0x13, accepted ? 1 : 0] + Array(message.utf8.prefix(1000))
        }
    }

    public init(decoding frame: [UInt8]) throws {
        guard let type = frame.first else { throw TLSError.io("empty control frame") }
        switch type {
        case 0x01 where frame.count >= 2:
            self = .hello(version: frame[1], clientName: String(decoding: frame[2...], as: UTF8.self))
        case 0x02 where frame.count >= 10:
            let n = { (range: Range<Int>) in range.reduce(UInt32(0)) { $0 << 8 | UInt32(frame[$1]) } }
            self = .welcome(session: n(1..<5), udpPort: UInt16(n(5..<7)), leaseMillis: UInt16(n(7..<9)), maxPads: frame[9])
        case 0x03:
            self = .refused(reason: String(decoding: frame[1...], as: UTF8.self))
        case 0x10 where frame.count >= 2 && frame.count >= 2 + Int(frame[1]):
            let end = 2 + Int(frame[1])
            self = .pairStart(share: Array(frame[2..<end]), clientName: String(decoding: frame[end...], as: UTF8.self))
        case 0x11 where frame.count >= 2 && frame.count >= 2 + Int(frame[1]):
            let end = 2 + Int(frame[1])
            self = .pairReply(share: Array(frame[2..<end]), confirmation: Array(frame[end...]))
        case 0x12:
            self = .pairConfirm(confirmation: Array(frame[1...]))
        case 0x13 where frame.count >= 2:
            self = .pairResult(accepted: frame[1] == 1, message: String(decoding: frame[2...], as: UTF8.self))
        default:
            throw TLSError.io("unknown control frame 0x\(String(type, radix: 16))")
        }
    }

    /// Both directions' AES-GCM keys and IVs from the TLS session (docs/wire.md).
    public static func datagramKeys(_ connection: TLSConnection) throws -> (clientToHost: DirectionKeys, hostToClient: DirectionKeys) {
        let m = try connection.exportKeyingMaterial(label: exporterLabel, length: 2 * (32 + 12))
        return (DirectionKeys(key: Array(m[0..<32]), iv: Array(m[32..<44])),
                DirectionKeys(key: Array(m[44..<76]), iv: Array(m[76..<88])))
    }
}

private func be(_ v: UInt32, _ bytes: Int) -> [UInt8] { (0..<bytes).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt32($0))) } }
