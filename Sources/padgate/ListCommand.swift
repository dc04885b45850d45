import ArgumentParser
import Foundation
import PadDevices

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List connected game controllers with their nodes and capabilities.")

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Flag(help: .hidden)  // raw udev records, for recording grouping test fixtures
    var udevRecords = false

    struct Entry: Encodable {
        var index: Int
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
        var syspath: String
    }

    func run() throws {
        let udev = try Udev()
        if udevRecords {
            print(JSONLines.string(udev.records(), pretty: true))
            return
        }
        let pads = udev.pads()
        let entries = pads.enumerated().map { index, pad in
            Entry(index: index, type: pad.kind.rawValue, bus: pad.bus.rawValue,
                  vendor_id: String(format: "%04x", pad.vendorID), product_id: String(format: "%04x", pad.productID),
                  name: pad.name, uniq: pad.uniq, phys: pad.phys, hidraw: pad.hidraw, evdev: pad.evdev,
                  capabilities: pad.capabilities.names, syspath: pad.id)
        }
        if json {
            print(JSONLines.string(entries, pretty: true))
            return
        }
        if pads.isEmpty {
            print("No game controllers found. Plug one in; if it is plugged in, check that udev/70-padgate.rules is installed (see README).")
            return
        }
        for (index, pad) in pads.enumerated() {
            print("\(index): \(pad.kind.displayName) [\(pad.vidpid)] \(pad.bus.rawValue) \"\(pad.name)\"\(pad.uniq.isEmpty ? "" : " \(pad.uniq)")")
            if let hidraw = pad.hidraw { print("     hidraw   \(hidraw)") }
            for node in pad.evdev { print("     \(node.role.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(node.path)  \(node.name)") }
            print("     can      \(pad.capabilities.names.joined(separator: ", "))")
        }
    }
}
