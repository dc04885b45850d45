import Glibc

/// Runs system calls. `retrying` is the one place in padgate where an interrupted call (EINTR:
/// a signal arrived while it waited) is started again; every read, write, poll and accept goes
/// through it, so no caller can mistake a signal for an error, an empty queue or a deadline.
public enum SystemCall {
    /// How the call reports failure.
    public enum Convention: Sendable {
        /// -1 and errno (the C library).
        case errnoOnMinusOne
        /// A negative errno as the result (libevdev).
        case negatedErrno
    }

    /// Runs `body` until it is not interrupted; throws its errno (named after `call`) when it fails.
    @inlinable @inline(__always)
    public static func retrying<Result: FixedWidthInteger & SignedInteger>(_ call: StaticString, _ convention: Convention = .errnoOnMinusOne,
                                                           _ body: () -> Result) throws(SystemCallError) -> Result {
        while true {
            let result = body()
            guard result < 0 else { return result }
            let code = convention == .negatedErrno ? Errno(rawValue: CInt(truncatingIfNeeded: -result)) : Errno.current
            if code == .interrupted { continue }
            throw SystemCallError(call.description, errno: code)
        }
    }
}
