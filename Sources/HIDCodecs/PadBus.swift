/// How a pad is attached, USB or Bluetooth: the one type for it in every layer. Reports follow it
/// (a Bluetooth report has its own ids, a header and a CRC32 trailer), uhid and uinput create pads
/// on it, udev lists pads by it, and the command line takes it. Its raw values are the names
/// `list` and its JSON print.
public enum PadBus: String, Codable, Sendable, CaseIterable {
    case usb, bluetooth

    /// The bus for the kernel's BUS_* number (linux/input.h); nil for any other (BUS_VIRTUAL...).
    public init?(kernelBus: UInt16) {
        switch kernelBus {
        case 0x03: self = .usb
        case 0x05: self = .bluetooth
        default: return nil
        }
    }

    /// The kernel's BUS_* number, as uhid and uinput take it.
    public var kernelBus: UInt16 {
        switch self {
        case .usb: 0x03
        case .bluetooth: 0x05
        }
    }

    /// The short name the command line takes (`--bus usb|bt`) and decoded output reports show.
    public var shortName: String {
        switch self {
        case .usb: "usb"
        case .bluetooth: "bt"
        }
    }

    /// The bus for a short name or a raw value ("usb", "bt", "bluetooth").
    public init?(name: String) {
        switch name {
        case "usb": self = .usb
        case "bt", "bluetooth": self = .bluetooth
        default: return nil
        }
    }
}
