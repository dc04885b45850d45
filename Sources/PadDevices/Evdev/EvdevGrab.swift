import CEvdev
import Foundation
import PadSystem

extension EvdevDevice {
    /// Takes the node for this descriptor alone (EVIOCGRAB): its events reach no other reader,
    /// libinput and the desktop's gamepad navigation among them, until the descriptor closes (as it
    /// does when the process ends, however it ends).
    public func grab() throws {
        let rc = libevdev_grab(handle, LIBEVDEV_GRAB)
        guard rc == 0 else {
            let code = Errno(rawValue: -rc)
            throw code == .busy ? DeviceError.grabbedElsewhere(path: path) : DeviceError.from(errno: code, call: "EVIOCGRAB", path: path)
        }
    }
}

/// A forwarded pad's evdev nodes held for `forward` alone while it forwards the pad (docs/desk.md):
/// the nodes it reads are grabbed on their own descriptors, every other node (a PlayStation pad's
/// touchpad and motion nodes read through hidraw, a Steam pad's lizard keyboard and mouse) is opened
/// to be grabbed and never read. Released when this is dropped; the kernel releases them on close
/// after a crash too.
public final class EvdevGrab {
    /// The nodes held, in the pad's order: the reader's and those opened here.
    public let paths: [String]
    private let held: [EvdevDevice]

    /// The roles never taken: a headset jack's switch drives no program's input, and the client's
    /// sound server reads it to switch the pad's audio port.
    public static let leftShared: Set<EvdevRole> = [.jack]

    /// Grabs every node of `pad` but those in `leftShared`, reusing `reading` (nodes already open
    /// to be read: a grab on another descriptor would hide their events from the reader too).
    /// A node that cannot be taken undoes the nodes taken before it.
    public init(_ pad: Pad, reading: [EvdevDevice] = []) throws {
        var held: [EvdevDevice] = []
        for node in pad.evdev where !Self.leftShared.contains(node.role) {
            let device = try reading.first { $0.path == node.path } ?? EvdevDevice(path: node.path)
            try device.grab()
            held.append(device)
        }
        self.held = held
        paths = held.map(\.path)
    }

    deinit {
        // Closing releases the grab; said explicitly for the nodes another owner (the reader) keeps open.
        for device in held { _ = libevdev_grab(device.handle, LIBEVDEV_UNGRAB) }
    }
}
