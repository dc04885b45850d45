/// A USB device's descriptors as a host reads them (USB 2.0 §9.6), checked once when they are
/// made: the device descriptor, the whole configuration (every interface, alternate setting,
/// class-specific and endpoint descriptor, in the order GET_DESCRIPTOR returns them), the strings,
/// the high-speed extras, and each HID interface's report descriptor.
public struct USBDescriptors: Sendable {
    public let device: [UInt8]
    public let configuration: [UInt8]
    public let deviceQualifier: [UInt8]?
    public let otherSpeedConfiguration: [UInt8]?
    /// By index; index 0 is the language list.
    public let strings: [UInt8: [UInt8]]
    /// By interface number: the report descriptor a HID interface's GET_DESCRIPTOR(0x22) returns.
    public let reportDescriptors: [UInt8: [UInt8]]
    /// What the configuration declares, read from it.
    public let interfaces: [USBInterface]

    public var vendorID: UInt16 { UInt16(device[8]) | UInt16(device[9]) << 8 }
    public var productID: UInt16 { UInt16(device[10]) | UInt16(device[11]) << 8 }
    public var configurationValue: UInt8 { configuration[5] }

    public init(device: [UInt8], configuration: [UInt8], deviceQualifier: [UInt8]? = nil, otherSpeedConfiguration: [UInt8]? = nil,
                strings: [UInt8: [UInt8]], reportDescriptors: [UInt8: [UInt8]]) throws(USBDescriptorError) {
        guard device.count == 18, device[0] == 18, device[1] == 1 else { throw .malformed("device descriptor") }
        self.device = device
        self.configuration = configuration
        self.deviceQualifier = deviceQualifier
        self.otherSpeedConfiguration = otherSpeedConfiguration
        self.strings = strings
        self.reportDescriptors = reportDescriptors
        interfaces = try USBInterface.parse(configuration)
        for (index, string) in strings where string.count < 2 || Int(string[0]) != string.count || string[1] != 3 {
            throw .malformed("string descriptor \(index)")
        }
        // A HID interface's class descriptor says how long its report descriptor is: the two must agree.
        for interface in interfaces where interface.hidReportLength != nil {
            guard let report = reportDescriptors[interface.number], report.count == interface.hidReportLength else {
                throw .malformed("interface \(interface.number)'s report descriptor is not the \(interface.hidReportLength ?? 0) bytes its HID descriptor says")
            }
        }
    }

    /// A string descriptor for `text` (UTF-16LE, as USB strings are).
    public static func string(_ text: String) -> [UInt8] {
        let units = Array(text.utf16.prefix(126))
        return [UInt8(2 + 2 * units.count), 3] + units.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] }
    }

    /// The endpoint with this address (direction bit included) in the given alternate setting of its interface.
    public func endpoint(_ address: UInt8) -> (interface: USBInterface, endpoint: USBEndpoint)? {
        for interface in interfaces {
            if let endpoint = interface.endpoints.first(where: { $0.address == address }) { return (interface, endpoint) }
        }
        return nil
    }
}

public enum USBDescriptorError: Error, Hashable, Sendable, CustomStringConvertible {
    case malformed(String)
    public var description: String {
        switch self { case .malformed(let what): "malformed USB descriptor: \(what)" }
    }
}

public struct USBEndpoint: Hashable, Sendable {
    public var address: UInt8
    /// 0 control, 1 isochronous, 2 bulk, 3 interrupt.
    public var transferType: UInt8
    public var maxPacketSize: UInt16
    public var interval: UInt8
}

/// One alternate setting of one interface.
public struct USBInterface: Hashable, Sendable {
    public var number: UInt8
    public var alternate: UInt8
    public var interfaceClass: UInt8
    public var subclass: UInt8
    public var endpoints: [USBEndpoint]
    /// For a HID interface: wDescriptorLength of its report descriptor.
    public var hidReportLength: Int?

    /// Walks the configuration's descriptors: they must tile it exactly, as the host's parser expects.
    static func parse(_ c: [UInt8]) throws(USBDescriptorError) -> [USBInterface] {
        guard c.count >= 9, c[0] == 9, c[1] == 2 || c[1] == 7 else { throw .malformed("configuration header") }
        guard Int(c[2]) | Int(c[3]) << 8 == c.count else { throw .malformed("configuration wTotalLength \(Int(c[2]) | Int(c[3]) << 8) for \(c.count) bytes") }
        var result: [USBInterface] = []
        var offset = 0
        while offset < c.count {
            let length = Int(c[offset])
            guard length >= 2, offset + length <= c.count else { throw .malformed("descriptor at \(offset) runs past the configuration") }
            switch c[offset + 1] {
            case 4 where length >= 9:
                result.append(USBInterface(number: c[offset + 2], alternate: c[offset + 3], interfaceClass: c[offset + 5],
                                           subclass: c[offset + 6], endpoints: []))
            case 5 where length >= 7:
                guard !result.isEmpty else { throw .malformed("endpoint before any interface") }
                result[result.count - 1].endpoints.append(USBEndpoint(address: c[offset + 2], transferType: c[offset + 3] & 0x03,
                                                                      maxPacketSize: UInt16(c[offset + 4]) | UInt16(c[offset + 5]) << 8,
                                                                      interval: c[offset + 6]))
            case 0x21 where length >= 9 && result.last?.interfaceClass == 3:
                // HID descriptor: bNumDescriptors, then (type, length) pairs; the report descriptor is type 0x22.
                if c[offset + 6] == 0x22 { result[result.count - 1].hidReportLength = Int(c[offset + 7]) | Int(c[offset + 8]) << 8 }
            default: break
            }
            offset += length
        }
        return result
    }
}
