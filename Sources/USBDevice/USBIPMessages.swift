/// USB/IP as vhci-hcd speaks it on the socket handed to its sysfs `attach` file
/// (drivers/usb/usbip/usbip_common.h): a 48-byte header, every field big-endian. CMD_SUBMIT is
/// followed by the OUT data (`bufferLength` bytes) and then `packetCount` 16-byte isochronous
/// packet descriptors; RET_SUBMIT by the IN data (`actualLength` bytes, packets packed end to end)
/// and then the descriptors. Everything read here comes from the kernel side of a socket and is
/// bounded before anything is allocated for it (`USBIPLimits`).
public enum USBIPCommand: UInt32, Sendable {
    case submit = 1, unlink = 2, submitReply = 3, unlinkReply = 4
}

public enum USBDirection: UInt32, Sendable {
    case out = 0, `in` = 1
}

/// How much one request may carry. A DualSense's largest transfers are a 4-channel audio URB
/// (snd-usb-audio queues at most a few dozen 392-byte packets) and a 64-byte report; these bounds
/// leave room for any real device and refuse what is not one.
public enum USBIPLimits {
    public static let headerSize = 48
    public static let isoPacketDescriptorSize = 16
    public static let maximumTransfer: Int32 = 64 * 1024
    public static let maximumPackets: Int32 = 256
}

/// One control request's setup stage (USB 2.0 §9.3), little-endian as on the bus.
public struct SetupPacket: Hashable, Sendable {
    public var requestType: UInt8
    public var request: UInt8
    public var value: UInt16
    public var index: UInt16
    public var length: UInt16

    public init(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, length: UInt16) {
        self.requestType = requestType; self.request = request; self.value = value; self.index = index; self.length = length
    }

    /// From the 8 setup bytes at `offset`.
    public init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
        requestType = bytes[offset]
        request = bytes[offset + 1]
        value = UInt16(bytes[offset + 2]) | UInt16(bytes[offset + 3]) << 8
        index = UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8
        length = UInt16(bytes[offset + 6]) | UInt16(bytes[offset + 7]) << 8
    }

    public var isDeviceToHost: Bool { requestType & 0x80 != 0 }
    /// 0 standard, 1 class, 2 vendor.
    public var type: UInt8 { (requestType >> 5) & 0x03 }
    /// 0 device, 1 interface, 2 endpoint.
    public var recipient: UInt8 { requestType & 0x1f }
}

/// A URB the kernel submits.
public struct USBIPSubmit: Hashable, Sendable {
    public var seqnum: UInt32
    public var devid: UInt32
    public var direction: USBDirection
    /// The endpoint number (0 for control), without the direction bit.
    public var endpoint: UInt8
    public var transferFlags: UInt32
    public var bufferLength: Int32
    public var startFrame: Int32
    public var packetCount: Int32
    public var interval: Int32
    public var setup: SetupPacket

    /// Bytes of OUT data that follow the header.
    public var outLength: Int { direction == .out ? Int(bufferLength) : 0 }
    /// Bytes of isochronous packet descriptors after the data.
    public var descriptorLength: Int { Int(packetCount) * USBIPLimits.isoPacketDescriptorSize }
}

/// A request to take back a URB submitted earlier (`victim` is its seqnum).
public struct USBIPUnlink: Hashable, Sendable {
    public var seqnum: UInt32
    public var devid: UInt32
    public var direction: UInt32
    public var endpoint: UInt32
    public var victim: UInt32
}

public enum USBIPRequest: Hashable, Sendable {
    case submit(USBIPSubmit)
    case unlink(USBIPUnlink)
}

public enum USBIPError: Error, Hashable, Sendable, CustomStringConvertible {
    case shortHeader(Int)
    case unexpectedCommand(UInt32)
    case badDirection(UInt32)
    case badEndpoint(UInt32)
    case badLength(Int32)
    case badPacketCount(Int32)
    case packetOutsideTransfer(offset: UInt32, length: UInt32, transfer: Int32)

    public var description: String {
        switch self {
        case .shortHeader(let n): "a USB/IP header of \(n) bytes (48 needed)"
        case .unexpectedCommand(let c): "USB/IP command \(c), not a submit or unlink"
        case .badDirection(let d): "USB/IP direction \(d)"
        case .badEndpoint(let e): "USB/IP endpoint \(e) (0...15)"
        case .badLength(let n): "a USB/IP transfer of \(n) bytes (0...\(USBIPLimits.maximumTransfer))"
        case .badPacketCount(let n): "\(n) isochronous packets (0...\(USBIPLimits.maximumPackets))"
        case .packetOutsideTransfer(let offset, let length, let transfer): "an isochronous packet of \(length) bytes at \(offset) in a transfer of \(transfer)"
        }
    }
}

