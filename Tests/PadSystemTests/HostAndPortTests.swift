import PadSystem
import XCTest

/// HOST arguments as people type them, IPv6 included (RFC 3986's brackets, RFC 4007's `%zone`).
final class HostAndPortTests: XCTestCase {
    func testEveryFormReadsAsTyped() throws {
        let table: [(String, String, UInt16)] = [
            ("box", "box", 47800),
            ("box:9000", "box", 9000),
            ("10.0.0.5", "10.0.0.5", 47800),
            ("10.0.0.5:1", "10.0.0.5", 1),
            ("::1", "::1", 47800),
            ("[::1]", "::1", 47800),
            ("[::1]:47801", "::1", 47801),
            ("fe80::1%eth0", "fe80::1%eth0", 47800),
            ("[fe80::1%eth0]:47802", "fe80::1%eth0", 47802),
            ("[fe80::1%3]:5", "fe80::1%3", 5),
            ("2001:db8::7", "2001:db8::7", 47800),
            ("[::ffff:10.0.0.1]:7", "::ffff:10.0.0.1", 7),
        ]
        for (text, host, port) in table {
            let parsed = try XCTUnwrap(HostAndPort(text, defaultPort: 47800), text)
            XCTAssertEqual(parsed.host, host, text)
            XCTAssertEqual(parsed.port, port, text)
            XCTAssertEqual(HostAndPort(parsed.description, defaultPort: 1), parsed, "\(parsed) reads back as itself")
        }
    }

    func testWhatIsNoneOfThemIsRefused() {
        for text in ["", "box:", "box:0", "box:65536", "box:x", "[::1", "[::1]x", "[::1]:", "[::1]:0", "[box]:1", "[]:1",
                     "1:2:3", "fe80::1%", "a b", "[fe80::1%eth0]:70000", "box:1:2", ":::"] {
            XCTAssertNil(HostAndPort(text, defaultPort: 47800), text)
        }
    }

    func testADualStackPeerPrintsAsTheIPv4AddressItIs() throws {
        let mapped = try SocketAddress(ip: "::ffff:192.168.1.20", port: 47800)
        XCTAssertTrue(mapped.isIPv4Mapped)
        XCTAssertEqual(mapped.host, "192.168.1.20")
        XCTAssertEqual(mapped.description, "192.168.1.20:47800")
        XCTAssertFalse(try SocketAddress(ip: "::1", port: 1).isIPv4Mapped)
        XCTAssertFalse(try SocketAddress(ip: "192.168.1.20", port: 1).isIPv4Mapped)
    }

    func testANameResolvesToEveryAddressOnceInTheResolversOrder() throws {
        let all = try SocketAddress.resolveAll("localhost", port: 9)
        XCTAssertFalse(all.isEmpty)
        XCTAssertEqual(Set(all).count, all.count, "each address once: \(all)")
        XCTAssertTrue(all.allSatisfy { $0.port == 9 })
        XCTAssertEqual(try SocketAddress.resolveAll("::1", port: 4), [try SocketAddress(ip: "::1", port: 4)], "a literal is itself")
    }

    func testADualStackSocketTakesIPv4Too() throws {
        guard let receiver = try? Socket.datagram(boundTo: .any(.ipv6, port: 0)) else { throw XCTSkip("no IPv6 here") }
        let port = try XCTUnwrap(receiver.localAddress?.port)
        let sender = try Socket.datagram(boundTo: SocketAddress(ip: "127.0.0.1", port: 0))
        XCTAssertEqual(try [UInt8]([7]).withUnsafeBytes { try sender.send($0, to: SocketAddress(ip: "127.0.0.1", port: port)) }, 1)
        XCTAssertTrue(Poll.wait([receiver.descriptor], timeout: .seconds(2))[0].readable, "an IPv4 datagram reached the socket bound to ::")
        var buffer = [UInt8](repeating: 0, count: 4)
        let got = try XCTUnwrap(try buffer.withUnsafeMutableBytes { try receiver.receive(into: $0) })
        XCTAssertEqual(got.from.host, "127.0.0.1", "and its sender reads as IPv4")
        // The answer goes back through the same socket to the mapped address.
        XCTAssertEqual(try [UInt8]([8]).withUnsafeBytes { try receiver.send($0, to: got.from) }, 1)
        XCTAssertTrue(Poll.wait([sender.descriptor], timeout: .seconds(2))[0].readable)
    }
}
