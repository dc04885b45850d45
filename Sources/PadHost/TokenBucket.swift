/// At most `burst` at once, refilled one per `refillEvery`: the rate limits on what strangers can
/// make the host do (TLS handshakes, pairing attempts). Not thread-safe; its owner locks.
struct TokenBucket: Sendable {
    let burst: Double
    let refillEvery: Duration
    private(set) var tokens: Double
    private var refilledAt: ContinuousClock.Instant

    init(burst: Int, refillEvery: Duration, now: ContinuousClock.Instant) {
        self.burst = Double(burst)
        self.refillEvery = refillEvery
        tokens = Double(burst)
        refilledAt = now
    }

    mutating func refill(now: ContinuousClock.Instant) {
        guard now > refilledAt else { return }
        tokens = min(burst, tokens + (now - refilledAt) / refillEvery)
        refilledAt = now
    }

    /// Takes one token if at least `keeping + 1` are there (`keeping` stay for someone else).
    mutating func take(now: ContinuousClock.Instant, keeping: Double = 0) -> Bool {
        refill(now: now)
        guard tokens >= 1 + keeping else { return false }
        tokens -= 1
        return true
    }

    /// How long until `take(keeping:)` would succeed.
    func wait(keeping: Double = 0) -> Duration { refillEvery * max(0, 1 + keeping - tokens) }
}
