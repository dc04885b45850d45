import Foundation

/// A thread that can be waited for (Foundation's Thread has no join).
public final class JoinableThread: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    /// `body` is sent to the thread: the compiler checks that the caller keeps no access to what
    /// it captures that is not Sendable.
    public init(_ body: sending @escaping () -> Void) {
        let finished = finished
        // Thread takes only @Sendable blocks; `sending` already made `body` the new thread's alone.
        nonisolated(unsafe) let body = body
        Thread { body(); finished.signal() }.start()
    }

    public func join() {
        finished.wait()
        finished.signal()  // a second join returns at once
    }
}
