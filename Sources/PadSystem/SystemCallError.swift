/// A system call that failed: which one, and its errno. Callers that can act on a particular
/// errno match `errno`; the rest pass the error on, and its description names both.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Errno

    public init(_ call: String, errno: Errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(errno)" }
}
