import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// The measured allowance on simulated time: blocks of 5 ms arrive with chosen delays, and the
/// allowance the next stream would start with is the largest spread of arrivals against their own
/// pace in the last 8 s, plus 1 ms, within the floor (2 ms) and the ceiling (100 ms).
final class JitterEstimateTests: XCTestCase {
    static let block = Duration.milliseconds(5)

    /// One stream: blocks `first..<first + count`, block n arriving at `start + (n - first) × 5 ms + delay(n)`.
    func feed(_ estimate: inout JitterEstimate, first: Int64 = 1_000, count: Int, start: Duration, delay: (Int) -> Duration = { _ in .zero }) {
        estimate.startStream()
        for i in 0..<count {
            estimate.observe(first + Int64(i), at: .origin + start + Self.block * i + delay(i))
        }
    }

    func testNothingMeasuredGivesTheInitialAllowance() {
        let estimate = JitterEstimate(block: Self.block)
        XCTAssertEqual(estimate.allowance(at: .seconds(3)), .milliseconds(20))
        var one = JitterEstimate(block: Self.block)
        feed(&one, count: 1, start: .seconds(1))
        XCTAssertEqual(one.allowance(at: .seconds(2)), .milliseconds(20), "one block has no spread to measure")
    }

    /// Before a stream is measured, the link's pings say: four of their mean round-trip changes plus
    /// the margin, within the floor and the initial guess; a measured stream then says instead.
    func testTheLinksPingsSeedTheFirstStream() {
        var estimate = JitterEstimate(block: Self.block)
        estimate.seed(linkJitter: .microseconds(1500))
        XCTAssertEqual(estimate.allowance(at: .seconds(3)), .milliseconds(7), "4 × 1.5 ms + 1 ms")
        estimate.seed(linkJitter: .microseconds(100))
        XCTAssertEqual(estimate.allowance(at: .seconds(3)), .milliseconds(2), "a quiet link: the floor")
        estimate.seed(linkJitter: .seconds(1))
        XCTAssertEqual(estimate.allowance(at: .seconds(3)), .milliseconds(20), "a hostile figure, or a stall among the first pings: no more than the initial guess")
        estimate.seed(linkJitter: .milliseconds(30))
        XCTAssertEqual(estimate.allowance(at: .seconds(3)), .milliseconds(20), "the pings only lower the initial guess")
        feed(&estimate, count: 60, start: .seconds(1)) { .milliseconds([0, 3, 7][$0 % 3]) }
        XCTAssertEqual(estimate.allowance(at: .seconds(2)), .milliseconds(8), "measured wins")
    }

    func testASteadyLinkStartsAtTheFloor() {
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 100, start: .seconds(1))
        XCTAssertEqual(estimate.allowance(at: .seconds(2)), .milliseconds(2))
    }

    func testTheSpreadOfArrivalsPlusTheMargin() {
        var estimate = JitterEstimate(block: Self.block)
        // 0, 3, 7, 0, 3, 7 … ms late: a spread of 7 ms.
        feed(&estimate, count: 60, start: .seconds(1)) { .milliseconds([0, 3, 7][$0 % 3]) }
        XCTAssertEqual(estimate.allowance(at: .seconds(2)), .milliseconds(8))
    }

    func testAFirstBlockThatCameLateCounts() {
        // The first block 6 ms late and the rest on time: against the rest, it was the late one.
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 20, start: .seconds(1)) { $0 == 0 ? .milliseconds(6) : .zero }
        XCTAssertEqual(estimate.allowance(at: .seconds(2)), .milliseconds(7))
    }

    func testASpikeIsRememberedForEightSecondsThenForgotten() {
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 20, start: .milliseconds(1_100)) { $0 == 10 ? .milliseconds(30) : .zero }
        // Quiet, steady streams after it, one a second.
        for second in 2...8 { feed(&estimate, first: Int64(second) * 1_000, count: 20, start: .seconds(second)) }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(8_500)), .milliseconds(31), "within 8 s of the spike")
        feed(&estimate, first: 9_000, count: 20, start: .seconds(9))
        XCTAssertEqual(estimate.allowance(at: .milliseconds(9_500)), .milliseconds(2), "its window has left the memory")
        // A quiet spell longer than the memory: the link as last measured.
        feed(&estimate, first: 10_000, count: 20, start: .seconds(10)) { $0 == 5 ? .milliseconds(4) : .zero }
        XCTAssertEqual(estimate.allowance(at: .seconds(60)), .milliseconds(5))
    }

    func testStreamsAreNotComparedWithEachOther() {
        // The sender's numbering paused between two streams (its capture stopped): block 2000
        // comes 3 s after block 1019 where the numbering says 4.9 s. Each stream alone is steady.
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 20, start: .seconds(1))
        feed(&estimate, first: 2_000, count: 20, start: .seconds(4))
        XCTAssertEqual(estimate.allowance(at: .milliseconds(4_500)), .milliseconds(2))
    }

    func testTheCeilingBoundsAnyInput() {
        var random = SplitMix64(seed: 41)
        var estimate = JitterEstimate(block: Self.block)
        estimate.startStream()
        for i in 0..<2_000 {
            let number = Int64(bitPattern: random.next())
            estimate.observe(number, at: .origin + .milliseconds(i))
            XCTAssertLessThanOrEqual(estimate.allowance(at: .origin + .milliseconds(i)), .milliseconds(100))
            XCTAssertGreaterThanOrEqual(estimate.allowance(at: .origin + .milliseconds(i)), .milliseconds(2))
        }
        XCTAssertEqual(estimate.allowance(at: .seconds(2)), .milliseconds(100), "random numbers are a spread past the ceiling")
    }
}
