import Foundation
import HIDCodecs
import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// The host's haptics on a pad without voice coils: blocks in, motor levels out through the
/// rumble renderer, under the game's rumble. Levels are checked against the signal's own peak
/// (a sine of known amplitude), and every rule of docs/feedback.md's haptics row on simulated time.
final class HapticsEnvelopeTests: XCTestCase {
    static let frames = HapticsPlayout.blockFrames

    /// Block `n` of a sine at `hz` (3 kHz frames), amplitude `left` and `right` of 127.
    static func sine(_ n: Int, hz: Double = 150, left: Double, right: Double) -> [UInt8] {
        (0..<frames).flatMap { i -> [UInt8] in
            let s = sin(2 * .pi * hz * Double(n * frames + i) / 3000)
            return [UInt8(bitPattern: Int8((s * left).rounded())), UInt8(bitPattern: Int8((s * right).rounded()))]
        }
    }

    func feed(_ envelope: inout HapticsEnvelope, _ sequence: UInt16, _ block: [UInt8], at ms: Int) -> (levels: MotorLevels, until: MonotonicInstant)? {
        block.withUnsafeBytes { envelope.receive(sequence: sequence, samples: $0, at: .milliseconds(ms)) }
    }

    func testEachSidesPeakDrivesItsMotor() throws {
        var envelope = HapticsEnvelope()
        var last: MotorLevels?
        for n in 0..<20 { last = feed(&envelope, UInt16(n), Self.sine(n, left: 127, right: 63), at: 5 * n)?.levels }
        // 150 Hz is 20 frames a period: every 15-frame block holds a peak within a frame of the top.
        let levels = try XCTUnwrap(last)
        XCTAssertGreaterThanOrEqual(levels.low, 250, "the left coil at full scale: the strong motor near full")
        XCTAssertEqual(Double(levels.high), 63 * 255 / 127, accuracy: 6, "the right coil at half: the weak motor at half")
        XCTAssertEqual(levels.leftTrigger, 0)
        XCTAssertEqual(levels.rightTrigger, 0)
    }

    /// Each side's frequency, for actuators that take one: within 2 % of a sine's after 40 ms,
    /// each side its own; noise under the hysteresis is no frequency.
    func testEachSidesFrequencyIsTheSignals() {
        for (left, right) in [(150.0, 300.0), (60.0, 800.0), (1000.0, 41.0)] {
            var envelope = HapticsEnvelope()
            for n in 0..<12 {
                let block = (0..<Self.frames).flatMap { i -> [UInt8] in
                    let t = Double(n * Self.frames + i) / 3000
                    return [UInt8(bitPattern: Int8((sin(2 * .pi * left * t + 0.3) * 100).rounded())),
                            UInt8(bitPattern: Int8((sin(2 * .pi * right * t + 1.1) * 100).rounded()))]
                }
                _ = feed(&envelope, UInt16(n), block, at: 5 * n)
            }
            XCTAssertEqual(envelope.frequencies.left, left, accuracy: left * 0.02, "left at \(left) Hz")
            XCTAssertEqual(envelope.frequencies.right, right, accuracy: right * 0.02, "right at \(right) Hz")
        }
        var envelope = HapticsEnvelope()
        for n in 0..<12 {
            _ = feed(&envelope, UInt16(n), (0..<2 * Self.frames).map { UInt8(bitPattern: Int8(($0 * 7 + n) % 7 - 3)) }, at: 5 * n)
        }
        XCTAssertEqual(envelope.frequencies.left, 0, "noise within ±3 has no frequency")
    }

    func testAClickIsHeldByTheReleaseThenFallsToSilence() throws {
        var envelope = HapticsEnvelope()
        var click = [UInt8](repeating: 0, count: 2 * Self.frames)
        click[0] = UInt8(bitPattern: 100)   // one frame, left coil
        let first = try XCTUnwrap(feed(&envelope, 1, click, at: 0)).levels.low
        XCTAssertEqual(first, 200)
        // Quiet but not silent blocks (below the gate) after it: the level falls by about an eighth a block.
        var quiet = [UInt8](repeating: 0, count: 2 * Self.frames)
        quiet[1] = 2
        var levels: [UInt8] = []
        for n in 2..<40 { levels.append(try XCTUnwrap(feed(&envelope, UInt16(n), quiet, at: 5 * n)).levels.low) }
        XCTAssertEqual(levels[0], 175)
        XCTAssertEqual(zip(levels, levels.dropFirst()).filter { $1 > $0 }.count, 0, "never rises without sound")
        let silentAfter = try XCTUnwrap(levels.firstIndex(of: 0))
        XCTAssertTrue((8...20).contains(silentAfter), "the release lasts tens of ms, not longer: \(levels)")
    }

    func testASilentBlockSilencesAtOnce() throws {
        var envelope = HapticsEnvelope()
        _ = feed(&envelope, 1, Self.sine(1, left: 127, right: 127), at: 0)
        let silence = try XCTUnwrap(feed(&envelope, 2, [UInt8](repeating: 0, count: 2 * Self.frames), at: 5))
        XCTAssertEqual(silence.levels, .silent)
    }

