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
