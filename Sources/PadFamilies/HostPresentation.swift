import MonotonicTime
import Foundation
import HIDCodecs
import Logging
import PadDevices
import PadSystem
import WireProtocol

/// How the host shows forwarded pads to games (`serve --virtual`).
public enum HostPresentation: String, Sendable, CaseIterable {
    /// Each pad as its own family: a DualSense or Edge as a USB device on vhci-hcd where it can be,
    /// else through uhid; without uhid, or for a family with no pad of its own, an Xbox 360 pad.
    case auto
    /// auto, with a DualSense or Edge always a USB device (an error where it cannot be).
    case usb
    /// auto, with every pad through uhid (no USB device).
    case uhid
    /// Every pad as a DualSense (an Edge as an Edge), through uhid.
    case dualsense
    /// Every pad as a USB DualSense with its audio function (an error where it cannot be): a
    /// game's haptics then reach any pad, as rumble where it has no voice coils.
    case dualsenseUSB = "dualsense-usb"
    /// Every pad as an Xbox 360 pad through uinput.
    case xbox
}

/// The style the host shows each family in (`serve --show KIND=STYLE`, its driver's
/// `hostStyles`); a family not named is shown in its default.
public struct HostStyleChoices: Sendable, Equatable {
    private var chosen: [PadKind: HostStyle] = [:]
    public init() {}

    /// Every kind's styles, as its driver offers them.
    private static var styles: [(kind: PadKind, style: HostStyle)] {
        PadKind.allCases.flatMap { kind in PadDrivers.driver(for: kind).hostStyles.map { (kind, $0) } }
    }

    /// Every `KIND=STYLE` the drivers take, for help and errors.
    public static var offered: [String] { styles.map { "\($0.kind.name)=\($0.style.name)" } }

    /// Every `KIND=STYLE` with what its driver says of it, for help.
    public static var described: [String] { styles.map { "\($0.kind.name)=\($0.style.name): \($0.style.summary)" } }

    /// `KIND=STYLE`, checked against the kind's driver.
    public mutating func add(_ text: String) throws(HostStyleError) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = PadKind(name: parts[0]) else { throw .unknown(text) }
        guard let style = PadDrivers.driver(for: kind).hostStyles.first(where: { $0.name == parts[1] }) else { throw .unknown(text) }
        chosen[kind] = style
    }

    /// The style chosen for `kind`, nil: its driver's default.
    public func style(for kind: PadKind) -> HostStyle? { chosen[kind] }
}

public enum HostStyleError: Error, CustomStringConvertible {
    case unknown(String)
    public var description: String {
        switch self {
        case .unknown(let text):
            let offered = HostStyleChoices.offered
            return "no pad kind is shown as '\(TerminalText.escaped(text))': the choices are \(offered.isEmpty ? "none" : offered.joined(separator: ", "))"
        }
    }
}

extension PadDrivers {
    private static let log = Logger(label: "padgate.host")
    /// Said once per process, not per pad: why DualSense pads are not USB devices.
    private static let usbUnavailable = OnceFlag()

    /// The pad games see for `arrival`, asked of its family's driver. Where the family's own pad
    /// cannot be made, that is logged and shown in `host status`, and the next choice is made:
    /// a USB DualSense falls back to uhid, a uhid pad to the uinput Xbox 360 pad.
    public static func hostPad(for arrival: PadArrival, presentation: HostPresentation, styles: HostStyleChoices = .init()) throws -> any VirtualPad {
        let slot = arrival.slot.rawValue
        switch presentation {
        case .dualsense:
            return try PlayStationVirtualPad.asDualSense(arrival, transport: .uhid)
        case .dualsenseUSB:
            if let reason = VHCI.unavailableReason() { throw DeviceError.unsupported("--virtual dualsense-usb: \(reason)") }
            return try PlayStationVirtualPad.asDualSense(arrival, transport: .usb)
        case .xbox:
            return try Xbox360VirtualPad(arrival: arrival)
        case .auto, .usb, .uhid:
            let driver = driver(for: arrival.type)
            let style = styles.style(for: arrival.type)
            func make(_ transport: VirtualPadTransport) throws -> (any VirtualPad)? {
                try style.map { try driver.hostPad(for: arrival, transport: transport, style: $0) } ?? driver.hostPad(for: arrival, transport: transport)
            }
            var fellBack: String?
            if presentation != .uhid, driver.presentsAsUSBDevice {
                if let reason = VHCI.unavailableReason() {
                    if presentation == .usb { throw DeviceError.unsupported("--virtual usb: \(reason)") }
                    usbUnavailable.once { log.notice("DualSense pads are shown through uhid, not as USB devices: \(reason)") }
                } else {
                    do {
                        if let pad = try make(.usb) { return pad }
                    } catch where presentation == .auto {
                        log.warning("slot \(slot): the USB \(arrival.type.displayName) could not be made (\(error)); showing it through uhid")
                        fellBack = "not a USB device: \(error)"
                    }
                }
            }
            guard access(UHIDDevice.path, W_OK) == 0 else {
                return FallbackPad(try Xbox360VirtualPad(arrival: arrival), reason: "\(UHIDDevice.path) is not writable")
            }
            do {
                if let pad = try make(.uhid) {
                    return fellBack.map { FallbackPad(pad, reason: $0) } ?? pad
                }
                return try Xbox360VirtualPad(arrival: arrival)
            } catch {
                log.warning("slot \(slot): the \(arrival.type.displayName) could not be shown as itself (\(error)); showing an Xbox 360 pad")
                return FallbackPad(try Xbox360VirtualPad(arrival: arrival), reason: "the \(arrival.type.displayName) could not be made: \(error)")
            }
        }
    }
}

/// A pad shown otherwise than its family asks, and why: `host status` says both.
final class FallbackPad: VirtualPad {
    let pad: any VirtualPad
    let reason: String
    init(_ pad: any VirtualPad, reason: String) {
        self.pad = pad
        self.reason = reason
    }
    var arrival: PadArrival { pad.arrival }
    func apply(_ state: PadStateSnapshot) throws { try pad.apply(state) }
    func apply(_ touch: TouchSnapshot) throws { try pad.apply(touch) }
    func apply(_ motion: MotionBatch) throws { try pad.apply(motion) }
    func apply(_ battery: BatteryReport) throws { try pad.apply(battery) }
    var feedbackDescriptors: [FileDescriptor] { pad.feedbackDescriptors }
    func takeFeedback(into messages: inout [WireMessage]) throws { try pad.takeFeedback(into: &messages) }
    var feedbackDeadline: MonotonicInstant? { pad.feedbackDeadline }
    var rumbleEnds: MonotonicInstant? { pad.rumbleEnds }
    func remove() { pad.remove() }
    var presentation: String { "\(pad.presentation); fallback: \(reason)" }
}
