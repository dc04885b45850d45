import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// The speaker playout on simulated time: numbered 5 ms frames whose every sample says which
/// frame it is, pulled 5 ms at a time as the pad's card takes them.
final class AudioPlayoutTests: XCTestCase {
    static let n = AudioPlayout.frameSamples

    /// Feeds (frame number, arrival µs) and pulls every 5 ms until `end`: the frame number each
    /// pull played (0: silence), the lost counts `place` asked for, and the playout.
    func run(_ arrivals: [(frame: Int, at: Int)], until end: Int = 400_000, configuration: AudioPlayout.Configuration = .init(),
             playsAhead: Int = 0)
        -> (played: [Int], lost: [Int], playout: AudioPlayout) {
        var playout = AudioPlayout(configuration: configuration)
        var queue = arrivals.sorted { $0.at < $1.at }[...]
        var played: [Int] = [], lost: [Int] = []
        var out = [Int16](repeating: 0, count: 2 * Self.n)
        var pull = 0
        while pull <= end {
            while let next = queue.first, next.at <= pull {
                queue.removeFirst()
                let (placement, number) = playout.place(sequence: UInt16(truncatingIfNeeded: 100 + next.frame), at: .origin + .microseconds(next.at))
                if case .accept(let count) = placement {
                    lost.append(count)
                    let pcm = [Int16](repeating: Int16(truncatingIfNeeded: next.frame + 1), count: 2 * Self.n)
                    pcm.withUnsafeBufferPointer { playout.store(number, pcm: $0) }
                }
            }
            _ = out.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: Self.n, playsAt: .origin + .microseconds(pull + playsAhead)) }
            played.append(Int(out[Self.n]) - 1)   // the middle of the pull
            pull += 5000
        }
        return (played, lost, playout)
    }

    func testFramesPlayInOrderAfterTheAllowanceThenTheStreamEnds() {
        let (played, lost, playout) = run((0..<20).map { ($0, 5000 * $0) })
        // Frame 0 arrives at 0 and plays from 20 ms: the pull at 20 ms plays it.
        XCTAssertEqual(Array(played[4..<24]), Array(0..<20))
        XCTAssertEqual(Array(played[0..<4]), [-1, -1, -1, -1])
        XCTAssertEqual(lost, [Int](repeating: 0, count: 20))
        XCTAssertEqual(playout.counters.played, 20)
        XCTAssertFalse(playout.isPlaying, "a dead link ends the stream 100 ms after the newest frame's place")
        XCTAssertTrue(played[24...].allSatisfy { $0 == -1 })
    }

    func testAGapAsksForConcealmentAndAStragglerIsDropped() {
        // Frames 3-4 lost; frame 8 comes after 9.
        var arrivals = (0..<12).filter { ![3, 4, 8].contains($0) }.map { ($0, 5000 * $0) }
        arrivals.append((8, 5000 * 9 + 100))
        let (played, lost, playout) = run(arrivals)
        XCTAssertEqual(lost, [0, 0, 0, 2, 0, 0, 1, 0, 0], "frame 5 asks for two lost frames, 9 for one (8 came after it)")
        XCTAssertEqual(playout.counters.late, 1)
        XCTAssertEqual(Array(played[4..<16]), [0, 1, 2, -1, -1, 5, 6, 7, -1, 9, 10, 11], "the gap plays what the caller stored for it (nothing here)")
    }

    func testASenderFallingBehindSlipsTheTimelineInsteadOfPlayingLate() {
        // Frames 0-9 on time, then 10-19 arrive 80 ms late (the stream has not ended).
        let arrivals = (0..<20).map { ($0, 5000 * $0 + ($0 >= 10 ? 80_000 : 0)) }
        let (played, _, playout) = run(arrivals, until: 600_000)
        XCTAssertEqual(playout.counters.slips, 1)
        // Frame 10 arrives at 130 ms and plays at 150 ms (its allowance), never at its old place (70 ms).
        XCTAssertEqual(Array(played[14..<30]), [Int](repeating: -1, count: 16))
        XCTAssertEqual(Array(played[30..<40]), Array(10..<20))
    }

    /// Hostile numbers and arrival times: no trap, nothing held past the dead link after the last frame.
    func testHostileNumbersNeverKeepItPlaying() {
        for seed in 1...30 {
            var random = SplitMix64(seed: UInt64(seed))
            var arrivals: [(Int, Int)] = []
            var t = 0
            for _ in 0..<300 {
                t += Int(random.next() % 8000)
                arrivals.append((Int(random.next() % 4 == 0 ? random.next() % 65_536 : UInt64(t / 5000)), t))
            }
            // Ended by the largest allowance a stream starts with and the dead link after the
            // newest frame's place (100 ms each), the frame itself, and the pulls around them (5 ms each).
            let (played, _, playout) = run(arrivals, until: t + 215_000)
            XCTAssertFalse(playout.isPlaying, "seed \(seed)")
            XCTAssertEqual(played.last, -1, "seed \(seed)")
        }
    }

    /// The next stream starts with the spread the last one's frames arrived with plus 1 ms, not
    /// the 20 ms assumed before anything was measured.
    func testTheNextStreamStartsWithTheMeasuredAllowance() {
        // Stream 1: every other frame 3 ms late. Stream 2 from 400 ms (stream 1 ended by then).
        let arrivals = (0..<20).map { (frame: $0, at: 5000 * $0 + ($0 % 2 == 1 ? 3_000 : 0)) } + (100..<120).map { (frame: $0, at: 400_000 + 5000 * ($0 - 100)) }
        let (played, _, playout) = run(arrivals, until: 600_000)
        XCTAssertEqual(playout.counters.streams, 2)
        XCTAssertEqual(playout.allowance, .milliseconds(4))
        // Frame 100 arrives at 400 ms and plays from 404 ms: the pull at 405 ms (its middle) plays it.
        XCTAssertEqual(played[81], 100)
        XCTAssertEqual(Array(played[81..<101]), Array(100..<120))
        XCTAssertEqual(playout.counters.late + playout.counters.slips, 0)
    }

    /// A card that plays further ahead than its stated lead (20 ms more here: its queue rounded
    /// up, its clock ahead): every frame still plays, once, in order. Before, each frame landed
    /// past its place, slipped and was dropped: a 6.1 guest's USB pad heard 18 % of a tone.
    func testAnOutputPlayingFurtherAheadThanItsLeadPlaysEveryFrame() {
        let configuration = AudioPlayout.Configuration(allowance: .milliseconds(9), lead: .milliseconds(20))
        let (played, _, playout) = run((0..<260).map { ($0, 1000 + 5000 * $0) }, until: 1_600_000, configuration: configuration, playsAhead: 40_000)
        XCTAssertEqual(played.filter { $0 >= 0 }, Array(0..<260), "every frame, once, in order")
        XCTAssertEqual(playout.counters.played, 260)
        XCTAssertEqual(playout.counters.slips, 0)
        XCTAssertEqual(playout.counters.movedStarts, 1)
    }
    /// A first pull 250 ms late: frames play at most the largest allowance and the lead after
    /// they arrived; the rest of the stream plays in order.
    func testAFirstPullThatComesVeryLateNeverHoldsSoundPastTheLargestAllowance() {
        let configuration = AudioPlayout.Configuration(allowance: .milliseconds(9), lead: .milliseconds(20))
        let (played, _, playout) = run((0..<100).map { ($0, 1000 + 5000 * $0) }, until: 900_000, configuration: configuration, playsAhead: 0)
        XCTAssertEqual(played.filter { $0 >= 0 }, Array(0..<100), "the control: on time, all of it")
        // The same stream, the output's first pull at 250 ms.
        var late = AudioPlayout(configuration: configuration)
        var out = [Int16](repeating: 0, count: 2 * Self.n)
        var heard: [(frame: Int, at: Int)] = []
        var next = 0
        for pull in stride(from: 250_000, through: 900_000, by: 5000) {
            while next < 100, 1000 + 5000 * next <= pull {
                let (placement, number) = late.place(sequence: UInt16(100 + next), at: .origin + .microseconds(1000 + 5000 * next))
                if case .accept = placement {
                    let pcm = [Int16](repeating: Int16(next + 1), count: 2 * Self.n)
                    pcm.withUnsafeBufferPointer { late.store(number, pcm: $0) }
                }
                next += 1
            }
            _ = out.withUnsafeMutableBufferPointer { late.render(into: $0, frames: Self.n, playsAt: .origin + .microseconds(pull + 20_000)) }
            if out[Self.n] > 0 { heard.append((Int(out[Self.n]) - 1, pull + 20_000)) }
        }
        XCTAssertFalse(heard.isEmpty)
        for (frame, at) in heard {
            XCTAssertLessThanOrEqual(at - (1000 + 5000 * frame), 100_000 + 20_000 + 5000, "frame \(frame)")
        }
        XCTAssertEqual(heard.map(\.frame), heard.map(\.frame).sorted())
        XCTAssertEqual(heard.last?.frame, 99)
        _ = playout
    }
}
