import Glibc
import Synchronization

/// A descriptor this object owns: closed exactly once, by `close()` or at deinit, whichever is
/// first. The number is never closed twice, so a second close can never hit a descriptor the
/// kernel has since handed to someone else.
public final class OwnedDescriptor: @unchecked Sendable {
    public let descriptor: FileDescriptor
    private let closed = Atomic<Bool>(false)

    public init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Takes over a descriptor a call just returned; throws its errno (named after `call`) if it is -1.
    public convenience init(_ call: StaticString, _ open: () -> CInt) throws(SystemCallError) {
        self.init(FileDescriptor(rawValue: try SystemCall.retrying(call, .errnoOnMinusOne, open)))
    }

    /// A connected pair of local stream sockets (`socketpair(2)`), close-on-exec: one end for
    /// this process, one to hand to the kernel (a USB/IP device on vhci-hcd).
    public static func streamPair() throws(SystemCallError) -> (OwnedDescriptor, OwnedDescriptor) {
        var pair: [CInt] = [-1, -1]
        _ = try SystemCall.retrying("socketpair") { socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) }
        return (OwnedDescriptor(FileDescriptor(rawValue: pair[0])), OwnedDescriptor(FileDescriptor(rawValue: pair[1])))
    }

    /// What a stream socket has now, without waiting: the byte count, 0 when the peer closed its
    /// end, nil when nothing is there.
    public func receiveAvailable(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int? {
        do {
            return try SystemCall.retrying("recv") { Glibc.recv(descriptor.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) }
        } catch where error.errno == .wouldBlock {
            return nil
        }
    }

    /// Sends all of `bytes` on a stream socket; never SIGPIPE (a peer that closed is an error for
    /// the caller, not the end of the process).
    public func sendAll(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var done = 0
        while done < bytes.count {
            done += try SystemCall.retrying("send") { Glibc.send(descriptor.rawValue, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// Ends both directions of a socket (`shutdown(2)`): a peer blocked on it wakes.
    public func shutdownBothWays() { _ = Glibc.shutdown(descriptor.rawValue, Int32(SHUT_RDWR)) }

    /// The number, for the system layer and the device drivers' C calls; not part of the public API.
    package var rawValue: CInt { descriptor.rawValue }

    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = Glibc.close(descriptor.rawValue)
    }

    /// Gives the descriptor up without closing it (libevdev, hidapi or OpenSSL took it over).
    public func release() -> FileDescriptor {
        closed.store(true, ordering: .releasing)
        return descriptor
    }

    /// A second descriptor for the same open file, owned separately (one end of a connection that
    /// another thread may cut off with `shutdown` while its owner closes its own).
    public func duplicate() throws(SystemCallError) -> OwnedDescriptor {
        try OwnedDescriptor("dup") { fcntl(descriptor.rawValue, F_DUPFD_CLOEXEC, 0) }
    }

    deinit { close() }
}
