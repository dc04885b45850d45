import Foundation
import Glibc
import MonotonicTime
@testable import PadFamilies
import PadSystem
import USBDevice
import XCTest
@testable import PadDevices

/// The USB pad's server against a kernel side played by the test over a socket pair: what vhci-hcd
/// sends in a probe, and what a broken or hostile peer could send. No vhci-hcd needed.
final class USBIPDeviceTests: XCTestCase {
    var kernel: OwnedDescriptor!
    var device: USBIPHIDDevice!
    var seqnum: UInt32 = 0

    override func setUpWithError() throws {
        var pair: [CInt] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair), 0)
        kernel = OwnedDescriptor(FileDescriptor(rawValue: pair[1]))
        device = USBIPHIDDevice(serving: OwnedDescriptor(FileDescriptor(rawValue: pair[0])),
                                descriptors: try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSense)),
                                audioUnits: DualSenseUSBDescriptors.audioUnits, devid: 0x7065_0001)
    }

    override func tearDown() { try? device.destroy(); kernel.close() }

    // MARK: The kernel's side

    struct Reply: Equatable { var command: UInt32; var seqnum: UInt32; var status: Int32; var data: [UInt8]; var packets: [USBIPIsoPacket] = [] }

    @discardableResult
    func submit(endpoint: UInt32, direction: UInt32, length: Int32, setup: [UInt8] = [UInt8](repeating: 0, count: 8),
                out: [UInt8] = [], packets: [USBIPIsoPacket] = []) throws -> UInt32 {
        seqnum += 1
        var header = USBIPCodecTestsSupport.header(command: 1, seqnum: seqnum, direction: direction, endpoint: endpoint,
                                                   length: length, packets: Int32(packets.count), setup: setup)
        header += out
        var descriptors = [UInt8](repeating: 0, count: packets.count * 16)
        descriptors.withUnsafeMutableBytes { b in for (i, p) in packets.enumerated() { p.write(into: b, index: i) } }
        try write(header + descriptors)
        return seqnum
    }

    func control(_ setup: [UInt8], out: [UInt8] = []) throws -> Reply {
        let inbound = setup[0] & 0x80 != 0
        let length = Int32(UInt16(setup[6]) | UInt16(setup[7]) << 8)
        let seq = try submit(endpoint: 0, direction: inbound ? 1 : 0, length: length, setup: setup, out: out)
        let reply = try XCTUnwrap(read())
        XCTAssertEqual(reply.seqnum, seq)
        return reply
    }

    func unlink(_ victim: UInt32) throws -> UInt32 {
        seqnum += 1
        var header = USBIPCodecTestsSupport.header(command: 2, seqnum: seqnum, direction: 0, endpoint: 0, length: 0, packets: 0, setup: [UInt8](repeating: 0, count: 8))
        header.replaceSubrange(20..<24, with: [UInt8(victim >> 24), UInt8((victim >> 16) & 0xff), UInt8((victim >> 8) & 0xff), UInt8(victim & 0xff)])
        try write(header)
        return seqnum
    }

    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try kernel.descriptor.writeAll($0) }
    }

    /// One reply, or nil if none comes within `timeout`.
    func read(timeout: Duration = .seconds(2), direction: UInt32? = nil) throws -> Reply? {
        guard let header = try readExactly(48, timeout: timeout) else { return nil }
        func be(_ o: Int) -> UInt32 { UInt32(header[o]) << 24 | UInt32(header[o + 1]) << 16 | UInt32(header[o + 2]) << 8 | UInt32(header[o + 3]) }
        let command = be(0), status = Int32(bitPattern: be(20)), actual = Int(Int32(bitPattern: be(24))), count = Int(Int32(bitPattern: be(32)))
        let inbound = be(12) == 1
        var data: [UInt8] = []
        if command == 3, inbound, actual > 0 { data = try XCTUnwrap(try readExactly(actual, timeout: timeout)) }
        var packets: [USBIPIsoPacket] = []
        if command == 3, count > 0 {
            let bytes = try XCTUnwrap(try readExactly(count * 16, timeout: timeout))
            packets = bytes.withUnsafeBytes { b in (0..<count).map { USBIPIsoPacket(b, index: $0) } }
        }
        return Reply(command: command, seqnum: be(4), status: status, data: data, packets: packets)
    }

    func readExactly(_ count: Int, timeout: Duration) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        let deadline = MonotonicInstant.now + timeout
        while done < count {
            guard Poll.wait(for: .readable, on: kernel.descriptor, until: deadline) else { return nil }
            let n = try bytes.withUnsafeMutableBytes { try kernel.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[done...])) }
            if n == 0 { return nil }
            done += n
        }
        return bytes
    }

    func configure() throws {
        XCTAssertEqual(try control([0x00, 0x09, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00]).status, 0)
    }

    // MARK: Tests

    func testAProbesRequestsAreAnswered() throws {
        let descriptor = try control([0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00])
        XCTAssertEqual(descriptor.status, 0)
        XCTAssertEqual(descriptor.data, DualSenseUSBDescriptors.device)
        let short = try control([0x80, 0x06, 0x00, 0x02, 0x00, 0x00, 0x09, 0x00])
        XCTAssertEqual(short.data, Array(DualSenseUSBDescriptors.configuration.prefix(9)), "cut to wLength")
        XCTAssertEqual(try control([0x80, 0x06, 0x00, 0x05, 0x00, 0x00, 0x09, 0x00]).status, -EPIPE, "no such descriptor type: a stall")
        try configure()
        // A feature report goes to the pad and comes back with its answer.
        let seq = try submit(endpoint: 0, direction: 1, length: 41, setup: [0xa1, 0x01, 0x05, 0x03, 0x03, 0x00, 0x29, 0x00])
        let event = try XCTUnwrap(eventually { try device.read() })
        XCTAssertEqual(event, .getReport(requestID: seq, reportNumber: 5, type: .feature))
        try device.replyGetReport(requestID: seq, data: [5] + [UInt8](repeating: 7, count: 40), error: 0)
        let answer = try XCTUnwrap(read())
        XCTAssertEqual(answer.seqnum, seq)
        XCTAssertEqual(answer.data.count, 41)
        XCTAssertEqual(answer.data.first, 5)
    }

    func testInputReportsCompleteTheQueuedTransfersInOrderAndTheQueueIsBounded() throws {
        try configure()
        var queued: [UInt32] = []
        for _ in 0..<USBIPHIDDevice.Limits.pendingInterruptIn { queued.append(try submit(endpoint: 4, direction: 1, length: 64)) }
        XCTAssertNil(try read(timeout: .milliseconds(100)), "nothing to report yet")
        let extra = try submit(endpoint: 4, direction: 1, length: 64)
        XCTAssertEqual(try read()?.status, -EPIPE, "a ninth queued transfer is refused, not kept")
        _ = extra
        XCTAssertEqual(try XCTUnwrap(eventually { try device.read() }), .open)
        let report = [0x01] + [UInt8](repeating: 0x80, count: 63)
        try device.input(report)
        let first = try XCTUnwrap(read())
        XCTAssertEqual(first.seqnum, queued[0])
        XCTAssertEqual(first.data, report)
        // Taken back while pending: -ECONNRESET, and it is never completed.
        let unlinkSeq = try unlink(queued[1])
        XCTAssertEqual(try read(), Reply(command: 4, seqnum: unlinkSeq, status: -ECONNRESET, data: []))
        try device.input(report)
        XCTAssertEqual(try read()?.seqnum, queued[2])
        // One already done: 0.
        let late = try unlink(queued[0])
        XCTAssertEqual(try read(), Reply(command: 4, seqnum: late, status: 0, data: []))
    }

    func testReportsWhileNoTransferWaitsKeepTheNewest() throws {
        try configure()
        for i in 0..<10 { try device.input([0x01, UInt8(i)] + [UInt8](repeating: 0, count: 62)) }
        XCTAssertEqual(device.droppedInputs, 10 - USBIPHIDDevice.Limits.queuedInput)
        try submit(endpoint: 4, direction: 1, length: 64)
        XCTAssertEqual(try read()?.data[1], UInt8(10 - USBIPHIDDevice.Limits.queuedInput), "the oldest kept")
    }

    func testAudioIsTakenOnlyInItsSettingAndAtTheDevicesPace() throws {
        try configure()
        let packets = (0..<8).map { USBIPIsoPacket(offset: UInt32($0 * 384), length: 384) }
        try submit(endpoint: 1, direction: 0, length: 8 * 384, out: [UInt8](repeating: 1, count: 8 * 384), packets: packets)
        XCTAssertEqual(try read()?.status, -EPIPE, "the output stream's alternate 0 has no endpoint")
        XCTAssertEqual(try control([0x01, 0x0b, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00]).status, 0)
        let started = MonotonicInstant.now
        try submit(endpoint: 1, direction: 0, length: 8 * 384, out: [UInt8](repeating: 1, count: 8 * 384), packets: packets)
        let done = try XCTUnwrap(read())
        XCTAssertGreaterThanOrEqual(MonotonicInstant.now - started, .milliseconds(7), "8 packets of 1 ms")
        XCTAssertEqual(done.status, 0)
        XCTAssertEqual(done.packets.map(\.actualLength), [UInt32](repeating: 384, count: 8))
        XCTAssertEqual(device.audioBytesReceived, 8 * 384)
    }

    /// The kernel's requests come as a byte stream: several in one read, or one in pieces. Each
    /// is answered once, in order.
    func testRequestsTogetherInOneWriteOrSplitAcrossWritesAreEachAnswered() throws {
        let getDevice: [UInt8] = [0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 18, 0x00]
        var together: [UInt8] = []
        for n in 1...3 {
            together += USBIPCodecTestsSupport.header(command: 1, seqnum: UInt32(100 + n), direction: 1, endpoint: 0, length: 18, packets: 0, setup: getDevice)
        }
        try write(together)
        for n in 1...3 {
            let reply = try XCTUnwrap(read(), "request \(n) of 3 written together")
            XCTAssertEqual(reply.seqnum, UInt32(100 + n))
            XCTAssertEqual(reply.data.count, 18)
            XCTAssertEqual(reply.data[1], 0x01, "a device descriptor")
        }
        let split = USBIPCodecTestsSupport.header(command: 1, seqnum: 200, direction: 1, endpoint: 0, length: 18, packets: 0, setup: getDevice)
        for part in [split[0..<5], split[5..<47], split[47...]] {
            try write(Array(part))
            usleep(20_000)
        }
        let reply = try XCTUnwrap(read(), "a request written in three pieces")
        XCTAssertEqual(reply.seqnum, 200)
        XCTAssertEqual(reply.data.count, 18)
        XCTAssertNil(try read(timeout: .milliseconds(100)), "one reply a request")
    }

    /// The microphone's IN packets carry what `onAudioIn` gives, each at most the pad's packet
    /// (48 frames of 2 channels of 16 bits), and silence where nothing gives them.
    func testMicrophonePacketsCarryWhatTheMicrophoneGivesOrSilence() throws {
        let descriptors = try XCTUnwrap(DualSenseUSBDescriptors.descriptors(.dualSense))
        let (interface, endpoint) = try XCTUnwrap(descriptors.endpoint(0x82), "the pad's microphone endpoint")
        XCTAssertEqual(endpoint.transferType, 1, "isochronous")
        let setInterface: [UInt8] = [0x01, 0x0b, interface.alternate, 0x00, interface.number, 0x00, 0x00, 0x00]
        // Silence, from the device the set-up made.
        try configure()
        XCTAssertEqual(try control(setInterface).status, 0)
        let packets = (0..<2).map { USBIPIsoPacket(offset: UInt32($0 * 196), length: 196) }
        try submit(endpoint: 2, direction: 1, length: 2 * 196, packets: packets)
        let silent = try XCTUnwrap(read())
        XCTAssertEqual(silent.status, 0)
        XCTAssertEqual(silent.packets.map(\.actualLength), [192, 192], "48 frames a millisecond, not the endpoint's 196 bytes")
        XCTAssertEqual(silent.data, [UInt8](repeating: 0, count: 384))

        // A device whose microphone gives a byte pattern.
        try device.destroy()
        kernel.close()
        var pair: [CInt] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair), 0)
        kernel = OwnedDescriptor(FileDescriptor(rawValue: pair[1]))
        device = USBIPHIDDevice(serving: OwnedDescriptor(FileDescriptor(rawValue: pair[0])), descriptors: descriptors,
                                audioUnits: DualSenseUSBDescriptors.audioUnits, devid: 0x7065_0001,
                                onAudioIn: { packet in for i in packet.indices { packet[i] = UInt8(truncatingIfNeeded: i) } })
        try configure()
        XCTAssertEqual(try control(setInterface).status, 0)
        try submit(endpoint: 2, direction: 1, length: 2 * 196, packets: packets)
        let given = try XCTUnwrap(read())
        XCTAssertEqual(given.packets.map(\.actualLength), [192, 192])
        XCTAssertEqual(given.data, (0..<384).map { UInt8(truncatingIfNeeded: $0 % 192) })
    }

    /// A peer that breaks the protocol ends the device; nothing it sent is used, nothing traps.
    func testAProtocolViolationEndsTheDevice() throws {
        try configure()
        XCTAssertEqual(try control([0x01, 0x0b, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00]).status, 0)
        // A packet that lies outside its transfer.
        try submit(endpoint: 1, direction: 0, length: 16, out: [UInt8](repeating: 0, count: 16), packets: [USBIPIsoPacket(offset: 8, length: 4000)])
        XCTAssertNotNil(eventually { device.hasStopped ? true : nil }, "the device kept serving a peer that broke the protocol")
        XCTAssertNil(try read(timeout: .milliseconds(200)))
    }

    func testABadHeaderEndsTheDevice() throws {
        var header = USBIPCodecTestsSupport.header(command: 1, seqnum: 1, direction: 1, endpoint: 4, length: 1 << 30, packets: 0, setup: [UInt8](repeating: 0, count: 8))
        header += []
        try write(header)
        XCTAssertNotNil(eventually { device.hasStopped ? true : nil })
    }

    private func eventually<T>(timeout: Duration = .seconds(2), _ body: () throws -> T?) rethrows -> T? {
        let deadline = MonotonicInstant.now + timeout
        repeat {
            if let value = try body() { return value }
            usleep(2_000)
        } while MonotonicInstant.now < deadline
        return nil
    }
}

/// A CMD_SUBMIT or CMD_UNLINK header laid out by hand from `struct usbip_header`.
enum USBIPCodecTestsSupport {
    static func header(command: UInt32, seqnum: UInt32, direction: UInt32, endpoint: UInt32, length: Int32, packets: Int32, setup: [UInt8]) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)] }
        return be(command) + be(seqnum) + be(0x7065_0001) + be(direction) + be(endpoint)
            + be(0) + be(UInt32(bitPattern: length)) + be(0) + be(UInt32(bitPattern: packets)) + be(0) + setup
    }
}
