import CUdev
import Foundation
import PadSystem

/// A libudev context. Enumerates the devices padgate cares about as `UdevRecord`s.
public final class Udev {
    let handle: OpaquePointer

    public init() throws {
        guard let udev = udev_new() else { throw DeviceError.unsupported("libudev could not start (udev_new failed)") }
        handle = udev
    }
    deinit { udev_unref(handle) }

    /// Subsystems whose devices make up a pad.
    public static let subsystems = ["input", "hidraw", "power_supply", "leds"]

    public func records() -> [UdevRecord] {
        guard let enumerate = udev_enumerate_new(handle) else { return [] }
        defer { udev_enumerate_unref(enumerate) }
        for subsystem in Self.subsystems { udev_enumerate_add_match_subsystem(enumerate, subsystem) }
        udev_enumerate_scan_devices(enumerate)
        var result: [UdevRecord] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let syspath = udev_list_entry_get_name(current),
               let device = udev_device_new_from_syspath(handle, syspath) {
                if let record = Self.record(device) { result.append(record) }
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(current)
        }
        return result
    }

    public func pads() -> [Pad] { PadGrouping.pads(from: records()) }

    /// The ALSA card of a USB pad's own audio function: the card under the same USB device as the
    /// pad's HID interface (a DualSense's 4-channel output and its microphone); nil for a pad
    /// with none, or not on USB.
    public func soundCard(of pad: Pad) -> Int? {
        guard let hid = udev_device_new_from_syspath(handle, pad.id) else { return nil }
        defer { udev_device_unref(hid) }
        guard let usb = udev_device_get_parent_with_subsystem_devtype(hid, "usb", "usb_device"),
              let usbPath = Self.string(udev_device_get_syspath(usb)),
              let enumerate = udev_enumerate_new(handle) else { return nil }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, "sound")
        udev_enumerate_add_match_sysname(enumerate, "card[0-9]*")
        udev_enumerate_scan_devices(enumerate)
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            defer { entry = udev_list_entry_get_next(current) }
            guard let path = Self.string(udev_list_entry_get_name(current)), path.hasPrefix(usbPath + "/"),
                  let card = udev_device_new_from_syspath(handle, path) else { continue }
            defer { udev_device_unref(card) }
            if let number = Self.string(udev_device_get_sysattr_value(card, "number")).flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                return number
            }
        }
        return nil
    }

    static func record(_ device: OpaquePointer) -> UdevRecord? {
        guard let syspath = string(udev_device_get_syspath(device)),
              let subsystem = string(udev_device_get_subsystem(device)) else { return nil }
        var ancestors: [UdevRecord.Ancestor] = []
        var parent = udev_device_get_parent(device)  // borrowed: owned by the child
        while let current = parent {
            if let sub = string(udev_device_get_subsystem(current)), sub == "input" || sub == "hid",
               let path = string(udev_device_get_syspath(current)) {
                var attributes: [String: String] = [:]
                if sub == "input" {
                    for name in ["capabilities/ff", "phys"] {
                        if let value = string(udev_device_get_sysattr_value(current, name)) { attributes[name] = value }
                    }
                }
                var properties = properties(current)
                // A USB pad padgate attached to vhci-hcd carries usbhid's phys; its mark in the
                // port's device id says whose it is, as a uhid pad's phys does.
                if sub == "hid", let mark = VHCI.mark(ofDeviceAt: path) { properties["HID_PHYS"] = mark.phys }
                ancestors.append(.init(syspath: path, subsystem: sub, properties: properties, attributes: attributes))
            }
            parent = udev_device_get_parent(current)
        }
        return UdevRecord(syspath: syspath, subsystem: subsystem,
                          sysname: string(udev_device_get_sysname(device)) ?? "",
                          devnode: string(udev_device_get_devnode(device)),
                          properties: properties(device), ancestors: ancestors)
    }

    static func properties(_ device: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let current = entry {
            if let name = string(udev_list_entry_get_name(current)) {
                result[name] = string(udev_list_entry_get_value(current)) ?? ""
            }
            entry = udev_list_entry_get_next(current)
        }
        return result
    }

    static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
}

/// A netlink monitor for hot-plug. Its file descriptor becomes readable when a device of a pad's
/// subsystems comes or goes; nothing polls.
public final class UdevMonitor {
    let udev: Udev
    let handle: OpaquePointer
    public let descriptor: FileDescriptor

    /// `subsystems`: the pads' by default; a test that waits on /dev/uhid adds "misc".
    public init(_ udev: Udev, subsystems: [String] = Udev.subsystems) throws {
        self.udev = udev
        // Events from udevd carry rule-made properties (ID_INPUT_JOYSTICK); without udevd, the kernel's own.
        let source = FileManager.default.fileExists(atPath: "/run/udev/control") ? "udev" : "kernel"
        guard let monitor = udev_monitor_new_from_netlink(udev.handle, source) else {
            throw DeviceError.unsupported("cannot open the udev netlink monitor (is this a container without netlink?)")
        }
        handle = monitor
        for subsystem in subsystems { udev_monitor_filter_add_match_subsystem_devtype(monitor, subsystem, nil) }
        guard udev_monitor_enable_receiving(monitor) >= 0 else {
            udev_monitor_unref(monitor)
            throw DeviceError.unsupported("cannot receive udev events")
        }
        descriptor = FileDescriptor(rawValue: udev_monitor_get_fd(monitor))
    }
    deinit { udev_monitor_unref(handle) }

    public struct Event: Sendable { public var action: String; public var syspath: String; public var subsystem: String }

    /// Reads every event already queued; returns at once when there is none.
    public func drain() -> [Event] {
        var events: [Event] = []
        while let device = udev_monitor_receive_device(handle) {
            events.append(Event(action: Udev.string(udev_device_get_action(device)) ?? "",
                                syspath: Udev.string(udev_device_get_syspath(device)) ?? "",
                                subsystem: Udev.string(udev_device_get_subsystem(device)) ?? ""))
            udev_device_unref(device)
        }
        return events
    }
}