    func testOlderAndRepeatedBlocksAreDroppedAcrossTheWrap() throws {
        var envelope = HapticsEnvelope()
        XCTAssertNotNil(feed(&envelope, 0xFFFE, Self.sine(0, left: 127, right: 0), at: 0))
        XCTAssertNotNil(feed(&envelope, 0x0001, Self.sine(3, left: 127, right: 0), at: 15), "0x0001 follows 0xFFFE across the wrap")
        XCTAssertNil(feed(&envelope, 0xFFFF, Self.sine(1, left: 127, right: 127), at: 16), "a straggler")
        XCTAssertNil(feed(&envelope, 0x0001, Self.sine(1, left: 127, right: 127), at: 17), "a duplicate")
        XCTAssertEqual(envelope.counters.stale, 2)
        XCTAssertEqual(envelope.levels.high, 0, "neither dropped block's right coil played")
        // A sender quiet for over a second counts again from anywhere: a new stream.
        XCTAssertNotNil(feed(&envelope, 5, Self.sine(0, left: 0, right: 127), at: 1100))
        XCTAssertGreaterThan(envelope.levels.high, 250)
        XCTAssertEqual(envelope.levels.low, 0, "the old stream's level does not carry into the new one")
    }

    func testAShortBlockIsCountedAndDropped() {
        var envelope = HapticsEnvelope()
        XCTAssertNil(feed(&envelope, 1, [1, 2, 3], at: 0))
        XCTAssertEqual(envelope.counters.short, 1)
        XCTAssertEqual(envelope.counters.received, 0)
    }

    // MARK: Under the game's rumble

    func testTheUnderlayPlaysUntilItsLeaseAndTheGamesRumbleWins() {
        var renderer = RumbleRenderer()
        var envelope = HapticsEnvelope()
        func block(_ n: Int, at ms: Int) {
            if let motors = feed(&envelope, UInt16(n), Self.sine(n, left: 127, right: 63), at: ms) {
                renderer.receiveUnderlay(motors.levels, until: motors.until)
            }
        }
        block(0, at: 0)
        guard case .play(let levels, _)? = renderer.step(now: .zero).first else { return XCTFail("the underlay did not play") }
        XCTAssertGreaterThan(levels.low, 200)

        // The game rumbles: its levels, not the haptics', whatever the blocks say.
        renderer.receive(RumbleMessage(sequence: 1, levels: MotorLevels(low: 40, high: 30), timeToLive: .milliseconds(500)), at: .milliseconds(10))
        block(2, at: 10)
        XCTAssertEqual(renderer.step(now: .milliseconds(30)), [.play(MotorLevels(low: 40, high: 30), segment: .milliseconds(200))])
        for n in 3..<10 { block(n, at: 5 * n + 5); _ = renderer.step(now: .milliseconds(5 * n + 5)) }
        XCTAssertEqual(renderer.applied, MotorLevels(low: 40, high: 30), "rumble wins while it plays")

        // The game stops rumbling: the haptics again (after the throttle).
        renderer.receive(RumbleMessage(sequence: 2, levels: .silent, timeToLive: .zero), at: .milliseconds(60))
        block(11, at: 60)
        _ = renderer.step(now: .milliseconds(60))
        _ = renderer.step(now: .milliseconds(90))
        XCTAssertGreaterThan(renderer.applied.low, 200, "the haptics came back: \(renderer.applied)")

        // The blocks stop (a dead link, a killed host): silent by the underlay's lease, 50 ms.
        let deadline = renderer.nextDeadline
        XCTAssertEqual(deadline, .milliseconds(110))
        XCTAssertEqual(renderer.step(now: .milliseconds(110)), [.stop])
        XCTAssertEqual(renderer.nextDeadline, nil, "nothing left to re-arm")
    }

    func testAShutdownSilencesTheUnderlayAndRefusesMore() {
        var renderer = RumbleRenderer()
        renderer.receiveUnderlay(MotorLevels(low: 200, high: 100), until: .milliseconds(50))
        _ = renderer.step(now: .zero)
        XCTAssertEqual(renderer.shutdown(), [.stop])
        renderer.receiveUnderlay(MotorLevels(low: 200, high: 100), until: .milliseconds(500))
        XCTAssertEqual(renderer.step(now: .milliseconds(10)), [])
        XCTAssertEqual(renderer.applied, .silent)
    }

    /// Hostile streams: numbers and samples at random, arrivals bunched and reordered. Whatever
    /// they say, the motors never run past the underlay's lease after the last accepted block,
    /// and no write runs a motor longer than a segment.
    func testHostileStreamsNeverHoldTheMotorsPastTheLease() {
        for seed in 1...40 {
            var random = SplitMix64(seed: UInt64(seed))
            var renderer = RumbleRenderer()
            var envelope = HapticsEnvelope()
            var lastAccepted = MonotonicInstant.zero
            var time = 0
            for _ in 0..<400 {
                time += Int(random.next() % 12)
                let count = random.next() % 8 == 0 ? Int(random.next() % 40) : 2 * Self.frames
                let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                let sequence = UInt16(truncatingIfNeeded: random.next() % 4 == 0 ? random.next() : UInt64(time / 5))
                if let motors = feed(&envelope, sequence, bytes, at: time) {
                    renderer.receiveUnderlay(motors.levels, until: motors.until)
                    lastAccepted = .milliseconds(time)
                }
                for action in renderer.step(now: .milliseconds(time)) {
                    if case .play(_, let segment) = action { XCTAssertLessThanOrEqual(segment, renderer.configuration.segment) }
                }
            }
            // Silence, stepped at the renderer's own deadlines.
            var now = MonotonicInstant.milliseconds(time)
            while let next = renderer.nextDeadline, next <= lastAccepted + .milliseconds(50) {
                now = max(now, next)
                _ = renderer.step(now: now)
            }
            _ = renderer.step(now: lastAccepted + .milliseconds(50))
            XCTAssertEqual(renderer.applied, .silent, "seed \(seed): the motors ran past the lease")
        }
    }
}
