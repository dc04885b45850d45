import Glibc

/// A non-blocking pipe whose only job is to wake a poll(2): one side calls `wake()` (one byte,
/// safe from any thread and from a signal handler), the polling side watches `descriptor` and
/// calls `drain()` before it looks for the work. Both ends close with it.
public final class WakePipe: @unchecked Sendable {
    private let readEnd: OwnedDescriptor?
    private let writeEnd: OwnedDescriptor?

    /// Without ends if the process is out of descriptors: waking is then a no-op and the poller
    /// falls back on its timeout.
    public init() {
        var fds: [CInt] = [-1, -1]
        guard pipe(&fds) == 0 else { readEnd = nil; writeEnd = nil; return }
        readEnd = OwnedDescriptor(FileDescriptor(rawValue: fds[0]))
        writeEnd = OwnedDescriptor(FileDescriptor(rawValue: fds[1]))
        for end in [readEnd!, writeEnd!] {
            try? end.descriptor.setNonBlocking()
            try? end.descriptor.setCloseOnExec()
        }
    }

    /// What to poll. -1 when the pipe could not be made: poll(2) skips negative descriptors.
    public var descriptor: FileDescriptor { readEnd?.descriptor ?? FileDescriptor(rawValue: -1) }

    /// One write(2), async-signal-safe. A full pipe already wakes the poller: the byte is not needed.
    public func wake() {
        guard let writeEnd else { return }
        var byte: UInt8 = 1
        _ = try? withUnsafeBytes(of: &byte) { (bytes) throws(SystemCallError) in try writeEnd.descriptor.write(bytes) }
    }

    public func drain() {
        guard let readEnd else { return }
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while ((try? withUnsafeMutableBytes(of: &sink) { (bytes) throws(SystemCallError) in try readEnd.descriptor.read(into: bytes) }) ?? 0) > 0 {}
    }

    public func close() {
        readEnd?.close()
        writeEnd?.close()
    }
}
