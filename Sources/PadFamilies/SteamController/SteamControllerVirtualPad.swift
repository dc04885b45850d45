import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded pad shown to games as a Steam Controller (2026; `serve --show steam-controller=itself`):
/// the controller's HID interface through uhid (`EmulatedSteamController`, wired, 28de:1302), which
/// hid-generic binds as the real one and SDL 3.4's own driver opens through its hidraw node. The
/// wire's controls go into its state report (the Deck's terms, as `SteamDeckVirtualPad` fills
/// them); its rumble (0x80) comes back as a lease and its trackpads' pulse trains (0x81) as pulses.
public final class SteamControllerVirtualPad: VirtualPad {
    public let arrival: PadArrival
    let device: EmulatedSteamController
    var controls = SteamControllerReports.Controls()
    var lastLevels = MotorLevels.silent
    var sequence = WireSequence(0)
    /// The last rumble report that sounded: the real controller stops a level by itself about
    /// 50 ms after it (SDL re-sends every 40), so the host pad's rumble ends `rumbleHold` after it
    /// unless the game sends again (a game killed mid-rumble leaves the pad still).
    var lastRumble: MonotonicInstant?
    public static let rumbleHold: Duration = .milliseconds(100)

    public init(arrival: PadArrival) throws {
        self.arrival = arrival
        device = try EmulatedSteamController(phys: PadPhys.hostVirtual, serial: SteamDeckVirtualPad.serial(for: arrival, kind: .steamController))
    }

    public var presentation: String { "uhid (Steam Controller)" }

    public func apply(_ s: PadStateSnapshot) throws { if SteamDeckVirtualPad.take(s, into: &controls) { try device.send(controls) } }

    public func apply(_ touch: TouchSnapshot) throws { if SteamDeckVirtualPad.take(touch, into: &controls) { try device.send(controls) } }

    /// The controller's IMU has the Deck's scales and axes.
    public func apply(_ motion: MotionBatch) throws {
        for i in 0..<motion.count {
            SteamDeckVirtualPad.take(motion[i], into: &controls)
            try device.send(controls)
        }
    }

    public var feedbackDescriptors: [FileDescriptor] { [device.outputReadyDescriptor] }

    public var rumbleEnds: MonotonicInstant? { lastLevels.isSilent ? nil : lastRumble.map { $0 + Self.rumbleHold } }
    public var feedbackDeadline: MonotonicInstant? { rumbleEnds }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        let now = MonotonicInstant.now
        var pulses = NewestPulses()
        for report in device.takeOutputs() {
            switch Self.feedback(for: report, slot: arrival.slot, lastLevels: &lastLevels, sequence: &sequence) {
            case .rumble(let message, let sounds):
                if sounds { lastRumble = now }
                if let message { messages.append(message) }
            case .pulse(let pulse): pulses.take(pulse)
            case nil: break
            }
        }
        pulses.append(to: &messages)
        if let ends = rumbleEnds, now >= ends {
            lastLevels = .silent
            messages.append(.rumble(.unnumbered(slot: arrival.slot, levels: .silent, ttlMillis: 0)))
        }
    }

    enum Feedback {
        /// A rumble report: the lease when the levels changed, and whether it sounds.
        case rumble(WireMessage?, sounds: Bool)
        case pulse(TrackpadPulse)
    }

    /// A report a game sent the controller (its id first): rumble (the strong motor is the
    /// low-frequency one), a pulse train (cut to the wire's longest), or nothing the client plays
    /// (settings, lizard mode).
    static func feedback(for report: [UInt8], slot: PadSlot, lastLevels: inout MotorLevels, sequence: inout WireSequence) -> Feedback? {
        if let p = SteamControllerCommands.pulse(report) {
            sequence = sequence.next
            let count = min(p.count, TrackpadPulse.largestCount(onMicros: p.onMicros, offMicros: p.offMicros))
            return .pulse(TrackpadPulse(slot: slot, sequence: sequence, side: p.pad, onMicros: p.onMicros, offMicros: p.offMicros, count: count, gain: 0))
        }
        guard let speeds = SteamControllerCommands.rumbleSpeeds(report) else { return nil }
        let levels = MotorLevels(low: UInt8(speeds.low >> 8), high: UInt8(speeds.high >> 8))
        guard levels != lastLevels else { return .rumble(nil, sounds: !levels.isSilent) }
        lastLevels = levels
        // Never past the host pad's own end (`rumbleEnds`): a lost stop leaves the client's motors
        // running no longer than the controller's would; the host renews it as the game re-sends.
        let ttl = levels.isSilent ? 0 : min(GameOutputTranslator.rumbleLeaseMillis, UInt16(rumbleHold / .milliseconds(1)))
        return .rumble(.rumble(.unnumbered(slot: slot, levels: levels, ttlMillis: ttl)), sounds: !levels.isSilent)
    }

    public func remove() { device.stop() }
}
