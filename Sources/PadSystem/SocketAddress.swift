import Glibc

/// An IP socket address, IPv4 or IPv6 alike (an IPv6 one keeps its scope, for link-local
/// addresses). Printed as `1.2.3.4:port` or `[v6%scope]:port`, the forms people type back.
public enum SocketAddress: Sendable, Equatable, Hashable, CustomStringConvertible {
    case ipv4(sockaddr_in)
    case ipv6(sockaddr_in6)

    public enum Family: Sendable { case ipv4, ipv6 }

    /// Why a text is not an address: not numeric, or (`lookedUp`) no host by that name.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let text: String
        public let lookedUp: Bool
        public var description: String {
            lookedUp ? "cannot resolve '\(text)': check the host name" : "'\(text)' is not an IP address"
        }
    }

    /// A numeric address: `1.2.3.4`, `::1`, `fe80::1%eth0` (a scope by interface name or number).
    public init(ip text: String, port: UInt16) throws(ParseError) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .ipv4(v4)
            return
        }
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var v6 = sockaddr_in6()
        guard let host = parts.first, inet_pton(AF_INET6, String(host), &v6.sin6_addr) == 1 else { throw ParseError(text: text, lookedUp: false) }
        if parts.count == 2 {
            let scope = String(parts[1])
            guard let index = UInt32(scope) ?? Self.interfaceIndex(scope) else { throw ParseError(text: text, lookedUp: false) }
            v6.sin6_scope_id = index
        }
        v6.sin6_family = sa_family_t(AF_INET6)
        v6.sin6_port = port.bigEndian
        self = .ipv6(v6)
    }

    /// Every address on all interfaces (`0.0.0.0` or `::`), for listening.
    public static func any(_ family: Family, port: UInt16) -> SocketAddress {
        switch family {
        case .ipv4: return try! SocketAddress(ip: "0.0.0.0", port: port)
        case .ipv6: return try! SocketAddress(ip: "::", port: port)
        }
    }

    /// A numeric address as it is, else every address the resolver gives for `host`, in its order
    /// (RFC 6724's preference: usually IPv6 first where the machine has a route for it), each once.
    public static func resolveAll(_ host: String, port: UInt16) throws(ParseError) -> [SocketAddress] {
        if let direct = try? SocketAddress(ip: host, port: port) { return [direct] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { throw ParseError(text: host, lookedUp: true) }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if var address = SocketAddress(current.pointee.ai_addr) {
                address.port = port
                if !addresses.contains(address) { addresses.append(address) }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw ParseError(text: host, lookedUp: true) }
        return addresses
    }

    /// `::`, IPv6's every-address.
    public var isIPv6Unspecified: Bool {
        guard case .ipv6(var a) = self else { return false }
        return withUnsafeBytes(of: &a.sin6_addr) { $0.allSatisfy { $0 == 0 } }
    }

    /// An IPv4 peer as a dual-stack socket reports it (`::ffff:a.b.c.d`): printed and counted as
    /// the IPv4 address it is.
    public var isIPv4Mapped: Bool {
        guard case .ipv6(var a) = self else { return false }
        return withUnsafeBytes(of: &a.sin6_addr) { bytes in
            bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        }
    }

    /// The address a kernel call filled in, if it is IPv4 or IPv6.
    public init?(_ address: UnsafePointer<sockaddr>?) {
        guard let address else { return nil }
        switch Int32(address.pointee.sa_family) {
        case AF_INET: self = .ipv4(UnsafeRawPointer(address).load(as: sockaddr_in.self))
        case AF_INET6: self = .ipv6(UnsafeRawPointer(address).load(as: sockaddr_in6.self))
        default: return nil
        }
    }

    init?(storage: sockaddr_storage) {
        var copy = storage
        guard let address = withUnsafePointer(to: &copy, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0) } }) else { return nil }
        self = address
    }

    public var family: Family {
        switch self {
        case .ipv4: return .ipv4
        case .ipv6: return .ipv6
        }
    }

    public var port: UInt16 {
        get {
            switch self {
            case .ipv4(let a): return UInt16(bigEndian: a.sin_port)
            case .ipv6(let a): return UInt16(bigEndian: a.sin6_port)
            }
        }
        set {
            switch self {
            case .ipv4(var a): a.sin_port = newValue.bigEndian; self = .ipv4(a)
            case .ipv6(var a): a.sin6_port = newValue.bigEndian; self = .ipv6(a)
            }
        }
    }

    /// The address without its port: `1.2.3.4` or `fe80::1%eth0`, for limits per source.
    public var host: String {
        switch self {
        case .ipv4(var a):
            var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &a.sin_addr, &buffer, socklen_t(buffer.count))
            return String(nulTerminated: buffer)
        case .ipv6(var a) where isIPv4Mapped:
            return withUnsafeBytes(of: &a.sin6_addr) { "\($0[12]).\($0[13]).\($0[14]).\($0[15])" }
        case .ipv6(var a):
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            inet_ntop(AF_INET6, &a.sin6_addr, &buffer, socklen_t(buffer.count))
            let text = String(nulTerminated: buffer)
            guard a.sin6_scope_id != 0 else { return text }
            return text + "%" + (Self.interfaceName(a.sin6_scope_id) ?? String(a.sin6_scope_id))
        }
    }

    public var description: String {
        switch self {
        case .ipv4: return "\(host):\(port)"
        case .ipv6: return isIPv4Mapped ? "\(host):\(port)" : "[\(host)]:\(port)"
        }
    }

    /// The address as the kernel takes it, with its length.
    @inlinable
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        switch self {
        case .ipv4(var a):
            return try withUnsafePointer(to: &a) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        case .ipv6(var a):
            return try withUnsafePointer(to: &a) { try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        }
    }

    public static func == (a: SocketAddress, b: SocketAddress) -> Bool {
        switch (a, b) {
        case (.ipv4(let x), .ipv4(let y)):
            return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr
        case (.ipv6(var x), .ipv6(var y)):
            return x.sin6_port == y.sin6_port && x.sin6_scope_id == y.sin6_scope_id
                && memcmp(&x.sin6_addr, &y.sin6_addr, MemoryLayout<in6_addr>.size) == 0
        default:
            return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(port)
        switch self {
        case .ipv4(let a): hasher.combine(a.sin_addr.s_addr)
        case .ipv6(var a):
            hasher.combine(a.sin6_scope_id)
            withUnsafeBytes(of: &a.sin6_addr) { hasher.combine(bytes: $0) }
        }
    }

    private static func interfaceIndex(_ name: String) -> UInt32? {
        let index = if_nametoindex(name)
        return index == 0 ? nil : index
    }

    private static func interfaceName(_ index: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(IF_NAMESIZE))
        guard if_indextoname(index, &buffer) != nil else { return nil }
        return String(nulTerminated: buffer)
    }
}

