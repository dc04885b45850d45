import MonotonicTime
import PadSystem
import XCTest
@testable import PadHost

/// The pairing rules on a clock the test moves: expiry, single use, replacement after wrong
/// guesses, backoff per address, the overall budget and its reserve for addresses that never failed.
final class PairingGateTests: XCTestCase {
    let t0 = MonotonicInstant.now
    var counter = 0
    var rotations: [(String, PairingGate.Rotation)] = []

    func gate(_ configure: (inout PairingGate.Policy) -> Void = { _ in }) -> PairingGate {
        var policy = PairingGate.Policy()
        configure(&policy)
        return PairingGate(policy: policy, pin: "100000", now: t0, makePIN: { [unowned self] in counter += 1; return String(100000 + counter) },
                           onNewPIN: { [unowned self] in rotations.append(($0, $1)) })
    }

    func ticket(_ result: Result<PairingGate.Ticket, PairingGate.Refusal>, file: StaticString = #filePath, line: UInt = #line) throws -> PairingGate.Ticket {
        switch result {
        case .success(let ticket): return ticket
        case .failure(let refusal): XCTFail("refused: \(refusal)", file: file, line: line); throw refusal
        }
    }

    func testAPINExpiresAndIsSpentByItsFirstSuccess() throws {
        let gate = gate()
        gate.tick(now: t0 + .seconds(119))
        XCTAssertEqual(gate.currentPIN, "100000")
        gate.tick(now: t0 + .seconds(120))
        XCTAssertEqual(gate.currentPIN, "100001")
        XCTAssertEqual(rotations.last?.1, .expired)
        let first = try ticket(gate.admit(address: "a", now: t0 + .seconds(121)))
        let second = try ticket(gate.admit(address: "b", now: t0 + .seconds(121)))
        XCTAssertTrue(gate.succeed(first, now: t0 + .seconds(122)))
        XCTAssertEqual(rotations.last?.1, .used)
        XCTAssertFalse(gate.succeed(second, now: t0 + .seconds(122)), "two pairings raced for one PIN: only the first stands")
    }

    func testThreeWrongGuessesReplaceThePINAndEachMakesItsAddressWaitLonger() throws {
        let gate = gate { $0.burst = 10 }
        var now = t0
        for expectedWait in [2, 4] {
            gate.fail(try ticket(gate.admit(address: "x", now: now)), now: now)
            guard case .failure(.rateLimited(let wait)) = gate.admit(address: "x", now: now) else { return XCTFail("not slowed") }
            XCTAssertEqual(wait, .seconds(expectedWait))
            now += wait
        }
        XCTAssertEqual(gate.currentPIN, "100000", "two wrong guesses: the PIN stays")
        gate.fail(try ticket(gate.admit(address: "y", now: now)), now: now)
        XCTAssertEqual(gate.currentPIN, "100001", "the third replaces it")
        XCTAssertEqual(rotations.last?.1, .tooManyFailures)
    }

    func testSpamFromFailedAddressesCannotSpendTheReserveForANewOne() throws {
        let gate = gate { $0.burst = 3; $0.backoffBase = .milliseconds(1); $0.maxBackoff = .milliseconds(1) }
        var now = t0
        // Attackers that already guessed wrong take every attempt but the reserved one.
        for address in ["a", "b"] { gate.fail(try ticket(gate.admit(address: address, now: now)), now: now) }
        now += .milliseconds(5)
        guard case .failure(.rateLimited) = gate.admit(address: "a", now: now) else { return XCTFail("a failed address took the reserve") }
        guard case .failure(.rateLimited) = gate.admit(address: "b", now: now) else { return XCTFail("a failed address took the reserve") }
        let user = try ticket(gate.admit(address: "user", now: now))
        XCTAssertTrue(gate.succeed(user, now: now), "the person at the host pairs despite the spam")
        // The bucket refills at its rate: attempts stay bounded however many come.
        XCTAssertEqual(gate.counters.admitted, 3)
        now += .seconds(15) * 2
        XCTAssertNoThrow(try ticket(gate.admit(address: "a", now: now)))
    }

    func testOneAttemptPerAddressAtATimeAndABoundedNumberOverall() throws {
        let gate = gate { $0.maxConcurrent = 2 }
        _ = try ticket(gate.admit(address: "a", now: t0))
        guard case .failure(.busy) = gate.admit(address: "a", now: t0) else { return XCTFail("a second attempt from one address ran") }
        _ = try ticket(gate.admit(address: "b", now: t0))
        guard case .failure(.busy) = gate.admit(address: "c", now: t0) else { return XCTFail("more attempts than maxConcurrent ran") }
    }

    /// A replaced PIN no longer works: an attempt admitted before the replacement cannot succeed,
    /// none is admitted after it, and the retired gate never shows a new PIN.
    func testARetiredGateAdmitsNothingAndItsPendingAttemptsCannotSucceed() throws {
        let gate = gate()
        let before = try ticket(gate.admit(address: "a", now: t0))
        gate.retire()
        XCTAssertTrue(gate.isRetired)
        XCTAssertFalse(gate.succeed(before, now: t0 + .seconds(1)))
        guard case .failure = gate.admit(address: "b", now: t0 + .seconds(1)) else { return XCTFail("a retired gate admitted an attempt") }
        let shown = rotations.count
        gate.tick(now: t0 + .seconds(600))
        XCTAssertEqual(rotations.count, shown, "a retired gate rotated")
    }
}
