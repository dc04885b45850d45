import HIDCodecs
import MonotonicTime
import XCTest
@testable import Feedback

/// Drives a renderer with simulated time and records what a pad would do.
private struct Harness {
    var renderer: RumbleRenderer
    var now: MonotonicInstant = .zero
    var sequence: UInt64 = 0
    /// Every action with the time it was issued.
    var log: [(MonotonicInstant, RumbleAction)] = []

    init(_ configuration: RumbleRenderer.Configuration = .init()) { renderer = RumbleRenderer(configuration: configuration) }

    mutating func send(_ low: UInt8, _ high: UInt8, ttl: Duration = .milliseconds(500), sequence explicit: UInt64? = nil) {
        let seq = explicit ?? { sequence += 1; return sequence }()
        renderer.receive(RumbleMessage(sequence: seq, levels: MotorLevels(low: low, high: high), timeToLive: ttl), at: now)
    }

    @discardableResult
    mutating func step() -> [RumbleAction] {
        let actions = renderer.step(now: now)
        log += actions.map { (now, $0) }
        return actions
    }

    /// Advances time in 1 ms ticks, stepping at every deadline the renderer asks for.
    mutating func run(for duration: Duration) {
        let end = now + duration
        while now < end {
            now += .milliseconds(1)
            if let deadline = renderer.nextDeadline, deadline <= now { step() }
        }
    }

    /// What the motors of a pad that obeys segments are doing at `time`.
    func motors(at time: MonotonicInstant) -> MotorLevels {
        var state = MotorLevels.silent
        var runsUntil: MonotonicInstant?
        for (t, action) in log where t <= time {
            switch action {
            case .play(let levels, let segment): state = levels; runsUntil = t + segment
            case .stop: state = .silent; runsUntil = nil
            }
        }
        if let end = runsUntil, time >= end { return .silent }
        return state
    }
}

final class RumbleRendererTests: XCTestCase {
    func testLevelIsWrittenOnceAndReArmedSeamlesslyWhileItHolds() {
        var h = Harness()
        h.send(200, 100)
        XCTAssertEqual(h.step(), [.play(MotorLevels(low: 200, high: 100), segment: .milliseconds(200))])
        // The sender refreshes the same level every 50 ms: leases renew, nothing is rewritten...
        for _ in 0..<20 { h.run(for: .milliseconds(50)); h.send(200, 100); h.step() }
        let plays = h.log.filter { if case .play = $0.1 { return true }; return false }
        // ...except the re-arms, one per (segment - margin) = 100 ms.
        XCTAssertEqual(plays.count, 11, "\(h.log)")
        for t in stride(from: 0, to: 1000, by: 1) {
            XCTAssertEqual(h.motors(at: .milliseconds(t)), MotorLevels(low: 200, high: 100), "gap at \(t) ms")
        }
        XCTAssertEqual(h.renderer.droppedDuplicates, 0)
    }

    func testLostStopIsBoundedByTheLease() {
        var h = Harness()
        h.send(255, 255, ttl: .milliseconds(150))
        h.step()
        // The stop message is lost: nothing more arrives.
        h.run(for: .milliseconds(400))
        XCTAssertEqual(h.log.last?.1, .stop)
        let stopAt = h.log.last!.0
        XCTAssertEqual(stopAt, .milliseconds(150), "silenced exactly when the lease lapsed")
        XCTAssertEqual(h.motors(at: .milliseconds(151)), .silent)
        XCTAssertEqual(h.renderer.leaseLapses, 1)
    }

    func testCrashedRendererSelfSilencesWithinOneSegment() {
        var h = Harness()
        h.send(255, 0, ttl: .seconds(2))
        h.step()
        h.run(for: .milliseconds(350))
        // The process dies here: no more steps. The pad obeys the last segment only.
        let died = h.now
        let lastPlay = h.log.last { if case .play = $0.1 { return true }; return false }!
        let silentFrom = lastPlay.0 + .milliseconds(200)
        XCTAssertLessThanOrEqual(silentFrom - died, .milliseconds(200))
        XCTAssertEqual(h.motors(at: silentFrom), .silent)
        XCTAssertNotEqual(h.motors(at: died), .silent)
    }

