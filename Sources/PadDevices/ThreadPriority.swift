import CLinuxInput

/// CPU priority of the calling thread. padgate runs the work peers can cause (TLS handshakes,
/// pairing) below the input path, so that a flood of it yields the CPU to forwarded input.
public enum ThreadPriority {
    /// The niceness of threads that serve peers rather than input.
    public static let peerWork: Int32 = 10

    /// Sets the calling thread's nice value (only lowering needs no privilege). False if refused.
    @discardableResult
    public static func setNiceness(_ niceness: Int32) -> Bool { padgate_set_thread_niceness(niceness) == 0 }

    /// Runs the calling thread only when no other thread wants the CPU (SCHED_IDLE). For load
    /// that stands in for other machines in a benchmark; never for padgate's own work, which a
    /// busy game would then starve.
    @discardableResult
    public static func onlyWhenIdle() -> Bool { padgate_set_thread_idle_class() == 0 }
}
