import Glibc

/// A non-blocking pipe whose only job is to wake a poll(2): one side calls `wake()` (one byte,
/// safe from any thread and from a signal handler), the polling side watches `descriptor` and
/// calls `drain()` before it looks for the work. Its owner closes it.
public struct WakePipe: Sendable {
    public let descriptor: Int32
    private let writeEnd: Int32

    /// Both ends are -1 if the process is out of descriptors; waking is then a no-op and the
    /// poller falls back on its timeout.
    public init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        descriptor = fds[0]
        writeEnd = fds[1]
    }

    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    public func drain() {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    public func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        if writeEnd >= 0 { _ = Glibc.close(writeEnd) }
    }
}
