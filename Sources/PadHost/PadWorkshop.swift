import Dispatch
import PadFamilies
import WireProtocol

/// Makes and unplugs one session's kernel pads on a queue of its own, so the input path never
/// waits for a driver's probe and one client's pads never wait for another's. Results come back
/// to the input path through `deliver`.
final class PadWorkshop: PadMaker {
    let factory: VirtualPadFactory
    let queue: DispatchQueue
    let deliver: @Sendable (@escaping () -> Void) -> Void
    /// Every workshop's makes and removals, counted until they ran: a workshop goes with its last
    /// session, but what it queued still runs, and the server waits for it when it stops.
    let outstanding: DispatchGroup

    init(label: String, factory: @escaping VirtualPadFactory, outstanding: DispatchGroup,
         deliver: @escaping @Sendable (@escaping () -> Void) -> Void) {
        self.factory = factory
        self.deliver = deliver
        self.outstanding = outstanding
        queue = DispatchQueue(label: "padgate.pads.\(label)")
    }

    func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void) {
        let done = Handover(done)
        queue.async(group: outstanding) { [factory, deliver] in
            let result = Handover(Result { try factory(arrival) })
            deliver { done.value(result.value) }
        }
    }

    func remove(_ pad: VirtualPad) {
        let pad = Handover(pad)
        queue.async(group: outstanding) { pad.value.remove() }
    }

    /// A pad, or the input path's callback, crossing between the input path and this queue. Each
    /// has one user at a time, and the queue and the mailbox order the hand-over: `done` is only
    /// ever called on the input path, a new pad is touched by the input path only once `done`
    /// delivers it, and a pad given to `remove` is no longer touched by the input path.
    private struct Handover<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
}
