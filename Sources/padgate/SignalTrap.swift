import Glibc
import PadDevices

nonisolated(unsafe) private var signalFlag: sig_atomic_t = 0
nonisolated(unsafe) private var signalCleanup: (() -> Void)?
nonisolated(unsafe) private var signalPipe: WakePipe?

/// SIGINT/SIGTERM end a command through its own loop, so that devices are released in order
/// (virtual pads unplugged, motors stopped) rather than by process death.
enum SignalTrap {
    static var fired: Bool { signalFlag != 0 }

    /// Readable once a signal has arrived: loops put it in their poll set and wake at once, instead
    /// of noticing the signal at their next timeout.
    static var descriptor: Int32 { signalPipe?.descriptor ?? -1 }

    /// `cleanup` runs only if a second signal arrives while the first is still being handled.
    static func install(cleanup: @escaping () -> Void) {
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
    static func sleep(_ duration: Duration) -> Bool {
        if fired { return true }
        if duration > .zero { _ = Poll.wait([descriptor], timeout: duration) }
        return fired
    }
}
