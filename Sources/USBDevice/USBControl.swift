/// What a device does with one control request: answer it here (standard requests and audio
/// class controls, from the descriptors and the device's state), hand a HID class request to the
/// pad behind it (reports belong to the pad, not to the USB device), or stall it as a real device
/// stalls a request it does not know.
public enum ControlOutcome: Hashable, Sendable {
    /// IN data (cut to wLength by the caller), or an OUT request accepted.
    case answer([UInt8])
    case stall
    case hid(HIDClassRequest)
}

/// HID class requests (HID 1.11 §7.2) for the pad to answer.
public enum HIDClassRequest: Hashable, Sendable {
    /// `type`: 1 input, 2 output, 3 feature.
    case getReport(type: UInt8, id: UInt8, length: Int)
    case setReport(type: UInt8, id: UInt8, data: [UInt8])
}

/// A USB Audio Class 1 feature unit's mute and volume (UAC1 §5.2.2.4): what snd-usb-audio reads
/// (GET_CUR/MIN/MAX/RES) and sets (SET_CUR) at probe; the values are the pad's own.
public struct AudioFeatureUnit: Hashable, Sendable {
    public var id: UInt8
    public var mute: UInt8
    public var volume: Int16
    public var minimum: Int16, maximum: Int16, resolution: Int16

    public init(id: UInt8, mute: UInt8 = 0, volume: Int16, minimum: Int16, maximum: Int16, resolution: Int16) {
        self.id = id; self.mute = mute; self.volume = volume; self.minimum = minimum; self.maximum = maximum; self.resolution = resolution
    }
}

/// A device's answers to control requests and the state they change: the configuration chosen,
/// each interface's alternate setting, the audio controls.
public struct USBControlState: Sendable {
    public let descriptors: USBDescriptors
    public private(set) var configuration: UInt8 = 0
    /// Interface number → alternate setting selected (absent: 0).
    public private(set) var alternates: [UInt8: UInt8] = [:]
    public private(set) var audioUnits: [AudioFeatureUnit]
    /// Which interface holds the audio controls (the Audio Control interface).
    let audioControlInterface: UInt8?

    public init(descriptors: USBDescriptors, audioUnits: [AudioFeatureUnit] = []) {
        self.descriptors = descriptors
        self.audioUnits = audioUnits
        audioControlInterface = descriptors.interfaces.first { $0.interfaceClass == 1 && $0.subclass == 1 }?.number
    }

    public func alternate(of interface: UInt8) -> UInt8 { alternates[interface] ?? 0 }

    /// Whether the endpoint exists in the configuration and the setting now selected.
    public func isActive(endpoint address: UInt8) -> Bool {
        guard configuration != 0 else { return false }
        return descriptors.interfaces.contains { $0.alternate == alternate(of: $0.number) && $0.endpoints.contains { $0.address == address } }
    }

    public mutating func handle(_ setup: SetupPacket, data: [UInt8]) -> ControlOutcome {
        switch (setup.type, setup.recipient) {
        case (0, _): return standard(setup)
        case (1, 1) where UInt8(truncatingIfNeeded: setup.index) == audioControlInterface: return audio(setup, data: data)
        case (1, 1): return hidClass(setup, data: data)
        default: return .stall
        }
    }

    // USB 2.0 §9.4.
    private mutating func standard(_ setup: SetupPacket) -> ControlOutcome {
        switch (setup.requestType, setup.request) {
        case (0x80, 0x06): return deviceDescriptor(setup)
        case (0x81, 0x06):
            // HID report descriptor (HID 1.11 §7.1.1), asked of the interface.
            guard setup.value >> 8 == 0x22, let report = descriptors.reportDescriptors[UInt8(truncatingIfNeeded: setup.index)] else { return .stall }
            return .answer(report)
        case (0x80, 0x00), (0x81, 0x00), (0x82, 0x00): return .answer([0, 0])    // GET_STATUS: bus powered, no remote wake-up, no halt
        case (0x80, 0x08): return .answer([configuration])
        case (0x00, 0x09):
            let value = UInt8(truncatingIfNeeded: setup.value)
            guard value == 0 || value == descriptors.configurationValue else { return .stall }
            configuration = value
            alternates = [:]
            return .answer([])
        case (0x81, 0x0a): return .answer([alternate(of: UInt8(truncatingIfNeeded: setup.index))])
        case (0x01, 0x0b):
            let interface = UInt8(truncatingIfNeeded: setup.index), alternate = UInt8(truncatingIfNeeded: setup.value)
            guard descriptors.interfaces.contains(where: { $0.number == interface && $0.alternate == alternate }) else { return .stall }
            alternates[interface] = alternate
            return .answer([])
        case (0x00, 0x01), (0x02, 0x01), (0x00, 0x03), (0x02, 0x03): return .answer([])   // CLEAR/SET_FEATURE (halt, wake-up)
        default: return .stall
        }
    }

