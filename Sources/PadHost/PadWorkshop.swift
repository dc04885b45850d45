import Dispatch
import WireProtocol

/// Makes and unplugs one session's kernel pads on a queue of its own, so the input path never
/// waits for a driver's probe and one client's pads never wait for another's. Results come back
/// to the input path through `deliver`.
final class PadWorkshop: PadMaker {
    let factory: VirtualPadFactory
    let queue: DispatchQueue
    let deliver: (@escaping () -> Void) -> Void

    init(label: String, factory: @escaping VirtualPadFactory, deliver: @escaping (@escaping () -> Void) -> Void) {
        self.factory = factory
        self.deliver = deliver
        queue = DispatchQueue(label: "padgate.pads.\(label)")
    }

    func make(_ arrival: PadArrival, done: @escaping (Result<VirtualPad, Error>) -> Void) {
        queue.async { [factory, deliver] in
            let result = Result { try factory(arrival) }
            deliver { done(result) }
        }
    }

    func remove(_ pad: VirtualPad) {
        queue.async { pad.remove() }
    }

    /// Waits until every queued make and removal ran (the server's shutdown).
    func finish() { queue.sync {} }
}