/// What people type for a peer: `HOST`, `HOST:PORT`, `[IPV6]:PORT`, or a bare IPv6 address such as
/// `::1` or `fe80::1%eth0` (a link-local one with its interface). Printed back in the same forms.
public struct HostAndPort: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) { self.host = host; self.port = port }

    /// Nil when the text is none of those forms, or the port is not 1-65535.
    public init?(_ text: String, defaultPort: UInt16) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { port = defaultPort }
            else if rest.first == ":", let number = UInt16(rest.dropFirst()), number != 0 { port = number }
            else { return nil }
            guard Self.isIPv6Literal(host) else { return nil }
        } else if text.filter({ $0 == ":" }).count >= 2 {
            // Two colons or more without brackets: an IPv6 address alone (its last group is no port).
            guard Self.isIPv6Literal(text) else { return nil }
            host = text; port = defaultPort
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count == 2, let number = UInt16(parts[1]), number != 0 { host = String(parts[0]); port = number }
            else if parts.count == 1 { host = text; port = defaultPort }
            else { return nil }
        }
        // Host names are ASCII (an international name goes as its xn-- form) and at most 253 bytes.
        guard !host.isEmpty, host.utf8.count <= 253, host.unicodeScalars.allSatisfy({ (0x21..<0x7f).contains($0.value) }) else { return nil }
    }

    /// `fe80::1%eth0` and `::1` are; the scope is checked when the address is used (the interface
    /// may come later), not here.
    public static func isIPv6Literal(_ text: String) -> Bool {
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var bytes = in6_addr()
        guard address.count == 1 || !address[1].isEmpty else { return false }
        return inet_pton(AF_INET6, String(address[0]), &bytes) == 1
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
