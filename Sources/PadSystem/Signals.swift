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
/// order (virtual pads unplugged, motors stopped) rather than by process death.
public enum SignalTrap {
    public static var fired: Bool { signalFlag != 0 }

    /// Readable once a signal has arrived: loops put it in their poll set and wake at once, instead
    /// of noticing the signal at their next timeout.
    public static var descriptor: FileDescriptor { signalPipe?.descriptor ?? FileDescriptor(rawValue: -1) }

    /// `cleanup` runs only if a second signal arrives while the first is still being handled.
    public static func install(cleanup: @escaping () -> Void) {
        signalCleanup = cleanup
        if signalPipe == nil { signalPipe = WakePipe() }
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig) { _ in
                if signalFlag != 0 { signalCleanup?(); _exit(130) }
                signalFlag = 1
                signalPipe?.wake()  // one write(2): async-signal-safe
            }
        }
    }

    /// Sleeps for `duration` or until a signal, whichever comes first; true if a signal came.
    @discardableResult
    public static func sleep(_ duration: Duration) -> Bool {
        if fired { return true }
        if duration > .zero { _ = Poll.wait([descriptor], timeout: duration) }
        return fired
    }
}
