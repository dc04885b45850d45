import HIDCodecs

/// What an emulated DualSense is doing right now, in the pad's own raw units.
public struct EmulatedInput: Equatable, Sendable {
    public struct Touch: Equatable, Sendable {
        public var id: UInt8
        public var x: UInt16  // 0...1919
        public var y: UInt16  // 0...1079
        public init(id: UInt8, x: UInt16, y: UInt16) { self.id = id; self.x = x; self.y = y }
    }

    public var buttons: Set<String> = []
    public var dpad: String = "none"
    public var leftStick: (UInt8, UInt8) = (128, 128)
    public var rightStick: (UInt8, UInt8) = (128, 128)
    public var l2: UInt8 = 0
    public var r2: UInt8 = 0
    public var touches: [Touch?] = [nil, nil]
    public var gyro: (Int16, Int16, Int16) = (0, 0, 0)
    /// At rest on a table: +1 g on Y in the pad's units (about 8192 per g).
    public var accel: (Int16, Int16, Int16) = (0, 8192, 0)
    public var sensorTimestamp: UInt32 = 0
    public var batteryPercent: UInt8 = 100
    public var charging = false
    /// The id the next new touch contact gets (the pad counts them, 7 bits).
    var nextTouchID: UInt8 = 0

    public init() {}

    public static func == (a: EmulatedInput, b: EmulatedInput) -> Bool {
        a.buttons == b.buttons && a.dpad == b.dpad && a.leftStick == b.leftStick && a.rightStick == b.rightStick
            && a.l2 == b.l2 && a.r2 == b.r2 && a.touches == b.touches && a.gyro == b.gyro && a.accel == b.accel
            && a.sensorTimestamp == b.sensorTimestamp && a.batteryPercent == b.batteryPercent && a.charging == b.charging
    }
}

/// Writes `EmulatedInput` as DualSense input reports: USB 0x01 (64 bytes) or Bluetooth 0x31
/// (78 bytes with its CRC32 over seed 0xA1). Offsets follow hid-playstation's
/// `struct dualsense_input_report`, which starts after the id (USB) or id and tag byte (Bluetooth).
public struct DualSenseInputWriter {
    public let bus: VirtualDualSense.Bus
    private var sequence: UInt8 = 0

    public init(bus: VirtualDualSense.Bus) { self.bus = bus }

    public var reportLength: Int { bus == .usb ? 64 : 78 }
    var base: Int { bus == .usb ? 1 : 2 }

    static let faceButtons: [(String, UInt8)] = [("west", 0x10), ("south", 0x20), ("east", 0x40), ("north", 0x80)]
    static let shoulderButtons: [(String, UInt8)] = [
        ("l1", 0x01), ("r1", 0x02), ("l2", 0x04), ("r2", 0x08), ("create", 0x10), ("options", 0x20), ("l3", 0x40), ("r3", 0x80),
    ]
    static let systemButtons: [(String, UInt8)] = [
        ("ps", 0x01), ("touchpad", 0x02), ("mute", 0x04),
        ("fn_left", 0x10), ("fn_right", 0x20), ("paddle_left", 0x40), ("paddle_right", 0x80),
    ]
    static let hatOrder = ["up", "up-right", "right", "down-right", "down", "down-left", "left", "up-left"]
    public static var buttonNames: [String] { (faceButtons + shoulderButtons + systemButtons).map(\.0) }

    public mutating func report(_ input: EmulatedInput) -> [UInt8] {
        var r = [UInt8](repeating: 0, count: reportLength)
        r[0] = bus == .usb ? 0x01 : 0x31
        let b = base
        r[b + 0] = input.leftStick.0; r[b + 1] = input.leftStick.1
        r[b + 2] = input.rightStick.0; r[b + 3] = input.rightStick.1
        r[b + 4] = input.l2; r[b + 5] = input.r2
        r[b + 6] = sequence; sequence &+= 1
        func bits(_ table: [(String, UInt8)]) -> UInt8 {
            table.reduce(0) { input.buttons.contains($1.0) ? $0 | $1.1 : $0 }
        }
        let hat = Self.hatOrder.firstIndex(of: input.dpad).map(UInt8.init) ?? 8
        r[b + 7] = hat | bits(Self.faceButtons)
        r[b + 8] = bits(Self.shoulderButtons)
        r[b + 9] = bits(Self.systemButtons)
        put(input.gyro.0, &r, b + 15); put(input.gyro.1, &r, b + 17); put(input.gyro.2, &r, b + 19)
        put(input.accel.0, &r, b + 21); put(input.accel.1, &r, b + 23); put(input.accel.2, &r, b + 25)
        for i in 0..<4 { r[b + 27 + i] = UInt8(truncatingIfNeeded: input.sensorTimestamp >> (8 * UInt32(i))) }
        for slot in 0..<2 {
            let o = b + 32 + 4 * slot
            guard let touch = input.touches[slot] else { r[o] = 0x80; continue }
            r[o] = touch.id & 0x7f
            r[o + 1] = UInt8(truncatingIfNeeded: touch.x)
            r[o + 2] = UInt8(truncatingIfNeeded: (touch.x >> 8) & 0x0f) | UInt8(truncatingIfNeeded: (touch.y & 0x0f) << 4)
            r[o + 3] = UInt8(truncatingIfNeeded: touch.y >> 4)
        }
        // Battery: level in tenths in the low nibble, 0 discharging / 1 charging in the high one.
        r[b + 52] = UInt8(min(10, input.batteryPercent / 10)) | (input.charging ? 0x10 : 0x00)
        if bus == .bt { BluetoothCRC.stamp(seed: .input, report: &r) }
        return r
    }

    private func put(_ value: Int16, _ r: inout [UInt8], _ offset: Int) {
        let v = UInt16(bitPattern: value)
        r[offset] = UInt8(truncatingIfNeeded: v); r[offset + 1] = UInt8(truncatingIfNeeded: v >> 8)
    }
}
