import PadSystem

/// Why the link's sockets could not be set up, and what to do about it.
public enum NetworkError: Error, Equatable, CustomStringConvertible {
    case badAddress(SocketAddress.ParseError)
    case cannotBind(SocketAddress, Errno)
    case cannotListen(SocketAddress, Errno)

    public var description: String {
        switch self {
        case .badAddress(let error): return error.description
        case .cannotBind(let address, let code): return "cannot bind \(address): \(code)\(Self.hint(code))"
        case .cannotListen(let address, let code): return "cannot listen on \(address): \(code)\(Self.hint(code))"
        }
    }

    private static func hint(_ code: Errno) -> String {
        code.rawValue == Errno.addressInUse.rawValue ? " (another program, or another 'padgate serve', has that port: choose another with --port)" : ""
    }

    static func parse(_ text: String, port: UInt16) throws(NetworkError) -> SocketAddress {
        do { return try SocketAddress(ip: text, port: port) } catch { throw .badAddress(error) }
    }
}
