import Foundation
import Glibc
import PadgateRunner
import XCTest

/// The long-running commands that need no device stop within a second of the first SIGINT or
/// SIGTERM whatever they are doing, through their own loops (the watchdog that forces an exit
/// must not be what stopped them), and end by themselves at --duration. The commands that need a
/// pad are signalled in the device tests (DeviceTests/SignalStopDeviceTests.swift).
final class SignalStopTests: XCTestCase {
    /// The promise: stopped within a second of the first signal.
    static let stopLimit: Duration = .seconds(1)
    /// Start-up on a loaded machine (identities are made, sockets bound) before the signal is sent.
    static let startLimit: Duration = .seconds(30)

    var scratch: ScratchState!
    var environment: [String: String] { scratch.environment }

    override func setUpWithError() throws { scratch = try ScratchState("signal") }
    override func tearDown() { scratch = nil }

    private func assertStops(_ running: RunningPadgate, with signal: Int32, _ what: String, line: UInt = #line) {
        let outcome = running.stopOutcome(after: signal)
        XCTAssertTrue(outcome.orderly(within: Self.stopLimit), "\(what): \(outcome)", line: line)
        XCTAssertFalse(running.output.contains("Fatal error"), "\(what): \(outcome.tail)", line: line)
    }

    func testServeStopsOnTheFirstSignal() throws {
        for signal in [SIGTERM, SIGINT] {
            let serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "0"], environment: environment)
            XCTAssertTrue(serve.waitFor("listening on", timeout: Self.startLimit), serve.output)
            assertStops(serve, with: signal, "serve, signal \(signal)")
        }
    }

    /// A forward whose host accepts TCP and then says nothing holds it in the TLS handshake, the
    /// longest wait the client has (its deadline is seconds): the signal must cut it short.
    func testForwardStopsOnTheFirstSignalInTheMiddleOfAHandshake() throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(listener.port)", "--quiet"], environment: environment)
        XCTAssertTrue(listener.waitForConnection(timeout: Self.startLimit), "forward never connected: \(forward.output)")
        usleep(200_000)  // well inside the handshake's deadline
        assertStops(forward, with: SIGTERM, "forward in a TLS handshake")
    }

    func testForwardStopsOnTheFirstSignalWhileItWaitsToReconnect() throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()  // nothing listens there now: connection refused, then backoff
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(port)"], environment: environment)
        XCTAssertTrue(forward.waitFor("reconnecting in", timeout: Self.startLimit), forward.output)
        assertStops(forward, with: SIGINT, "forward between attempts")
    }

    func testDemoStopsOnTheFirstSignalAndEndsByItselfAtItsDuration() throws {
        let demo = try RunningPadgate(["demo", "--devices", "in-process", "--duration", "600"], environment: environment)
        XCTAssertTrue(demo.waitFor("padgate demo: host on", timeout: Self.startLimit), demo.output)
        usleep(500_000)
        assertStops(demo, with: SIGTERM, "demo")
        XCTAssertTrue(demo.output.contains("datagrams sent"), "the demo's summary: \(demo.output.suffix(300))")

        let timed = try RunningPadgate(["demo", "--devices", "in-process", "--duration", "1"], environment: environment)
        XCTAssertTrue(timed.waitFor("padgate demo: host on", timeout: Self.startLimit), timed.output)
        let ended = timed.waitForExit(limit: Self.startLimit)
        XCTAssertNotNil(ended, "demo --duration 1 did not end by itself")
        XCTAssertEqual(timed.process.terminationStatus, 0, timed.output.suffix(300).description)
    }

    func testServeAndForwardEndByThemselvesAtTheirDuration() throws {
        let serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "1"], environment: environment)
        XCTAssertNotNil(serve.waitForExit(limit: Self.startLimit), "serve --duration 1 did not end by itself")
        XCTAssertEqual(serve.process.terminationStatus, 0, serve.output)
        let listener = try SilentListener()
        defer { listener.close() }
        // Even while a handshake is under way, --duration ends it.
        let forward = try RunningPadgate(["forward", "127.0.0.1:\(listener.port)", "--duration", "1"], environment: environment)
        XCTAssertNotNil(forward.waitForExit(limit: Self.startLimit), "forward --duration 1 did not end by itself")
        XCTAssertFalse(forward.output.contains("did not stop within"), forward.output)
    }
}

/// A TCP port that accepts connections into its backlog and never answers: a host that hangs.
final class SilentListener {
    let socket: Int32
    let port: UInt16

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 8) == 0 else { Glibc.close(socket); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// True once a client's connection is waiting in the backlog (it is accepted and left silent).
    func waitForConnection(timeout: Duration) -> Bool {
        var pollfd = Glibc.pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollfd, 1, Int32(timeout / .milliseconds(1)))
        guard ready == 1 else { return false }
        let accepted = accept(socket, nil, nil)
        if accepted >= 0 { held.append(accepted) }
        return accepted >= 0
    }

    private var held: [Int32] = []

    func close() {
        for fd in held { Glibc.close(fd) }
        held = []
        Glibc.close(socket)
    }
}
