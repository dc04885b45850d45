import Foundation
import MonotonicTime
import PadSystem
import XCTest
@testable import Transport

final class TLSChannelTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-tls-\(UUID())")
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    func testIdentityIsCreatedOnceAndReloaded() throws {
        let first = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "padgate host")
        let again = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "padgate host")
        XCTAssertEqual(first.fingerprint, again.fingerprint)
        XCTAssertEqual(first.fingerprint.split(separator: ":").count, 32, "SHA-256")
        let other = try TLSIdentity(directory: directory.appendingPathComponent("other"), commonName: "padgate host")
        XCTAssertNotEqual(first.fingerprint, other.fingerprint)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("host/key.pem").path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600, "the private key is the owner's alone")
    }

    /// A name with several addresses: one that refuses is passed over for the next, within the
    /// one connect deadline; when every address refuses, the error says how many were tried.
    func testEachAddressIsTriedInTurnAndAllRefusingIsOneError() throws {
        let hostIdentity = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "host")
        let listener = try TLSListener(identity: hostIdentity, address: "127.0.0.1", port: 0)
        // A port nobody listens on, on both families: bound and closed again.
        let closed = try Socket.datagram(boundTo: SocketAddress(ip: "127.0.0.1", port: 0)).localAddress!.port
        let accepted = expectation(description: "accepted")
        Thread.detachNewThread { _ = try? listener.accept(); accepted.fulfill() }
        let started = MonotonicInstant.now
        let connection = try TLSDialer.connect([try SocketAddress(ip: "::1", port: closed), try SocketAddress(ip: "127.0.0.2", port: closed),
                                                try SocketAddress(ip: "127.0.0.1", port: listener.port)],
                                               named: "a name with three addresses", identity: nil)
        wait(for: [accepted], timeout: 10)
        XCTAssertEqual(connection.peer.port, listener.port)
        XCTAssertLessThan(MonotonicInstant.now - started, .seconds(5), "a refusal moves on at once")
        XCTAssertThrowsError(try TLSDialer.connect([try SocketAddress(ip: "127.0.0.1", port: closed), try SocketAddress(ip: "127.0.0.3", port: closed)],
                                                   named: "nowhere", identity: nil)) { error in
            XCTAssertTrue("\(error)".contains("and 1 more address"), "\(error)")
        }
    }

    func testHandshakeFramesExporterAndFingerprints() throws {
        let hostIdentity = try TLSIdentity(directory: directory.appendingPathComponent("host"), commonName: "host")
        let clientIdentity = try TLSIdentity(directory: directory.appendingPathComponent("client"), commonName: "client")
        let listener = try TLSListener(identity: hostIdentity, address: "127.0.0.1", port: 0)
        let accepted = expectation(description: "accepted")
        let serverSide = LockedBox<Result<TLSConnection, Error>?>(nil)
        Thread.detachNewThread {
            let result = Result { try listener.accept() }
            serverSide.update { $0 = result }
            accepted.fulfill()
        }
        let client = try TLSDialer.connect(host: "127.0.0.1", port: listener.port, identity: clientIdentity)
        wait(for: [accepted], timeout: 10)
        let server = try XCTUnwrap(serverSide.value).get()

        XCTAssertEqual(client.peerFingerprint, hostIdentity.fingerprint)
        XCTAssertEqual(server.peerFingerprint, clientIdentity.fingerprint)
        try client.send([1, 2, 3])
        XCTAssertEqual(try server.receive(), [1, 2, 3])
        try server.send([])
        XCTAssertEqual(try client.receive(), [])
        let a = try client.exportKeyingMaterial(label: "EXPORTER-padgate-datagram-v1", length: 88)
        let b = try server.exportKeyingMaterial(label: "EXPORTER-padgate-datagram-v1", length: 88)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, try client.exportKeyingMaterial(label: "EXPORTER-other", length: 88))
    }

    func testStoresRoundTripAnyNameAndAreTheOwnersAlone() throws {
        let url = directory.appendingPathComponent("state/nested/paired-clients")
        var store = try FingerprintStore(url: url)
        let names = ["living room", "two\nlines", "# not a comment", "100%", "", "émile's pc", "tab\there", String(repeating: "x", count: 300)]
        for (i, name) in names.enumerated() { try store.remember(name, fingerprint: "aa:\(i)") }
        let reloaded = try FingerprintStore(url: url)
        XCTAssertEqual(reloaded.entries, store.entries)
        XCTAssertEqual(reloaded.entries.count, names.count)
        XCTAssertTrue(reloaded.unreadableLines.isEmpty)
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(text.split(separator: "\n").count, names.count, "one line per entry, whatever the names hold")
        func mode(_ url: URL) throws -> Int? { try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int }
        XCTAssertEqual(try mode(url), 0o600)
        XCTAssertEqual(try mode(url.deletingLastPathComponent()), 0o700)
        XCTAssertEqual(try mode(directory.appendingPathComponent("state")), 0o700, "missing parents are made private too")

        // A file written before names were encoded still loads where it is unambiguous; a looser mode is narrowed.
        let old = directory.appendingPathComponent("old_known_hosts")
        try "gamebox:47800 aa:bb\nbroken-line\n".write(to: old, atomically: true, encoding: .utf8)
        chmod(old.path, 0o644)
        let legacy = try FingerprintStore(url: old)
        XCTAssertEqual(legacy.entries, ["gamebox:47800": "aa:bb"])
        XCTAssertEqual(legacy.unreadableLines, [2])
        XCTAssertEqual(try mode(old), 0o600)
    }

    func testIdentityFilesAreTheOwnersAlone() throws {
        let dir = directory.appendingPathComponent("ident")
        _ = try TLSIdentity(directory: dir, commonName: "x")
        for file in ["key.pem", "cert.pem"] {
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(file).path)[.posixPermissions] as? Int, 0o600, file)
        }
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int, 0o700)
    }

    func testKnownHostsTrustOnFirstUseAndRefuseAChange() throws {
        var store = try FingerprintStore(url: directory.appendingPathComponent("known_hosts"))
        XCTAssertEqual(try store.check("gamebox:47800", presented: "aa:bb"), .firstUse)
        var reloaded = try FingerprintStore(url: directory.appendingPathComponent("known_hosts"))
        XCTAssertEqual(try reloaded.check("gamebox:47800", presented: "aa:bb"), .known)
        XCTAssertThrowsError(try reloaded.check("gamebox:47800", presented: "cc:dd")) { error in
            XCTAssertEqual(error as? TLSError, .fingerprintChanged(host: "gamebox:47800", expected: "aa:bb", got: "cc:dd"))
            XCTAssertTrue("\(error)".contains("padgate hosts forget gamebox:47800"), "the message says how to recover")
        }
    }
}
