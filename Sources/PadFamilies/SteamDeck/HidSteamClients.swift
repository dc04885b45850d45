import Foundation
import PadSystem

/// hid-steam's sysfs, as the host's Deck waits on it.
public enum HidSteamClients {
    /// hid-steam's client: the HID device (group 0x0103, HID_GROUP_STEAM) it adds beside each pad
    /// it drives, whose hidraw node Steam and SDL open (the pad's own device gets none).
    static let clientGroup = "g0103"

    /// Whether hid-steam has finished with every pad on `bus` with these ids: each pad's device is
    /// bound to it (which starts the pad's own interface without a hidraw node) and has its
    /// client, with the client's hidraw node. hid-steam registers a pad's input devices in its
    /// probe before it adds the client, last; so a pad whose input devices are there may have no
    /// node for games yet, and a program enumerating then finds none (or, before hid-steam's module
    /// loaded, hid-generic's). A real Deck's keyboard and mouse interfaces, bound to hid-steam
    /// with hidraw nodes of their own and no client, are not pads.
    public static func ready(bus: UInt16, vendor: UInt16, product: UInt16, devices root: String = "/sys/bus/hid/devices") -> Bool {
        let prefix = String(format: "%04X:%04X:%04X.", bus, vendor, product)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return false }
        var pads = 0, clients = 0
        for name in names where name.hasPrefix(prefix) {
            let device = root + "/" + name
            let driver = (try? FileManager.default.destinationOfSymbolicLink(atPath: device + "/driver")).map { ($0 as NSString).lastPathComponent }
            let modalias = String(decoding: (try? UserFile.read(device + "/modalias", limit: 256)) ?? [], as: UTF8.self)
            let hasNode = !((try? FileManager.default.contentsOfDirectory(atPath: device + "/hidraw")) ?? []).isEmpty
            if modalias.contains(clientGroup) {
                if driver == "hid-steam", hasNode { clients += 1 }
            } else {
                // Not (yet) hid-steam's: hid-generic's until hid-steam's module loads, or unbound.
                guard driver == "hid-steam" else { return false }
                if !hasNode { pads += 1 }
            }
        }
        return pads > 0 && clients >= pads
    }
}
