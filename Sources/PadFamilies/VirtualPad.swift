import PadDevices
import MonotonicTime
import PadSystem
import WireProtocol

/// How the kernel sees a pad padgate makes (a host pad, `emulate`): a uhid device on the pad's
/// bus, or a USB device on vhci-hcd (`VHCI`) with the pad's whole USB identity, its audio
/// function included, for the families whose driver `presentsAsUSBDevice`.
public enum VirtualPadTransport: String, Sendable, CaseIterable {
    case uhid, usb
}

/// What the host presents to games for one forwarded pad; each family's driver makes its own
/// (`PadDriver.hostPad`): a PlayStation pad through uhid or as a USB device, a Switch Pro and an
/// Xbox One S through uhid, an Xbox 360 pad through uinput for the rest. `InProcessPad` (PadHost)
/// stands in where the machine has none of these (the demo, tests).
public protocol VirtualPad: AnyObject {
    var arrival: PadArrival { get }
    func apply(_ state: PadStateSnapshot) throws
    func apply(_ touch: TouchSnapshot) throws
    func apply(_ motion: MotionBatch) throws
    func apply(_ battery: BatteryReport) throws
    /// A frame of the physical pad's microphone (a USB DualSense plays it as its own).
    func apply(_ microphone: MicrophoneFrame) throws
    /// Descriptors that become readable when a game sends feedback (uhid output, uinput FF).
    var feedbackDescriptors: [FileDescriptor] { get }
    /// Appends the feedback the game produced since the last call, as messages for the client,
    /// to `messages` (the input path's own buffer: haptics wake it 200 times a second).
    func takeFeedback(into messages: inout [WireMessage]) throws
    /// When `takeFeedback` has something to say without a descriptor becoming readable (an
    /// effect's length running out on a uinput pad); nil if never.
    var feedbackDeadline: MonotonicInstant? { get }
    /// When the rumble this pad last asked for ends by itself (a uinput effect's programmed
    /// length), at the latest; nil when it holds until the game says otherwise. The host never
    /// sends or renews a lease past it, so the physical pad stops on time however late the host's
    /// own loop runs (docs/feedback.md).
    var rumbleEnds: MonotonicInstant? { get }
    /// Unplugs the virtual pad. Callers release every control first.
    func remove()
    /// How games on this machine reach the pad (`host status` shows it): "usb" (a USB device on
    /// vhci-hcd), "uhid", "uinput" or "in-process".
    var presentation: String { get }
}

/// Makes a virtual pad for an arriving one, by the host's `--virtual` choice; called on each
/// session's own workshop queue, so from several threads at once.
public typealias VirtualPadFactory = @Sendable (PadArrival) throws -> VirtualPad

extension VirtualPad {
    public var feedbackDeadline: MonotonicInstant? { nil }
    public var rumbleEnds: MonotonicInstant? { nil }
    public var presentation: String { "uhid" }
    /// Pads that show no battery (uinput ones) ignore it.
    public func apply(_ battery: BatteryReport) throws {}
    public func apply(_ microphone: MicrophoneFrame) throws {}
}
