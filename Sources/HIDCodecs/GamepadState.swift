/// Buttons every supported pad can report, named by position (south = bottom face button),
/// plus the PlayStation extras. Bit positions are stable: they are part of the wire format
/// the gateway forwards.
public struct GamepadButtons: OptionSet, Hashable, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let west = GamepadButtons(rawValue: 1 << 0)       // Square, Y (Nintendo)
    public static let south = GamepadButtons(rawValue: 1 << 1)      // Cross, B (Nintendo)
    public static let east = GamepadButtons(rawValue: 1 << 2)       // Circle, A (Nintendo)
    public static let north = GamepadButtons(rawValue: 1 << 3)      // Triangle, X (Nintendo)
    public static let l1 = GamepadButtons(rawValue: 1 << 4)
    public static let r1 = GamepadButtons(rawValue: 1 << 5)
    public static let l2 = GamepadButtons(rawValue: 1 << 6)
    public static let r2 = GamepadButtons(rawValue: 1 << 7)
    public static let create = GamepadButtons(rawValue: 1 << 8)     // Share on DS4, Minus on Switch
    public static let options = GamepadButtons(rawValue: 1 << 9)    // Plus on Switch
    public static let l3 = GamepadButtons(rawValue: 1 << 10)
    public static let r3 = GamepadButtons(rawValue: 1 << 11)
    public static let ps = GamepadButtons(rawValue: 1 << 12)        // Home on Switch
    public static let touchpad = GamepadButtons(rawValue: 1 << 13)  // touchpad click
    public static let mute = GamepadButtons(rawValue: 1 << 14)
    public static let fnLeft = GamepadButtons(rawValue: 1 << 15)    // DualSense Edge
    public static let fnRight = GamepadButtons(rawValue: 1 << 16)
    public static let paddleLeft = GamepadButtons(rawValue: 1 << 17)
    public static let paddleRight = GamepadButtons(rawValue: 1 << 18)
    public static let capture = GamepadButtons(rawValue: 1 << 19)   // Switch capture
    public static let quickAccess = GamepadButtons(rawValue: 1 << 20)     // Steam Deck's "…"
    public static let leftPadClick = GamepadButtons(rawValue: 1 << 21)    // Steam Deck's trackpads
    public static let rightPadClick = GamepadButtons(rawValue: 1 << 22)
    public static let leftStickTouch = GamepadButtons(rawValue: 1 << 23)  // capacitive sticks
    public static let rightStickTouch = GamepadButtons(rawValue: 1 << 24)

    /// A button's name in JSON, scripts and `watch`, and the evdev key each Linux driver reports it
    /// as (linux/input-event-codes.h numbers).
    public struct Row: Sendable {
        public var button: GamepadButtons
        public var name: String
        /// On the gamepad node, by position, as hid-playstation (and hid-nintendo) report it;
        /// nil: not a gamepad-node key (the touchpad click is BTN_LEFT on the touchpad node).
        public var evdevKey: UInt16?
        public var evdevName: String?
        /// As xpad reports an Xbox 360 pad: by label, so west (X) is BTN_X = BTN_NORTH's number.
        public var xpadKey: UInt16?
    }

    /// The only button table: everything that maps buttons to names or evdev codes reads it.
    public static let table: [Row] = [
        Row(button: .south, name: "south", evdevKey: 0x130, evdevName: "BTN_SOUTH", xpadKey: 0x130),     // BTN_A
        Row(button: .east, name: "east", evdevKey: 0x131, evdevName: "BTN_EAST", xpadKey: 0x131),        // BTN_B
        Row(button: .west, name: "west", evdevKey: 0x134, evdevName: "BTN_WEST", xpadKey: 0x133),        // BTN_X
        Row(button: .north, name: "north", evdevKey: 0x133, evdevName: "BTN_NORTH", xpadKey: 0x134),     // BTN_Y
        Row(button: .l1, name: "l1", evdevKey: 0x136, evdevName: "BTN_TL", xpadKey: 0x136),
        Row(button: .r1, name: "r1", evdevKey: 0x137, evdevName: "BTN_TR", xpadKey: 0x137),
        Row(button: .l2, name: "l2", evdevKey: 0x138, evdevName: "BTN_TL2", xpadKey: nil),               // xpad: analog only
        Row(button: .r2, name: "r2", evdevKey: 0x139, evdevName: "BTN_TR2", xpadKey: nil),
        Row(button: .create, name: "create", evdevKey: 0x13a, evdevName: "BTN_SELECT", xpadKey: 0x13a),
        Row(button: .options, name: "options", evdevKey: 0x13b, evdevName: "BTN_START", xpadKey: 0x13b),
        Row(button: .l3, name: "l3", evdevKey: 0x13d, evdevName: "BTN_THUMBL", xpadKey: 0x13d),
        Row(button: .r3, name: "r3", evdevKey: 0x13e, evdevName: "BTN_THUMBR", xpadKey: 0x13e),
        Row(button: .ps, name: "ps", evdevKey: 0x13c, evdevName: "BTN_MODE", xpadKey: 0x13c),
        Row(button: .touchpad, name: "touchpad", evdevKey: nil, evdevName: nil, xpadKey: nil),
        Row(button: .mute, name: "mute", evdevKey: 248, evdevName: "KEY_MICMUTE", xpadKey: nil),
        // DualSense Edge extras, as newer kernels report them (BTN_TRIGGER_HAPPY1...4).
        Row(button: .fnLeft, name: "fn_left", evdevKey: 0x2c2, evdevName: "BTN_TRIGGER_HAPPY3", xpadKey: nil),
        Row(button: .fnRight, name: "fn_right", evdevKey: 0x2c3, evdevName: "BTN_TRIGGER_HAPPY4", xpadKey: nil),
        Row(button: .paddleLeft, name: "paddle_left", evdevKey: 0x2c0, evdevName: "BTN_TRIGGER_HAPPY1", xpadKey: nil),
        Row(button: .paddleRight, name: "paddle_right", evdevKey: 0x2c1, evdevName: "BTN_TRIGGER_HAPPY2", xpadKey: nil),
        Row(button: .capture, name: "capture", evdevKey: 0x135, evdevName: "BTN_Z", xpadKey: nil),        // hid-nintendo
        // Steam Deck extras, as hid-steam reports them; the stick touches have no key.
        Row(button: .quickAccess, name: "quick_access", evdevKey: 0x126, evdevName: "BTN_BASE", xpadKey: nil),
        Row(button: .leftPadClick, name: "left_pad_click", evdevKey: 0x121, evdevName: "BTN_THUMB", xpadKey: nil),
        Row(button: .rightPadClick, name: "right_pad_click", evdevKey: 0x122, evdevName: "BTN_THUMB2", xpadKey: nil),
        Row(button: .leftStickTouch, name: "left_stick_touch", evdevKey: nil, evdevName: nil, xpadKey: nil),
        Row(button: .rightStickTouch, name: "right_stick_touch", evdevKey: nil, evdevName: nil, xpadKey: nil),
    ]

    /// Every button of the table: what the wire accepts (WireLimits).
    public static let known = GamepadButtons(table.map(\.button))

    /// Names used by `inspect --json`, in display order.
    public static let named: [(name: String, button: GamepadButtons)] = table.map { ($0.name, $0.button) }

    public init?(name: String) {
        guard let row = Self.table.first(where: { $0.name == name }) else { return nil }
        self = row.button
    }

    public var names: [String] { Self.named.filter { contains($0.button) }.map(\.name) }
}

