import Foundation
import Glibc
import MonotonicTime
import PadSystem
import PadgateRunner
import XCTest

/// `serve` under a service manager (Type=notify, WatchdogSec=): the sd_notify datagrams the built
/// binary sends to `$NOTIFY_SOCKET`, read as systemd reads them.
final class ServiceNotifyTests: XCTestCase {
    func testServeSaysReadyFeedsTheWatchdogAndSaysStopping() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-notify-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notify").path
        let socket = try boundDatagramSocket(at: path)
        defer { close(socket) }

        // WATCHDOG_USEC 400 ms: a ping every 200 ms at most, so two seconds hold several.
        let serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "2"],
                                       environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000",
                                                     "PADGATE_STATE_DIR": directory.appendingPathComponent("state").path])
        var messages: [String] = []
        let deadline = MonotonicInstant.now + .seconds(30)
        while MonotonicInstant.now < deadline, !messages.contains(where: { $0.contains("STOPPING=1") }) {
            var pollfd = Glibc.pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&pollfd, 1, 200) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[..<count], as: UTF8.self)) }
        }
        XCTAssertNotNil(serve.waitForExit(limit: .seconds(30)), "serve --duration 2 did not end")
        let ready = try XCTUnwrap(messages.firstIndex { $0.hasPrefix("READY=1") }, "no READY=1 among \(messages)")
        XCTAssertTrue(messages[ready].contains("STATUS=listening on 127.0.0.1 port "), messages[ready])
        XCTAssertTrue(serve.output.contains("listening on"), "READY comes once the host listens: \(serve.output)")
        let pings = messages.filter { $0 == "WATCHDOG=1" }.count
        XCTAssertGreaterThanOrEqual(pings, 3, "the input loop fed the watchdog \(pings) times in 2 s: \(messages)")
        XCTAssertEqual(messages.last, "STOPPING=1", "\(messages)")
    }

    func testWithoutAServiceManagerServeSendsNothing() throws {
        // No NOTIFY_SOCKET: nothing to send to, and nothing fails.
        let run = try padgate(["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "0.5"],
                              environment: ["NOTIFY_SOCKET": "", "PADGATE_STATE_DIR": FileManager.default.temporaryDirectory
                                .appendingPathComponent("padgate-notify-\(UUID())").path], timeLimit: .seconds(30))
        XCTAssertEqual(run.status, 0, run.stderr)
    }

    /// Under systemd, stderr is the journal's stream: every line carries its syslog priority so
    /// journald files it at the right level; `--log-level` drops what is below it.
    func testJournalLinesCarryTheirPriorityAndTheLevelFilters() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-journal-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func serve(_ extra: [String]) throws -> String {
            let log = directory.appendingPathComponent("stderr-\(extra.count)")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            var info = stat()
            XCTAssertEqual(stat(log.path, &info), 0)
            let process = Process()
            process.executableURL = padgateExecutable
            process.arguments = ["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "0.5"] + extra
            process.environment = testEnvironment(
                ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)", "PADGATE_STATE_DIR": directory.appendingPathComponent("state").path])
            let handle = try FileHandle(forWritingTo: log)
            defer { try? handle.close() }
            process.standardError = handle
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0)
            return try String(contentsOf: log, encoding: .utf8)
        }
        let lines = try serve([]).split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("<6>padgate serve: listening on") }, "\(lines)")
        XCTAssertTrue(lines.allSatisfy { $0.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil }, "every line has a priority: \(lines)")
        let quiet = try serve(["--log-level", "warning"])
        XCTAssertFalse(quiet.contains("listening on"), "info lines are dropped at --log-level warning: \(quiet)")
    }

    /// Ready means ready (issue 38): the moment `serve` says READY=1, its network port and its
    /// control socket both accept. Started many times, since the window it closes was a race:
    /// before, 18 of 20 connections to control.sock made at READY were refused.
    func testEveryListenerAcceptsTheMomentServeSaysReady() throws {
        let state = try ScratchState("ready")
        let runtime = state.appendingPathComponent("run")
        let notifyPath = state.appendingPathComponent("notify").path
        let notify = try boundDatagramSocket(at: notifyPath)
        defer { close(notify) }
        for run in 1...20 {
            try? FileManager.default.removeItem(at: runtime)
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            let serve = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "0", "--virtual", "in-process"],
                                           environment: state.environment.merging(["NOTIFY_SOCKET": notifyPath,
                                                                                   "PADGATE_RUNTIME_DIR": runtime.path]) { $1 })
            defer { _ = serve.stopOutcome(after: SIGTERM) }
            // Blocks until the datagram arrives, then connects at once: no polling delay between.
            guard let ready = readyMessage(from: notify, within: .seconds(30)) else {
                return XCTFail("run \(run): no READY=1 within 30 s: \(serve.output)")
            }
            let control = Result { try LocalSocket.connect(to: runtime.appendingPathComponent("control.sock").path) }
            let port = try XCTUnwrap(ready.split(separator: " ").last.flatMap { UInt16($0.prefix { $0.isNumber }) }, ready)
            let network = tcpConnect(port: port)
            if case .failure(let error) = control { XCTFail("run \(run): control.sock refused at READY=1: \(error)") }
            XCTAssertEqual(network, 0, "run \(run): port \(port) refused at READY=1 (errno \(network))")
            XCTAssertTrue(serve.output.contains("listening on") || serve.waitFor("listening on", timeout: .seconds(5)), serve.output)
            if case .failure = control { return }
        }
    }

    private func boundDatagramSocket(at path: String) throws -> Int32 {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(socket, 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, "bind \(path)")
        return socket
    }

    /// The next READY=1 datagram's text, skipping any other message.
    private func readyMessage(from socket: Int32, within limit: Duration) -> String? {
        let deadline = MonotonicInstant.now + limit
        while MonotonicInstant.now < deadline {
            var pollfd = Glibc.pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&pollfd, 1, 200) == 1 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let message = String(decoding: buffer[..<count], as: UTF8.self)
            if message.hasPrefix("READY=1") { return message }
        }
        return nil
    }

    /// 0 when a TCP connection to 127.0.0.1:`port` is accepted, else the errno.
    private func tcpConnect(port: UInt16) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0 ? 0 : errno
    }
}
