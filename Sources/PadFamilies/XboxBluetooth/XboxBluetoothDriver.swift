import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// Xbox One and Series pads (hid-microsoft over Bluetooth, xpad over USB; SDL_hidapi_xboxone.c),
/// shown by the host as an Xbox One S over Bluetooth through uhid, trigger rumble included.
public struct XboxBluetoothDriver: PadDriver {
    public init() {}
    public var kinds: [PadKind] { [.xbox] }
    /// Those hid-microsoft drives over Bluetooth, and the Adaptive Controller (0b0c, 0b21): one
    /// by one, since the kind's vendor-wide row would also open Microsoft's keyboards and mice.
    public var openedProducts: [(vendor: UInt16, product: UInt16)] {
        (XboxOneSIdentityData.bluetoothProductIDs.union([0x0b0c, 0x0b21])).sorted().map { (PadKind.xbox.vendorID!, $0) }
    }
    public var openedProductsNote: String? {
        "over Bluetooth (over USB they speak GIP through xpad and have no hidraw node), one by one: a vendor-wide match would also open Microsoft keyboards and mice"
    }
    /// Over Bluetooth the pad has a hidraw node, read through its descriptor since the layout
    /// moves with the firmware; over USB xpad drives it with no HID layer (no node: evdev).
    public var readsThroughHidraw: Bool { true }
    public var decodesThroughDescriptor: Bool { true }
    public func inputCodec(for kind: PadKind, descriptor: ReportDescriptor?) -> (any PadInputCodec)? {
        descriptor.flatMap(XboxBluetoothInputCodec.init(descriptor:))
    }

    public func identity(of pad: Pad, hidraw: HIDRawDevice?) -> (calibration: MotionCalibration, wire: PadIdentity) {
        (.nominal, PadIdentity())
    }

    public func hostPad(for arrival: PadArrival, transport: VirtualPadTransport) throws -> (any VirtualPad)? {
        try XboxOneVirtualPad(arrival: arrival)
    }

    /// Over Bluetooth its own report 0x03 reaches the trigger motors; the kernel's force feedback does not.
    public func ownRumbleSink(for pad: Pad) -> (any RumbleSink)? {
        guard pad.bus == .bluetooth, let hidraw = pad.hidraw else { return nil }
        return try? XboxRumbleSink(path: hidraw)
    }

    public var emulatedModels: [EmulatedModel] { [EmulatedModel(name: "xbox-one", kind: .xbox)] }

    public func emulate(_ model: EmulatedModel, bus: PadBus, transport: VirtualPadTransport,
                        onOutput: (@Sendable ([UInt8]) -> Void)?) throws -> any EmulatedPad {
        try EmulatedXboxOne()
    }

    public func describeOutput(_ report: [UInt8]) -> String {
        guard let rumble = try? XboxRumbleReport(decoding: report) else { return "not a rumble report" }
        return "rumble strong \(rumble.strong) weak \(rumble.weak) left-trigger \(rumble.leftTrigger) right-trigger \(rumble.rightTrigger) (of 100) for \(Int(rumble.duration10ms) * 10) ms"
    }
}
