/// Names for the usages gamepads use, spelled as in the HID Usage Tables (and hid-tools).
/// Unknown usages print as hex, like hid-tools: "0xff000020".
public enum UsageNames {
    static let genericDesktop: [UInt16: String] = [
        0x01: "Pointer", 0x02: "Mouse", 0x04: "Joystick", 0x05: "Game Pad", 0x06: "Keyboard", 0x07: "Keypad",
        0x08: "Multi-Axis Controller", 0x30: "X", 0x31: "Y", 0x32: "Z", 0x33: "Rx", 0x34: "Ry", 0x35: "Rz",
        0x36: "Slider", 0x37: "Dial", 0x38: "Wheel", 0x39: "Hat switch", 0x3A: "Counted Buffer", 0x3B: "Byte Count",
        0x3C: "Motion Wakeup", 0x3D: "Start", 0x3E: "Select", 0x40: "Vx", 0x41: "Vy", 0x42: "Vz", 0x43: "Vbrx",
        0x44: "Vbry", 0x45: "Vbrz", 0x46: "Vno", 0x80: "System Control", 0x81: "System Power Down",
        0x82: "System Sleep", 0x83: "System Wake Up", 0x85: "System Main Menu",
        0x90: "D-pad Up", 0x91: "D-pad Down", 0x92: "D-pad Right", 0x93: "D-pad Left",
    ]
    static let simulation: [UInt16: String] = [0xBA: "Rudder", 0xBB: "Throttle", 0xC4: "Accelerator", 0xC5: "Brake", 0xC8: "Steering"]
    static let genericDevice: [UInt16: String] = [0x20: "Battery Strength", 0x21: "Wireless Channel", 0x22: "Wireless ID"]
    static let consumer: [UInt16: String] = [
        0x01: "Consumer Control", 0x30: "Power", 0x40: "Menu", 0x81: "Assign Selection", 0x84: "Enter Channel",
        0x85: "Order Movie", 0xB0: "Play", 0xB1: "Pause", 0xB2: "Record", 0xB5: "Scan Next Track",
        0xB6: "Scan Previous Track", 0xB7: "Stop", 0xCD: "Play/Pause", 0xE2: "Mute", 0xE9: "Volume Increment",
        0xEA: "Volume Decrement", 0x221: "AC Search", 0x223: "AC Home", 0x224: "AC Back", 0x225: "AC Forward",
    ]

    public static func name(of usage: Usage) -> String {
        if usage.rawValue == 0 { return "Undefined" }
        let table: [UInt16: String]?
        switch usage.page {
        case 0x01: table = genericDesktop
        case 0x02: table = simulation
        case 0x06: table = genericDevice
        case 0x09: return "B\(usage.id)"
        case 0x0C: table = consumer
        default: table = nil
        }
        if let name = table?[usage.id] { return name }
        let hex = String(usage.rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
