import Feedback
import HIDCodecs
import MonotonicTime
import PadDevices
import PadFamilies
import PadSystem
import WireProtocol

/// The host's feedback messages in the terms a pad's outputs use, one place for every source.
extension RumbleMessage {
    /// The wire's 16-bit magnitudes to the motors' 8 bits; the 16-bit sequence widened for the renderer.
    init(_ lease: RumbleLease) {
        self.init(sequence: UInt64(lease.sequence.rawValue), levels: lease.levels, timeToLive: .milliseconds(Int(lease.ttlMillis)))
    }
}

extension HIDOutputMessage {
    var lightbarColor: RGBColor? { fields.contains(.lightbar) ? RGBColor(red: red, green: green, blue: blue) : nil }
    var playerLEDs: PlayerLEDs? { fields.contains(.playerLEDs) ? PlayerLEDs(mask: playerLEDMask) : nil }
    /// Trigger blocks that do not decode (a mode padgate does not know) leave the trigger as it is.
    var leftTriggerEffect: TriggerEffect? { fields.contains(.leftTrigger) ? try? TriggerEffect(block: leftTrigger.array) : nil }
    var rightTriggerEffect: TriggerEffect? { fields.contains(.rightTrigger) ? try? TriggerEffect(block: rightTrigger.array) : nil }
}

extension PadFeedback {
    /// The HID-level feedback a host sent, on this pad: what the message names, nothing else.
    func apply(_ output: HIDOutputMessage) throws {
        if let color = output.lightbarColor { try setLightbar(color) }
        if let leds = output.playerLEDs { try setPlayerLEDs(leds) }
        let left = output.leftTriggerEffect, right = output.rightTriggerEffect
        if left != nil || right != nil { try setTriggers(left: left, right: right) }
    }
}

/// A physical pad's feedback across host sessions: the host's leases and HID output played on
/// it, and on silence the motors to zero with a fresh renderer for the next session's leases.
public final class SessionFeedback {
    let pad: Pad
    let options: PadFeedback.Options
    private var feedback: PadFeedback
    /// The pad's microphone, made at the host's first request; `uplink` wakes the forwarding loop
    /// when its frames wait.
    private var microphone: (any MicrophoneInput)?
    private var microphoneUnavailable = false
    /// Requests for a microphone this client never offered.
    private(set) var ignoredMicrophoneRequests = 0
    let uplink = WakePipe()
    /// The link's jitter from `forward`'s pings, kept for the next session's feedback.
    private var linkJitter: Duration?

    public init(pad: Pad, options: PadFeedback.Options) {
        self.pad = pad
        var options = options
        options.lightsInBackground = true  // the forwarding loop never waits on a driver's LED round trip
        self.options = options
        feedback = PadFeedback(pad: pad, options: options)
    }

    func apply(_ lease: RumbleLease) throws {
        feedback.receive(RumbleMessage(lease))
        try feedback.pump()
    }
    func apply(_ output: HIDOutputMessage) throws { try feedback.apply(output) }
    func apply(_ haptics: HapticsBlock) throws { try feedback.receive(haptics) }
    func apply(_ speaker: SpeakerFrame) throws { try feedback.receive(speaker) }
    func apply(_ pulse: TrackpadPulse) throws { try feedback.receive(pulse) }
    /// A host's request to record the pad's microphone: honoured only for a pad whose
    /// microphone this client offered (a host cannot switch on what the user refused).
    func apply(_ request: MicrophoneRequest) throws {
        guard options.offersMicrophone, PadDrivers.driver(for: pad.kind).hasMicrophone(pad) else {
            ignoredMicrophoneRequests += 1
            // Said once a pad (the caller logs it): a host that keeps asking is then only counted.
            if ignoredMicrophoneRequests == 1, request.ttlMillis > 0 {
                throw MicrophoneNotOffered(hasMicrophone: PadDrivers.driver(for: pad.kind).hasMicrophone(pad))
            }
            return
        }
        guard !microphoneUnavailable else { return }
        if microphone == nil {
            guard request.ttlMillis > 0 else { return }
            do {
                microphone = try PadDrivers.driver(for: pad.kind).microphoneInput(for: pad, wake: uplink)
            } catch {
                microphoneUnavailable = true
                throw error
            }
            if microphone == nil { microphoneUnavailable = true; return }
        }
        microphone?.apply(request, at: .now)
    }
    func takeUplink(_ body: (WireMessage) -> Void) {
        uplink.drain()
        microphone?.take(body)
    }
    func observeLink(jitter: Duration) {
        linkJitter = jitter
        feedback.observeLink(jitter: jitter)
    }
    /// A host session began: outputs that cost time to start open now (`PadFeedback.openHaptics`).
    func sessionStarted() { feedback.openHaptics() }
    var deadline: MonotonicInstant? { feedback.nextDeadline }
    func pump() throws { try feedback.pump() }
    func silence() {
        microphone?.close()
        microphone = nil
        microphoneUnavailable = false
        feedback.close()
        feedback = PadFeedback(pad: pad, options: options)
        if let linkJitter { feedback.observeLink(jitter: linkJitter) }
    }
}

/// A pad source on a real pad: its feedback side is `SessionFeedback`'s.
public protocol PhysicalPadSource: PadSource {
    var sessionFeedback: SessionFeedback { get }
}

extension PhysicalPadSource {
    public func apply(_ lease: RumbleLease) throws { try sessionFeedback.apply(lease) }
    public func apply(_ output: HIDOutputMessage) throws { try sessionFeedback.apply(output) }
    public func apply(_ haptics: HapticsBlock) throws { try sessionFeedback.apply(haptics) }
    public func apply(_ speaker: SpeakerFrame) throws { try sessionFeedback.apply(speaker) }
    public func apply(_ request: MicrophoneRequest) throws { try sessionFeedback.apply(request) }
    public func apply(_ pulse: TrackpadPulse) throws { try sessionFeedback.apply(pulse) }
    public var uplinkDescriptor: FileDescriptor? { sessionFeedback.uplink.descriptor }
    public func takeUplink(_ body: (WireMessage) -> Void) { sessionFeedback.takeUplink(body) }
    public func observeLink(jitter: Duration) { sessionFeedback.observeLink(jitter: jitter) }
    public func sessionStarted() { sessionFeedback.sessionStarted() }
    public var feedbackDeadline: MonotonicInstant? { sessionFeedback.deadline }
    public func pumpFeedback() throws { try sessionFeedback.pump() }
    /// Motors to zero now; a fresh renderer takes the next session's leases.
    public func silence() { sessionFeedback.silence() }
}

/// A host asked for a pad's microphone that this client does not offer.
public struct MicrophoneNotOffered: Error, CustomStringConvertible {
    public let hasMicrophone: Bool
    public var description: String {
        hasMicrophone
            ? "the host asked for this pad's microphone; it is not offered (forward --microphone offers it)"
            : "the host asked for a microphone this pad does not have; ignored"
    }
}
