import Glibc

/// An open file descriptor, as a type (swift-system's `FileDescriptor`): it does not own the
/// descriptor. Whatever opened it owns it, through `OwnedDescriptor` or a device handle that closes it.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    public static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    public static let standardError = FileDescriptor(rawValue: STDERR_FILENO)

    /// Reads what is there; 0 at end of file. Throws `.wouldBlock` on an empty non-blocking descriptor.
    @inlinable
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try SystemCall.retrying("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the descriptor takes; returns how much it took.
    @inlinable @discardableResult
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try SystemCall.retrying("write") { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes`, or throws.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var done = 0
        while done < bytes.count {
            done += try write(UnsafeRawBufferPointer(rebasing: bytes[done...]))
        }
    }

    /// Makes reads and writes return `.wouldBlock` instead of waiting.
    public func setNonBlocking() throws(SystemCallError) {
        let flags = try SystemCall.retrying("fcntl(F_GETFL)") { fcntl(rawValue, F_GETFL) }
        _ = try SystemCall.retrying("fcntl(F_SETFL)") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Closed on exec: a program padgate starts does not inherit it.
    public func setCloseOnExec() throws(SystemCallError) {
        _ = try SystemCall.retrying("fcntl(F_SETFD)") { fcntl(rawValue, F_SETFD, FD_CLOEXEC) }
    }

    /// Whether the descriptor is a terminal (progress drawn in place, or plain lines).
    public var isTerminal: Bool { isatty(rawValue) != 0 }

    /// The character device this descriptor is open on, if it is one (major and minor number).
    public func characterDevice() -> UInt? {
        var info = stat()
        guard fstat(rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFCHR else { return nil }
        return UInt(info.st_rdev)
    }
}