/// The 8-way hat as PlayStation pads encode it: 0 = up, clockwise, 8 (or more) = released.
public enum DPad: UInt8, Sendable, CaseIterable {
    case up = 0, upRight, right, downRight, down, downLeft, left, upLeft, none

    public init(hat: UInt8) { self = DPad(rawValue: hat) ?? .none }
    /// From ABS_HAT0X/ABS_HAT0Y signs.
    public init(axes: (x: Int32, y: Int32)) { self = Self.byAxes[Int(axes.x.signum() + 1) * 3 + Int(axes.y.signum() + 1)] }
    /// Indexed by (x + 1) × 3 + (y + 1): a frame's d-pad without a search.
    private static let byAxes: [DPad] = (0..<9).map { i in DPad.allCases.first { $0.axes == (Int32(i / 3 - 1), Int32(i % 3 - 1)) } ?? .none }

    /// As four direction bits, where a pad reports them so (Valve's): the masks of up, down, left, right.
    public func bits(up: UInt8, down: UInt8, left: UInt8, right: UInt8) -> UInt8 {
        let hat = axes
        return (hat.y < 0 ? up : 0) | (hat.y > 0 ? down : 0) | (hat.x < 0 ? left : 0) | (hat.x > 0 ? right : 0)
    }

    public var name: String {
        switch self {
        case .up: return "up"
        case .upRight: return "up-right"
        case .right: return "right"
        case .downRight: return "down-right"
        case .down: return "down"
        case .downLeft: return "down-left"
        case .left: return "left"
        case .upLeft: return "up-left"
        case .none: return "none"
        }
    }

