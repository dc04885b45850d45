import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// The measured allowance on simulated time: blocks of 5 ms arrive with chosen delays, and the
/// allowance the next stream would start with is the second largest spread of arrivals against
/// their own pace of the last 8 s's windows (the largest while one was measured), plus 1 ms, within
/// the floor (2 ms) and the ceiling (100 ms).
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

    /// Before a stream is measured, the link's pings say: four of their median round-trip change plus
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

    /// A stream is placed at its first block's arrival, so what it needs is how late the blocks
    /// after it come against that one: a first block 6 ms late (the rest then early against it)
    /// needed nothing; a block 6 ms late after an on-time first needs 6.
    func testBlocksAreMeasuredAgainstTheStreamsFirst() {
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 20, start: .seconds(1)) { $0 == 0 ? .milliseconds(6) : .zero }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(1_500)), .milliseconds(2), "early against the first: the floor")
        var late = JitterEstimate(block: Self.block)
        feed(&late, count: 20, start: .seconds(1)) { $0 == 7 ? .milliseconds(6) : .zero }
        XCTAssertEqual(late.allowance(at: .milliseconds(1_500)), .milliseconds(7))
        // The host pad's start (its card's queue filled at once): the first 15 ms of the stream
        // reach the host together, the rest at the card's pace, 15 ms behind them.
        var start = JitterEstimate(block: Self.block)
        feed(&start, count: 20, start: .seconds(1)) { $0 < 3 ? .milliseconds(Int64(15 - 5 * $0)) - .milliseconds(15) : .zero }
        XCTAssertEqual(start.allowance(at: .milliseconds(1_500)), .milliseconds(2), "the start's burst is not jitter")
        // A stream running on into the next seconds is measured there from their earliest: in
        // each, a block 3 ms early and one 2 ms late.
        var long = JitterEstimate(block: Self.block)
        feed(&long, count: 500, start: .seconds(1)) { [100, 240, 440].contains($0) ? .zero - .milliseconds(3) : ([110, 250, 450].contains($0) ? .milliseconds(2) : .zero) }
        XCTAssertEqual(long.allowance(at: .milliseconds(3_600)), .milliseconds(6), "seconds 2 and 3: 2 ms late less 3 ms early, plus 1")
    }

    func testASpikeInOneWindowIsForgivenAndInTwoRememberedForEightSeconds() {
        var estimate = JitterEstimate(block: Self.block)
        feed(&estimate, count: 20, start: .milliseconds(1_100)) { $0 == 10 ? .milliseconds(30) : .zero }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(1_500)), .milliseconds(31), "the only window measured: its spread")
        // A steady stream a second later: the spike was one window's.
        feed(&estimate, first: 2_000, count: 20, start: .seconds(2)) { $0 % 2 == 1 ? .milliseconds(3) : .zero }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(2_500)), .milliseconds(4), "one window's spike forgiven")
        // Another spike: two windows of the memory had one.
        feed(&estimate, first: 3_000, count: 20, start: .milliseconds(3_100)) { $0 == 5 ? .milliseconds(20) : .zero }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(3_500)), .milliseconds(21), "two spikes: the smaller")
        // Quiet, steady streams after them, one a second.
        for second in 4...8 { feed(&estimate, first: Int64(second) * 1_000, count: 20, start: .seconds(second)) }
        XCTAssertEqual(estimate.allowance(at: .milliseconds(8_500)), .milliseconds(21), "within 8 s of both spikes")
        feed(&estimate, first: 9_000, count: 20, start: .seconds(9))
        XCTAssertEqual(estimate.allowance(at: .milliseconds(9_500)), .milliseconds(4), "the first spike's window has left the memory: the second is one window's")
        feed(&estimate, first: 10_000, count: 20, start: .seconds(10))
        XCTAssertEqual(estimate.allowance(at: .milliseconds(10_500)), .milliseconds(2), "the second spike alone in the memory: forgiven")
        // A quiet spell longer than the memory: the link as last measured.
        feed(&estimate, first: 11_000, count: 20, start: .seconds(11)) { $0 == 5 ? .milliseconds(4) : .zero }
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
