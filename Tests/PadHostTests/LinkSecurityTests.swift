import LogCapture
import Foundation
import Glibc
import MonotonicTime
import PadClient
import PadDevices
import PadSystem
import Transport
import WireProtocol
import XCTest
@testable import PadHost

/// The link's defences end to end, on loopback with the real TLS, SPAKE2 and AES-GCM code: each
/// attack is refused with the error a person would need, and nothing reaches a virtual pad.
final class LinkSecurityTests: XCTestCase {
    var directory: URL!
    var madePads: LockedList<RecordedPad>!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-security-\(UUID())")
        madePads = LockedList()
    }
    override func tearDown() { try? FileManager.default.removeItem(at: directory) }

    func identity(_ name: String) throws -> TLSIdentity {
        try TLSIdentity(directory: directory.appendingPathComponent(name), commonName: name)
    }

    /// A host on loopback. `pairClient`: the "client" identity is already paired (as after
    /// `padgate pair`). `pin`: pairing is on with this first PIN; `onPIN` sees every later one.
    func startServer(pairClient: Bool = true, pin: String? = nil, policy: PairingGate.Policy = .quickForTests,
                     onPIN: ((String, PairingGate.Rotation) -> Void)? = nil,
                     configure: (inout PadServer.Configuration) -> Void = { _ in }) throws -> RunningServer {
        var configuration = PadServer.Configuration()
        configuration.address = "127.0.0.1"
        configuration.port = 0
        configure(&configuration)
        let made = madePads!
        var paired = try FingerprintStore(url: directory.appendingPathComponent("paired-clients"))
        if pairClient { try paired.remember("client", fingerprint: try identity("client").fingerprint) }
        let server = try PadServer(configuration: configuration, identity: try identity("host"), pairedClients: paired,
                                   makePad: { arrival in let pad = RecordedPad(arrival: arrival); made.append(pad); return pad })
        server.logger = CapturedLog.silent
        if let pin { server.enablePairing(pin: pin, policy: policy) { pin, why in onPIN?(pin, why) } }
        return RunningServer(server)
    }

    /// A forwarder with one scripted pad that holds a button, run until it gives up or 3 s pass.
    func forward(to port: UInt16, knownHosts: KnownHostStore? = nil) throws -> [String] {
        var configuration = PadForwarder.Configuration(host: "127.0.0.1")
        configuration.port = port
        let forwarder = PadForwarder(configuration: configuration, identity: try identity("client"),
                                     knownHosts: try knownHosts ?? KnownHostStore(url: directory.appendingPathComponent("known_hosts")))
        let log = CapturedLog()
        forwarder.logger = log.logger
        forwarder.add(try ScriptedPadSource(script: InputScript(parsing: "press south"), slot: PadSlot(0)))
        let deadline = MonotonicInstant.now + .seconds(3)
        forwarder.run { MonotonicInstant.now >= deadline || !madePads.isEmpty }
        return log.messages
    }

    func pair(_ port: UInt16, pin: String, as name: String = "client") throws {
        let client = try identity(name)
        let connection = try TLSDialer.connect(host: "127.0.0.1", port: port, identity: client)
        try Pairing.pairAsClient(connection, clientIdentity: client, pin: pin, clientName: PeerName(local: name))
    }

    func testAPINIsSingleUseAndWrongGuessesReplaceIt() throws {
        let pins = LockedList<(String, PairingGate.Rotation)>()
        let running = try startServer(pairClient: false, pin: "111111", onPIN: { if $1 != .first { pins.append(($0, $1)) } })
        defer { running.stop() }
        XCTAssertNoThrow(try pair(running.port, pin: "111111", as: "first"))
        let next = try XCTUnwrap(eventually { pins.first }, "a used PIN is replaced")
        XCTAssertEqual(next.1, .used)
        XCTAssertNotEqual(next.0, "111111")
        XCTAssertThrowsError(try pair(running.port, pin: "111111", as: "second"), "a PIN pairs once") {
            XCTAssertEqual($0 as? PairingError, .wrongPIN)
        }
        // Wrong guesses: the third replaces the PIN (quickForTests has no backoff to wait out).
        let wrong = next.0 == "222222" ? "333333" : "222222"
        for _ in 0..<2 { XCTAssertThrowsError(try pair(running.port, pin: wrong, as: "second")) }
        XCTAssertNotNil(eventually { pins.count == 2 ? true : nil })
        XCTAssertEqual(pins.last?.1, .tooManyFailures)
        XCTAssertEqual(pins.last?.0, running.server.pairing?.currentPIN)
        XCTAssertNoThrow(try pair(running.port, pin: try XCTUnwrap(pins.last?.0), as: "second"), "the PIN the host shows now works")
        running.stop()
        let paired = try FingerprintStore(url: directory.appendingPathComponent("paired-clients"))
        XCTAssertEqual(paired.entries.count, 2, "only the right PINs stored clients")
    }

    func testAnUnpairedClientIsRefusedByDefault() throws {
        let running = try startServer(pairClient: false, pin: "123456")
        defer { running.stop() }
        let log = try forward(to: running.port)
        XCTAssertTrue(log.contains { $0.contains("accepts only paired clients") && $0.contains("padgate pair") }, "\(log)")
        XCTAssertTrue(madePads.isEmpty, "an unpaired client's pad reached the host")

        try pair(running.port, pin: "123456")
        _ = try forward(to: running.port)
        XCTAssertNotNil(eventually { madePads.first }, "once paired, the same client is accepted")
    }

    func testAChangedHostIdentityIsRefused() throws {
        let running = try startServer()
        defer { running.stop() }
        var knownHosts = try KnownHostStore(url: directory.appendingPathComponent("known_hosts"))
        let old = String(repeating: "ab:", count: 31) + "ab"
        try knownHosts.pin(fingerprint: old, name: "127.0.0.1", address: "127.0.0.1:\(running.port)")
        let log = try forward(to: running.port, knownHosts: knownHosts)
        XCTAssertTrue(log.contains { $0.contains("has changed") && $0.contains(old) && $0.contains("padgate hosts forget 127.0.0.1:\(running.port)") }, "\(log)")
        XCTAssertTrue(madePads.isEmpty, "a pad was forwarded to a host whose identity changed")
    }

    func testForgedReplayedAndTruncatedDatagramsReachNoPad() throws {
        let running = try startServer()
        defer { running.stop() }
        let link = try RawClient(port: running.port, identity: try identity("client"))
        let slot = PadSlot(0)
        func state(_ sequence: UInt16, _ buttons: UInt32) -> WireMessage {
            .state(PadStateSnapshot(slot: slot, sequence: WireSequence(sequence), buttons: buttons))
        }
        link.send(link.seal([.arrival(PadArrival(slot: slot, type: .dualSense, vendorID: 0x054c, productID: 0x0ce6, capabilities: [], name: "pad")), state(1, 1)]))
        let pad = try XCTUnwrap(eventually { madePads.first }, "a genuine client's pad")
        XCTAssertNotNil(eventually { pad.state.buttons == 1 ? true : nil })
        let pressEast = link.seal([state(2, 2)])
        link.send(pressEast)
        XCTAssertNotNil(eventually { pad.state.buttons == 2 ? true : nil })
        link.send(link.seal([state(3, 0)]))
        XCTAssertNotNil(eventually { pad.state.buttons == 0 ? true : nil })

        link.send(pressEast)                                           // replayed
        var flipped = link.seal([state(4, 4)]); flipped[flipped.count - 20] ^= 0x01
        link.send(flipped)                                             // tampered ciphertext
        let stranger = try RawClient.sealer(session: link.session)     // right session, wrong key
        for _ in 0..<20 { _ = RawClient.seal([state(0, 0)], with: stranger) }  // past the window, so it is judged by its tag
        link.send(RawClient.seal([state(5, 8)], with: stranger))
        link.send(Array(link.seal([state(6, 16)]).prefix(20)))         // truncated
        link.send(Array(link.seal([state(7, 32)]).prefix(DatagramFormat.headerSize + 3)))
        // A genuine datagram afterwards still works: the attacks cost nothing but the dropped packets.
        link.send(link.seal([state(8, 64)]))
        XCTAssertNotNil(eventually { pad.state.buttons == 64 ? true : nil })
        running.stop()

        XCTAssertEqual(pad.history.map(\.buttons), [1, 2, 0, 64, 0], "only genuine, fresh states reached the pad (and the release at disconnect)")
        let rejected = running.server.statistics.datagramsRejected
        XCTAssertEqual(rejected[.replayed], 1)
        XCTAssertEqual(rejected[.forged], 2)
        XCTAssertEqual(rejected[.truncated], 2, "\(rejected)")
    }
}

