import Foundation
import MonotonicTime
import XCTest
import SeededRandom
@testable import WireProtocol

/// docs/wire.md, "Motion": a still pad streaming at 250 Hz costs at most ~62 motion datagrams a
/// second; a moving pad's every sample goes out at once.
final class MotionThinningTests: XCTestCase {
    let start = MonotonicInstant(nanoseconds: 5_000_000_000)
    func at(_ ms: Double) -> MonotonicInstant { start + .microseconds(Int(ms * 1000)) }

    /// 10 s of a still pad at 250 Hz with a DualSense's noise (0.1 deg/s, 0.002 g, 1 σ).
    func testAStillPadAt250HzSendsAboutSixtyASecond() {
        var thinning = MotionThinning()
        var random = SplitMix64(seed: 7)
        // Box-Muller from the seeded generator.
        func noise(_ sigma: Float) -> Float {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random), u2 = Double.random(in: 0..<1, using: &random)
            return Float((-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)) * sigma
        }
        var sent = 0
        for i in 0..<2500 {
            let sample = WireMotionSample(timestampMicros: UInt32(i * 4000), gyroX: noise(0.1), gyroY: noise(0.1), gyroZ: noise(0.1),
                                          accelX: noise(0.002), accelY: 1 + noise(0.002), accelZ: noise(0.002))
            if thinning.offer(sample, now: at(Double(i) * 4)) { sent += 1 }
        }
        XCTAssertLessThanOrEqual(sent, 10 * 64, "a still pad: one sample per 16 ms refresh")
        XCTAssertGreaterThanOrEqual(sent, 10 * 60, "and never silent for longer than the refresh")
    }

    func testAMovingPadSendsEverySampleAtOnce() {
        var thinning = MotionThinning()
        for i in 0..<250 {
            // Turning at 90 deg/s and speeding up: each sample is new.
            let sample = WireMotionSample(timestampMicros: UInt32(i * 4000), gyroZ: 90 + Float(i) * 1.5, accelY: 1)
            XCTAssertTrue(thinning.offer(sample, now: at(Double(i) * 4)), "sample \(i)")
        }
    }

    func testTheFirstSampleOfAMovementIsNotHeld() {
        var thinning = MotionThinning()
        XCTAssertTrue(thinning.offer(WireMotionSample(accelY: 1), now: at(0)))
        XCTAssertFalse(thinning.offer(WireMotionSample(gyroX: 0.05, accelY: 1), now: at(4)), "noise: dropped")
        XCTAssertTrue(thinning.offer(WireMotionSample(gyroX: 30, accelY: 1), now: at(8)), "a flick goes out at once, 4 ms after the last")
        XCTAssertTrue(thinning.offer(WireMotionSample(gyroX: 30, accelY: 1.05), now: at(12)), "accelerometer beyond its noise")
        XCTAssertTrue(thinning.offer(WireMotionSample(gyroX: 30, accelY: 1.05), now: at(13), riding: true), "free when a datagram goes anyway")
    }
}
