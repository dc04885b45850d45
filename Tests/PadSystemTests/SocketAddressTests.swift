import PadSystem
import XCTest

final class SocketAddressTests: XCTestCase {
    func testIPv4AndIPv6PrintAsPeopleTypeThem() throws {
        XCTAssertEqual(try SocketAddress(ip: "192.168.1.20", port: 47800).description, "192.168.1.20:47800")
        XCTAssertEqual(try SocketAddress(ip: "::1", port: 47800).description, "[::1]:47800")
        let scoped = try SocketAddress(ip: "fe80::1%7", port: 9)
        guard case .ipv6(let raw) = scoped else { return XCTFail("not IPv6: \(scoped)") }
        XCTAssertEqual(raw.sin6_scope_id, 7, "the scope is kept")
        XCTAssertTrue(scoped.description.hasPrefix("[fe80::1%") && scoped.description.hasSuffix("]:9"), scoped.description)
        XCTAssertEqual(try SocketAddress(ip: "fe80::1%lo", port: 1).host, "fe80::1%lo", "a scope by interface name reads back by name")
    }

    func testWhatIsNotAnAddressIsRefusedByName() {
        XCTAssertThrowsError(try SocketAddress(ip: "300.1.1.1", port: 1)) { error in
            let refusal = error as? SocketAddress.ParseError
            XCTAssertEqual(refusal?.text, "300.1.1.1")
            XCTAssertEqual(refusal?.lookedUp, false, "a numeric address is never looked up")
        }
        XCTAssertThrowsError(try SocketAddress(ip: "fe80::1%no-such-interface", port: 1))
    }

    func testTheKernelsAddressComesBackEqual() throws {
        let socket = try Socket.datagram(boundTo: SocketAddress(ip: "127.0.0.1", port: 0))
        let bound = try XCTUnwrap(socket.localAddress)
        XCTAssertEqual(bound.host, "127.0.0.1")
        XCTAssertNotEqual(bound.port, 0)
        var changed = bound
        changed.port &+= 1
        XCTAssertNotEqual(changed, bound)
        XCTAssertEqual(Set([bound, bound, changed]).count, 2)
    }

    func testADatagramGoesThroughIPv6Loopback() throws {
        guard let receiver = try? Socket.datagram(boundTo: SocketAddress(ip: "::1", port: 0)) else {
            throw XCTSkip("no IPv6 loopback here")
        }
        let sender = try Socket.datagram(boundTo: .any(.ipv6, port: 0))
        let target = try XCTUnwrap(receiver.localAddress)
        XCTAssertEqual(try [UInt8]([1, 2, 3]).withUnsafeBytes { try sender.send($0, to: target) }, 3)
        XCTAssertTrue(Poll.wait([receiver.descriptor], timeout: .seconds(2))[0].readable)
        var buffer = [UInt8](repeating: 0, count: 16)
        let got = try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0) }
        XCTAssertEqual(got?.count, 3)
        XCTAssertEqual(got?.from.family, .ipv6)
        XCTAssertNil(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0) }, "nothing more queued")
    }
}