    /// ABS_HAT0X/ABS_HAT0Y values, as hid-playstation's ps_gamepad_hat_mapping.
    public var axes: (x: Int32, y: Int32) {
        switch self {
        case .up: return (0, -1)
        case .upRight: return (1, -1)
        case .right: return (1, 0)
        case .downRight: return (1, 1)
        case .down: return (0, 1)
        case .downLeft: return (-1, 1)
        case .left: return (-1, 0)
        case .upLeft: return (-1, -1)
        case .none: return (0, 0)
        }
    }
}

/// Raw stick position as the pad sends it: 0...255 on PlayStation pads (128 ≈ centre), 0...4095 on Switch.
public struct StickPosition: Hashable, Sendable {
    public var x: UInt16
    public var y: UInt16
    public init(x: UInt16, y: UInt16) { self.x = x; self.y = y }
    public static let zero = StickPosition(x: 0, y: 0)
}

/// One touchpad contact. `id` is the pad's own 7-bit contact counter; x/y are 12-bit.
/// A touch contact in the one touch space every pad's contacts are given in: the DualSense
/// touchpad's own (0..<1920 by 0..<1080, +y down), the wire's too. A pad with other surfaces
/// (a Deck's two trackpads) is scaled into it by its codec, one contact a surface.
public struct TouchPoint: Hashable, Sendable {
    public static let width: UInt16 = 1920
    public static let height: UInt16 = 1080
    public var id: UInt8
    public var active: Bool
    public var x: UInt16
    public var y: UInt16
    /// How hard it presses, 0...65535 of the sensor's full scale; nil where the pad has no
    /// pressure sensor (a DualSense's touchpad). Valve's trackpads have one.
    public var pressure: UInt16?
    public init(id: UInt8 = 0, active: Bool = false, x: UInt16 = 0, y: UInt16 = 0, pressure: UInt16? = nil) {
        self.id = id; self.active = active; self.x = x; self.y = y; self.pressure = pressure
    }
}

/// A raw signed sensor vector as sent by the pad, before calibration.
public struct Vector3: Hashable, Sendable {
    public var x: Int16
    public var y: Int16
    public var z: Int16
    public init(x: Int16, y: Int16, z: Int16) { self.x = x; self.y = y; self.z = z }
    public static let zero = Vector3(x: 0, y: 0, z: 0)
}

public struct MotionSample: Hashable, Sendable {
    public var gyro: Vector3
    public var accel: Vector3
    public init(gyro: Vector3 = .zero, accel: Vector3 = .zero) { self.gyro = gyro; self.accel = accel }
}

/// Switch Pro reports carry three IMU samples 5 ms apart; PlayStation pads one.
public struct MotionSamples: Hashable, Sendable {
    public var first = MotionSample()
    public var second = MotionSample()
    public var third = MotionSample()
    public var count: UInt8 = 0
    public init() {}

    /// The samples the report carried, oldest first (allocates: for display, not the decode path).
    public var samples: [MotionSample] { Array([first, second, third].prefix(Int(count))) }
}

public enum ChargingState: UInt8, Sendable {
    case discharging, charging, full, notCharging, error, unknown
}

