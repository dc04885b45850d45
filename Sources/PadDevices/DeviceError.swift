import Foundation
import PadSystem

/// Why a device could not be used, with the path involved and what the user can do about it.
public enum DeviceError: Error, CustomStringConvertible, Equatable {
    case permissionDenied(path: String)
    case notFound(path: String)
    case removed(path: String)
    case busy(path: String)
    /// EVIOCGRAB refused: another reader holds the node exclusively.
    case grabbedElsewhere(path: String)
    case systemCall(String, path: String, errno: Errno)
    case timedOut(String, path: String)
    case unsupported(String)
    case noSuchPad(selector: String, available: Int)
    case malformed(String)

    /// Paths and selectors are what a person typed or a device is called: escaped for the terminal.
    public var description: String {
        switch self {
        case .permissionDenied(let raw):
            let path = TerminalText.escaped(raw)
            return "permission denied on \(path): install udev/70-padgate.rules (sudo cp udev/70-padgate.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger), then re-plug the pad; see README"
        case .notFound(let path) where path == "/dev/uhid" || path == "/dev/uinput":
            let module = path.dropFirst("/dev/".count)
            return "\(path) does not exist: the kernel's \(module) module is not loaded (sudo modprobe \(module)). Where it cannot be loaded (a container), the device tests and the demo run in the test guest: make test, make demo-guest"
        case .notFound(let raw) where raw.hasPrefix("/dev/"):
            let path = TerminalText.escaped(raw)
            return "\(path) does not exist: the pad was unplugged, or its node has another number now (see 'padgate list')"
        case .notFound(let path):
            return "\(TerminalText.escaped(path)) does not exist"
        case .removed(let raw):
            let path = TerminalText.escaped(raw)
            return "\(path) went away: the pad was unplugged"
        case .busy(let raw):
            let path = TerminalText.escaped(raw)
            return "\(path) is busy: another program has grabbed it exclusively (close Steam Input or other remappers)"
        case .grabbedElsewhere(let raw):
            let path = TerminalText.escaped(raw)
            return "\(path) is held exclusively by another program (another 'padgate forward' of this pad, Steam Input or a remapper): stop it, or forward with --shared to read the pad beside it"
        case .systemCall(let call, let path, let code):
            return "\(call) failed on \(TerminalText.escaped(path)): \(code)"
        case .timedOut(let what, let path):
            return "\(what) on \(TerminalText.escaped(path)) timed out: the pad did not answer"
        case .unsupported(let what):
            return what
        case .noSuchPad(let raw, let available):
            let selector = TerminalText.escaped(raw)
            return available == 0
                ? "no game controller found\(selector == "any" ? "" : " for '\(selector)'"): plug one in; if one is plugged in, install udev/70-padgate.rules (see README)"
                : "no pad matches '\(selector)': use an index from 'padgate list', a /dev node path, or vid:pid"
        case .malformed(let what):
            return what
        }
    }

    /// Maps an errno from open(2) and friends to the error a user can act on.
    public static func from(errno code: Errno, call: String, path: String) -> DeviceError {
        switch code {
        case .permissionDenied, .notPermitted: return .permissionDenied(path: path)
        case .noSuchFile, .noSuchDeviceOrAddress: return .notFound(path: path)
        case .noDevice: return .removed(path: path)
        case .busy: return .busy(path: path)
        default: return .systemCall(call, path: path, errno: code)
        }
    }

    /// A failed call on the device at `path`, as the error a user can act on.
    public static func from(_ error: SystemCallError, path: String) -> DeviceError {
        from(errno: error.errno, call: error.call, path: path)
    }
}
