import Foundation
import HIDCodecs
import MonotonicTime
import PadDevices
import PadSystem
import WireProtocol

/// A pad the client forwards: its input as wire snapshots, and where the host's feedback goes.
public protocol PadSource: AnyObject {
    var arrival: PadArrival { get }
    /// Readable when the pad has new input.
    var descriptors: [FileDescriptor] { get }
    /// Reads what is queued; returns true when a frame completed (state may have changed).
    func readInput() throws -> Bool
    var controls: PadStateSnapshot { get }
    var touch: TouchSnapshot { get }
    /// The pad's charge, when it reports one in its input (nil: unknown).
    var battery: BatteryReport? { get }
    /// Hands over the motion samples since the last call (already in deg/s and g), without
    /// allocating: this runs for every report.
    func takeMotion(_ body: (WireMotionSample) -> Void)
    func apply(_ lease: RumbleLease) throws
    func apply(_ output: HIDOutputMessage) throws
    /// A block of the host's haptics stream (docs/haptics.md); pads without voice coils ignore it.
    func apply(_ haptics: HapticsBlock) throws
    /// A frame of the host pad's speaker pair (docs/audio.md), where the pad asked for it.
    func apply(_ speaker: SpeakerFrame) throws
    /// The host asks for the pad's microphone for a while (or no more: `ttlMillis` 0).
    func apply(_ request: MicrophoneRequest) throws
    /// A pulse train on the pad's trackpad (a Steam Deck's); pads without one ignore it.
    func apply(_ pulse: TrackpadPulse) throws
    /// Readable when the pad has messages for the host beside its input (its microphone's frames).
    var uplinkDescriptor: FileDescriptor? { get }
    /// Hands over those messages.
    func takeUplink(_ body: (WireMessage) -> Void)
    /// When the feedback renderer needs to run next, if at all.
    var feedbackDeadline: MonotonicInstant? { get }
    func pumpFeedback() throws
    /// Motors to zero; called on exit, signal, link loss and removal.
    func silence()
    /// The link's jitter as `forward`'s pings measure it (for the pad's haptics playout).
    func observeLink(jitter: Duration)
    /// A host session began (or the pad joined one): its feedback opens what costs time to start,
    /// a USB pad's coil stream, until `silence()` ends the session's feedback.
    func sessionStarted()
    /// Whether there is a pad to forward: false for a receiver's slot while no controller is on it
    /// (the host then has no pad for it).
    var present: Bool { get }
    /// The gyro correction 'padgate calibrate' stored for the pad, if it is applied.
    var motionCorrection: MotionCorrection? { get }
    /// How the gyro bias is corrected (`forward --gyro-calibration`).
    var gyroCalibration: GyroCalibrationMode { get }
}

extension PadSource {
    public var present: Bool { true }
    public func observeLink(jitter: Duration) {}
    public func sessionStarted() {}
    public var battery: BatteryReport? { nil }
    public var motionCorrection: MotionCorrection? { nil }
    public var gyroCalibration: GyroCalibrationMode { .off }
    public func apply(_ haptics: HapticsBlock) throws {}
    public func apply(_ speaker: SpeakerFrame) throws {}
    public func apply(_ request: MicrophoneRequest) throws {}
    public func apply(_ pulse: TrackpadPulse) throws {}
    public var uplinkDescriptor: FileDescriptor? { nil }
    public func takeUplink(_ body: (WireMessage) -> Void) {}
}

extension PadIdentity {
    /// With the pad's own identity (the kernel's `uniq`: a Sony or Nintendo pad's address, a
    /// serial), so the host tells two units apart whose reports are equal; at most 64 bytes.
    func withUnit(of pad: Pad) -> PadIdentity {
        var identity = self
        if !pad.uniq.isEmpty, let unit = FeatureReportBytes(Array(pad.uniq.utf8.prefix(FeatureReportBytes.capacity))) { identity.unit = unit }
        return identity
    }
}
