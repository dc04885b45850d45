import Glibc

nonisolated(unsafe) private var signalFlag: sig_atomic_t = 0
nonisolated(unsafe) private var signalCleanup: (() -> Void)?

/// SIGINT/SIGTERM end a command through its own loop, so that devices are released in order
/// (virtual pads unplugged, motors stopped) rather than by process death.
enum SignalTrap {
    static var fired: Bool { signalFlag != 0 }

    /// `cleanup` runs only if a second signal arrives while the first is still being handled.
    static func install(cleanup: @escaping () -> Void) {
        signalCleanup = cleanup
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            signal(sig) { _ in
                if signalFlag != 0 { signalCleanup?(); _exit(130) }
                signalFlag = 1
            }
        }
    }
}
