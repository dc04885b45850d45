import Foundation
import Glibc
import PadSystem

/// What `padgate doctor` reads of the machine, each a read and nothing more: device nodes and
/// whether this user may open them, kernel modules loaded or loadable, a user's groups, a port's
/// listener, a node's udev properties, the driver a HID device is bound to.
public enum SystemProbe {
    /// The running kernel's release (`uname -r`).
    public static var kernelRelease: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
    /// Whether this process may open `path` for reading and writing (or only reading).
    public static func mayOpen(_ path: String, write: Bool = true) -> Bool { access(path, write ? R_OK | W_OK : R_OK) == 0 }

    /// A module's state in the running kernel: loaded (or built in), loadable from its modules
    /// directory, or absent (a container's kernel may have none of its files).
    public enum ModuleState: String, Sendable { case loaded, loadable, absent }

    public static func module(_ name: String) -> ModuleState {
        let underscored = name.replacingOccurrences(of: "-", with: "_")
        if exists("/sys/module/\(underscored)") { return .loaded }
        for base in ["/lib/modules", "/usr/lib/modules"] {
            let directory = "\(base)/\(kernelRelease)"
            let text = ["modules.dep", "modules.builtin"].compactMap { try? UserFile.read("\(directory)/\($0)", limit: 8 << 20) }
                .map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
            // Lines start with the module's path, e.g. kernel/drivers/hid/uhid.ko.xz: either spelling.
            for spelling in Set([name, underscored]) where text.contains("/\(spelling).ko") { return .loadable }
        }
        return .absent
    }

    /// A system user and the names of its groups (its own and supplementary); nil: no such user.
    public static func user(_ name: String) -> (uid: UInt32, groups: [String])? {
        guard let entry = getpwnam(name) else { return nil }
        let uid = entry.pointee.pw_uid, primary = entry.pointee.pw_gid
        var count: Int32 = 64
        var ids = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, primary, &ids, &count) < 0 { count = 0 }
        let groups = ids.prefix(Int(max(count, 0))).compactMap { gid -> String? in getgrgid(gid).map { String(cString: $0.pointee.gr_name) } }
        return (uid, groups)
    }

    /// The group that owns `path`, by name.
    public static func group(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0, let group = getgrgid(info.st_gid) else { return nil }
        return String(cString: group.pointee.gr_name)
    }

    /// Whether something listens on TCP `port` (either family), from /proc/net/tcp and tcp6.
    public static func tcpListening(port: UInt16) -> Bool {
        let hexPort = String(format: ":%04X", port)
        return ["/proc/net/tcp", "/proc/net/tcp6"].contains { file in
            let text = String(decoding: (try? UserFile.read(file, limit: 4 << 20)) ?? [], as: UTF8.self)
            // `sl local_address rem_address st …`: state 0A is LISTEN.
            return text.split(separator: "\n").dropFirst().contains { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[1].hasSuffix(hexPort) && fields[3] == "0A"
            }
        }
    }

    /// The udev database's properties for a device node (`udevadm info --query=property`), read
    /// from /run/udev/data; empty where udev has not processed it (or runs nowhere).
    public static func udevProperties(ofNode path: String) -> [String: String] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [:] }
        let kind = (info.st_mode & S_IFMT) == S_IFBLK ? "b" : "c"
        // glibc's gnu_dev_major and gnu_dev_minor, which Swift does not import as macros.
        let dev = UInt64(info.st_rdev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let file = "/run/udev/data/\(kind)\(major):\(minor)"
        let text = String(decoding: (try? UserFile.read(file, limit: 1 << 16)) ?? [], as: UTF8.self)
        var properties: [String: String] = [:]
        for line in text.split(separator: "\n") {
            // E:KEY=VALUE lines are properties; G: and Q: lines are tags (current and ever).
            if line.hasPrefix("E:"), let equals = line.firstIndex(of: "=") {
                properties[String(line[line.index(line.startIndex, offsetBy: 2)..<equals])] = String(line[line.index(after: equals)...])
            } else if line.hasPrefix("G:") {
                properties["TAGS", default: ":"] += line.dropFirst(2) + ":"
            }
        }
        return properties
    }

    /// The driver bound to the HID device behind a hidraw node (`hid-generic`, `playstation`, …).
    public static func hidDriver(ofHidraw path: String) -> String? {
        let name = URL(fileURLWithPath: path).lastPathComponent
        return (try? FileManager.default.destinationOfSymbolicLink(atPath: "/sys/class/hidraw/\(name)/device/driver"))
            .map { URL(fileURLWithPath: $0).lastPathComponent }
    }
}
