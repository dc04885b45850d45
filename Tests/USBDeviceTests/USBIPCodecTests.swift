import XCTest
@testable import USBDevice

/// USB/IP's wire layout, against `struct usbip_header` as drivers/usb/usbip/usbip_common.h packs it
/// (every field big-endian, 48 bytes), and the bounds a request from the kernel side must keep.
final class USBIPCodecTests: XCTestCase {
    /// A CMD_SUBMIT laid out by hand from the kernel's struct, field by field.
    static func submitHeader(seqnum: UInt32 = 7, direction: UInt32 = 1, endpoint: UInt32 = 4, length: Int32 = 64,
                             packets: Int32 = 0, setup: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0], command: UInt32 = 1) -> [UInt8] {
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)] }
        return be(command) + be(seqnum) + be(0x7065_0001) + be(direction) + be(endpoint)
            + be(0x0000_0200) + be(UInt32(bitPattern: length)) + be(0) + be(UInt32(bitPattern: packets)) + be(8) + setup
    }

    func request(_ bytes: [UInt8]) throws -> USBIPRequest {
        try bytes.withUnsafeBytes { b in try USBIPCodec.request(b) }
    }

    func testASubmitReadsAsTheKernelWroteIt() throws {
        let header = Self.submitHeader(seqnum: 0x0102_0304, direction: 0, endpoint: 0, length: 18,
                                       setup: [0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00])
        XCTAssertEqual(header.count, 48)
        guard case .submit(let s) = try request(header) else { return XCTFail("not a submit") }
        XCTAssertEqual(s.seqnum, 0x0102_0304)
        XCTAssertEqual(s.devid, 0x7065_0001)
        XCTAssertEqual(s.direction, .out)
        XCTAssertEqual(s.endpoint, 0)
        XCTAssertEqual(s.transferFlags, 0x200)
        XCTAssertEqual(s.bufferLength, 18)
        XCTAssertEqual(s.interval, 8)
        XCTAssertEqual(s.setup, SetupPacket(requestType: 0x80, request: 6, value: 0x0100, index: 0, length: 18))
        XCTAssertEqual(s.outLength, 18)
        XCTAssertEqual(s.descriptorLength, 0)
    }

    func testAnUnlinkNamesItsVictim() throws {
        var header = Self.submitHeader(seqnum: 9, command: 2)
        header.replaceSubrange(20..<24, with: [0, 0, 0, 5])
        XCTAssertEqual(try request(header), .unlink(USBIPUnlink(seqnum: 9, devid: 0x7065_0001, direction: 1, endpoint: 4, victim: 5)))
    }

    /// Whatever the kernel side sends, nothing is allocated for it before it is bounded.
    func testRequestsOutOfBoundsAreRefused() {
        XCTAssertThrowsError(try request(Array(Self.submitHeader().prefix(47)))) { XCTAssertEqual($0 as? USBIPError, .shortHeader(47)) }
        XCTAssertThrowsError(try request(Self.submitHeader(command: 3))) { XCTAssertEqual($0 as? USBIPError, .unexpectedCommand(3)) }
        XCTAssertThrowsError(try request(Self.submitHeader(direction: 2))) { XCTAssertEqual($0 as? USBIPError, .badDirection(2)) }
        XCTAssertThrowsError(try request(Self.submitHeader(endpoint: 16))) { XCTAssertEqual($0 as? USBIPError, .badEndpoint(16)) }
        XCTAssertThrowsError(try request(Self.submitHeader(length: -1))) { XCTAssertEqual($0 as? USBIPError, .badLength(-1)) }
        XCTAssertThrowsError(try request(Self.submitHeader(length: 65537))) { XCTAssertEqual($0 as? USBIPError, .badLength(65537)) }
        XCTAssertThrowsError(try request(Self.submitHeader(packets: 257))) { XCTAssertEqual($0 as? USBIPError, .badPacketCount(257)) }
        XCTAssertThrowsError(try request(Self.submitHeader(packets: -3))) { XCTAssertEqual($0 as? USBIPError, .badPacketCount(-3)) }
        XCTAssertNoThrow(try request(Self.submitHeader(length: 65536, packets: 256)))
    }

    /// Random headers never trap, and whatever is accepted stays within the bounds.
    func testArbitraryHeadersNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes = (0..<48).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes[3] = UInt8.random(in: 0...3, using: &generator)
            bytes[0] = 0; bytes[1] = 0; bytes[2] = 0
            if case .submit(let s) = try? request(bytes) {
                XCTAssertTrue((0...USBIPLimits.maximumTransfer).contains(s.bufferLength))
                XCTAssertTrue((0...USBIPLimits.maximumPackets).contains(s.packetCount))
                XCTAssertLessThan(s.endpoint, 16)
            }
        }
    }

    /// RET_SUBMIT and RET_UNLINK as vhci_rx reads them (`usbip_header_ret_submit`: status,
    /// actual_length, start_frame, number_of_packets, error_count, then 8 bytes of padding).
    func testRepliesAreLaidOutAsTheKernelReadsThem() throws {
        guard case .submit(let s) = try request(Self.submitHeader(seqnum: 0x11, direction: 1, endpoint: 4, length: 64)) else { return XCTFail() }
        var out = [UInt8](repeating: 0xee, count: 48)
        out.withUnsafeMutableBytes { USBIPCodec.writeSubmitReply(to: s, status: -32, actualLength: 64, packetCount: 3, errorCount: 1, into: $0) }
        XCTAssertEqual(Array(out[0..<4]), [0, 0, 0, 3])
        XCTAssertEqual(Array(out[4..<8]), [0, 0, 0, 0x11])
        XCTAssertEqual(Array(out[12..<16]), [0, 0, 0, 1], "direction")
        XCTAssertEqual(Array(out[16..<20]), [0, 0, 0, 4], "endpoint")
        XCTAssertEqual(Array(out[20..<24]), [0xff, 0xff, 0xff, 0xe0], "status -EPIPE")
        XCTAssertEqual(Array(out[24..<28]), [0, 0, 0, 64])
        XCTAssertEqual(Array(out[32..<36]), [0, 0, 0, 3])
        XCTAssertEqual(Array(out[36..<40]), [0, 0, 0, 1])
        XCTAssertEqual(Array(out[40..<48]), [0, 0, 0, 0, 0, 0, 0, 0])
        let unlink = USBIPUnlink(seqnum: 0x12, devid: 1, direction: 0, endpoint: 0, victim: 0x11)
        out.withUnsafeMutableBytes { USBIPCodec.writeUnlinkReply(to: unlink, status: -104, into: $0) }
        XCTAssertEqual(Array(out[0..<8]), [0, 0, 0, 4, 0, 0, 0, 0x12])
        XCTAssertEqual(Array(out[20..<24]), [0xff, 0xff, 0xff, 0x98], "-ECONNRESET")
        XCTAssertEqual(Array(out[24..<48]), [UInt8](repeating: 0, count: 24))
    }

    func testIsochronousPacketDescriptorsRoundTrip() {
        let packets = [USBIPIsoPacket(offset: 0, length: 392, actualLength: 392), USBIPIsoPacket(offset: 392, length: 392, actualLength: 0, status: -18)]
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { out in for (i, p) in packets.enumerated() { p.write(into: out, index: i) } }
        XCTAssertEqual(Array(bytes[16..<20]), [0, 0, 0x01, 0x88], "offset 392, big-endian")
        let read = bytes.withUnsafeBytes { b in (0..<2).map { USBIPIsoPacket(b, index: $0) } }
        XCTAssertEqual(read, packets)
    }

    /// The status file as vhci_sysfs.c prints it (its own comment's example layout).
    func testVHCIStatusLinesAreRead() {
        let text = """
            hub port sta spd dev      sockfd local_busid
            hs  0000 006 003 70680a0b 000005 1-1
            hs  0001 004 000 00000000 000000 0-0
            ss  0008 004 000 00000000 000000 0-0
            garbage
            """
        let ports = VHCIPortStatus.parse(text)
        XCTAssertEqual(ports.count, 3)
        XCTAssertEqual(ports[0], VHCIPortStatus(highSpeedHub: true, port: 0, state: 6, devid: 0x7068_0a0b, busID: "1-1"))
        XCTAssertFalse(ports[0].isFree)
        XCTAssertTrue(ports[1].isFree)
        XCTAssertFalse(ports[2].highSpeedHub)
    }
}
