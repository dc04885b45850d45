import Foundation
import Glibc
import MonotonicTime
import PadgateRunner
import XCTest

/// `padgate serve`, `pair` and `forward` as a person runs them, with in-process virtual pads (no
/// device needed): pairing by the PIN the host prints, limits checked when the command is parsed,
/// and a host out of file descriptors that neither spins nor floods its log.
final class ServeCommandTests: XCTestCase {
    var state: URL!
    override func setUp() { state = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-serve-\(UUID())") }
    override func tearDown() { try? FileManager.default.removeItem(at: state) }
    var environment: [String: String] { ["PADGATE_STATE_DIR": state.path] }

    func testLimitsAreValidatedWhenParsed() throws {
        for arguments in [["--max-pads", "300"], ["--max-pads", "-1"], ["--max-pads", "0"], ["--max-clients", "0"], ["--pad-grace", "2"]] {
            let run = try padgate(["serve", "--virtual", "in-process"] + arguments, environment: environment)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")  // ArgumentParser's usage error
            XCTAssertTrue(run.stderr.contains(arguments[0]), run.stderr)
        }
    }

    func testPairingByThePrintedPINThenForwarding() throws {
        let port = 28_100 + Int.random(in: 0..<400)
        let serve = try Background(["serve", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", "in-process", "--pair", "--duration", "30"],
                                   environment: environment)
        defer { serve.stop() }
        let pinLine = try XCTUnwrap(serve.waitForLine { $0.contains("pairing PIN") }, serve.output)
        let pin = try XCTUnwrap(pinLine.split(separator: " ").first { $0.count == 6 && $0.allSatisfy(\.isNumber) }.map(String.init))

        // Not yet paired: refused with what to do.
        let early = try padgate(["forward", "127.0.0.1:\(port)", "--duration", "3", "--quiet"], environment: environment)
        XCTAssertTrue(early.stderr.contains("accepts only paired clients") && early.stderr.contains("padgate pair"), early.stderr)

        let paired = try padgate(["pair", "127.0.0.1:\(port)", "--pin", pin], environment: environment)
        XCTAssertEqual(paired.status, 0, paired.stderr)
        XCTAssertNotNil(serve.waitForLine { $0.contains("the PIN was used; next pairing PIN") }, "a PIN pairs once: \(serve.output)")
        let again = try padgate(["pair", "127.0.0.1:\(port)", "--pin", pin], environment: environment)
        XCTAssertNotEqual(again.status, 0, "the used PIN no longer pairs")
        XCTAssertTrue(again.stderr.contains("wrong PIN"), again.stderr)
        let soon = try padgate(["pair", "127.0.0.1:\(port)", "--pin", pin], environment: environment)
        XCTAssertTrue(soon.stderr.contains("too many pairing attempts; try again in"), "a wrong guess makes its address wait: \(soon.stderr)")

        let forward = try padgate(["forward", "127.0.0.1:\(port)", "--duration", "2", "--quiet"], environment: environment)
        XCTAssertTrue(forward.stderr.contains("connected to 127.0.0.1:\(port)"), forward.stderr)
        XCTAssertNotNil(serve.waitForLine { $0.contains("connected from 127.0.0.1") }, serve.output)

        for file in ["paired-clients", "host/key.pem"] {
            let mode = try FileManager.default.attributesOfItem(atPath: state.appendingPathComponent(file).path)[.posixPermissions] as? Int
            XCTAssertEqual(mode, 0o600, "\(file) is the owner's alone")
        }
    }

    func testOutOfFileDescriptorsTheHostBacksOffInsteadOfSpinning() throws {
        let port = 28_500 + Int.random(in: 0..<400)
        // 48 descriptors: the host's own and a few connections, then accept(2) fails with EMFILE.
        let serve = try Background(["/bin/sh", "-c", "ulimit -n 48 && exec \"$0\" \"$@\"", padgateExecutable.path,
                                    "serve", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", "in-process",
                                    "--accept-unpaired-clients", "--max-pending", "200", "--duration", "20"],
                                   environment: environment, executable: URL(fileURLWithPath: "/bin/sh"))
        defer { serve.stop() }
        XCTAssertNotNil(serve.waitForLine { $0.contains("listening on") }, serve.output)
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for i in 0..<80 {  // from 20 addresses, within the per-address limits, so that descriptors run out first
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr("127.0.10.\(i % 20 + 1)")
            _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = UInt16(port).bigEndian
            remote.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            held.append(fd)
        }
        let before = serve.cpuSeconds
        Thread.sleep(forTimeInterval: 3)
        let spent = serve.cpuSeconds - before
        XCTAssertLessThan(spent, 0.6, "the host spun on accept for \(spent) s of 3 s")
        XCTAssertTrue(serve.output.contains("pausing accepts"), serve.output)
        XCTAssertLessThan(serve.output.utf8.count, 20_000, "the log stays small")
        held.forEach { close($0) }
        held.removeAll()
        // Once the descriptors are back, a client is served again.
        let forward = try padgate(["forward", "127.0.0.1:\(port)", "--duration", "3", "--quiet"], environment: environment)
        XCTAssertTrue(forward.stderr.contains("connected to 127.0.0.1:\(port)"), forward.stderr + "\nhost:\n" + serve.output)
    }

    /// A relative PADGATE_RUNTIME_DIR is refused by serve and by `host`, not silently replaced.
    func testARelativeRuntimeDirectoryIsRefused() throws {
        var relative = environment
        relative["PADGATE_RUNTIME_DIR"] = "run/padgate"
        let serve = try padgate(["serve", "--address", "127.0.0.1", "--port", "0", "--duration", "5"], environment: relative, timeLimit: .seconds(30))
        XCTAssertEqual(serve.status, 1, serve.stderr)
        XCTAssertTrue(serve.stderr.contains("PADGATE_RUNTIME_DIR='run/padgate' is not an absolute path"), serve.stderr)
        XCTAssertFalse(serve.stderr.contains("listening on"), serve.stderr)
        let status = try padgate(["host", "status"], environment: relative, timeLimit: .seconds(30))
        XCTAssertEqual(status.status, 1, status.stderr)
        XCTAssertTrue(status.stderr.contains("is not an absolute path"), status.stderr)
    }

    /// A host that stalls, or dies, in the middle of a link test: the test reports what it measured
    /// until then and says how it ended, instead of throwing it all away.
    func testProbeReportsWhatItMeasuredWhenTheHostStallsOrDies() throws {
        for (signal, ending) in [(SIGSTOP, "the host stopped answering"), (SIGKILL, "the connection was closed")] {
            let port = 28_500 + Int.random(in: 400..<500)
            let host = try RunningPadgate(["serve", "--address", "127.0.0.1", "--port", "\(port)", "--virtual", "in-process", "--accept-unpaired-clients"],
                                          environment: environment)
            defer { kill(host.process.processIdentifier, SIGCONT); _ = host.stopOutcome(after: SIGTERM) }
            XCTAssertTrue(host.waitFor("listening on", timeout: .seconds(30)), host.output)
            let probe = try RunningPadgate(["probe", "127.0.0.1:\(port)", "--seconds", "60"], environment: environment)
            XCTAssertTrue(host.waitFor("connected from", timeout: .seconds(30)), host.output + probe.output)
            // Measuring: the host has answered pings (its own count, through its control socket).
            let measuring = MonotonicInstant.now + .seconds(30)
            func received() -> Int {
                let status = try? padgate(["host", "status", "--json"], environment: environment, timeLimit: .seconds(30))
                let object = status.flatMap { try? JSONSerialization.jsonObject(with: Data($0.stdout.utf8)) as? [String: Any] }
                return ((object?["sessions"] as? [[String: Any]])?.first?["datagrams_received"] as? Int) ?? 0
            }
            while received() < 20, MonotonicInstant.now < measuring { usleep(100_000) }
            kill(host.process.processIdentifier, signal)
            XCTAssertNotNil(probe.waitForExit(limit: .seconds(30)), "probe kept waiting on a lost host: \(probe.output)")
            XCTAssertEqual(probe.process.terminationStatus, 1, probe.output)
            let answered = probe.output.components(separatedBy: " probes sent, ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            XCTAssertGreaterThan(answered ?? 0, 0, "the answers before the end are reported: \(probe.output)")
            XCTAssertTrue(probe.output.contains("round trip  p50"), probe.output)
            XCTAssertTrue(probe.output.contains("the test ended early after"), probe.output)
            XCTAssertTrue(probe.output.contains(ending), "\(signal): \(probe.output)")
        }
    }
}

/// A padgate (or shell) process in the background, its standard error collected in a file.
final class Background {
    let process = Process()
    let log: URL

    init(_ arguments: [String], environment: [String: String], executable: URL = padgateExecutable) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-bg-\(UUID())")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = executable
        process.arguments = executable == padgateExecutable ? arguments : Array(arguments.dropFirst())
        process.environment = testEnvironment(environment)
        let handle = try FileHandle(forWritingTo: log)
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
    }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    func waitForLine(timeout: TimeInterval = 10, _ match: (String) -> Bool) -> String? {
        let end = Date().addingTimeInterval(timeout)
        repeat {
            if let line = output.split(separator: "\n").map(String.init).first(where: match) { return line }
            usleep(20_000)
        } while Date() < end
        return nil
    }

    /// User plus system CPU time, from /proc.
    var cpuSeconds: Double { ProcessUsage.cpuSeconds(process.processIdentifier) }

    func stop() {
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: log)
    }
}
