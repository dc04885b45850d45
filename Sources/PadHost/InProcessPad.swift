import Foundation
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// A virtual pad that lives only in this process: what the demo shows where uhid and uinput are
/// missing, and what host tests build on. A "game" on another
/// thread may write DualSense output reports to it (`gameWrites`), which come back as feedback
/// exactly as they would from the uhid DualSense; a pipe wakes the host's poll for them.
public final class InProcessPad: VirtualPad {
    public var presentation: String { "in-process" }
    public let arrival: PadArrival
    private let lock = NSLock()
    private var _state: PadStateSnapshot
    private var _touch: TouchSnapshot
    private var _lastMotion: MotionBatch?
    private var _removed = false
    private var gameReports: [[UInt8]] = []
    private var translator: GameOutputTranslator
    private let wakeup = WakePipe()

    public init(arrival: PadArrival) {
        self.arrival = arrival
        _state = .neutral(arrival.slot)
        _touch = TouchSnapshot(slot: arrival.slot)
        translator = GameOutputTranslator(slot: arrival.slot)
    }

    public var state: PadStateSnapshot { lock.withLock { _state } }
    public var touch: TouchSnapshot { lock.withLock { _touch } }
    public var lastMotion: MotionBatch? { lock.withLock { _lastMotion } }
    public var removed: Bool { lock.withLock { _removed } }

    public func apply(_ state: PadStateSnapshot) throws {
        lock.withLock { _state = state }
    }
    public func apply(_ touch: TouchSnapshot) throws { lock.withLock { _touch = touch } }
    public func apply(_ motion: MotionBatch) throws { lock.withLock { _lastMotion = motion } }

    /// A game writes an output report (DualSense layout). Safe from any thread.
    public func gameWrites(_ report: [UInt8]) {
        lock.withLock { gameReports.append(report) }
        wakeup.wake()
    }

    public var feedbackDescriptors: [FileDescriptor] { [wakeup.descriptor] }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        wakeup.drain()
        let reports = lock.withLock { defer { gameReports.removeAll() }; return gameReports }
        for report in reports { messages += translator.messages(for: report) }
    }

    public func remove() { lock.withLock { _removed = true } }
}