    private func deviceDescriptor(_ setup: SetupPacket) -> ControlOutcome {
        let index = UInt8(truncatingIfNeeded: setup.value)
        switch setup.value >> 8 {
        case 1: return .answer(descriptors.device)
        case 2 where index == 0: return .answer(descriptors.configuration)
        case 3: return descriptors.strings[index].map(ControlOutcome.answer) ?? .stall
        case 6: return descriptors.deviceQualifier.map(ControlOutcome.answer) ?? .stall
        case 7 where index == 0: return descriptors.otherSpeedConfiguration.map(ControlOutcome.answer) ?? .stall
        default: return .stall
        }
    }

    // HID 1.11 §7.2: reports go to the pad; idle and protocol are accepted as a pad accepts them.
    private func hidClass(_ setup: SetupPacket, data: [UInt8]) -> ControlOutcome {
        let type = UInt8(truncatingIfNeeded: setup.value >> 8), id = UInt8(truncatingIfNeeded: setup.value)
        switch (setup.requestType, setup.request) {
        case (0xa1, 0x01): return .hid(.getReport(type: type, id: id, length: Int(setup.length)))
        case (0x21, 0x09): return .hid(.setReport(type: type, id: id, data: data))
        case (0x21, 0x0a), (0x21, 0x0b): return .answer([])                 // SET_IDLE, SET_PROTOCOL
        case (0xa1, 0x02): return .answer([0])                              // GET_IDLE: infinite
        case (0xa1, 0x03): return .answer([1])                              // GET_PROTOCOL: report
        default: return .stall
        }
    }

    // UAC1 §5.2.1: GET_CUR 0x81, GET_MIN 0x82, GET_MAX 0x83, GET_RES 0x84, SET_CUR 0x01; wIndex's
    // high byte is the unit, wValue's high byte the control (1 mute, 2 volume). SET_RES and the
    // rest stall, as the pad's own firmware stalls them (the Edge's Linux probe capture).
    private mutating func audio(_ setup: SetupPacket, data: [UInt8]) -> ControlOutcome {
        let unitID = UInt8(truncatingIfNeeded: setup.index >> 8), control = setup.value >> 8
        guard let unit = audioUnits.firstIndex(where: { $0.id == unitID }), control == 1 || control == 2 else { return .stall }
        func le16(_ v: Int16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: UInt16(bitPattern: v) >> 8)] }
        let u = audioUnits[unit]
        switch (setup.requestType, setup.request, control) {
        case (0xa1, 0x81, 1): return .answer([u.mute])
        case (0xa1, 0x81, 2): return .answer(le16(u.volume))
        case (0xa1, 0x82, 2): return .answer(le16(u.minimum))
        case (0xa1, 0x83, 2): return .answer(le16(u.maximum))
        case (0xa1, 0x84, 2): return .answer(le16(u.resolution))
        case (0x21, 0x01, 1) where data.count >= 1:
            audioUnits[unit].mute = data[0] == 0 ? 0 : 1
            return .answer([])
        case (0x21, 0x01, 2) where data.count >= 2:
            let value = Int16(bitPattern: UInt16(data[0]) | UInt16(data[1]) << 8)
            audioUnits[unit].volume = min(max(value, u.minimum), u.maximum)
            return .answer([])
        default: return .stall
        }
    }
}

/// One port of vhci-hcd as its sysfs `status` file lists it:
/// `hub port sta spd dev sockfd local_busid`, e.g. `hs  0000 006 003 70670001 000005 1-1`.
public struct VHCIPortStatus: Hashable, Sendable {
    public var highSpeedHub: Bool
    public var port: UInt32
    /// VDEV_ST_NULL (4) is free; 5 is not yet addressed, 6 in use.
    public var state: UInt32
    public var devid: UInt32
    /// The attached device's name under the hub (`1-1`), or `0-0`.
    public var busID: String

    public var isFree: Bool { state == 4 }

    /// Every port line of a `status` file (the header and anything unreadable are skipped).
    public static func parse(_ text: String) -> [VHCIPortStatus] {
        text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.count >= 7, f[0] == "hs" || f[0] == "ss", let port = UInt32(f[1]), let state = UInt32(f[2]),
                  let devid = UInt32(f[4], radix: 16) else { return nil }
            return VHCIPortStatus(highSpeedHub: f[0] == "hs", port: port, state: state, devid: devid, busID: String(f[6]))
        }
    }
}
