import Foundation
import Glibc

/// Process-wide signal dispositions.
public enum Signals {
    /// OpenSSL writes to sockets with write(2): a peer that has gone would kill the process with
    /// SIGPIPE instead of giving an error padgate can handle. Any TLS use turns that signal off.
    public static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN); return () }()
}

nonisolated(unsafe) private var signalFlag: sig_atomic_t = 0
nonisolated(unsafe) private var signalCleanup: (() -> Void)?
nonisolated(unsafe) private var signalPipe: WakePipe?

/// SIGINT/SIGTERM/SIGHUP end a command through its own loop, so that devices are released in
/// order (virtual pads unplugged, motors stopped) rather than by process death. Every loop watches
/// `descriptor` or `fired`; a command that is still running `orderlyStopLimit` after the first
/// signal is a bug, and the watchdog then runs the cleanup and exits, so the promise of stopping
/// within a second (systemd's, and a person's at Ctrl-C) holds whatever a loop is doing.
public enum SignalTrap {
    public static var fired: Bool { signalFlag != 0 }
    /// Whether a command asked for signals to end its loops (until then the default applies).
    public static var installed: Bool { signalPipe != nil }

    /// From the first signal to the watchdog's forced exit: under a second, with room for it.
    /// `$PADGATE_STOP_LIMIT_MS` (100-10000) stretches it for the device tests' emulated machine,
    /// which runs 10-25 times slower than hardware (docs/command-line.md, "Signals").
    public static let orderlyStopLimit: Duration = {
        let configured = ProcessInfo.processInfo.environment["PADGATE_STOP_LIMIT_MS"].flatMap(Int.init)
        return .milliseconds(configured.map { min(max($0, 100), 10_000) } ?? 800)
    }()
    /// What the watchdog says before it forces the exit; tests look for its start.
    public static let forcedStopMessage = "did not stop within \(orderlyStopLimit) of the signal; motors stopped and exiting now"

    /// Readable once a signal has arrived: loops put it in their poll set and wake at once, instead
    /// of noticing the signal at their next timeout.
    public static var descriptor: FileDescriptor { signalPipe?.descriptor ?? FileDescriptor(rawValue: -1) }

    /// `cleanup` (motors to zero, pads unplugged) runs if the process must stop without its loops:
    /// a second signal, or the watchdog. It must be safe to call from another thread.
    public static func install(cleanup: @escaping () -> Void) {
        signalCleanup = cleanup
        guard signalPipe == nil else { return }
        signalPipe = WakePipe()
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig) { _ in
                if signalFlag != 0 { signalCleanup?(); _exit(130) }
                signalFlag = 1
                signalPipe?.wake()  // one write(2): async-signal-safe
            }
        }
        let watchdog = Thread {
            while !fired { _ = Poll.wait([descriptor], timeout: nil) }
            Thread.sleep(forTimeInterval: Double(orderlyStopLimit / .milliseconds(1)) / 1000)
            // Straight to stderr with one write(2): the logger's lock may be held by the stuck loop.
            let line = Array("padgate: \(forcedStopMessage)\n".utf8)
            _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            signalCleanup?()
            _exit(130)
        }
        watchdog.name = "padgate signal watchdog"
        watchdog.start()
    }

    /// Sleeps for `duration` or until a signal, whichever comes first; true if a signal came.
    @discardableResult
    public static func sleep(_ duration: Duration) -> Bool {
        if fired { return true }
        if duration > .zero { _ = Poll.wait([descriptor], timeout: duration) }
        return fired
    }
}
