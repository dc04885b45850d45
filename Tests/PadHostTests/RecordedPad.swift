import PadFamilies
import PadHost
import PadSystem
import WireProtocol

/// An in-process pad for host tests: records every state it was given, and gives the host the
/// feedback a test queues, before the game's own. From any thread, as the host's pads are made on
/// a workshop queue and driven by the input path.
final class RecordedPad: VirtualPad {
    let inner: InProcessPad
    private let recorded = LockedBox<(history: [PadStateSnapshot], pendingFeedback: [WireMessage])>(([], []))

    init(arrival: PadArrival) { inner = InProcessPad(arrival: arrival) }

    var arrival: PadArrival { inner.arrival }
    var state: PadStateSnapshot { inner.state }
    var removed: Bool { inner.removed }
    /// Every state applied, oldest first.
    var history: [PadStateSnapshot] { recorded.value.history }
    /// Feedback for the client, as ready-made messages, taken by the next `takeFeedback`.
    var pendingFeedback: [WireMessage] {
        get { recorded.value.pendingFeedback }
        set { recorded.update { $0.pendingFeedback = newValue } }
    }

    func apply(_ state: PadStateSnapshot) throws {
        try inner.apply(state)
        recorded.update { $0.history.append(state) }
    }
    func apply(_ touch: TouchSnapshot) throws { try inner.apply(touch) }
    func apply(_ motion: MotionBatch) throws { try inner.apply(motion) }
    var feedbackDescriptors: [FileDescriptor] { inner.feedbackDescriptors }
    func takeFeedback(into messages: inout [WireMessage]) throws {
        messages += recorded.withLock { recorded in defer { recorded.pendingFeedback.removeAll() }; return recorded.pendingFeedback }
        try inner.takeFeedback(into: &messages)
    }
    func remove() { inner.remove() }
}
