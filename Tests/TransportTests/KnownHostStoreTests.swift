import Foundation
import Transport
import XCTest

/// The client's known hosts, keyed by identity: one host reached over IPv4, IPv6 and its announced
/// name is one entry, and a new identity where a pinned one was is refused as changed.
final class KnownHostStoreTests: XCTestCase {
    var directory: URL!
    let first = (0..<32).map { String(format: "%02x", $0) }.joined(separator: ":")
    let second = (0..<32).map { String(format: "%02x", 255 - $0) }.joined(separator: ":")

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("known-hosts-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    func testOneHostReachedManyWaysIsOneEntry() throws {
        var store = try KnownHostStore(url: directory.appendingPathComponent("known_hosts"))
        try store.pin(fingerprint: first, name: "box", address: "10.0.0.5:47800")
        XCTAssertEqual(try store.check(address: "[fe80::1%eth0]:47800", name: nil, presented: first), .known)
        XCTAssertEqual(try store.check(address: nil, name: "box", presented: first), .known, "found by discovery")
        let reloaded = try KnownHostStore(url: store.url)
        XCTAssertEqual(reloaded.hosts.count, 1)
        XCTAssertEqual(reloaded.hosts[0].addresses, ["[fe80::1%eth0]:47800", "10.0.0.5:47800"])
        XCTAssertEqual(reloaded.hosts[0].name, "box")
    }

    func testANewIdentityWhereAPinnedOneWasIsChanged() throws {
        var store = try KnownHostStore(url: directory.appendingPathComponent("known_hosts"))
        try store.pin(fingerprint: first, name: "box", address: "10.0.0.5:47800")
        XCTAssertThrowsError(try store.check(address: "10.0.0.5:47800", name: nil, presented: second)) { error in
            guard case TLSError.fingerprintChanged(let host, let expected, let got) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(host, "10.0.0.5:47800"); XCTAssertEqual(expected, first); XCTAssertEqual(got, second)
        }
        XCTAssertThrowsError(try store.check(address: nil, name: "box", presented: second), "the announced name is pinned too")
        XCTAssertEqual(store.standing(fingerprint: second, name: "box", addresses: []), .changed)
        XCTAssertEqual(store.standing(fingerprint: second, name: "other", addresses: ["10.0.0.5:47800"]), .changed, "found at a pinned address")
        XCTAssertEqual(store.standing(fingerprint: second, name: "other", addresses: ["10.0.0.9:47800"]), .unknown)
        XCTAssertEqual(store.standing(fingerprint: first, name: "renamed", addresses: []), .paired, "the identity is what counts")
        // Pairing again (the PIN proves the new identity) moves the address over.
        try store.pin(fingerprint: second, name: "box", address: "10.0.0.5:47800")
        XCTAssertEqual(try store.check(address: "10.0.0.5:47800", name: nil, presented: second), .known)
        XCTAssertNil(store.host(fingerprint: first)?.addresses.first)
    }

    func testAnUnknownHostAtANewAddressIsTrustedOnFirstUse() throws {
        var store = try KnownHostStore(url: directory.appendingPathComponent("known_hosts"))
        XCTAssertEqual(try store.check(address: "[::1]:47800", name: nil, presented: first), .firstUse)
        XCTAssertEqual(try store.check(address: "[::1]:47800", name: nil, presented: first), .known)
        XCTAssertEqual(store.hosts.first?.name, "::1")
    }

    func testTheOlderAddressFirstFileStillReadsAndForgetTakesAnyName() throws {
        let url = directory.appendingPathComponent("known_hosts")
        try Data("# padgate known hosts\n127.0.0.1:47800 \(first)\nbroken line here x\n".utf8).write(to: url)
        var store = try KnownHostStore(url: url)
        XCTAssertEqual(store.hosts, [KnownHost(fingerprint: first, name: "127.0.0.1", addresses: ["127.0.0.1:47800"])])
        XCTAssertEqual(store.unreadableLines, [3])
        XCTAssertEqual(try store.check(address: "127.0.0.1:47800", name: nil, presented: first), .known)
        XCTAssertEqual(try store.forget("127.0.0.1:47800")?.fingerprint, first)
        XCTAssertTrue(try KnownHostStore(url: url).hosts.isEmpty)
        try store.pin(fingerprint: second, name: "box two", address: nil)
        XCTAssertEqual(try KnownHostStore(url: url).hosts.first?.name, "box two", "a name with a space reads back")
        XCTAssertNotNil(try store.forget(second))
    }

    func testAddressesPerHostAreBounded() throws {
        var store = try KnownHostStore(url: directory.appendingPathComponent("known_hosts"))
        try store.pin(fingerprint: first, name: "box", address: "a:1")
        for n in 0..<50 { _ = try store.check(address: "10.0.0.\(n):47800", name: nil, presented: first) }
        XCTAssertEqual(store.hosts[0].addresses.count, KnownHostStore.maxAddresses)
        XCTAssertEqual(store.hosts[0].addresses.first, "10.0.0.49:47800")
    }
}
