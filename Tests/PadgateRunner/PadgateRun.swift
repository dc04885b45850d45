import Foundation
import MonotonicTime
import PadSystem

/// The built `padgate` executable, next to the test bundle.
public var padgateExecutable: URL {
    var url = Bundle(for: PadgateRunnerAnchor.self).bundleURL
    while url.pathExtension == "xctest" || url.lastPathComponent.hasSuffix(".xctest") { url.deleteLastPathComponent() }
    return url.appendingPathComponent("padgate")
}
final class PadgateRunnerAnchor {}

/// iproute2's `ip`, for running padgate inside a network namespace.
public var ipExecutable: URL? {
    ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }.map(URL.init(fileURLWithPath:))
}

/// padgate itself, or `ip netns exec NAMESPACE padgate …` (which execs padgate: same pid, same signals).
func launch(_ arguments: [String], namespace: String?) -> (URL, [String]) {
    guard let namespace, let ip = ipExecutable else { return (padgateExecutable, arguments) }
    return (ip, ["netns", "exec", namespace, padgateExecutable.path] + arguments)
}

/// The environment a test's padgate runs with: this process's, then `environment`. One host per
/// runtime directory (`serve` refuses a directory another host holds), so a run that names no
/// runtime directory gets its state directory's `run` beside it: tests, and other test runs on
/// the machine, never share `/run/padgate` or `$XDG_RUNTIME_DIR/padgate`.
public func testEnvironment(_ environment: [String: String]) -> [String: String] {
    var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    if merged["PADGATE_RUNTIME_DIR"] == nil, let state = merged["PADGATE_STATE_DIR"], !state.isEmpty {
        merged["PADGATE_RUNTIME_DIR"] = URL(fileURLWithPath: state).appendingPathComponent("run").path
    }
    return merged
}

/// A finished `padgate` run: its exit status and both output streams.
public struct PadgateRun {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Ended by a signal (a trap, an abort, or the runner's own kill at the time limit) rather than by exit.
    public var signalled = false
    /// Killed because it was still running at the time limit.
    public var timedOut = false
    /// From start to exit.
    public var elapsed: Duration = .zero
}

/// Runs `padgate` to completion, with `environment` added to this process's; a run still going
/// after `timeLimit` is killed and marked `timedOut`. `executable` runs another program instead
/// (a shell that builds arguments Foundation cannot pass, such as bytes that are not UTF-8).
public func padgate(_ arguments: [String], environment: [String: String] = [:], timeLimit: Duration? = nil,
                    executable: URL? = nil, namespace: String? = nil) throws -> PadgateRun {
    let process = Process()
    if let executable {
        process.executableURL = executable
        process.arguments = arguments
    } else {
        (process.executableURL, process.arguments) = launch(arguments, namespace: namespace)
    }
    process.environment = testEnvironment(environment)
    let out = Pipe()
    process.standardOutput = out
    // Standard error to a file: a second pipe could fill up while we wait on the first.
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-stderr-\(UUID())")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    let errorHandle = try FileHandle(forWritingTo: errors)
    process.standardError = errorHandle
    // Foundation keeps these open as long as the Process lives: close them here, or a test that
    // runs the binary a hundred times leaks hundreds of descriptors into every later child.
    defer {
        try? errorHandle.close()
        try? out.fileHandleForReading.close()
        try? out.fileHandleForWriting.close()
    }
    let started = MonotonicInstant.now
    try process.run()
    let killed = KillSwitch()
    if let timeLimit {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(timeLimit / .milliseconds(1)))) {
            if process.isRunning { killed.fire(); kill(process.processIdentifier, SIGKILL) }
        }
    }
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return PadgateRun(status: process.terminationStatus, stdout: String(decoding: output, as: UTF8.self),
                      stderr: (try? String(contentsOf: errors, encoding: .utf8)) ?? "",
                      signalled: process.terminationReason == .uncaughtSignal, timedOut: killed.fired,
                      elapsed: MonotonicInstant.now - started)
}

private final class KillSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var fired: Bool { lock.withLock { value } }
    func fire() { lock.withLock { value = true } }
}

/// `padgate ARGUMENTS` under the host name `name` (any bytes, as a hostile machine may call itself),
/// in a UTS namespace of its own: the program and arguments for `padgate(executable:)` or
/// `RunningPadgate(executable:)`. The process becomes padgate (same pid, same signals). Nil
/// without root or python3 (the tests then skip loudly).
public func underHostName(_ name: [UInt8], _ arguments: [String]) -> (URL, [String])? {
    let unshare = "/usr/bin/unshare", python = "/usr/bin/python3"
    guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: unshare), FileManager.default.isExecutableFile(atPath: python) else { return nil }
    let hex = name.map { String(format: "%02x", $0) }.joined()
    let program = "import os, socket, sys; socket.sethostname(bytes.fromhex(sys.argv[1])); os.execv(sys.argv[2], sys.argv[2:])"
    return (URL(fileURLWithPath: unshare), ["-u", python, "-c", program, hex, padgateExecutable.path] + arguments)
}
