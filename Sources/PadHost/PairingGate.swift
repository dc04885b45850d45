import Foundation
import MonotonicTime
import PadSystem

/// Who may try a PIN, and when (docs/security.md, "Pairing"). A PIN is single-use and expires;
/// a few wrong guesses replace it; guesses are rate-limited per source address and overall, and the
/// overall budget keeps a reserve that only addresses without a wrong guess can spend, so that
/// spam from addresses that already failed cannot keep the person at the host from pairing.
/// Thread-safe: connections pair on their own threads.
public final class PairingGate: @unchecked Sendable {
    public struct Policy: Sendable {
        /// A PIN is replaced after this long even if nobody used it.
        public var pinLifetime: Duration = .seconds(120)
        /// Wrong guesses a PIN survives; the next one replaces it.
        public var failuresPerPIN = 3
        /// Overall: a bucket of attempts that refills one per `refillEvery`.
        public var burst = 4
        public var refillEvery: Duration = .seconds(15)
        /// Attempts of the bucket that only an address with no wrong guess may take.
        public var reserveForNewAddresses = 1
        /// After its n-th wrong guess an address waits base · 2^(n-1), at most `maxBackoff`.
        public var backoffBase: Duration = .seconds(2)
        public var maxBackoff: Duration = .seconds(600)
        /// Attempts running at once (each holds 32 MiB of scrypt for a moment).
        public var maxConcurrent = 2
        /// Addresses remembered; beyond it, a new address is treated as one that already failed.
        public var maxTrackedAddresses = 1024
        public init() {}
    }

    public struct Ticket: Sendable {
        public let pin: String
        let generation: Int
        let address: String
    }

    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case rateLimited(retryAfter: Duration)
        case busy

