/// One report as hid-recorder logs it: `E: <sec>.<usec> <len> <bytes>`.
public struct RecordedEvent: Hashable, Sendable {
    public var seconds: Int
    public var microseconds: Int
    public var data: [UInt8]
    public var deviceIndex: Int
    /// `# ` lines right before the event (hid-recorder writes the decoded report there).
    public var comments: [String]

    public init(seconds: Int, microseconds: Int, data: [UInt8], deviceIndex: Int = 0, comments: [String] = []) {
        self.seconds = seconds; self.microseconds = microseconds; self.data = data; self.deviceIndex = deviceIndex; self.comments = comments
    }

    public var time: Double { Double(seconds) + Double(microseconds) / 1_000_000 }
}

/// The device header of a recording: `D:`, `R:`, `N:`, `P:`, `I:` lines.
public struct RecordedDevice: Hashable, Sendable {
    public var index: Int
    public var name: String?
    public var physicalPath: String?
    public var bus: UInt16?
    public var vendorID: UInt16?
    public var productID: UInt16?
    public var descriptor: [UInt8]
    public var comments: [String]

    public init(index: Int, name: String? = nil, physicalPath: String? = nil, bus: UInt16? = nil, vendorID: UInt16? = nil,
                productID: UInt16? = nil, descriptor: [UInt8] = [], comments: [String] = []) {
        self.index = index; self.name = name; self.physicalPath = physicalPath; self.bus = bus
        self.vendorID = vendorID; self.productID = productID; self.descriptor = descriptor; self.comments = comments
    }
}

public enum RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformedLine(line: Int, reason: String)
    case lengthMismatch(line: Int, declared: Int, actual: Int)
    case tooLarge(line: Int, what: String, limit: Int)

    public var description: String {
        switch self {
        case .malformedLine(let line, let reason): return "line \(line): \(reason)"
        case .lengthMismatch(let line, let declared, let actual): return "line \(line): declares \(declared) bytes but lists \(actual)"
        case .tooLarge(let line, let what, let limit): return "line \(line): \(what) is longer than \(limit) bytes"
        }
    }
}

/// hid-recorder's text format (hid-tools), read and written compatibly.
public struct HIDRecording: Hashable, Sendable {
    public static let maximumReportSize = 16384        // HID_MAX_BUFFER_SIZE
    public static let maximumDescriptorSize = 4096
    /// hid-recorder numbers the devices of one recording from 0; a few hundred is already absurd.
    public static let deviceIndices = 0...255
    /// A recording's timestamps, in seconds from its start: up to a year of capture.
    public static let eventSeconds = 0...31_536_000

    public var devices: [RecordedDevice]
    public var events: [RecordedEvent]
    /// Comments before the first device header line.
    public var leadingComments: [String]

    public init(devices: [RecordedDevice], events: [RecordedEvent], leadingComments: [String] = []) {
        self.devices = devices; self.events = events; self.leadingComments = leadingComments
    }

    public func events(forDevice index: Int) -> [RecordedEvent] { events.filter { $0.deviceIndex == index } }

    // MARK: reading

