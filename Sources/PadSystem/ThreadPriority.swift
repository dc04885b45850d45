import CLinuxInput

/// CPU priority of the calling thread. padgate runs the work peers can cause (TLS handshakes,
/// pairing) below the input path, so that a flood of it yields the CPU to forwarded input.
public enum ThreadPriority {
    /// The niceness of threads that serve peers rather than input.
    public static let peerWork: Int32 = 10

    /// Sets the calling thread's nice value (only lowering needs no privilege). False if refused.
    @discardableResult
    public static func setNiceness(_ niceness: Int32) -> Bool { padgate_set_thread_niceness(niceness) == 0 }

    /// The real-time priority of the threads that carry input (forward's loop, serve's input
    /// path): low, so the kernel's threaded interrupt handlers (50) still come first.
    public static let input: Int32 = 10

    /// Runs `body`, which carries input, on a thread that preempts ordinary ones (a game's, the
    /// desktop's) as soon as a report wakes it: SCHED_FIFO at `input`, where the process may
    /// (root, CAP_SYS_NICE, or an RLIMIT_RTPRIO such as PipeWire's and rtkit's setups grant);
    /// elsewhere as it is. Threads started meanwhile get the default policy, and the thread gets
    /// its own back afterwards (a caller's thread lives on). The loops it is for only wait in
    /// poll(2) between bounded passes; the kernel's real-time throttling (95 % of each second)
    /// bounds them even so. docs/latency.md has what it buys.
    public static func raisedForInput<T>(_ body: () throws -> T) rethrows -> T {
        var priority: Int32 = 0
        let policy = padgate_get_thread_scheduler(&priority)
        guard policy >= 0, padgate_set_thread_realtime(input) == 0 else { return try body() }
        defer { padgate_set_thread_scheduler(policy, priority) }
        return try body()
    }

    /// Runs the calling thread only when no other thread wants the CPU (SCHED_IDLE). For load
    /// that stands in for other machines in a benchmark; never for padgate's own work, which a
    /// busy game would then starve.
    @discardableResult
    public static func onlyWhenIdle() -> Bool { padgate_set_thread_idle_class() == 0 }
}
