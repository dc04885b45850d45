import MonotonicTime

/// When the control thread may accept a connection: the TLS-handshake budgets (overall, and per
/// address for the addresses seen lately, bounded in number) and the pause after the kernel ran
/// out of descriptors or memory. Only the control thread uses it.
struct AcceptThrottle {
    /// Addresses whose per-address budget is remembered; beyond it, full budgets are forgotten.
    static let trackedAddresses = 4096
    /// The pause after an accept that failed for want of resources: doubling, within this range.
    static let backoffRange: ClosedRange<Duration> = .milliseconds(50)...(.seconds(2))

    private let limits: PadServer.Limits
    private var overall: TokenBucket
    private var byAddress: [String: TokenBucket] = [:]
    private(set) var pausedUntil: MonotonicInstant?
    private var backoff: Duration = .zero

    init(limits: PadServer.Limits, now: MonotonicInstant) {
        self.limits = limits
        overall = TokenBucket(burst: limits.handshakesPerSecond, refillEvery: .seconds(1) / limits.handshakesPerSecond, now: now)
    }

    /// Whether accepting waits at `now`; a pause that is over ends here.
    mutating func isPaused(now: MonotonicInstant) -> Bool {
        if let until = pausedUntil, now >= until { pausedUntil = nil }
        return pausedUntil != nil
    }

    /// Out of handshakes overall: pauses until one refills, leaving connections in the kernel's
    /// backlog rather than accepting and closing them (which a flood answers by connecting again).
    mutating func mayAccept(now: MonotonicInstant) -> Bool {
        overall.refill(now: now)
        guard overall.tokens < 1 else { return true }
        pausedUntil = now + overall.wait()
        return false
    }

    mutating func accepted() { backoff = .zero }

    /// How many addresses' budgets are remembered.
    var trackedCount: Int { byAddress.count }

    /// An accept failed for want of resources: the pause before the next, doubling each time.
    mutating func outOfResources(now: MonotonicInstant) -> Duration {
        backoff = min(max(backoff * 2, Self.backoffRange.lowerBound), Self.backoffRange.upperBound)
        pausedUntil = now + backoff
        return backoff
    }

    /// One handshake from the budgets, the address's first: an address over its own rate cannot
    /// spend the overall one.
    mutating func takeHandshake(from address: String, now: MonotonicInstant) -> Bool {
        var mine = byAddress[address]
            ?? TokenBucket(burst: 2 * limits.handshakesPerSecondPerAddress, refillEvery: .seconds(1) / limits.handshakesPerSecondPerAddress, now: now)
        defer {
            if byAddress.count >= Self.trackedAddresses, byAddress[address] == nil {
                // Forget the addresses whose budgets are full again: they are as good as new.
                byAddress = byAddress.filter { var bucket = $0.value; bucket.refill(now: now); return bucket.tokens < bucket.burst }
            }
            if byAddress.count < Self.trackedAddresses { byAddress[address] = mine }
        }
        guard mine.take(now: now) else { return false }
        return overall.take(now: now)
    }
}
