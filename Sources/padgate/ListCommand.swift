import ArgumentParser
import Foundation
import PadDevices
import PadFamilies
import PadSystem

struct ListCommand: ParsableCommand {
    @OptionGroup var logging: LoggingOptions
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List connected game controllers with their nodes and capabilities.",
        discussion: """
            One entry per physical controller, however many nodes the kernel gives it: its index (the \
            selector other commands take), type (dualsense, dualsense-edge, dualshock4, switch-pro, xbox, \
            generic), bus, vendor and product id, name, serial (uniq), hidraw node, evdev nodes with their \
            role (gamepad, touchpad, motion), what it can do (rumble, lightbar, player-leds, \
            adaptive-triggers, touchpad, motion, battery) and its udev syspath. No output lines and exit \
            code 0 when nothing is plugged in; --json then prints [].
            """)

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Flag(help: .hidden)  // raw udev records, for recording grouping test fixtures
    var udevRecords = false

    func run() throws {
        let udev = try Udev()
        if udevRecords {
            print(JSONLines.string(udev.records(), pretty: true))
            return
        }
        let pads = udev.pads()
        if json {
            let entries = pads.enumerated().map { PadJSON($1, index: $0) }
            print(entries.isEmpty ? "[]" : JSONLines.string(entries, pretty: true))
            return
        }
        if pads.isEmpty {
            print("No game controllers found. Plug one in; if it is plugged in, check that udev/70-padgate.rules is installed (see README).")
            return
        }
        for (index, pad) in pads.enumerated() {
            print("\(index): \(pad.kind.displayName) [\(pad.vidpid)] \(pad.busName) \"\(TerminalText.escaped(pad.name))\"\(pad.uniq.isEmpty ? "" : " \(pad.uniq)")")
            if let hidraw = pad.hidraw { print("     hidraw   \(hidraw)") }
            for node in pad.evdev { print("     \(node.role.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(node.path)  \(TerminalText.escaped(node.name))") }
            print("     can      \(pad.capabilities.names.joined(separator: ", "))")
            if pad.isHostVirtualPad { print("     made by  padgate serve for a forwarded pad (never forwarded itself)") }
            if let program = pad.madeByAnotherProgram { print("     made by  \(program) for a controller it reads (never forwarded: forward that controller)") }
        }
    }
}

/// A pad as `list --json` and `watch --json` print it.
struct PadJSON: Encodable {
    var index: Int?
    var type: String
    var bus: String
    var vendor_id: String
    var product_id: String
    var name: String
    var uniq: String
    var phys: String
    var hidraw: String?
    var evdev: [EvdevNode]
    var capabilities: [String]
    /// "host" for a virtual pad `padgate serve` made (never forwarded), "emulated" for `emulate`'s.
    var made_by_padgate: String?
    /// The program that made a virtual pad for a controller it reads ("Steam Input"); never forwarded.
    var made_by: String?
    var syspath: String

    init(_ pad: Pad, index: Int? = nil) {
        self.index = index
        type = pad.kind.name; bus = pad.busName; name = pad.name; uniq = pad.uniq; phys = pad.phys
        vendor_id = String(format: "%04x", pad.vendorID); product_id = String(format: "%04x", pad.productID)
        hidraw = pad.hidraw; evdev = pad.evdev; capabilities = pad.capabilities.names; syspath = pad.id
        made_by_padgate = pad.madeByPadgate
        made_by = pad.madeByAnotherProgram
    }
}
