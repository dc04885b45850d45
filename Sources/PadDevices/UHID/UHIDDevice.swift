import CLinuxInput
import Foundation
import HIDCodecs
import Glibc
import PadSystem

/// Kind of HID report, as uhid numbers them (enum uhid_report_type).
public enum HIDReportType: UInt8, Sendable {
    case feature = 0, output = 1, input = 2
}

/// Something the kernel asks of or tells a uhid device.
public enum UHIDEvent: Equatable, Sendable {
    case start, stop, open, close
    /// An output report a program (or the driver) sent to the device.
    case output([UInt8], HIDReportType)
    case getReport(requestID: UInt32, reportNumber: UInt8, type: HIDReportType)
    case setReport(requestID: UInt32, reportNumber: UInt8, type: HIDReportType, data: [UInt8])
    case other(UInt32)
}

/// A HID device created through /dev/uhid: the kernel binds a real driver (hid-playstation for a
/// DualSense) to it as if it were plugged in.
///
/// `struct uhid_event` is a packed union, so events are laid out by byte offset here
/// (`UHIDLayout`); a unit test checks the offsets against the kernel header.
// Sendable: every write is behind `writeLock`; `read()` and its buffer belong to the one pump thread.
public final class UHIDDevice: @unchecked Sendable {
    public static let path = "/dev/uhid"
    private let owned: OwnedDescriptor
    // Reads come from one pump thread; writes (input, replies) may come from any thread.
    private var buffer = [UInt8](repeating: 0, count: UHIDLayout.eventSize)
    private var readBuffer = [UInt8](repeating: 0, count: UHIDLayout.eventSize)
    private let writeLock = NSLock()
    private(set) var created = false

