import Foundation
import MonotonicTime
import Glibc
import PadSystem

/// Which of the running kernel's modules would bind a HID device, from the kernel's own alias
/// tables (`modules.alias`, `modules.builtin.alias` under /lib/modules/RELEASE): what modprobe
/// and udev go by. A host asks before it shows a pad that only a family's driver makes usable
/// (hid-generic, which takes every HID device, is not an answer).
public enum KernelDrivers {
    /// The module that binds a HID device on `bus` (the kernel's BUS_* number) with these ids,
    /// other than hid-generic; nil where none does (or the tables cannot be read).
    public static func hidModule(bus: UInt16, vendor: UInt16, product: UInt16) -> String? {
        // The device's modalias as hid-core writes it (group 1: HID_GROUP_GENERIC).
        module(for: String(format: "hid:b%04Xg%04Xv%08Xp%08X", bus, 1, vendor, product), in: aliases)
    }

    /// The first module of `aliases` whose pattern matches `modalias`, hid-generic aside.
    static func module(for modalias: String, in aliases: [(pattern: String, module: String)]) -> String? {
        aliases.first { $0.module != "hid_generic" && fnmatch($0.pattern, modalias, 0) == 0 }?.module
    }

    /// The HID lines of the alias tables, read once.
    static let aliases: [(pattern: String, module: String)] = {
        let release = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return ["modules.alias", "modules.builtin.alias"].flatMap { file -> [(pattern: String, module: String)] in
            let text = (try? String(contentsOfFile: "/lib/modules/\(release)/\(file)", encoding: .utf8)) ?? ""
            return parse(text)
        }
    }()

    /// `alias hid:b0003g*v000028DEp00001205 hid_steam` lines: their patterns and modules.
    static func parse(_ text: String) -> [(pattern: String, module: String)] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "alias", fields[1].hasPrefix("hid:") else { return nil }
            return (String(fields[1]), String(fields[2]))
        }
    }

    /// How long a host pad's driver may take to register its input devices after opening it.
    public static let inputRegistration: Duration = .seconds(5)

    /// Whether a kernel driver has registered an input device with `uniq` (and named `name`,
    /// where given): how a host knows hid-steam has registered a Deck. The address is compared
    /// without regard to case.
    public static func hasInputDevice(named name: String? = nil, uniq: String) -> Bool {
        inputDevices(named: name, uniq: uniq) > 0
    }

    /// How many input devices a kernel driver has registered whole with `uniq` (and `name`,
    /// where given). Whole: /proc/bus/input/devices lists a device only once its handlers
    /// (evdev's eventN, joydev's jsN) are attached, because the kernel adds it to that list and
    /// attaches them under one lock (input_register_device). sysfs shows inputN earlier, at
    /// device_add, before either handler.
    public static func inputDevices(named name: String? = nil, uniq: String) -> Int {
        return registeredInputs(in: listedInputs()).filter { input in
            input.uniq.lowercased() == uniq.lowercased() && (name.map { input.name == $0 } ?? true)
        }.count
    }

    /// /proc/bus/input/devices' text, read to its end: procfs reports size 0, and Foundation's
    /// `String(contentsOfFile:)` returns only the first read of it (4 KiB, about 12 devices).
    static func listedInputs() -> String {
        String(decoding: (try? UserFile.read("/proc/bus/input/devices", limit: 1 << 20)) ?? [], as: UTF8.self)
    }

    /// The name, uniq and handlers of each device in /proc/bus/input/devices' text (blocks
    /// of `N: Name="…"`, `U: Uniq=…`, `H: Handlers=event5 js0` lines, a blank line apart).
    static func registeredInputs(in text: String) -> [(name: String, uniq: String, handlers: [String])] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .split(whereSeparator: { $0.trimmingCharacters(in: .whitespaces).isEmpty })
            .map { block in
                var name = "", uniq = "", handlers: [String] = []
                for line in block {
                    if let value = line.value(after: "N: Name=") {
                        // Quoted by the kernel: one quote each side (a name may hold quotes of its own).
                        name = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
                    }
                    if let value = line.value(after: "U: Uniq=") { uniq = value }
                    if let value = line.value(after: "H: Handlers=") { handlers = value.split(separator: " ").map(String.init) }
                }
                return (name, uniq, handlers)
            }
    }

    /// Waits (up to `timeout`) until a driver has registered `count` input devices with `uniq`,
    /// each whole; whether it did. A HID driver opens its device before it registers them
    /// (hid-playstation and hid-nintendo ask for calibration and firmware first), and the order
    /// is the driver's: hid-playstation's gamepad comes first; hid-sony's (a DualShock 4 on 6.1)
    /// after its touchpad and motion; hid-nintendo's after its IMU from 6.12 (docs/virtual-pads.md).
    /// So a caller waits for all of a pad's devices. The kernel numbers joysticks in the order they register, so a host that
    /// makes a client's pads one at a time, each whole, gives the same pads the same numbers when
    /// they come back.
    public static func waitForInputDevices(uniq: String, count: Int, timeout: Duration = inputRegistration) -> Bool {
        waitUntil(timeout: timeout) { inputDevices(uniq: uniq) >= count }
    }

    /// Polls `done` every 10 ms until it holds or `timeout` has passed; whether it held. For what a
    /// driver's probe does in sysfs, which sends no event padgate can wait on.
    public static func waitUntil(timeout: Duration, _ done: () -> Bool) -> Bool {
        let deadline = MonotonicInstant.now + timeout
        while !done() {
            guard MonotonicInstant.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}

private extension Substring {
    /// The rest of the line after `prefix`, trimmed; nil where the line does not start with it.
    func value(after prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces) : nil
    }
}
