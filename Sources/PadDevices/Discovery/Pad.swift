import HIDCodecs

/// The `phys` strings padgate gives the devices it creates.
public enum PadPhys {
    public static let emulated = "padgate/virtual-dualsense"
    public static let hostVirtual = "padgate/host-virtual"
    public static let uinput = "padgate/uinput"
}

/// What an evdev node of a pad carries. A DualSense has a gamepad, touchpad and motion node, and
/// from kernel 6.18 a "Headset Jack" node too (hid-playstation's headphone/microphone switches).
public enum EvdevRole: String, Codable, Sendable, Comparable {
    case gamepad, touchpad, motion, jack, other

    public static func < (a: EvdevRole, b: EvdevRole) -> Bool { a.order < b.order }
    private var order: Int {
        switch self { case .gamepad: 0; case .touchpad: 1; case .motion: 2; case .jack: 3; case .other: 4 }
    }
}

public struct EvdevNode: Codable, Sendable, Equatable {
    public var path: String
    public var role: EvdevRole
    public var name: String
    public init(path: String, role: EvdevRole, name: String) {
        self.path = path; self.role = role; self.name = name
    }
}

public struct PadCapabilities: OptionSet, Codable, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let rumble = PadCapabilities(rawValue: 1 << 0)
    public static let lightbar = PadCapabilities(rawValue: 1 << 1)
    public static let playerLEDs = PadCapabilities(rawValue: 1 << 2)
    public static let adaptiveTriggers = PadCapabilities(rawValue: 1 << 3)
    public static let touchpad = PadCapabilities(rawValue: 1 << 4)
    public static let motion = PadCapabilities(rawValue: 1 << 5)
    public static let battery = PadCapabilities(rawValue: 1 << 6)

    public static let named: [(String, PadCapabilities)] = [
        ("rumble", .rumble), ("lightbar", .lightbar), ("player-leds", .playerLEDs),
        ("adaptive-triggers", .adaptiveTriggers), ("touchpad", .touchpad), ("motion", .motion),
        ("battery", .battery),
    ]
    public var names: [String] { Self.named.filter { contains($0.1) }.map(\.0) }
}

/// One physical controller: its HID parent (if any), hidraw node, and all its evdev nodes.
public struct Pad: Codable, Sendable, Equatable {
    /// Stable for as long as the pad stays plugged in: the HID parent's (or input device's) syspath.
    public var id: String
    public var kind: PadKind
    /// The kernel's BUS_* number: USB and Bluetooth are `bus`; others (a uinput pad's BUS_VIRTUAL) only a name.
    public var kernelBus: UInt16
    public var vendorID: UInt16
    public var productID: UInt16
    public var name: String
    public var uniq: String
    /// The kernel's physical path: where a real pad is attached, or who made a virtual one.
    public var phys: String = ""
    public var hidraw: String?
    public var evdev: [EvdevNode]
    public var capabilities: PadCapabilities

    public var gamepadNode: EvdevNode? { evdev.first { $0.role == .gamepad } }
    /// Whether the input nodes the family's driver makes are all there (udev announces them one
    /// at a time): the gamepad, and a PlayStation pad's touchpad and motion sensors. Nodes that
    /// only some kernels make (the DualSense's headset jack) are not waited for, and nothing
    /// counts nodes: a newer driver may add one.
    public var hasItsInputNodes: Bool {
        if kind.foundByHidraw { return hidraw != nil }
        let roles = Set(evdev.map(\.role))
        guard roles.contains(.gamepad) else { return false }
        return !kind.hasSeparateSensorNodes || roles.isSuperset(of: [.touchpad, .motion])
    }
    public func node(_ role: EvdevRole) -> EvdevNode? { evdev.first { $0.role == role } }
    /// USB or Bluetooth; nil for another bus.
    public var bus: PadBus? { PadBus(kernelBus: kernelBus) }
    /// The bus as `list` prints it: usb, bluetooth, virtual or other.
    public var busName: String { bus?.rawValue ?? (kernelBus == 0x06 ? "virtual" : "other") }
    public var vidpid: String { String(format: "%04x:%04x", vendorID, productID) }

    /// A virtual pad that `padgate serve` made for a forwarded one. Never forwarded again: on a
    /// machine that is both client and host, that would loop.
    public var isHostVirtualPad: Bool { phys.hasPrefix(PadPhys.hostVirtual) }

    /// A virtual pad another program made for a controller it reads: Steam Input's Xbox 360 pad
    /// (28de:11ff, "Microsoft X-Box 360 pad N", seen on a Steam Deck's `/proc/bus/input/devices`).
    /// Never forwarded: the controller it mirrors is forwarded itself, and both would be double input.
    public var madeByAnotherProgram: String? {
        ForeignVirtualPads.known.first { $0.vendor == vendorID && $0.product == productID }?.program
    }

    /// "host" or "emulated" for the pads padgate made itself, by their phys; nil for the rest.
    public var madeByPadgate: String? {
        isHostVirtualPad ? "host" : phys.hasPrefix(PadPhys.emulated) || phys.hasPrefix(PadPhys.uinput) ? "emulated" : nil
    }
}

import Foundation

/// Virtual pads other programs make for the controllers they read, by their ids.
public enum ForeignVirtualPads {
    public static let known: [(vendor: UInt16, product: UInt16, program: String)] = [
        (0x28de, 0x11ff, "Steam Input"),
    ]
}
