import Foundation
import HIDCodecs

/// Groups udev devices into one `Pad` per physical controller. Pure: the input is a snapshot of
/// udev records, so it is tested without devices.
public enum PadGrouping {
    /// The key that ties a controller's nodes together: the HID device they all hang off, or, for
    /// pads without one (uinput, legacy gameports), the input device itself.
    static func groupKey(_ record: UdevRecord) -> String? {
        if let hid = record.nearest("hid") { return hid.syspath }
        if record.subsystem == "input" { return record.nearest("input")?.syspath }
        return nil
    }

    static func isEventNode(_ record: UdevRecord) -> Bool {
        record.subsystem == "input" && (record.devnode?.hasPrefix("/dev/input/event") ?? false)
    }

    static func role(of record: UdevRecord) -> EvdevRole {
        let p = record.properties
        if p["ID_INPUT_TOUCHPAD"] == "1" { return .touchpad }
        if p["ID_INPUT_ACCELEROMETER"] == "1" { return .motion }
        if p["ID_INPUT_JOYSTICK"] == "1" { return .gamepad }
        let name = inputName(record)
        if name.hasSuffix("Touchpad") { return .touchpad }
        if name.hasSuffix("Motion Sensors") { return .motion }
        if name.hasSuffix("Headset Jack") { return .jack }
        return .other
    }

    static func inputName(_ record: UdevRecord) -> String {
        let raw = record.nearest("input")?.properties["NAME"] ?? record.properties["NAME"] ?? ""
        return raw.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }

    public static func pads(from records: [UdevRecord]) -> [Pad] {
        var byKey: [String: [UdevRecord]] = [:]
        var order: [String] = []
        for record in records {
            guard let key = groupKey(record) else { continue }
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(record)
        }
        return order.compactMap { key in makePad(key: key, members: byKey[key]!) }
            .map { withLizardNodes($0, groups: byKey) }
            .sorted { ($0.gamepadNode?.path ?? $0.id).naturallyPrecedes($1.gamepadNode?.path ?? $1.id) }
    }

    /// A pad found by its hidraw node with the mouse and keyboard nodes its controller makes in
    /// lizard mode (role `.other`), so that `forward` holds them too: the Steam Controller's on its
    /// own HID device, a Deck's on the other HID interfaces of its USB device. A kernel driver's
    /// gamepad node (hid-steam's, which comes and goes as programs open the hidraw node) is not one.
    static func withLizardNodes(_ pad: Pad, groups: [String: [UdevRecord]]) -> Pad {
        guard pad.kind.foundByHidraw else { return pad }
        let device = usbDevice(ofHID: pad.id)
        var pad = pad
        for (key, members) in groups.sorted(by: { $0.key < $1.key }) {
            let sameController = key == pad.id || (!pad.kind.lizardNodesOnItsInterface && device != nil && usbDevice(ofHID: key) == device)
            guard sameController, !members.contains(where: { $0.properties["ID_INPUT_JOYSTICK"] == "1" }) else { continue }
            for record in members.filter(isEventNode) where !pad.evdev.contains(where: { $0.path == record.devnode }) {
                pad.evdev.append(EvdevNode(path: record.devnode!, role: .other, name: inputName(record)))
            }
        }
        pad.evdev.sort { $0.path.naturallyPrecedes($1.path) }
        return pad
    }

    /// The USB device a HID device hangs off through one of its interfaces
    /// (`…/usb3/3-1/3-1:1.2/0003:28DE:1205.0003` → `…/usb3/3-1`), nil for one on another bus.
    static func usbDevice(ofHID syspath: String) -> String? {
        var parts = syspath.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 3 else { return nil }
        parts.removeLast()
        let interface = parts.removeLast()
        let device = parts.last!
        // An interface is named DEVICE:CONFIG.NUMBER after its device.
        guard interface.hasPrefix(device + ":"), interface.dropFirst(device.count + 1).contains(".") else { return nil }
        return parts.joined(separator: "/")
    }

