import Foundation
import Glibc
import MonotonicTime
import PadSystem
import USBDevice

/// The kernel's USB/IP virtual host controller (vhci-hcd): a device attached to one of its ports
/// through a connected stream socket is enumerated as if plugged in, and the kernel's own drivers
/// bind it (usbhid and hid-playstation, snd-usb-audio). padgate speaks USB/IP on the other end of
/// a socket pair; no network and no usbip daemon are involved.
public enum VHCI {
    /// Every controller's attach, detach and status files live in the first one's directory.
    public static let directory = "/sys/devices/platform/vhci_hcd.0"

    /// What padgate puts in the upper half of a device id (the lower half is free): other programs
    /// see it in the status file, and padgate's own discovery tells its pads from a real pad that
    /// someone attached with usbip.
    public enum Mark: UInt32, Sendable, CaseIterable {
        case emulated = 0x7065   // "pe"
        case host = 0x7068       // "ph"

        /// The phys the pad's other nodes would carry had padgate been able to set it (uhid pads carry it).
        public var phys: String { self == .host ? PadPhys.hostVirtual + "/usb" : PadPhys.emulated + "/usb" }
    }

    /// Why a USB pad cannot be made here, or nil when it can: vhci-hcd loaded and its attach file writable.
    public static func unavailableReason() -> String? {
        guard FileManager.default.fileExists(atPath: directory + "/attach") else {
            return "vhci-hcd is not loaded (sudo modprobe vhci-hcd; padgate's modules-load file names it)"
        }
        guard access(directory + "/attach", W_OK) == 0 else {
            return "\(directory)/attach is not writable by this user (the udev rule 71-padgate-serve.rules grants it to padgate's service)"
        }
        return nil
    }

    /// Every port of every controller.
    public static func ports() -> [VHCIPortStatus] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0 == "status" || $0.hasPrefix("status.") }
        return files.flatMap { VHCIPortStatus.parse((try? String(contentsOfFile: directory + "/" + $0, encoding: .ascii)) ?? "") }
            .sorted { $0.port < $1.port }
    }

    /// Attaches the device behind `socket` (the kernel's end of a connected stream socket pair) to
    /// a free high-speed port, returning the port. The kernel keeps its own reference to the socket.
    static func attach(socket: FileDescriptor, devid: UInt32) throws -> UInt32 {
        // USB_SPEED_HIGH: the DualSense enumerates at high speed (its descriptors' intervals assume it).
        let highSpeed = 3
        var lastError: Error?
        // Another program may take a port between the status read and the write: try the next.
        for port in ports().filter({ $0.highSpeedHub && $0.isFree }).prefix(4) {
            do {
                try write("\(port.port) \(socket.rawValue) \(devid) \(highSpeed)", to: directory + "/attach")
                return port.port
            } catch {
                lastError = error
            }
        }
        let used = ports().filter { $0.highSpeedHub && !$0.isFree }.map { String($0.port) }
        throw lastError ?? DeviceError.unsupported("every high-speed port of vhci-hcd is in use (ports \(used.joined(separator: ", "))): free one (usbip port; usbip detach -p N) or load vhci-hcd with more (nr_hcs=)")
    }

    /// Detaches the device on `port` and waits, up to `limit`, until the kernel has removed it:
    /// the write returns once the port is free, and the hub removes the device after that
    /// (its drivers let go, its input devices and joystick numbers are freed, its node goes).
    /// Returns false when the device was still there at the limit.
    static func detach(port: UInt32, waitingUpTo limit: Duration) throws -> Bool {
        // The device's node and its address: a device attached to the port meanwhile has another.
        let node = ports().first { $0.port == port && !$0.isFree && $0.busID != "0-0" }.map { "/sys/bus/usb/devices/\($0.busID)" }
        func address() -> String? { node.flatMap { try? String(contentsOfFile: $0 + "/devnum", encoding: .ascii) } }
        let attached = address()
        try write(String(port), to: directory + "/detach")
        guard attached != nil else { return true }
        let deadline = MonotonicInstant.now + limit
        while address() == attached {
            guard MonotonicInstant.now < deadline else { return false }
            usleep(2_000)
        }
        return true
    }

    /// The mark of the vhci device a HID device hangs off (its syspath runs through
    /// `vhci_hcd.N/usbB/B-P/`), or nil for any other device.
    public static func mark(ofDeviceAt syspath: String) -> Mark? {
        guard syspath.contains("/vhci_hcd.") else { return nil }
        let parts = syspath.split(separator: "/")
        guard let usb = parts.firstIndex(where: { $0.hasPrefix("usb") && $0.dropFirst(3).allSatisfy(\.isNumber) }), usb + 1 < parts.count else { return nil }
        let busID = String(parts[usb + 1])
        guard let port = ports().first(where: { $0.busID == busID && !$0.isFree }) else { return nil }
        return Mark(rawValue: port.devid >> 16)
    }

    private static func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DeviceError.from(errno: .current, call: "open", path: path) }
        defer { close(fd) }
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard written >= 0 else { throw DeviceError.from(errno: .current, call: "write", path: path) }
    }
}
