import ArgumentParser
import Foundation
import HIDCodecs
import HostDiscovery
import PadDevices
import PadFamilies
import PadHost
import PadSystem
import Transport

/// `padgate doctor`: what this machine lacks for `forward` and `serve`, every line with the
/// command that fixes it. It only reads (SystemProbe, udev's database, sysfs, /proc).
struct DoctorCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what forward and serve need on this machine, and say how to fix what is missing.",
        discussion: "Reads only: kernel interfaces (uhid, uinput, vhci-hcd), the udev rules and whether they reached each pad, each pad's kernel driver, the service user, the serve port, the system bus and avahi-daemon, the kernel line's known differences. Exits 1 when a check failed.")

    @Flag(help: "One JSON object: every check with its status, detail and fix.") var json = false

    func run() throws {
        let checks = Doctor.checks()
        if json {
            print(JSONLines.string(Doctor.Report(checks: checks), pretty: true))
        } else {
            for check in checks {
                print("\(check.status.label) \(check.check.padding(toLength: 14, withPad: " ", startingAt: 0)) \(check.detail)")
                if let fix = check.fix { print(String(repeating: " ", count: 23) + "fix: \(fix)") }
            }
            let failed = checks.filter { $0.status == .failed }.count, warned = checks.filter { $0.status == .warning }.count
            print(failed == 0 && warned == 0 ? "all good" : "\(failed) failed, \(warned) warning\(warned == 1 ? "" : "s")")
        }
        if checks.contains(where: { $0.status == .failed }) { throw ExitCode(1) }
    }
}

enum Doctor {
    struct Check: Encodable, Equatable {
        enum Status: String, Encodable { case ok, info, warning, failed
            var label: String { self == .failed ? "FAILED " : rawValue.padding(toLength: 7, withPad: " ", startingAt: 0) }
        }
        enum Role: String, Encodable { case client, host, both }
        var check: String
        var role: Role
        var status: Status
        /// Text from the machine (a pad's name) is escaped where it is made.
        var detail: String
        var fix: String?
    }