    static func makePad(key: String, members: [UdevRecord]) -> Pad? {
        let events = members.filter(isEventNode)
        guard events.contains(where: { $0.properties["ID_INPUT_JOYSTICK"] == "1" }) else { return hidrawOnlyPad(key: key, members: members) }

        let nodes = events.map { EvdevNode(path: $0.devnode!, role: role(of: $0), name: inputName($0)) }
            .sorted { ($0.role, $0.path.count, $0.path) < ($1.role, $1.path.count, $1.path) }
        let hidraw = members.first { $0.subsystem == "hidraw" }?.devnode
        let gamepadRecord = events.first { role(of: $0) == .gamepad } ?? events[0]

        let ids = identity(gamepadRecord)
        let kind = PadKind(vendorID: ids.vendor, productID: ids.product)
        // A kernel driver's evdev view of a pad found by its hidraw node (hid-steam's of the Deck,
        // whose hidraw node belongs to a device of its own) is not the pad: that would be read twice.
        guard !kind.foundByHidraw else { return nil }

        var caps: PadCapabilities = []
        let ff = gamepadRecord.nearest("input")?.attributes["capabilities/ff"] ?? ""
        if EvdevBitmap(sysfs: ff).contains(0x50) { caps.insert(.rumble) }  // FF_RUMBLE
        if hidraw != nil, kind.takesPlayStationOutput { caps.formUnion([.rumble, .lightbar]) }
        if kind.hasAdaptiveTriggers { caps.formUnion([.playerLEDs, .adaptiveTriggers]) }
        let ledNames = members.filter { $0.subsystem == "leds" }.map(\.sysname)
        if ledNames.contains(where: { $0.hasSuffix(":rgb:indicator") || $0.hasSuffix(":global") }) { caps.insert(.lightbar) }
        if ledNames.contains(where: { $0.contains(":player-") || $0.contains(":player") }) { caps.insert(.playerLEDs) }
        if nodes.contains(where: { $0.role == .touchpad }) { caps.insert(.touchpad) }
        if nodes.contains(where: { $0.role == .motion }) { caps.insert(.motion) }
        if members.contains(where: { $0.subsystem == "power_supply" }) { caps.insert(.battery) }

        // A uinput pad has no HID parent; its input device's PHYS property (quoted), or its sysfs phys.
        let input = gamepadRecord.nearest("input")
        let phys = [gamepadRecord.nearest("hid")?.properties["HID_PHYS"], input?.properties["PHYS"], input?.attributes["phys"]]
            .lazy.compactMap { $0?.trimmingCharacters(in: CharacterSet(charactersIn: "\"\n")) }.first { !$0.isEmpty } ?? ""
        return Pad(id: key, kind: kind, kernelBus: ids.kernelBus, vendorID: ids.vendor, productID: ids.product,
                   name: ids.name.isEmpty ? inputName(gamepadRecord) : ids.name, uniq: ids.uniq, phys: phys,
                   hidraw: hidraw, evdev: nodes, capabilities: caps)
    }

    /// A controller found by its hidraw node alone (`PadKind.foundByHidraw`): a HID device with a
    /// hidraw node and no input node at all (a Deck's mouse and keyboard interfaces have theirs).
    /// What its reports and commands carry comes with it: the trackpads, the IMU and rumble.
    static func hidrawOnlyPad(key: String, members: [UdevRecord]) -> Pad? {
        guard let record = members.first(where: { $0.subsystem == "hidraw" }), let hidraw = record.devnode else { return nil }
        let ids = identity(record)
        let kind = PadKind(vendorID: ids.vendor, productID: ids.product)
        guard kind.foundByHidraw, kind.lizardNodesOnItsInterface || !members.contains(where: { $0.subsystem == "input" }) else { return nil }
        let phys = record.nearest("hid")?.properties["HID_PHYS"]?.trimmingCharacters(in: CharacterSet(charactersIn: "\"\n")) ?? ""
        if let interfaces = kind.controllerInterfaces(product: ids.product), let number = usbInterface(phys: phys), !interfaces.contains(number) {
            return nil
        }
        return Pad(id: key, kind: kind, kernelBus: ids.kernelBus, vendorID: ids.vendor, productID: ids.product,
                   name: ids.name, uniq: ids.uniq, phys: phys, hidraw: hidraw, evdev: [], capabilities: [.touchpad, .motion, .rumble])
    }

    /// The USB interface number a HID device's phys ends with (`usb-0000:00:14.0-2/input3`).
    static func usbInterface(phys: String) -> Int? {
        guard let range = phys.range(of: "/input", options: .backwards) else { return nil }
        return Int(phys[range.upperBound...])
    }

    struct Identity { var kernelBus: UInt16; var vendor: UInt16; var product: UInt16; var name: String; var uniq: String }

    /// Ids come from the HID parent (`HID_ID=0003:0000054C:00000CE6`) when there is one, else from
    /// the input device (`PRODUCT=3/54c/ce6/8111`).
    static func identity(_ record: UdevRecord) -> Identity {
        if let hid = record.nearest("hid"), let hidID = hid.properties["HID_ID"] {
            let parts = hidID.split(separator: ":").map { UInt32($0, radix: 16) ?? 0 }
            if parts.count == 3 {
                return Identity(kernelBus: UInt16(truncatingIfNeeded: parts[0]),
                                vendor: UInt16(truncatingIfNeeded: parts[1]), product: UInt16(truncatingIfNeeded: parts[2]),
                                name: hid.properties["HID_NAME"] ?? "", uniq: hid.properties["HID_UNIQ"] ?? "")
            }
        }
        let input = record.nearest("input")
        let product = (input?.properties["PRODUCT"] ?? record.properties["PRODUCT"] ?? "")
            .split(separator: "/").map { UInt16($0, radix: 16) ?? 0 }
        let uniq = (input?.properties["UNIQ"] ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        return Identity(kernelBus: product.count > 0 ? product[0] : 0,
                        vendor: product.count > 1 ? product[1] : 0, product: product.count > 2 ? product[2] : 0,
                        name: inputName(record), uniq: uniq)
    }
}

/// A sysfs capability bitmap ("30000 0 0 0" = words of `unsigned long`, most significant first).
struct EvdevBitmap {
    var words: [UInt64]  // least significant word first
    init(sysfs: String) {
        words = sysfs.split(separator: " ").reversed().map { UInt64($0, radix: 16) ?? 0 }
    }
    func contains(_ bit: Int) -> Bool {
        let word = bit / 64
        return word < words.count && words[word] & (1 << UInt64(bit % 64)) != 0
    }
}

extension String {
    /// "/dev/input/event9" before "/dev/input/event10".
    func naturallyPrecedes(_ other: String) -> Bool {
        compare(other, options: .numeric) == .orderedAscending
    }
}
