import Foundation
import MonotonicTime
import Glibc

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

    /// Whether a kernel driver has made an input device with `uniq` (and named `name`, where
    /// given; sysfs: /sys/class/input/inputN/name and uniq): how a host knows hid-steam has
    /// registered a Deck. The address is compared without regard to case.
    public static func hasInputDevice(named name: String? = nil, uniq: String) -> Bool {
        inputDevices(named: name, uniq: uniq) > 0
    }

    /// How many input devices a kernel driver has made with `uniq` (and `name`, where given).
    public static func inputDevices(named name: String? = nil, uniq: String) -> Int {
        let root = "/sys/class/input"
        let inputs = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        func read(_ path: String) -> String {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return inputs.filter { input in
            input.hasPrefix("input") && read("\(root)/\(input)/uniq").lowercased() == uniq.lowercased()
                && (name.map { read("\(root)/\(input)/name") == $0 } ?? true)
        }.count
    }

    /// Waits (up to `timeout`) until a driver has registered `count` input devices with `uniq`;
    /// whether it did. A HID driver opens its device before it registers the input devices
    /// (hid-playstation asks for the calibration and firmware first), one after another, each
    /// whole with its handlers (its `jsN` among them) before the next: the second there means the
    /// first (the gamepad) is complete. The kernel numbers joysticks in the order they register,
    /// so a host that makes a client's pads one at a time, each registered, gives the same pads
    /// the same numbers when they come back.
    /// How long a host pad's driver may take to register its input devices after opening it.
    public static let inputRegistration: Duration = .seconds(5)

    public static func waitForInputDevices(uniq: String, count: Int, timeout: Duration = inputRegistration) -> Bool {
        let deadline = MonotonicInstant.now + timeout
        while inputDevices(uniq: uniq) < count {
            guard MonotonicInstant.now < deadline else { return false }
            usleep(10_000)
        }
        return true
    }
}