        public var description: String {
            switch self {
            case .rateLimited(let wait):
                let seconds = Int((Double(wait.components.attoseconds) / 1e18 + Double(wait.components.seconds)).rounded(.up))
                return "too many pairing attempts; try again in \(max(seconds, 1)) s"
            case .busy: return "another pairing is in progress on this host; try again in a few seconds"
            }
        }
    }

    /// Why `onNewPIN` shows a PIN. `resumed`: `serve --pair`'s own pairing armed again after a
    /// `padgate host pair` that had replaced it ended.
    public enum Rotation: Equatable, Sendable { case first, used, expired, tooManyFailures, resumed }

    struct AddressRecord {
        var failures = 0
        var notBefore: MonotonicInstant
        var inFlight = false
    }

    public let policy: Policy
    let makePIN: () -> String
    let onNewPIN: (String, Rotation) -> Void
    private let lock = NSLock()
    private var pin: String
    private var generation = 0
    private var retired = false
    private var issuedAt: MonotonicInstant
    private var failuresOfThisPIN = 0
    private var attempts: TokenBucket
    private var inFlight = 0
    private var addresses: [String: AddressRecord] = [:]
    public private(set) var counters = Counters()

    public struct Counters: Equatable, Sendable {
        public var admitted = 0, refusedRateLimited = 0, refusedBusy = 0, failures = 0, successes = 0, rotations = 0
    }

    public init(policy: Policy = Policy(), pin: String? = nil, now: MonotonicInstant = .now,
                makePIN: @escaping () -> String, onNewPIN: @escaping (String, Rotation) -> Void) {
        self.policy = policy
        self.makePIN = makePIN
        self.onNewPIN = onNewPIN
        self.pin = pin ?? makePIN()
        issuedAt = now
        attempts = TokenBucket(burst: policy.burst, refillEvery: policy.refillEvery, now: now)
        onNewPIN(self.pin, .first)
    }

    public var currentPIN: String { lock.withLock { pin } }

    /// Whether `retire` ended this gate.
    public var isRetired: Bool { lock.withLock { retired } }

    /// Ends this gate for good (another PIN replaced it, or pairing closed): attempts already
    /// admitted can no longer succeed with its PIN, new ones are refused, and it never rotates again.
    public func retire() {
        lock.withLock {
            retired = true
            generation += 1
        }
    }

    /// Replaces a PIN that outlived `pinLifetime`. Called from the host's control loop.
    public func tick(now: MonotonicInstant) {
        let rotated: String? = lock.withLock {
            guard !retired, now - issuedAt >= policy.pinLifetime else { return nil }
            return rotateLocked(now: now)
        }
        if let rotated { onNewPIN(rotated, .expired) }
    }

    /// When `tick` next has something to do.
    public var nextExpiry: MonotonicInstant { lock.withLock { issuedAt + policy.pinLifetime } }

    /// An attempt from `address` may run now, with the PIN of the ticket; or it is refused without
    /// touching the PIN.
    public func admit(address: String, now: MonotonicInstant) -> Result<Ticket, Refusal> {
        lock.withLock {
            let known = addresses[address]
            if retired { counters.refusedBusy += 1; return .failure(.busy) }
            if known?.inFlight == true || inFlight >= policy.maxConcurrent { counters.refusedBusy += 1; return .failure(.busy) }
            if let known, now < known.notBefore {
                counters.refusedRateLimited += 1
                return .failure(.rateLimited(retryAfter: known.notBefore - now))
            }
            let suspect = (known?.failures ?? 0) > 0 || (known == nil && addresses.count >= policy.maxTrackedAddresses && !evictOneLocked(now: now))
            let reserve = suspect ? Double(policy.reserveForNewAddresses) : 0
            guard attempts.take(now: now, keeping: reserve) else {
                counters.refusedRateLimited += 1
                return .failure(.rateLimited(retryAfter: attempts.wait(keeping: reserve)))
            }
            inFlight += 1
            if addresses.count < policy.maxTrackedAddresses || known != nil {
                var record = known ?? AddressRecord(notBefore: now)
                record.inFlight = true
                addresses[address] = record
            }
            counters.admitted += 1
            return .success(Ticket(pin: pin, generation: generation, address: address))
        }
    }

    /// The client proved it knows the ticket's PIN. True if that PIN is still the current one,
    /// which this spends; false if it was replaced meanwhile (another pairing used it, or it expired).
    public func succeed(_ ticket: Ticket, now: MonotonicInstant) -> Bool {
        let rotated: String? = lock.withLock {
            finishLocked(ticket)
            guard !retired, ticket.generation == generation else { return nil }
            counters.successes += 1
            addresses[ticket.address]?.failures = 0
            return rotateLocked(now: now)
        }
        guard let rotated else { return false }
        onNewPIN(rotated, .used)
        return true
    }

    /// The attempt failed: a wrong PIN, or a client that took the host's reply and left (it learned
    /// whether its guess was right, so that is a guess too).
    public func fail(_ ticket: Ticket, now: MonotonicInstant) {
        let rotated: String? = lock.withLock {
            finishLocked(ticket)
            counters.failures += 1
            if var record = addresses[ticket.address] {
                record.failures += 1
                let factor = 1 << min(record.failures - 1, 20)
                record.notBefore = now + min(policy.backoffBase * factor, policy.maxBackoff)
                addresses[ticket.address] = record
            }
            guard !retired, ticket.generation == generation else { return nil }
            failuresOfThisPIN += 1
            return failuresOfThisPIN >= policy.failuresPerPIN ? rotateLocked(now: now) : nil
        }
        if let rotated { onNewPIN(rotated, .tooManyFailures) }
    }

    private func finishLocked(_ ticket: Ticket) {
        inFlight = max(0, inFlight - 1)
        addresses[ticket.address]?.inFlight = false
    }

    private func rotateLocked(now: MonotonicInstant) -> String {
        pin = makePIN()
        generation += 1
        issuedAt = now
        failuresOfThisPIN = 0
        counters.rotations += 1
        return pin
    }

    /// Forgets one address with no wrong guess and nothing running (forgetting one that failed would
    /// give it a clean slate). False if none can go.
    private func evictOneLocked(now: MonotonicInstant) -> Bool {
        guard let victim = addresses.first(where: { !$0.value.inFlight && $0.value.failures == 0 })?.key else { return false }
        addresses[victim] = nil
        return true
    }
}
