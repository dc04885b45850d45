import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `padgate` process left running, its standard output and error collected together, for tests
/// that signal it or wait for what it prints.
public final class RunningPadgate {
    public let process = Process()
    private let pipe = Pipe()
    private let lock = NSLock()
    private var collected = Data()
    private let exited = DispatchSemaphore(value: 0)
    private let exitLock = NSLock()
    private var exitedAt: ContinuousClock.Instant?

    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = padgateExecutable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.collected.append(data) }
        }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            self.exitLock.withLock { self.exitedAt = .now }
            self.exited.signal()
        }
        try process.run()
    }

    /// Everything printed so far, both streams.
    public var output: String { lock.withLock { String(decoding: collected, as: UTF8.self) } }

    /// Waits until the output contains `text`; false at the deadline or if the process ended first.
    public func waitFor(_ text: String, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            usleep(10_000)
        }
        return false
    }

    /// Sends `signal` and waits up to `limit` for the exit; the time from signal to exit, or nil
    /// if it was still running (it is then killed).
    public func stop(with signal: Int32, limit: Duration) -> Duration? {
        let sent = ContinuousClock.now
        kill(process.processIdentifier, signal)
        return waitForExit(since: sent, limit: limit)
    }

    /// Waits up to `limit` for the process to end by itself; the time it took from `since`, or nil.
    public func waitForExit(since: ContinuousClock.Instant = .now, limit: Duration) -> Duration? {
        let milliseconds = Int(max(.zero, since + limit - .now) / .milliseconds(1))
        guard exited.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else {
            process.terminate()
            process.waitUntilExit()
            return nil
        }
        exited.signal()  // a second wait returns at once
        process.waitUntilExit()
        usleep(50_000)  // the last output
        pipe.fileHandleForReading.readabilityHandler = nil
        return exitLock.withLock { exitedAt.map { $0 - since } }
    }

    deinit { if process.isRunning { process.terminate() } }
}
