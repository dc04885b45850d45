import Foundation
import PadDevices

/// `udev/70-padgate.rules`, made from the families' own ids (`PadDriver.openedProducts`) and
/// padgate's marks on its host pads: `padgate udev-rules` prints it, `make udev-rules` writes
/// it, a unit test holds the file equal to it, and `padgate doctor` checks the installed copy.
public enum UdevRules {
    public static let fileName = "70-padgate.rules"

    /// The rule line that grants one family's products: their hidraw node and every evdev node
    /// (`forward` holds a PlayStation pad's touchpad and motion nodes, which no joystick rule opens,
    /// and a Steam pad's lizard nodes), matched on the HID device's name, `BUS:VVVV:PPPP.N`, so
    /// USB and Bluetooth alike.
    public static func grant(_ products: [(vendor: UInt16, product: UInt16)]) -> String {
        let names = products.map { String(format: "*:%04X:%04X.*", $0.vendor, $0.product) }.joined(separator: "|")
        return "KERNEL==\"hidraw*|event*\", KERNELS==\"\(names)\", TAG+=\"uaccess\""
    }

    /// A USB host pad's node, told by padgate's mark in the upper half of its vhci-hcd port's
    /// device id (`VHCI.Mark.host`), which only the port's status line carries: the shell finds
    /// the line of the node's USB device (`…/usbB/B-P/…` of its DEVPATH). No quote inside, as
    /// udev's rules syntax wants; `$$` and `%%` are udev's escapes for `$` and `%`.
    static func usbHostPadTest(directory: String = VHCI.directory) -> String {
        let mark = String(format: "%04x", VHCI.Mark.host.rawValue)
        let script = "b=$${DEVPATH#*/usb*/}; b=$${b%%%%/*}; cat \(directory)/status* | (set -f; grep -qE [[:space:]]\(mark)[0-9a-f]{4}[[:space:]]+[0-9]+[[:space:]]+$$b$$)"
        return "PROGRAM==\"/bin/sh -c '\(script)'\""
    }

    public static func text(drivers: [any PadDriver] = PadDrivers.all) -> String {
        var lines = [
            "# padgate: give the logged-in user (systemd-logind's uaccess) access to game controllers' hidraw and",
            "# evdev nodes and to the virtual-device interfaces padgate uses, and keep padgate's own host pads",
            "# from being a pointer. Install: sudo make install-udev (or copy to /etc/udev/rules.d/ and run:",
            "# sudo udevadm control --reload && sudo udevadm trigger). Made from padgate's pad families by",
            "# 'padgate udev-rules' (make udev-rules): edit the families, not this file.",
        ]
        for driver in drivers where !driver.openedProducts.isEmpty {
            let names = driver.kinds.map(\.displayName).joined(separator: ", ")
            let ids = driver.openedProducts.map { String(format: "%04x:%04x", $0.vendor, $0.product) }.joined(separator: " ")
            lines += ["", "# \(names) (\(ids))\(driver.openedProductsNote.map { ": " + $0 } ?? "")", grant(driver.openedProducts)]
        }
        lines += [
            "",
            "# padgate's host pads (made by 'padgate serve') are no pointer, keyboard or mouse to the host's",
            "# desktop: libinput leaves them alone (a touchpad node would move the pointer, its click reach the game",
            "# as a mouse click), while games (SDL, evdev, Steam) still read them. uinput pads by their phys; uhid",
            "# pads by their HID device's phys (HID drivers such as hid-playstation leave their input nodes' phys",
            "# empty); USB pads on vhci-hcd by padgate's mark on their port (docs/desk.md).",
            "SUBSYSTEM==\"input\", KERNEL==\"event*\", ATTRS{phys}==\"\(PadPhys.hostVirtual)*\", ENV{LIBINPUT_IGNORE_DEVICE}=\"1\"",
            "SUBSYSTEM==\"input\", KERNEL==\"event*\", SUBSYSTEMS==\"hid\", ATTRS{uevent}==\"*HID_PHYS=\(PadPhys.hostVirtual)*\", ENV{LIBINPUT_IGNORE_DEVICE}=\"1\"",
            "SUBSYSTEM==\"input\", KERNEL==\"event*\", ENV{DEVPATH}==\"/devices/platform/vhci_hcd.*\", \(usbHostPadTest()), ENV{LIBINPUT_IGNORE_DEVICE}=\"1\"",
            "",
            "# Virtual devices: uinput for virtual evdev pads, uhid for virtual HID pads.",
            "KERNEL==\"uinput\", SUBSYSTEM==\"misc\", TAG+=\"uaccess\", OPTIONS+=\"static_node=uinput\"",
            "KERNEL==\"uhid\", SUBSYSTEM==\"misc\", TAG+=\"uaccess\", OPTIONS+=\"static_node=uhid\"",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