    func testDuplicatedAndReorderedMessagesNewestWins() {
        var h = Harness()
        h.send(10, 10, sequence: 1)
        h.send(30, 30, sequence: 3)
        h.send(20, 20, sequence: 2)   // late: older than 3
        h.send(30, 30, sequence: 3)   // duplicate
        XCTAssertEqual(h.step(), [.play(MotorLevels(low: 30, high: 30), segment: .milliseconds(200))])
        XCTAssertEqual(h.renderer.droppedStale, 1)
        XCTAssertEqual(h.renderer.droppedDuplicates, 1)
        // A stop (4) overtaken by its predecessor (3 again, delayed): the stop stays in force.
        h.now += .milliseconds(30)
        h.send(0, 0, sequence: 4)
        h.send(30, 30, sequence: 3)
        XCTAssertEqual(h.step(), [.stop])
        h.now += .milliseconds(30)
        h.send(30, 30, sequence: 2)
        XCTAssertEqual(h.step(), [], "a stale non-zero after a stop must not restart the motors")
    }

    func testSenderRestartingItsCountIsAcceptedAfterSilence() {
        var h = Harness()
        h.send(50, 50, ttl: .milliseconds(100), sequence: 900)
        h.step()
        h.run(for: .seconds(3))
        h.send(70, 70, sequence: 1)
        XCTAssertEqual(h.step(), [.play(MotorLevels(low: 70, high: 70), segment: .milliseconds(200))])
    }

    func testZeroAppliesAtOnceButNonZeroChangesAreThrottledPerMotor() {
        var h = Harness()
        h.send(100, 100)
        h.step()
        h.now += .milliseconds(5)
        h.send(150, 100)
        XCTAssertEqual(h.step(), [], "low changed 5 ms after its last write: held back")
        XCTAssertEqual(h.renderer.nextDeadline, .milliseconds(25))
        h.send(150, 0)
        XCTAssertEqual(h.step(), [.play(MotorLevels(low: 100, high: 0), segment: .milliseconds(200))], "a zero is never throttled")
        h.run(for: .milliseconds(25))
        XCTAssertEqual(h.log.last?.0, .milliseconds(25))
        XCTAssertEqual(h.log.last?.1, .play(MotorLevels(low: 150, high: 0), segment: .milliseconds(200)))
        h.send(0, 0)
        XCTAssertEqual(h.step(), [.stop])
    }

    func testRampIsThrottledAndEndsOnTheFinalLevel() {
        var h = Harness()
        // The sender ramps the low motor 0 → 250 in 5 ms steps of 5.
        for level in stride(from: 5, through: 250, by: 5) {
            h.send(UInt8(level), 0)
            h.step()
            h.run(for: .milliseconds(5))
        }
        let rampEnd = h.now
        h.run(for: .milliseconds(30))
        let writes = h.log.filter { if case .play = $0.1 { return true }; return false }
        for (a, b) in zip(writes, writes.dropFirst()) where b.0 - a.0 < .milliseconds(25) {
            // Only a re-arm of the same level may come sooner (it never does at these rates).
            XCTFail("two writes \(b.0 - a.0) apart: \(a) \(b)")
        }
        XCTAssertEqual(h.motors(at: rampEnd + .milliseconds(25)), MotorLevels(low: 250, high: 0))
        XCTAssertLessThanOrEqual(writes.count, 12)
    }

    func testShutdownSilencesAndIgnoresLaterMessages() {
        var h = Harness()
        h.send(255, 255)
        h.step()
        XCTAssertEqual(h.renderer.shutdown(), [.stop])
        h.send(255, 255)
        XCTAssertEqual(h.step(), [])
        XCTAssertNil(h.renderer.nextDeadline)
    }

    func testTimeToLiveIsCapped() {
        var h = Harness(RumbleRenderer.Configuration(throttle: .milliseconds(25), segment: .milliseconds(200),
                                                     rearmMargin: .milliseconds(100), maximumTimeToLive: .milliseconds(300)))
        h.send(80, 80, ttl: .seconds(65))   // SDL's longest effect
        h.step()
        h.run(for: .milliseconds(400))
        XCTAssertEqual(h.motors(at: .milliseconds(301)), .silent)
    }

    /// The Xbox's trigger motors ride the same leases: played, re-armed, and a lease with only a
    /// trigger motor running is not silence.
    func testTriggerMotorsArePlayedAndOnlyAllZeroIsSilence() {
        var renderer = RumbleRenderer(configuration: .init())
        let triggers = MotorLevels(low: 0, high: 0, leftTrigger: 51, rightTrigger: 204)
        XCTAssertFalse(triggers.isSilent)
        renderer.receive(RumbleMessage(sequence: 1, levels: triggers, timeToLive: .milliseconds(500)), at: .zero)
        let played = renderer.step(now: .zero)
        XCTAssertTrue(played.contains { if case .play(let levels, _) = $0 { return levels == triggers }; return false }, "\(played)")
        renderer.receive(RumbleMessage(sequence: 2, levels: .silent, timeToLive: .zero), at: .milliseconds(10))
        XCTAssertEqual(renderer.step(now: .milliseconds(10)), [.stop])
    }
}
