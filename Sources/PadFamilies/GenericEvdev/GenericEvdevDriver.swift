import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// Any other evdev pad: read through its evdev node, shown by the host as an Xbox 360 pad through
/// uinput (the one layout every game takes). `emulate` makes such pads through uinput.
public struct GenericEvdevDriver: PadDriver {
    public init() {}
    public var kinds: [PadKind] { [.generic] }

    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        (.nominal, PadIdentity())
    }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? { nil }

    /// Evdev-only pads made through uinput: an Xbox 360 pad (its ids) and a generic one (pid.codes' test ids).
    public var emulatedModels: [EmulatedModel] {
        [EmulatedModel(name: "xbox", kind: .generic, throughUHID: false), EmulatedModel(name: "gamepad", kind: .generic, throughUHID: false)]
    }
}