    struct Report: Encodable {
        var checks: [Check]
        var failed: Int { checks.filter { $0.status == .failed }.count }
        var warnings: Int { checks.filter { $0.status == .warning }.count }
        enum CodingKeys: String, CodingKey { case checks, failed, warnings }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(checks, forKey: .checks)
            try container.encode(failed, forKey: .failed)
            try container.encode(warnings, forKey: .warnings)
        }
    }

    static let rulesFix = "padgate udev-rules | sudo tee /etc/udev/rules.d/\(UdevRules.fileName) >/dev/null && sudo udevadm control --reload && sudo udevadm trigger"
    static let rulesDirectories = ["/etc/udev/rules.d", "/run/udev/rules.d", "/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"]

    static func checks() -> [Check] {
        var checks = [
            virtualInterface("uhid", path: UHIDDevice.path, module: "uhid", role: .host,
                             use: "the host's HID pads (DualSense, DualShock 4, Switch Pro, Xbox One S, Steam Deck) and 'padgate emulate'"),
            virtualInterface("uinput", path: UInputGamepad.path, module: "uinput", role: .host,
                             use: "the host's Xbox 360 pads (serve --virtual xbox, and pads no family shows)"),
            vhci(),
            udevd(),
            rules(),
        ]
        checks += pads()
        checks += [serviceUser(), servePort(), systemBus(), avahi(), firewall(), kernel()]
        return checks
    }

    static func virtualInterface(_ name: String, path: String, module: String, role: Check.Role, use: String) -> Check {
        if SystemProbe.mayOpen(path) { return Check(check: name, role: role, status: .ok, detail: "\(path) is there and this user may open it") }
        if SystemProbe.exists(path) {
            return Check(check: name, role: role, status: .failed, detail: "\(path) is there but this user may not open it (\(use))",
                         fix: "\(rulesFix); then log out and in (the service's user has it through 71-padgate-serve.rules: sudo make install)")
        }
        switch SystemProbe.module(module) {
        case .loaded:
            return Check(check: name, role: role, status: .failed, detail: "the \(module) module is loaded but \(path) is missing (no devtmpfs here?)", fix: "sudo udevadm trigger --subsystem-match=misc")
        case .loadable:
            return Check(check: name, role: role, status: .failed, detail: "\(path) is missing: the \(module) module is not loaded (\(use))",
                         fix: "sudo modprobe \(module) (at every boot: sudo install -m 0644 udev/modules-load.d/padgate.conf /etc/modules-load.d/)")
        case .absent:
            return Check(check: name, role: role, status: .failed,
                         detail: "\(path) is missing and this kernel (\(SystemProbe.kernelRelease)) has no \(module) module: a container's kernel? \(use) cannot be made here",
                         fix: "run serve on a machine whose kernel has \(module); here 'padgate demo --devices in-process' works, and 'make test' and 'make demo-guest' run the device work in the QEMU guest")
        }
    }

    static func vhci() -> Check {
        let attach = VHCI.directory + "/attach"
        let use = "without it a DualSense is shown through uhid, without its audio function (HD haptics, speaker, microphone)"
        if SystemProbe.mayOpen(attach) { return Check(check: "vhci-hcd", role: .host, status: .ok, detail: "\(attach) is writable: DualSense host pads are USB devices with their audio") }
        if SystemProbe.exists(attach) {
            return Check(check: "vhci-hcd", role: .host, status: .warning, detail: "\(attach) is not writable by this user (\(use))",
                         fix: "run serve as its service (sudo make install; 71-padgate-serve.rules gives the padgate user the attach file) or as root")
        }
        let state = SystemProbe.module("vhci-hcd")
        return Check(check: "vhci-hcd", role: .host, status: .warning,
                     detail: state == .absent ? "this kernel has no vhci-hcd module: \(use)" : "vhci-hcd is not loaded: \(use)",
                     fix: state == .absent ? nil : "sudo modprobe vhci-hcd")
    }

    static func udevd() -> Check {
        SystemProbe.exists("/run/udev/control")
            ? Check(check: "udevd", role: .both, status: .ok, detail: "udevd is running")
            : Check(check: "udevd", role: .both, status: .warning, detail: "udevd is not running (no /run/udev/control): no rule reaches a pad's nodes and no pad's arrival is announced",
                    fix: "sudo systemctl start systemd-udevd (a container has none: run padgate on the machine itself)")
    }

    static func rules() -> Check {
        let expected = UdevRules.text()
        let found = rulesDirectories.map { "\($0)/\(UdevRules.fileName)" }.filter(SystemProbe.exists)
        guard let installed = found.first else {
            return Check(check: "udev rules", role: .both, status: .failed,
                         detail: "\(UdevRules.fileName) is not installed: pads' hidraw nodes, a PlayStation pad's touchpad and motion nodes and /dev/uhid stay root's", fix: rulesFix)
        }
        let text = (try? UserFile.read(installed, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }
        guard text == expected else {
            return Check(check: "udev rules", role: .both, status: .warning,
                         detail: "\(installed) is not this padgate's (another version's: pads added since may stay closed)", fix: rulesFix)
        }
        return Check(check: "udev rules", role: .both, status: .ok, detail: "\(installed) is this padgate's")
    }

    /// Each pad: may this user open its nodes (the rules reached them), and is its family's kernel driver bound.
    static func pads() -> [Check] {
        guard let pads = try? Udev().pads() else {
            return [Check(check: "pads", role: .client, status: .warning, detail: "udev could not be read: no pad can be found")]
        }
        if pads.isEmpty { return [Check(check: "pads", role: .client, status: .info, detail: "no game controller is plugged in")] }
        return pads.enumerated().map { index, pad in
            let name = "pad \(index)"
            let what = "\(pad.kind.displayName) \(TerminalText.escaped(pad.name)) (\(pad.vidpid), \(pad.busName))"
            if pad.isHostVirtualPad {
                let pointerNodes = pad.evdev.filter { $0.role == .touchpad || $0.role == .other }
                let taken = pointerNodes.filter { SystemProbe.udevProperties(ofNode: $0.path)["LIBINPUT_IGNORE_DEVICE"] != "1" }
                return taken.isEmpty
                    ? Check(check: name, role: .host, status: .ok, detail: "\(what): padgate serve's host pad; the desktop leaves its nodes alone")
                    : Check(check: name, role: .host, status: .warning,
                            detail: "\(what): padgate serve's host pad, but the desktop may take \(taken.map(\.path).joined(separator: ", ")) for a pointer", fix: rulesFix)
            }
            let nodes = [pad.hidraw.map { ($0, true) }].compactMap { $0 } + pad.evdev.map { ($0.path, false) }
            let closed = nodes.filter { !SystemProbe.mayOpen($0.0, write: $0.1) }.map(\.0)
            if !closed.isEmpty {
                return Check(check: name, role: .client, status: .failed,
                             detail: "\(what): this user may not open \(closed.joined(separator: ", "))", fix: "\(rulesFix); then re-plug the pad")
            }
            if let hidraw = pad.hidraw, let module = KernelDrivers.hidModule(bus: pad.kernelBus, vendor: pad.vendorID, product: pad.productID) {
                let bound = SystemProbe.hidDriver(ofHidraw: hidraw) ?? "no driver"
                let expected = module.hasPrefix("hid_") ? String(module.dropFirst(4)) : module
                if bound != expected {
                    return Check(check: name, role: .client, status: .warning,
                                 detail: "\(what): bound by \(bound), not \(module.replacingOccurrences(of: "_", with: "-")): its evdev nodes lack what that driver makes",
                                 fix: "sudo modprobe \(module.replacingOccurrences(of: "_", with: "-")), then re-plug the pad")
                }
                return Check(check: name, role: .client, status: .ok, detail: "\(what): its nodes open, bound by \(module.replacingOccurrences(of: "_", with: "-"))")
            }
            return Check(check: name, role: .client, status: .ok, detail: "\(what): its nodes open")
        }
    }

    static func serviceUser() -> Check {
        guard let user = SystemProbe.user("padgate") else {
            return Check(check: "service user", role: .host, status: .info,
                         detail: "no padgate user: serve is not installed as a service (sudo make install, or the .deb; serve run by hand needs none)")
        }
        let uhidGroup = SystemProbe.group(of: UHIDDevice.path)
        let groups = "padgate (uid \(user.uid), groups \(user.groups.joined(separator: ",")))"
        guard uhidGroup == nil || uhidGroup == "padgate" else {
            return Check(check: "service user", role: .host, status: .warning,
                         detail: "\(groups) exists but \(UHIDDevice.path) belongs to group \(uhidGroup!): the service cannot make pads",
                         fix: "sudo install -m 0644 udev/71-padgate-serve.rules /etc/udev/rules.d/ && sudo udevadm control --reload && sudo udevadm trigger --subsystem-match=misc")
        }
        return Check(check: "service user", role: .host, status: .ok, detail: groups)
    }

    static func servePort() -> Check {
        let port = PadServer.defaultPort
        guard SystemProbe.tcpListening(port: port) else {
            return Check(check: "serve port", role: .host, status: .ok, detail: "TCP \(port) is free for padgate serve (UDP \(port) carries the pads)")
        }
        let socket = PadgatePaths.runtimeDirectory.appendingPathComponent(HostAdministration.socketName).path
        return SystemProbe.exists(socket)
            ? Check(check: "serve port", role: .host, status: .ok, detail: "padgate serve is listening on TCP \(port) (its control socket: \(socket); padgate host status)")
            : Check(check: "serve port", role: .host, status: .info,
                    detail: "something listens on TCP \(port): padgate serve as another user or service, or another program (then: serve --address [::]:PORT)")
    }

    /// The system bus where its clients look for it: `$DBUS_SYSTEM_BUS_ADDRESS`'s path, else D-Bus's default.
    static var systemBusSocket: String {
        let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        return address.hasPrefix("unix:path=") ? String(address.dropFirst("unix:path=".count).prefix { $0 != "," }) : "/run/dbus/system_bus_socket"
    }

    static func systemBus() -> Check {
        SystemProbe.exists(systemBusSocket)
            ? Check(check: "system bus", role: .both, status: .ok, detail: "the D-Bus system bus is there (\(systemBusSocket); avahi-daemon is reached through it)")
            : Check(check: "system bus", role: .both, status: .warning, detail: "no D-Bus system bus at \(systemBusSocket): hosts are neither announced nor found on the LAN (give HOST by name or address)",
                    fix: "sudo apt install dbus && sudo systemctl start dbus")
    }

    static func avahi() -> Check {
        do {
            let version = try AvahiBrowser.daemonVersion()
            return Check(check: "avahi-daemon", role: .both, status: .ok, detail: "\(TerminalText.escaped(version)) is running: serve announces itself, hosts --discover finds hosts")
        } catch {
            let why: String
            switch error { case .daemonUnreachable(let reason), .failed(let reason): why = reason }
            return Check(check: "avahi-daemon", role: .both, status: .warning,
                         detail: "avahi-daemon cannot be reached (\(TerminalText.escaped(why))): hosts are neither announced nor found on the LAN (give HOST by name or address)",
                         fix: "sudo apt install avahi-daemon && sudo systemctl enable --now avahi-daemon")
        }
    }

    static func firewall() -> Check {
        Check(check: "firewall", role: .both, status: .info,
              detail: "not read here (its rules are root's): serve needs TCP and UDP \(PadServer.defaultPort) open inward; 'padgate probe HOST' tests the link both ways")
    }

    /// What the running kernel line does differently to padgate's pads (docs/pad-families.md).
    static func kernel() -> Check {
        let release = SystemProbe.kernelRelease
        let parts = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        let version = parts.count == 2 ? parts[0] * 100 + parts[1] : 0
        var notes: [String] = []
        if version < 602 { notes.append("a DualShock 4 is hid-sony's (its touchpad click on the gamepad node, the gyro's bias subtracted)") }
        if version < 603 { notes.append("no hid-steam for a Steam Deck: the host shows Deck and Steam Controller as Xbox 360 pads") }
        if version < 703 { notes.append("no kernel driver for the Steam Controller (2026): forward reads it through hidraw") }
        if version >= 618 { notes.append("a USB DualSense has a headset-jack node (left to the desktop's sound server)") }
        return Check(check: "kernel", role: .both, status: .info, detail: "\(release)\(notes.isEmpty ? "" : ": " + notes.joined(separator: "; "))")
    }
}

/// `padgate udev-rules`: the rules file padgate's families need (udev/70-padgate.rules is this).
struct UdevRulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "udev-rules",
        abstract: "Print the udev rules padgate's pads need (install: padgate udev-rules | sudo tee /etc/udev/rules.d/70-padgate.rules).")
    func run() throws { FileHandle.standardOutput.write(Data(UdevRules.text().utf8)) }
}