public enum USBIPCodec {
    /// Reads one request header (48 bytes) as the kernel wrote it, refusing anything out of bounds.
    public static func request(_ header: UnsafeRawBufferPointer) throws(USBIPError) -> USBIPRequest {
        guard header.count >= USBIPLimits.headerSize else { throw .shortHeader(header.count) }
        let command = header.loadBigEndianUInt32(at: 0)
        let seqnum = header.loadBigEndianUInt32(at: 4), devid = header.loadBigEndianUInt32(at: 8)
        let rawDirection = header.loadBigEndianUInt32(at: 12), endpoint = header.loadBigEndianUInt32(at: 16)
        switch command {
        case USBIPCommand.submit.rawValue:
            guard let direction = USBDirection(rawValue: rawDirection) else { throw .badDirection(rawDirection) }
            guard endpoint < 16 else { throw .badEndpoint(endpoint) }
            let length = header.loadBigEndianInt32(at: 24), packets = header.loadBigEndianInt32(at: 32)
            guard (0...USBIPLimits.maximumTransfer).contains(length) else { throw .badLength(length) }
            guard (0...USBIPLimits.maximumPackets).contains(packets) else { throw .badPacketCount(packets) }
            return .submit(USBIPSubmit(seqnum: seqnum, devid: devid, direction: direction, endpoint: UInt8(endpoint),
                                       transferFlags: header.loadBigEndianUInt32(at: 20), bufferLength: length,
                                       startFrame: header.loadBigEndianInt32(at: 28), packetCount: packets,
                                       interval: header.loadBigEndianInt32(at: 36), setup: SetupPacket(header, at: 40)))
        case USBIPCommand.unlink.rawValue:
            return .unlink(USBIPUnlink(seqnum: seqnum, devid: devid, direction: rawDirection, endpoint: endpoint,
                                       victim: header.loadBigEndianUInt32(at: 20)))
        default:
            throw .unexpectedCommand(command)
        }
    }

    /// Writes a RET_SUBMIT header into the first 48 bytes of `out`.
    public static func writeSubmitReply(to submit: USBIPSubmit, status: Int32, actualLength: Int32, packetCount: Int32 = 0,
                                        errorCount: Int32 = 0, into out: UnsafeMutableRawBufferPointer) {
        for i in 0..<USBIPLimits.headerSize { out[i] = 0 }
        out.storeBigEndian(USBIPCommand.submitReply.rawValue, at: 0)
        out.storeBigEndian(submit.seqnum, at: 4)
        out.storeBigEndian(submit.devid, at: 8)
        out.storeBigEndian(submit.direction.rawValue, at: 12)
        out.storeBigEndian(UInt32(submit.endpoint), at: 16)
        out.storeBigEndian(UInt32(bitPattern: status), at: 20)
        out.storeBigEndian(UInt32(bitPattern: actualLength), at: 24)
        out.storeBigEndian(UInt32(bitPattern: submit.startFrame), at: 28)
        out.storeBigEndian(UInt32(bitPattern: packetCount), at: 32)
        out.storeBigEndian(UInt32(bitPattern: errorCount), at: 36)
    }

    /// Writes a RET_UNLINK header into the first 48 bytes of `out`: `status` is -ECONNRESET when
    /// the URB was still pending (and will never be answered), 0 when it had completed already.
    public static func writeUnlinkReply(to unlink: USBIPUnlink, status: Int32, into out: UnsafeMutableRawBufferPointer) {
        for i in 0..<USBIPLimits.headerSize { out[i] = 0 }
        out.storeBigEndian(USBIPCommand.unlinkReply.rawValue, at: 0)
        out.storeBigEndian(unlink.seqnum, at: 4)
        out.storeBigEndian(unlink.devid, at: 8)
        out.storeBigEndian(unlink.direction, at: 12)
        out.storeBigEndian(unlink.endpoint, at: 16)
        out.storeBigEndian(UInt32(bitPattern: status), at: 20)
    }
}

/// One isochronous packet of a URB (`struct usbip_iso_packet_descriptor`, big-endian).
public struct USBIPIsoPacket: Hashable, Sendable {
    public var offset: UInt32
    public var length: UInt32
    public var actualLength: UInt32
    public var status: Int32

    public init(offset: UInt32, length: UInt32, actualLength: UInt32 = 0, status: Int32 = 0) {
        self.offset = offset; self.length = length; self.actualLength = actualLength; self.status = status
    }

    /// The `index`th descriptor of `bytes`.
    public init(_ bytes: UnsafeRawBufferPointer, index: Int) {
        let o = index * USBIPLimits.isoPacketDescriptorSize
        offset = bytes.loadBigEndianUInt32(at: o)
        length = bytes.loadBigEndianUInt32(at: o + 4)
        actualLength = bytes.loadBigEndianUInt32(at: o + 8)
        status = Int32(bitPattern: bytes.loadBigEndianUInt32(at: o + 12))
    }

    public func write(into out: UnsafeMutableRawBufferPointer, index: Int) {
        let o = index * USBIPLimits.isoPacketDescriptorSize
        out.storeBigEndian(offset, at: o)
        out.storeBigEndian(length, at: o + 4)
        out.storeBigEndian(actualLength, at: o + 8)
        out.storeBigEndian(UInt32(bitPattern: status), at: o + 12)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always)
    func loadBigEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8 | UInt32(self[offset + 3])
    }

    @inline(__always)
    func loadBigEndianInt32(at offset: Int) -> Int32 { Int32(bitPattern: loadBigEndianUInt32(at: offset)) }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always)
    func storeBigEndian(_ value: UInt32, at offset: Int) {
        self[offset] = UInt8(truncatingIfNeeded: value >> 24)
        self[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        self[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        self[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}