/// A client that speaks the control protocol by hand, so a test can craft its datagrams.
final class RawClient {
    let connection: TLSConnection
    let session: UInt32
    let sealer: DatagramSealer
    let socket: Socket
    let peer: SocketAddress

    init(port: UInt16, identity: TLSIdentity, from address: String? = nil) throws {
        connection = try TLSDialer.connect(host: "127.0.0.1", port: port, identity: identity, from: address)
        try connection.send(ControlMessage.hello(version: ControlMessage.protocolVersion, clientName: PeerName(local: "raw")).encoded())
        let answer = try ControlMessage(decoding: connection.receive())
        if case .refused(let reason) = answer { throw TLSError.refused(reason) }
        guard case .welcome(let session, _, _, _) = answer else { throw TLSError.io("no welcome") }
        self.session = session
        sealer = try DatagramSealer(keys: try ControlMessage.datagramKeys(connection).clientToHost, session: session)
        socket = try DatagramLink.bindSocket(address: "127.0.0.1")
        peer = try SocketAddress(ip: "127.0.0.1", port: port)
    }

    static func sealer(session: UInt32) throws -> DatagramSealer {
        try DatagramSealer(keys: DirectionKeys(key: (0..<32).map { _ in UInt8.random(in: 0...255) }, iv: [UInt8](repeating: 7, count: 12)), session: session)
    }

