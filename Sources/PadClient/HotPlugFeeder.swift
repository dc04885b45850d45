import Foundation
import Logging
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// Follows hot-plug for `forward`: opens arriving pads as `policy` says and hands them to the
/// forwarder, takes unplugged ones away. Runs on its own thread (opening a pad can wait on the
/// kernel); the forwarder takes the changes between reports.
public final class HotPlugFeeder: @unchecked Sendable {
    /// Opens a pad as `reading` says, in `slot`.
    public typealias Opener = (Pad, PadSlot, HotPlugPolicy.Reading) throws -> PadSource

    public private(set) var policy: HotPlugPolicy
    let post: (PadForwarder.SourceChange) -> Void
    let open: Opener
    public var logger = Logger(label: "padgate.client.hotplug")
    /// Whether a forwarded pad's hidraw node is checked for other readers as it is opened (`forward`
    /// without `--shared`: its evdev nodes are held, its hidraw node cannot be).
    public var namesHidrawReaders = false
    /// The forwarded pads by id.
    public private(set) var sources: [String: PadSource] = [:]
    private let wake = WakePipe()
    private let lock = NSLock()
    private var stopped = false

    public init(policy: HotPlugPolicy, post: @escaping (PadForwarder.SourceChange) -> Void, open: @escaping Opener = HotPlugFeeder.openDevice) {
        self.policy = policy
        self.post = post
        self.open = open
    }

    public convenience init(policy: HotPlugPolicy, forwarder: PadForwarder, open: @escaping Opener = HotPlugFeeder.openDevice) {
        self.init(policy: policy, post: { [changes = forwarder.changes] in changes.post($0) }, open: open)
    }

    /// Forwards the pads already there, then follows `monitor` until `stop`.
    public func run(monitor: PadMonitor) {
        attach(monitor.pads)
        if sources.isEmpty { logger.info("no pad yet; waiting for one to be plugged in") }
        while !lock.withLock({ stopped }) {
            let ready = Poll.wait([monitor.descriptor, wake.descriptor], timeout: nil)
            if ready[0].readable { handle(monitor.handleEvents(), pads: monitor.pads) }
        }
        for source in sources.values { source.silence() }
    }

    public func stop() {
        lock.withLock { stopped = true }
        wake.wake()
    }

    /// Forwards each of `pads` the policy takes (the pads present at start).
    public func attach(_ pads: [Pad]) {
        for (index, pad) in pads.enumerated() { attach(pad, index: index) }
    }

    /// Carries out what the policy says about `changes`; `pads` is the monitor's list after them.
    public func handle(_ changes: [PadChange], pads: [Pad]) {
        for change in changes {
            for action in policy.actions(for: change, forwarded: { sources[$0] != nil }, index: { pads.firstIndex(of: $0) ?? 0 }) {
                switch action {
                case .detach(let id):
                    guard let source = sources.removeValue(forKey: id) else { continue }
                    post(.remove(source))
                    if case .removed(let gone) = change { logger.info("\(gone.name) was unplugged") }
                case .attach(let pad, let index):
                    attach(pad, index: index)
                }
            }
        }
    }

    func attach(_ pad: Pad, index: Int) {
        guard sources[pad.id] == nil, policy.forwards(pad, at: index) else { return }
        let slot = policy.slotForNext
        do {
            let (source, path) = try openPreferred(pad, slot: slot)
            policy.opened()
            sources[pad.id] = source
            post(.add(source))
            let stored = source.motionCorrection != nil
            let correction = switch source.gyroCalibration {
            case .continuous: stored ? " (gyro calibrated at rest, from the bias 'padgate calibrate' stored)" : " (gyro calibrated at rest)"
            case .stored: stored ? " (with the gyro correction 'padgate calibrate' stored)" : ""
            case .off: ""
            }
            let note = PadDrivers.driver(for: pad.kind).readingNote(for: pad).map { " (\($0))" } ?? ""
            logger.info("forwarding \(pad.kind.displayName) \(pad.name) from \(path) as slot \(slot.rawValue)\(correction)\(note)")
            if namesHidrawReaders, let hidraw = pad.hidraw {
                let readers = HIDRawReaders.processes(holding: hidraw)
                if !readers.isEmpty {
                    let names = readers.map { "\(TerminalText.escaped($0.command)) (pid \($0.pid))" }.joined(separator: ", ")
                    logger.warning("\(pad.name): \(hidraw) is also open by \(names): they still read the pad while it is forwarded; close them (docs/desk.md)")
                }
            }
        } catch {
            logger.error("cannot read \(pad.name): \(error)")
        }
    }

    /// As the policy reads it; from evdev when hidraw cannot be opened (said here, once per pad).
    func openPreferred(_ pad: Pad, slot: PadSlot) throws -> (PadSource, String) {
        if case .hidraw(let path) = policy.reading(for: pad) {
            do {
                return (try open(pad, slot, .hidraw(path: path)), path)
            } catch DeviceError.grabbedElsewhere(let node) {
                throw DeviceError.grabbedElsewhere(path: node)  // its evdev nodes are what is held
            } catch {
                logger.warning("cannot read \(pad.name) from \(path) (\(error)); reading its evdev nodes instead")
            }
        }
        return (try open(pad, slot, .evdev), pad.gamepadNode?.path ?? "evdev")
    }

    /// The real devices: hidraw through its typed decoder, evdev through its nodes; the gyro calibrated continuously.
    public static func openDevice(_ pad: Pad, slot: PadSlot, reading: HotPlugPolicy.Reading) throws -> PadSource {
        try opener(gyroCalibration: .continuous)(pad, slot, reading)
    }

    /// The real devices, their gyro corrected as `gyroCalibration` says, their feedback as `options`;
    /// `exclusive`: each pad's evdev nodes held for `forward` alone while it forwards the pad.
    public static func opener(gyroCalibration: GyroCalibrationMode, options: PadFeedback.Options = .init(), exclusive: Bool = false) -> Opener {
        { pad, slot, reading in
            switch reading {
            case .hidraw: return try HidrawPadSource(pad: pad, slot: slot, options: options, gyroCalibration: gyroCalibration, exclusive: exclusive)
            case .evdev: return try EvdevPadSource(pad: pad, slot: slot, options: options, gyroCalibration: gyroCalibration, exclusive: exclusive)
            }
        }
    }
}