    public init(path: String = UHIDDevice.path) throws {
        do {
            owned = try OwnedDescriptor("open") { open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK) }
        } catch {
            throw DeviceError.from(error, path: path)
        }
    }

    deinit {
        if created { try? destroy() }
    }

    /// Readable when the kernel has an event for the device.
    public var descriptor: FileDescriptor { owned.descriptor }

    public struct Identity: Sendable {
        public var name: String
        public var phys: String
        public var uniq: String
        public var bus: PadBus
        public var vendorID: UInt16
        public var productID: UInt16
        public var version: UInt32
        public init(name: String, phys: String = "", uniq: String = "", bus: PadBus, vendorID: UInt16, productID: UInt16, version: UInt32 = 0) {
            self.name = name; self.phys = phys; self.uniq = uniq; self.bus = bus
            self.vendorID = vendorID; self.productID = productID; self.version = version
        }
    }

    public func create(_ identity: Identity, descriptor: [UInt8]) throws {
        writeLock.lock(); defer { writeLock.unlock() }
        guard descriptor.count <= UHIDLayout.maxData else { throw DeviceError.malformed("report descriptor longer than 4096 bytes") }
        reset(type: UHIDLayout.create2)
        put(string: identity.name, at: UHIDLayout.create2Name, capacity: 128)
        put(string: identity.phys, at: UHIDLayout.create2Phys, capacity: 64)
        put(string: identity.uniq, at: UHIDLayout.create2Uniq, capacity: 64)
        put(UInt16(descriptor.count), at: UHIDLayout.create2DescriptorSize)
        put(identity.bus.kernelBus, at: UHIDLayout.create2Bus)
        put(UInt32(identity.vendorID), at: UHIDLayout.create2Vendor)
        put(UInt32(identity.productID), at: UHIDLayout.create2Product)
        put(identity.version, at: UHIDLayout.create2Version)
        buffer.replaceSubrange(UHIDLayout.create2Descriptor..<UHIDLayout.create2Descriptor + descriptor.count, with: descriptor)
        try send()
        created = true
    }

    /// Feeds one input report (with its report id byte, if the descriptor uses ids).
    public func input(_ report: [UInt8]) throws {
        try report.withUnsafeBufferPointer { try input($0) }
    }

    public func input(_ report: UnsafeBufferPointer<UInt8>) throws {
        writeLock.lock(); defer { writeLock.unlock() }
        guard report.count <= UHIDLayout.maxData else { throw DeviceError.malformed("input report longer than 4096 bytes") }
        reset(type: UHIDLayout.input2)
        put(UInt16(report.count), at: UHIDLayout.input2Size)
        for i in 0..<report.count { buffer[UHIDLayout.input2Data + i] = report[i] }
        try send(length: UHIDLayout.input2Data + report.count)
    }

    public func replyGetReport(requestID: UInt32, data: [UInt8], error: UInt16 = 0) throws {
        writeLock.lock(); defer { writeLock.unlock() }
        reset(type: UHIDLayout.getReportReply)
        put(requestID, at: UHIDLayout.getReportReplyID)
        put(error, at: UHIDLayout.getReportReplyError)
        let count = min(data.count, UHIDLayout.maxData)
        put(UInt16(count), at: UHIDLayout.getReportReplySize)
        buffer.replaceSubrange(UHIDLayout.getReportReplyData..<UHIDLayout.getReportReplyData + count, with: data.prefix(count))
        try send()
    }

    public func replySetReport(requestID: UInt32, error: UInt16 = 0) throws {
        writeLock.lock(); defer { writeLock.unlock() }
        reset(type: UHIDLayout.setReportReply)
        put(requestID, at: UHIDLayout.setReportReplyID)
        put(error, at: UHIDLayout.setReportReplyError)
        try send()
    }

    /// Unplugs the device; the driver unbinds and its nodes disappear.
    public func destroy() throws {
        writeLock.lock(); defer { writeLock.unlock() }
        guard created else { return }
        created = false
        reset(type: UHIDLayout.destroy)
        try send(length: 4)
    }

    /// The next event from the kernel, or nil if none is queued.
    public func read() throws -> UHIDEvent? {
        let n: Int
        do {
            n = try readBuffer.withUnsafeMutableBytes { bytes in Result { () throws(SystemCallError) in try owned.descriptor.read(into: bytes) } }.get()
        } catch where error.errno == .wouldBlock {
            return nil
        } catch {
            throw DeviceError.from(error, path: UHIDDevice.path)
        }
        guard n >= 4 else { return nil }
        let buffer = readBuffer
        let type: UInt32 = get(at: 0, in: buffer)
        switch type {
        case UHIDLayout.start: return .start
        case UHIDLayout.stop: return .stop
        case UHIDLayout.open: return .open
        case UHIDLayout.close: return .close
        case UHIDLayout.output:
            let size = min(Int(get(at: UHIDLayout.outputSize, in: buffer) as UInt16), UHIDLayout.maxData)
            return .output(Array(buffer[UHIDLayout.outputData..<UHIDLayout.outputData + size]),
                           HIDReportType(rawValue: buffer[UHIDLayout.outputType]) ?? .output)
        case UHIDLayout.getReport:
            return .getReport(requestID: get(at: UHIDLayout.getReportID, in: buffer), reportNumber: buffer[UHIDLayout.getReportNumber],
                              type: HIDReportType(rawValue: buffer[UHIDLayout.getReportType]) ?? .feature)
        case UHIDLayout.setReport:
            let size = min(Int(get(at: UHIDLayout.setReportSize, in: buffer) as UInt16), UHIDLayout.maxData)
            return .setReport(requestID: get(at: UHIDLayout.setReportID, in: buffer), reportNumber: buffer[UHIDLayout.setReportNumber],
                              type: HIDReportType(rawValue: buffer[UHIDLayout.setReportType]) ?? .feature,
                              data: Array(buffer[UHIDLayout.setReportData..<UHIDLayout.setReportData + size]))
        default: return .other(type)
        }
    }

    private func reset(type: UInt32) {
        for i in buffer.indices { buffer[i] = 0 }
        put(type, at: 0)
    }

    private func send(length: Int? = nil) throws {
        let count = length ?? buffer.count
        // uhid takes an event whole or not at all: a short write is the kernel refusing it.
        let n: Int
        do {
            n = try buffer.withUnsafeBytes { bytes in Result { () throws(SystemCallError) in try owned.descriptor.write(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) } }.get()
        } catch {
            throw DeviceError.from(error, path: UHIDDevice.path)
        }
        if n != count { throw DeviceError.from(errno: .ioError, call: "write", path: UHIDDevice.path) }
    }

    private func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { buffer.replaceSubrange(offset..<offset + MemoryLayout<T>.size, with: $0) }
    }

    private func put(string: String, at offset: Int, capacity: Int) {
        let bytes = Array(string.utf8.prefix(capacity - 1))
        buffer.replaceSubrange(offset..<offset + bytes.count, with: bytes)
    }

    private func get<T: FixedWidthInteger>(at offset: Int, in buffer: [UInt8]) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: buffer[offset..<offset + MemoryLayout<T>.size]) }
        return T(littleEndian: value)
    }
}

/// Byte offsets into `struct uhid_event` (linux/uhid.h): a 4-byte type, then the packed union.
enum UHIDLayout {
    static let maxData = 4096
    static let eventSize = 4380  // sizeof(struct uhid_event) on every architecture (packed)

    // enum uhid_event_type
    static let destroy: UInt32 = 1, start: UInt32 = 2, stop: UInt32 = 3, open: UInt32 = 4, close: UInt32 = 5
    static let output: UInt32 = 6, getReport: UInt32 = 9, getReportReply: UInt32 = 10
    static let create2: UInt32 = 11, input2: UInt32 = 12, setReport: UInt32 = 13, setReportReply: UInt32 = 14

    static let create2Name = 4, create2Phys = 132, create2Uniq = 196, create2DescriptorSize = 260
    static let create2Bus = 262, create2Vendor = 264, create2Product = 268, create2Version = 272
    static let create2Country = 276, create2Descriptor = 280
    static let input2Size = 4, input2Data = 6
    static let outputData = 4, outputSize = 4 + maxData, outputType = 4 + maxData + 2
    static let getReportID = 4, getReportNumber = 8, getReportType = 9
    static let getReportReplyID = 4, getReportReplyError = 8, getReportReplySize = 10, getReportReplyData = 12
    static let setReportID = 4, setReportNumber = 8, setReportType = 9, setReportSize = 10, setReportData = 12
    static let setReportReplyID = 4, setReportReplyError = 8
}