    public init(text: String) throws(RecordingError) {
        var devices: [RecordedDevice] = []
        var events: [RecordedEvent] = []
        var leading: [String] = []
        var pendingComments: [String] = []
        var currentDevice = 0

        func device(_ index: Int) -> Int {
            if let i = devices.firstIndex(where: { $0.index == index }) { return i }
            devices.append(RecordedDevice(index: index))
            return devices.count - 1
        }

        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine[...]
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                let body = line.dropFirst().hasPrefix(" ") ? String(line.dropFirst(2)) : String(line.dropFirst())
                pendingComments.append(body)
                continue
            }
            guard line.count >= 2, line.dropFirst().first == ":" else {
                throw .malformedLine(line: lineNumber, reason: "expected '<letter>: ...' (D, R, N, P, I or E) or a '#' comment")
            }
            let kind = line.first!
            let payload = line.dropFirst(2).drop(while: { $0 == " " })
            switch kind {
            case "D":
                guard let index = Int(payload.trimmingSpaces()), Self.deviceIndices.contains(index) else {
                    throw .malformedLine(line: lineNumber, reason: "D: needs a device index from \(Self.deviceIndices.lowerBound) to \(Self.deviceIndices.upperBound)")
                }
                currentDevice = index
                let i = device(index)
                if events.isEmpty && devices.allSatisfy({ $0.descriptor.isEmpty }) { leading += pendingComments } else { devices[i].comments += pendingComments }
                pendingComments = []
            case "R":
                let bytes = try Self.lengthPrefixedBytes(payload, line: lineNumber, limit: Self.maximumDescriptorSize, what: "report descriptor")
                let i = device(currentDevice)
                if events.isEmpty && devices.allSatisfy({ $0.descriptor.isEmpty }) { leading += pendingComments } else { devices[i].comments += pendingComments }
                pendingComments = []
                devices[i].descriptor = bytes
            case "N":
                devices[device(currentDevice)].name = String(payload)
            case "P":
                devices[device(currentDevice)].physicalPath = String(payload)
            case "I":
                let parts = payload.split(separator: " ")
                guard parts.count == 3, let bus = UInt16(parts[0], radix: 16), let vid = UInt16(parts[1], radix: 16),
                      let pid = UInt16(parts[2], radix: 16) else {
                    throw .malformedLine(line: lineNumber, reason: "I: needs 'bus vendor product' in hex, like 'I: 3 054c 0ce6'")
                }
                let i = device(currentDevice)
                devices[i].bus = bus; devices[i].vendorID = vid; devices[i].productID = pid
            case "E":
                guard let space = payload.firstIndex(of: " ") else {
                    throw .malformedLine(line: lineNumber, reason: "E: needs 'seconds.microseconds length bytes'")
                }
                let stamp = payload[..<space].split(separator: ".", omittingEmptySubsequences: false)
                guard stamp.count == 2, let seconds = Int(stamp[0]), let micros = Int(stamp[1]),
                      Self.eventSeconds.contains(seconds), (0..<1_000_000).contains(micros) else {
                    throw .malformedLine(line: lineNumber, reason: "E: timestamp must look like 000001.000250 (seconds from 0 to \(Self.eventSeconds.upperBound), then 6 digits of microseconds)")
                }
                let data = try Self.lengthPrefixedBytes(payload[payload.index(after: space)...], line: lineNumber,
                                                        limit: Self.maximumReportSize, what: "report")
                _ = device(currentDevice)
                events.append(RecordedEvent(seconds: seconds, microseconds: micros, data: data, deviceIndex: currentDevice, comments: pendingComments))
                pendingComments = []
            default:
                throw .malformedLine(line: lineNumber, reason: "unknown line type '\(kind):'")
            }
        }
        self.init(devices: devices, events: events, leadingComments: leading)
    }

    private static func lengthPrefixedBytes(_ text: Substring, line: Int, limit: Int, what: String) throws(RecordingError) -> [UInt8] {
        let parts = text.split(separator: " ")
        guard let first = parts.first, let declared = Int(first), declared >= 0 else {
            throw .malformedLine(line: line, reason: "expected a byte count before the bytes")
        }
        guard declared <= limit else { throw .tooLarge(line: line, what: what, limit: limit) }
        guard parts.count - 1 == declared else { throw .lengthMismatch(line: line, declared: declared, actual: parts.count - 1) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(declared)
        for part in parts.dropFirst() {
            guard part.count <= 2, let b = UInt8(part, radix: 16) else {
                throw .malformedLine(line: line, reason: "'\(part)' is not a hex byte")
            }
            bytes.append(b)
        }
        return bytes
    }

    // MARK: writing

    /// Text hid-recorder and hid-replay accept. Comments are written back where they were.
    public func text() -> String {
        var out = headerText()
        // The header leaves the last device current, so the first event always names its device (as
        // hid-tools' record.py does); without that, events of device 0 after `D: 1` would read back as 1's.
        var current: Int? = nil
        for event in events {
            if writesDeviceLines && event.deviceIndex != current { out += "D: \(event.deviceIndex)\n"; current = event.deviceIndex }
            out += Self.eventText(event)
        }
        return out
    }

    /// hid-recorder writes `D:` lines only for several devices; a lone device is device 0. A lone device with
    /// another index needs them too, or it would read back as 0.
    var writesDeviceLines: Bool { devices.count > 1 || devices.contains { $0.index != 0 } }

    /// The comment, descriptor and id lines, before any event: what a live recorder writes first.
    public func headerText() -> String {
        var out = ""
        for c in leadingComments { out += "# \(c)\n" }
        for device in devices {
            if writesDeviceLines { out += "D: \(device.index)\n" }
            for c in device.comments { out += "# \(c)\n" }
            out += "R: \(device.descriptor.count) \(Hex.encode(device.descriptor, separator: " "))\n"
            if let name = device.name { out += "N: \(name)\n" }
            if let phys = device.physicalPath { out += "P: \(phys)\n" }
            if let bus = device.bus, let vid = device.vendorID, let pid = device.productID {
                out += "I: \(String(bus, radix: 16)) \(Self.hex4(vid)) \(Self.hex4(pid))\n"
            }
        }
        return out
    }

    /// One event's comment lines and its `E:` line.
    public static func eventText(_ event: RecordedEvent) -> String {
        var out = ""
        for c in event.comments { out += "# \(c)\n" }
        out += "E: \(pad(event.seconds, 6)).\(pad(event.microseconds, 6)) \(event.data.count) \(Hex.encode(event.data, separator: " "))\n"
        return out
    }

    static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
