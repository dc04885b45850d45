import MonotonicTime

/// At most `burst` at once, refilled one per `refillEvery`: the rate limits on what strangers can
/// make the host do (TLS handshakes, pairing attempts). Not thread-safe; its owner locks.
struct TokenBucket: Sendable {
    let burst: Double
    let refillEvery: Duration
    private(set) var tokens: Double
    private var refilledAt: MonotonicInstant

    init(burst: Int, refillEvery: Duration, now: MonotonicInstant) {
        self.burst = Double(burst)
        self.refillEvery = refillEvery
        tokens = Double(burst)
        refilledAt = now
    }

    mutating func refill(now: MonotonicInstant) {
        guard now > refilledAt else { return }
        tokens = min(burst, tokens + (now - refilledAt) / refillEvery)
        refilledAt = now
    }

    /// Takes one token if at least `keeping + 1` are there (`keeping` stay for someone else).
    mutating func take(now: MonotonicInstant, keeping: Double = 0) -> Bool {
        refill(now: now)
        guard tokens >= 1 + keeping else { return false }
        tokens -= 1
        return true
    }

    /// How long until `take(keeping:)` would succeed.
    func wait(keeping: Double = 0) -> Duration { refillEvery * max(0, 1 + keeping - tokens) }
}
