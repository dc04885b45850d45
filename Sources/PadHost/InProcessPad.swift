import WireProtocol

/// A virtual pad that lives only in this process: what the demo shows where uhid and uinput are
/// missing, and what host tests inspect. It records every state it was given.
public final class InProcessPad: VirtualPad {
    public let arrival: PadArrival
    public private(set) var state: PadStateSnapshot
    public private(set) var touch: TouchSnapshot
    public private(set) var lastMotion: MotionBatch?
    public private(set) var removed = false
    public private(set) var history: [PadStateSnapshot] = []
    /// Feedback a test or the demo's "game" queues for the client.
    public var pendingFeedback: [WireMessage] = []

    public init(arrival: PadArrival) {
        self.arrival = arrival
        state = .neutral(arrival.slot)
        touch = TouchSnapshot(slot: arrival.slot)
    }

    public func apply(_ state: PadStateSnapshot) throws { self.state = state; history.append(state) }
    public func apply(_ touch: TouchSnapshot) throws { self.touch = touch }
    public func apply(_ motion: MotionBatch) throws { lastMotion = motion }
    public var feedbackDescriptors: [Int32] { [] }
    public func takeFeedback() throws -> [WireMessage] { defer { pendingFeedback.removeAll() }; return pendingFeedback }
    public func remove() { removed = true }
}
