import Foundation

/// Hands work from one thread to another loop that sleeps in poll(2): `post` queues and wakes,
/// the loop watches `descriptor` and takes everything with `drain`.
public final class Mailbox<Item>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Item] = []
    private var spare: [Item] = []
    private let wake = WakePipe()

    public init() {}

    /// What to poll (-1 when the process was out of descriptors: the loop then relies on its timeout).
    public var descriptor: FileDescriptor { wake.descriptor }

    public func post(_ item: Item) {
        lock.withLock { items.append(item) }
        wake.wake()
    }

    /// Every queued item, oldest first. Swaps buffers so a steady flow allocates nothing.
    public func drain(_ body: (Item) -> Void) {
        wake.drain()
        lock.withLock { swap(&items, &spare) }
        for item in spare { body(item) }
        spare.removeAll(keepingCapacity: true)
    }

    public func wakeOnly() { wake.wake() }
}