public struct BatteryStatus: Hashable, Sendable {
    public var percent: UInt8
    public var state: ChargingState
    public var charging: Bool { state == .charging }
    public init(percent: UInt8, state: ChargingState) { self.percent = percent; self.state = state }
}

/// Which report a state was decoded from, and what its numbers mean: how many bits a stick axis
/// has and how long one tick of the sensor clock is. Each family names its own formats in its
/// codec's folder (`InputReportFormat.steamDeck`), so a new family adds none here.
public struct InputReportFormat: Hashable, Sendable, CustomStringConvertible {
    /// Its name in `inspect`'s output; a format is known by it.
    public let name: StaticString
    /// Bits per stick axis: 8 on PlayStation pads, 12 on the Switch Pro, 16 from evdev.
    public let stickBits: Int
    /// One tick of the sensor clock (`GamepadState.sensorTimestamp`) in µs, as a fraction: a
    /// DualSense counts 1/3 µs (hid-playstation divides by 3), a DualShock 4 16/3 µs.
    public let microsPerTick: (numerator: UInt64, denominator: UInt64)

    public init(name: StaticString, stickBits: Int, microsPerTick: (numerator: UInt64, denominator: UInt64)) {
        self.name = name
        self.stickBits = stickBits
        self.microsPerTick = microsPerTick
    }

    public var description: String { name.description }

    public static func == (a: InputReportFormat, b: InputReportFormat) -> Bool {
        a.name.withUTF8Buffer { x in b.name.withUTF8Buffer { y in x.elementsEqual(y) } }
    }

    public func hash(into hasher: inout Hasher) { name.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) } }

    /// A state no report has written yet (a script's or a test's): 8-bit sticks, a 1/3 µs clock.
    public static let undecoded = InputReportFormat(name: "undecoded", stickBits: 8, microsPerTick: (1, 3))
    /// Read from a pad's evdev nodes: each stick axis scaled from its own range to 16 bits.
    public static let evdev = InputReportFormat(name: "evdev", stickBits: 16, microsPerTick: (1, 3))
    /// Read through the pad's report descriptor (`DescriptorGamepadDecoder`): sticks scaled from
    /// their logical range to 16 bits.
    public static let hidDescriptor = InputReportFormat(name: "hidDescriptor", stickBits: 16, microsPerTick: (1, 3))
}

/// Whether a receiver's slot has a controller on it (a Steam Controller puck's: its wireless status
/// reports, or any state).
public enum ControllerLink: Hashable, Sendable {
    case unknown, connected, disconnected
}

/// Everything a pad reports, as a fixed-size value: decoding writes into it without touching the heap.
public struct GamepadState: Hashable, Sendable {
    public var format: InputReportFormat = .undecoded
    public var buttons: GamepadButtons = []
    public var dpad: DPad = .none
    public var leftStick: StickPosition = .zero
    public var rightStick: StickPosition = .zero
    public var l2: UInt8 = 0
    /// The triggers at full resolution, 0...65535, from pads that report more than 8 bits (an
    /// Xbox's 10); nil where `l2`/`r2` are all there is.
    public var l2Fine: UInt16? = nil
    public var r2Fine: UInt16? = nil
    public var r2: UInt8 = 0
    public var touch0 = TouchPoint()
    public var touch1 = TouchPoint()
    public var hasTouch = false
    public var hasMotion = false
    public var motion = MotionSamples()
    public var sensorTimestamp: UInt32 = 0
    public var battery: BatteryStatus? = nil
    public var headphonesConnected = false
    public var microphoneConnected = false
    public var sequence: UInt8 = 0
    /// A receiver's slot: whether a controller is on it (its reports say; unknown before the first).
    public var link: ControllerLink = .unknown

    public init() {}

    public var gyro: Vector3 { motion.first.gyro }
    public var accel: Vector3 { motion.first.accel }

    /// The sensor clock in microseconds, by its format's tick.
    public var sensorMicros: UInt32 {
        UInt32(truncatingIfNeeded: UInt64(sensorTimestamp) * format.microsPerTick.numerator / format.microsPerTick.denominator)
    }
}
