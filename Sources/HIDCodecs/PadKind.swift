/// Which pad this is. The one table of USB/Bluetooth ids padgate knows lives here; discovery,
/// the decoders, the wire (its pad type byte is the raw value), the host's virtual pads and the
/// CLI all ask this type. Raw values are part of the wire format: never renumber, add at the end.
public enum PadKind: UInt8, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case generic = 0, dualSense = 1, dualSenseEdge = 2, dualShock4 = 3, switchPro = 4, xbox = 5, steamDeck = 6, steamController = 7

    private struct KnownIDs {
        var vendor: UInt16
        /// nil: every product of the vendor.
        var product: UInt16?
        var kind: PadKind
    }

    /// Sony 054c, Nintendo 057e, Microsoft 045e, Valve 28de (hid-ids.h, SDL's controller_list.h).
    private static let knownIDs: [KnownIDs] = [
        KnownIDs(vendor: 0x054c, product: 0x0ce6, kind: .dualSense),
        KnownIDs(vendor: 0x054c, product: 0x0df2, kind: .dualSenseEdge),
        KnownIDs(vendor: 0x054c, product: 0x05c4, kind: .dualShock4),
        KnownIDs(vendor: 0x054c, product: 0x09cc, kind: .dualShock4),
        KnownIDs(vendor: 0x054c, product: 0x0ba0, kind: .dualShock4),  // the DS4 USB wireless adaptor
        KnownIDs(vendor: 0x057e, product: 0x2009, kind: .switchPro),
        KnownIDs(vendor: 0x045e, product: nil, kind: .xbox),
        KnownIDs(vendor: 0x28de, product: 0x1205, kind: .steamDeck),    // the Deck's built-in controls
        // The Steam Controller (2026): wired, Bluetooth, through its puck, Nereid (hid-ids.h's
        // IBEX, IBEX_BLE, PROTEUS, NEREID; SDL's controller_list.h).
        KnownIDs(vendor: 0x28de, product: 0x1302, kind: .steamController),
        KnownIDs(vendor: 0x28de, product: 0x1303, kind: .steamController),
        KnownIDs(vendor: 0x28de, product: 0x1304, kind: .steamController),
        KnownIDs(vendor: 0x28de, product: 0x1305, kind: .steamController),
    ]

    public init(vendorID: UInt16, productID: UInt16) {
        self = Self.knownIDs.first { $0.vendor == vendorID && ($0.product == nil || $0.product == productID) }?.kind ?? .generic
    }

    /// This kind's rows of the table: its vendor and each product (nil: every product of the vendor).
    public var ids: [(vendor: UInt16, product: UInt16?)] {
        Self.knownIDs.filter { $0.kind == self }.map { ($0.vendor, $0.product) }
    }

    /// The vendor whose pads are of this kind (the first the table lists for it).
    public var vendorID: UInt16? { Self.knownIDs.first { $0.kind == self }?.vendor }

    /// The ids a virtual pad of this kind presents (the first the table lists for it).
    public var canonicalIDs: (vendor: UInt16, product: UInt16)? {
        Self.knownIDs.first { $0.kind == self && $0.product != nil }.map { ($0.vendor, $0.product!) }
    }

    /// The name scripts and JSON use.
    public var name: String {
        switch self {
        case .generic: "generic"
        case .dualSense: "dualsense"
        case .dualSenseEdge: "dualsense-edge"
        case .dualShock4: "dualshock4"
        case .switchPro: "switch-pro"
        case .xbox: "xbox"
        case .steamDeck: "steam-deck"
        case .steamController: "steam-controller"
        }
    }

    public init?(name: String) {
        guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = kind
    }

    public var description: String { name }

    public var displayName: String {
        switch self {
        case .generic: "Gamepad"
        case .dualSense: "DualSense"
        case .dualSenseEdge: "DualSense Edge"
        case .dualShock4: "DualShock 4"
        case .switchPro: "Switch Pro"
        case .xbox: "Xbox"
        case .steamDeck: "Steam Deck"
        case .steamController: "Steam Controller"
        }
    }

    /// A PlayStation pad's sensor clock for `micros` microseconds: the DualShock 4 counts 16/3 µs,
    /// the DualSense 1/3 µs (hid-playstation's DS4_/DS_SENSOR timestamp units).
    public func sensorTicks(micros: UInt32) -> UInt32 {
        self == .dualShock4 ? UInt32(truncatingIfNeeded: (UInt64(micros) * 3) / 16) : micros &* 3
    }

    public var isDualSenseFamily: Bool { self == .dualSense || self == .dualSenseEdge }
    public var isPlayStation: Bool { isDualSenseFamily || self == .dualShock4 }

    /// Pads whose kernel driver (hid-playstation, hid-sony) makes the touchpad and the motion
    /// sensors separate evdev nodes beside the gamepad's.
    public var hasSeparateSensorNodes: Bool { isPlayStation }
    /// Pads found by their controller's hidraw node alone, never by evdev: the kernel's evdev view
    /// of a Steam Deck comes and goes (hid-steam removes its nodes while a program such as Steam
    /// holds the controller's hidraw node, and makes them only in its gamepad mode) and before 6.3
    /// there is none (hid-generic); the hidraw node carries every control.
    /// The Steam Controller (2026) has no kernel driver before 7.3 either (hid-generic).
    public var foundByHidraw: Bool { self == .steamDeck || self == .steamController }
    /// Pads whose controller interface also carries the lizard mouse and keyboard (the Steam
    /// Controller's, one HID interface): hid-generic's mouse and keyboard nodes on it do not make
    /// it something else. A Deck's lizard interfaces are HID devices of their own.
    public var lizardNodesOnItsInterface: Bool { self == .steamController }
    /// The USB interfaces that are controllers, for a product that is a receiver with several
    /// (a Steam Controller puck's four slots, 2-5; its other interfaces are its own); nil: any.
    public func controllerInterfaces(product: UInt16) -> ClosedRange<Int>? {
        self == .steamController && (product == 0x1304 || product == 0x1305) ? 2...5 : nil
    }
    /// A receiver's slot is a pad only while a controller is on it (its reports say).
    public func isReceiver(product: UInt16) -> Bool { controllerInterfaces(product: product) != nil }
    /// Pads that take rumble and a lightbar colour as PlayStation output reports through hidraw.
    public var takesPlayStationOutput: Bool { isPlayStation }
    /// Pads with player LEDs and adaptive triggers in those reports (the DualSense's).
    public var hasAdaptiveTriggers: Bool { isDualSenseFamily }
    /// Pads whose HD haptics are two voice coils driven as audio (docs/haptics.md).
    public var hasVoiceCoils: Bool { isDualSenseFamily }

    /// Whether the pad's evdev node names face buttons by label (`GamepadButtons.Row.xpadKey`: xpad,
    /// and hid-microsoft's Button n = BTN_GAMEPAD + n − 1, give the X button BTN_X) rather than by
    /// position (`evdevKey`: hid-playstation and hid-nintendo put the top button on BTN_NORTH,
    /// which is BTN_X's number).
    public var numbersButtonsByLabel: Bool { self == .xbox }

    /// The buttons this kind of pad has; the rest of `GamepadButtons` never sets on it.
    public var buttons: GamepadButtons {
        let common: GamepadButtons = [.south, .east, .west, .north, .l1, .r1, .l2, .r2, .create, .options, .l3, .r3, .ps]
        switch self {
        case .dualSense: return common.union([.touchpad, .mute])
        case .dualSenseEdge: return common.union([.touchpad, .mute, .fnLeft, .fnRight, .paddleLeft, .paddleRight])
        case .dualShock4: return common.union(.touchpad)
        case .switchPro: return common.union(.capture)
        case .steamDeck, .steamController:
            return common.union([.quickAccess, .paddleLeft, .paddleRight, .fnLeft, .fnRight, .leftPadClick, .rightPadClick,
                                 .leftStickTouch, .rightStickTouch])
        case .xbox, .generic: return common
        }
    }


    // Codable as the name, so `list --json` stays readable.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let kind = PadKind(name: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown pad kind '\(name)'"))
        }
        self = kind
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
