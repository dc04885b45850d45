import Glibc

/// An IPv4 or IPv6 socket that closes with this object. Non-blocking from the start: every wait
/// is a poll(2) with a deadline (`Poll.wait(for:on:until:)`), never a blocking call.
public final class Socket: @unchecked Sendable {
    private let owned: OwnedDescriptor
    public let family: SocketAddress.Family

    private init(_ owned: OwnedDescriptor, family: SocketAddress.Family) {
        self.owned = owned
        self.family = family
    }

    private convenience init(family: SocketAddress.Family, type: __socket_type) throws(SystemCallError) {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        let flags = Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        self.init(try OwnedDescriptor("socket") { Glibc.socket(domain, flags, 0) }, family: family)
    }

    /// A UDP socket bound to `address` (port 0: any free one). Bound to `::`, it takes IPv4 too.
    public static func datagram(boundTo address: SocketAddress) throws(SystemCallError) -> Socket {
        let socket = try Socket(family: address.family, type: SOCK_DGRAM)
        try socket.allowIPv4IfUnspecified(address)
        try socket.bind(to: address)
        return socket
    }

    /// A TCP socket listening on `address` (port 0: any free one). Listening on `::`, it takes
    /// IPv4 connections too (their peers read as `::ffff:a.b.c.d`, printed as IPv4).
    public static func listening(on address: SocketAddress, backlog: Int32 = 64) throws(SystemCallError) -> Socket {
        let socket = try Socket(family: address.family, type: SOCK_STREAM)
        try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)")
        try socket.allowIPv4IfUnspecified(address)
        try socket.bind(to: address)
        _ = try SystemCall.retrying("listen") { Glibc.listen(socket.owned.rawValue, backlog) }
        return socket
    }

    /// A TCP socket not yet connected (`connect(to:)`), bound first to `local` if given.
    public static func stream(_ family: SocketAddress.Family, from local: SocketAddress? = nil) throws(SystemCallError) -> Socket {
        let socket = try Socket(family: family, type: SOCK_STREAM)
        if let local { try socket.bind(to: local) }
        return socket
    }

    public var descriptor: FileDescriptor { owned.descriptor }

    public func close() { owned.close() }

    /// A second descriptor on this socket, owned separately: another thread may `shutdown` it to
    /// cut the connection off without racing the owner's close.
    public func duplicate() throws(SystemCallError) -> OwnedDescriptor { try owned.duplicate() }

    public func bind(to address: SocketAddress) throws(SystemCallError) {
        _ = try SystemCall.retrying("bind") { address.withSockaddr { Glibc.bind(owned.rawValue, $0, $1) } }
    }

    /// Starts connecting; true if connected at once, false if under way (wait until writable,
    /// then read `pendingError`).
    public func connect(to address: SocketAddress) throws(SystemCallError) -> Bool {
        do {
            _ = try SystemCall.retrying("connect") { address.withSockaddr { Glibc.connect(owned.rawValue, $0, $1) } }
            return true
        } catch where error.errno == .inProgress {
            return false
        }
    }

    /// Whether the socket has a peer (getpeername): a connect that poll(2) woke on may have ended
    /// without one.
    public var isConnected: Bool {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(owned.rawValue, $0, &length) == 0 }
        }
    }

    /// The outcome of a connect that was under way (SO_ERROR): nil if it succeeded.
    public func pendingError() -> Errno? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(owned.rawValue, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return .current }
        return code == 0 ? nil : Errno(rawValue: code)
    }

    /// Accepts one queued connection (non-blocking and close-on-exec like this one); nil if none is queued.
    public func accept() throws(SystemCallError) -> (Socket, SocketAddress)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        do {
            let fd = try SystemCall.retrying("accept") {
                withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(owned.rawValue, $0, &length)
                } }
            }
            let peer = SocketAddress(storage: storage) ?? .any(family, port: 0)
            let socket = Socket(OwnedDescriptor(FileDescriptor(rawValue: fd)), family: peer.family)
            try socket.descriptor.setCloseOnExec()
            try socket.descriptor.setNonBlocking()
            return (socket, peer)
        } catch where error.errno == .wouldBlock {
            return nil
        }
    }

    /// Sends each write at once instead of waiting to fill a segment (control frames are small).
    public func setNoDelay() {
        try? setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1, "setsockopt(TCP_NODELAY)")
    }

    /// Where the socket is bound (the port the kernel picked for port 0).
    public var localAddress: SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(owned.rawValue, $0, &length) } }
        return rc == 0 ? SocketAddress(storage: storage) : nil
    }

    /// Sends one datagram to `address`; returns how many bytes the kernel took. A full buffer
    /// throws `.wouldBlock`: a lost datagram, which the caller's protocol tolerates.
    @inlinable
    public func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress) throws(SystemCallError) -> Int {
        let fd = descriptor.rawValue
        return try SystemCall.retrying("sendto") { address.withSockaddr { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, $1) } }
    }

    /// Receives one queued datagram into `buffer`: its length and sender, nil when none is queued.
    /// The one receive path for sealed datagrams, client and host alike.
    @inlinable
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> (count: Int, from: SocketAddress)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = descriptor.rawValue
        do {
            let n = try SystemCall.retrying("recvfrom") {
                withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, buffer.baseAddress, buffer.count, 0, $0, &length)
                } }
            }
            let from = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) } }
            return (n, from ?? .any(family, port: 0))
        } catch where error.errno == .wouldBlock {
            return nil
        }
    }

    /// `::` means both families whatever net.ipv6.bindv6only says: dual-stack is set, not inherited.
    private func allowIPv4IfUnspecified(_ address: SocketAddress) throws(SystemCallError) {
        if address.isIPv6Unspecified { try setOption(Int32(IPPROTO_IPV6), IPV6_V6ONLY, 0, "setsockopt(IPV6_V6ONLY)") }
    }

    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32, _ call: StaticString) throws(SystemCallError) {
        var value = value
        _ = try SystemCall.retrying(call) { setsockopt(owned.rawValue, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }
}

extension FileDescriptor {
    /// Ends a connection both ways: the peer sees it closed and a thread waiting on it wakes.
    public func shutdownSocket() { _ = Glibc.shutdown(rawValue, Int32(SHUT_RDWR)) }
}