    func seal(_ messages: [WireMessage]) -> [UInt8] { Self.seal(messages, with: sealer) }

    static func seal(_ messages: [WireMessage], with sealer: DatagramSealer) -> [UInt8] {
        var outbox = OutgoingPayloads(), out = [UInt8](repeating: 0, count: 1500), sealed: [UInt8] = []
        for message in messages { outbox.append(message) }
        outbox.drain { payload in
            let n = out.withUnsafeMutableBytes { (try? sealer.seal(payload, into: $0)) ?? 0 }
            sealed = Array(out[0..<n])
        }
        return sealed
    }

    /// A payload of the caller's own bytes (version byte and messages), sealed as this session's.
    func sealRaw(_ payload: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 2048)
        let n = payload.withUnsafeBytes { bytes in out.withUnsafeMutableBytes { (try? sealer.seal(bytes, into: $0)) ?? 0 } }
        return Array(out[0..<n])
    }

    func send(_ datagram: [UInt8]) {
        sendNow(datagram)
        usleep(20_000)  // in order, so that the replay is the replay
    }

    func sendNow(_ datagram: [UInt8]) {
        _ = datagram.withUnsafeBytes { try? socket.send($0, to: peer) }
    }
}

/// A server on its own thread, as `padgate serve` runs it.
final class RunningServer {
    let server: PadServer
    let port: UInt16
    private let stopped = LockedList<Bool>()
    private var thread: Thread!

    init(_ server: PadServer) {
        self.server = server
        port = server.port
        let stopped = self.stopped
        thread = Thread { server.run(tick: .milliseconds(20)) { !stopped.isEmpty } }
        thread.stackSize = 1 << 20
        thread.start()
    }

    func stop() {
        if stopped.isEmpty { stopped.append(true) }
        while !thread.isFinished { usleep(5_000) }
    }
}

extension PairingGate.Policy {
    /// The real rules without their waits, for tests that pair several times in a row.
    static var quickForTests: PairingGate.Policy {
        var policy = PairingGate.Policy()
        policy.burst = 100
        policy.backoffBase = .milliseconds(1)
        policy.maxBackoff = .milliseconds(1)
        return policy
    }
}

final class LockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    var first: Element? { lock.withLock { items.first } }
    var last: Element? { lock.withLock { items.last } }
    var count: Int { lock.withLock { items.count } }
    var isEmpty: Bool { lock.withLock { items.isEmpty } }
    var all: [Element] { lock.withLock { items } }
}

func eventually<T>(timeout: Duration = .seconds(5), _ condition: () -> T?) -> T? {
    let deadline = MonotonicInstant.now + timeout
    repeat {
        if let value = condition() { return value }
        usleep(10_000)
    } while MonotonicInstant.now < deadline
    return nil
}
