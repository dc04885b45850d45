import HIDCodecs
import PadDevices
import PadSystem
import WireProtocol

/// A forwarded Xbox pad shown to games as an Xbox One S over Bluetooth through uhid: hid-microsoft
/// binds it (xpad-style codes, force feedback, battery) and SDL's HIDAPI Xbox One driver opens it,
/// trigger rumble included. What a game writes to it (report 0x03, from SDL or from the kernel's
/// force feedback) comes back as rumble leases carrying all four motors.
public final class XboxOneVirtualPad: VirtualPad {
    public let arrival: PadArrival
    let device: EmulatedXboxOne
    var lastBattery: UInt8?
    /// The last state sent, so a state that changes nothing the report carries is not re-sent.
    var lastReport: [UInt8] = []
    /// Whether the presented pad reads byte 16 as Share (the Series pads, for SDL) rather than AC Back.
    let hasShareButton: Bool

    public init(arrival: PadArrival) throws {
        self.arrival = arrival
        let product = Self.presentedProductID(for: arrival)
        hasShareButton = Self.shareButtonProducts.contains(product)
        device = try EmulatedXboxOne(productID: product, name: arrival.name.isEmpty ? nil : arrival.name, phys: PadPhys.hostVirtual)
    }

    /// SDL_hidapi_xboxone.c reads Share in byte 16 on the Series pads (ControllerHasShareButton).
    static let shareButtonProducts: Set<UInt16> = [0x0b12, 0x0b13]

    /// The physical pad's own product id when hid-microsoft drives it over Bluetooth; else the One S's.
    static func presentedProductID(for arrival: PadArrival) -> UInt16 {
        arrival.vendorID == PadKind.xbox.vendorID && XboxOneSIdentityData.bluetoothProductIDs.contains(arrival.productID)
            ? arrival.productID : XboxOneSIdentityData.productID
    }

    public func apply(_ s: PadStateSnapshot) throws {
        let report = XboxOneSBluetooth.stateReport(buttons: GamepadButtons(rawValue: s.buttons), dpad: DPad(hat: s.dpad), leftX: s.leftX, leftY: s.leftY,
                                                   rightX: s.rightX, rightY: s.rightY, l2Wide: s.l2Wide, r2Wide: s.r2Wide,
                                                   hasShareButton: hasShareButton)
        guard report != lastReport else { return }
        lastReport = report
        try device.send(report)
    }

    public func apply(_ touch: TouchSnapshot) throws {}
    public func apply(_ motion: MotionBatch) throws {}

    public func apply(_ battery: BatteryReport) throws {
        let percent = min(battery.percent, 100)
        guard lastBattery != percent else { return }
        lastBattery = percent
        try device.send(XboxOneSBluetooth.batteryReport(percent: percent))
    }

    public var feedbackDescriptors: [FileDescriptor] { [device.outputReadyDescriptor] }

    public func takeFeedback(into messages: inout [WireMessage]) throws {
        for report in device.takeOutputs() { if let lease = Self.lease(for: report, slot: arrival.slot) { messages.append(lease) } }
    }

    /// A rumble report as a lease (held until the next one; the host renews it); anything else,
    /// or a report out of the descriptor's range, gives nothing.
    static func lease(for report: [UInt8], slot: PadSlot) -> WireMessage? {
        guard let rumble = try? XboxRumbleReport(decoding: report) else { return nil }
        let levels = rumble.wireLevels
        return .rumble(RumbleLease(slot: slot, sequence: .unnumbered, low: levels.low, high: levels.high,
                                   leftTrigger: levels.leftTrigger, rightTrigger: levels.rightTrigger,
                                   ttlMillis: GameOutputTranslator.rumbleLeaseMillis))
    }

    public func remove() { device.stop() }
}
