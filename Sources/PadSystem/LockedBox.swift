import Synchronization
import Foundation

/// A value shared between threads, behind a lock: the demo's threads, the control socket's wait
/// for an answer from the input path.
public final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    public init(_ value: Value) { stored = value }
    public var value: Value { lock.withLock { stored } }
    public func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
    /// Runs `body` on the value under the lock and returns what it returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result { try lock.withLock { try body(&stored) } }
}

/// Runs something the first time only, whichever thread asks (a notice said once per process).
public final class OnceFlag: Sendable {
    private let done = Atomic<Bool>(false)
    public init() {}
    public func once(_ body: () -> Void) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { body() }
    }
}
