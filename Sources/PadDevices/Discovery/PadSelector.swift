import Glibc
import PadSystem

/// How a person names a pad on the command line: an index from `padgate list`, any of its
/// /dev nodes, or `vid:pid` (the first such pad).
public enum PadSelector: Equatable, Sendable, CustomStringConvertible {
    case index(Int)
    case node(String)
    case ids(vendor: UInt16, product: UInt16)

    public init(_ text: String) throws {
        if let index = Int(text), index >= 0 {
            self = .index(index)
        } else if text.hasPrefix("/") {
            self = .node(text)
        } else {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let vendor = UInt16(parts[0], radix: 16), let product = UInt16(parts[1], radix: 16) else {
                throw DeviceError.malformed("'\(TerminalText.escaped(text))' is not a pad: use an index from 'padgate list', a /dev node path, or vid:pid such as 054c:0ce6")
            }
            self = .ids(vendor: vendor, product: product)
        }
    }

    public var description: String {
        switch self {
        case .index(let i): return String(i)
        case .node(let path): return path
        case .ids(let v, let p): return String(format: "%04x:%04x", v, p)
        }
    }

    public func matches(_ pad: Pad, at index: Int) -> Bool {
        switch self {
        case .index(let i): return i == index
        case .node(let path): return pad.hidraw == path || pad.evdev.contains { $0.path == path }
        case .ids(let v, let p): return pad.vendorID == v && pad.productID == p
        }
    }

    /// The selected pad; nil selector means the first one.
    public static func select(_ selector: PadSelector?, from pads: [Pad]) throws -> Pad {
        guard let selector else {
            guard let first = pads.first else { throw DeviceError.noSuchPad(selector: "any", available: 0) }
            return first
        }
        guard let (_, pad) = pads.enumerated().first(where: { selector.matches($0.element, at: $0.offset) }) else {
            if case .node(let path) = selector {
                var info = stat()
                guard stat(path, &info) == 0 else { throw DeviceError.notFound(path: path) }
                if info.st_mode & S_IFMT != S_IFCHR {
                    throw DeviceError.malformed("'\(TerminalText.escaped(path))' is not a device node: name a pad's /dev/hidraw* or /dev/input/event* node (see 'padgate list')")
                }
            }
            throw DeviceError.noSuchPad(selector: selector.description, available: pads.count)
        }
        return pad
    }
}
