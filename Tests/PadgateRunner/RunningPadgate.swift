import Foundation
#if canImport(Glibc)
import Glibc
import MonotonicTime
import PadSystem
#endif

/// A `padgate` process left running, its standard output and error collected together, for tests
/// that signal it or wait for what it prints.
public final class RunningPadgate: Sendable {
    public let process = Process()
    private let pipe = Pipe()
    private let collected = LockedBox(Data())
    private let exited = DispatchSemaphore(value: 0)
    private let exitedAt = LockedBox<MonotonicInstant?>(nil)

    /// `namespace`: run inside that network namespace (`ip netns exec`, which becomes padgate).
    /// `executable`: another program that becomes padgate (as `padgate(executable:)` runs one).
    public init(_ arguments: [String], environment: [String: String] = [:], namespace: String? = nil, executable: URL? = nil) throws {
        if let executable {
            process.executableURL = executable
            process.arguments = arguments
        } else {
            (process.executableURL, process.arguments) = launch(arguments, namespace: namespace)
        }
        process.environment = testEnvironment(environment)
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.collected.update { $0.append(data) }
        }
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            self.exitedAt.update { $0 = .now }
            self.exited.signal()
        }
        try process.run()
    }

    /// Everything printed so far, both streams.
    public var output: String { String(decoding: collected.value, as: UTF8.self) }

    /// Waits until the output contains `text`; false at the deadline or if the process ended first.
    public func waitFor(_ text: String, timeout: Duration) -> Bool {
        let deadline = MonotonicInstant.now + timeout
        while MonotonicInstant.now < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            usleep(10_000)
        }
        return false
    }

    /// Sends `signal` and waits up to `limit` for the exit; the time from signal to exit, or nil
    /// if it was still running (it is then killed).
    public func stop(with signal: Int32, limit: Duration) -> Duration? {
        let sent = MonotonicInstant.now
        kill(process.processIdentifier, signal)
        return waitForExit(since: sent, limit: limit)
    }

    /// Waits up to `limit` for the process to end by itself; the time it took from `since`, or nil.
    public func waitForExit(since: MonotonicInstant = .now, limit: Duration) -> Duration? {
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
        return exitedAt.value.map { $0 - since }
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// How a signalled `padgate` ended.
public struct StopOutcome {
    /// From the signal to the exit; nil if it was still running at the limit (it was killed).
    public var took: Duration?
    /// The signal watchdog, not the command's own loops, ended it.
    public var forcedByWatchdog: Bool
    /// The signal it died of instead of handling the one sent (nil: it exited): the one sent, or
    /// a crash's (SIGILL for a Swift trap, SIGSEGV).
    public var deathSignal: Int32?
    /// What it printed last, for failure messages.
    public var tail: String

    /// Stopped by its own loops within `limit` of the signal.
    public func orderly(within limit: Duration) -> Bool {
        took.map { $0 < limit } == true && !forcedByWatchdog && deathSignal == nil
    }
}

extension RunningPadgate {
    /// Sends `signal` and reports how the command ended.
    public func stopOutcome(after signal: Int32, limit: Duration = .seconds(10)) -> StopOutcome {
        let took = stop(with: signal, limit: limit)
        return StopOutcome(took: took, forcedByWatchdog: output.contains("did not stop within"),
                           deathSignal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil,
                           tail: String(output.suffix(300)))
    }
}

/// A throw-away state directory and home for one test's `padgate` runs.
public final class ScratchState {
    public let url: URL
    public var environment: [String: String] { ["PADGATE_STATE_DIR": url.path, "HOME": url.appendingPathComponent("home").path] }

    public init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("padgate-\(name)-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func appendingPathComponent(_ component: String) -> URL { url.appendingPathComponent(component) }
    public var path: String { url.path }

    deinit { try? FileManager.default.removeItem(at: url) }
}
