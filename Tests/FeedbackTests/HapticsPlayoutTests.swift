import Foundation
import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// The playout on simulated time: a host sends a known signal in numbered 5 ms blocks at chosen
/// arrival times, and an output pulls on its own cadence (a Bluetooth pad's: 32 frames every
/// 10.667 ms). Every rule of docs/haptics.md is checked on what comes out, frame by frame, with
/// the time each frame plays.
final class HapticsPlayoutTests: XCTestCase {
    static let frames = HapticsPlayout.blockFrames
    /// Left: a sawtooth of period 20 frames (150 Hz at 3 kHz), 10 to 86; right: which period of
    /// the stream it is. Never zero, so silence and sound are told apart frame by frame, and
    /// the pair names its frame uniquely within 2540 frames, so what played can be placed.
    static func signal(_ frame: Int) -> (Int8, Int8) {
        (Int8(10 + 4 * (frame % 20)), Int8(1 + (frame / 20) % 127))
    }
    static let frameOf: [Int16: Int] = {
        var table: [Int16: Int] = [:]
        for f in 0..<2540 { let (l, r) = signal(f); table[Int16(l) << 8 | Int16(UInt8(bitPattern: r))] = f }
        return table
    }()
    /// The stream frame a played frame is, if it is one exactly.
    func frame(_ p: Played) -> Int? { Self.frameOf[Int16(p.left) << 8 | Int16(UInt8(bitPattern: p.right))] }
    static func block(_ n: Int) -> [UInt8] {
        (0..<frames).flatMap { i -> [UInt8] in
            let (l, r) = signal(n * frames + i)
            return [UInt8(bitPattern: l), UInt8(bitPattern: r)]
        }
    }

    struct Played { let at: MonotonicInstant; let left: Int8; let right: Int8 }

    /// Feeds `arrivals` (block number, arrival in µs from the origin) and pulls `pull` frames
    /// every `interval` until `end`; what played, when, and the playout.
    func run(_ arrivals: [(block: Int, at: Int)], firstSequence: UInt16 = 100, until end: Duration = .milliseconds(600),
             pull: Int = 32, interval: Duration = .nanoseconds(10_666_667), pullAt: ((Int) -> Duration?)? = nil,
             configuration: HapticsPlayout.Configuration = .init(lead: .nanoseconds(10_666_667)),
             silent: Set<Int> = [], sent: Set<Int>? = nil) -> ([Played], HapticsPlayout) {
        var playout = HapticsPlayout(configuration: configuration)
        var played: [Played] = []
        var queue = arrivals.sorted { $0.at < $1.at }[...]
        var buffer = [Int8](repeating: 0, count: 2 * pull)
        var k = 0
        while true {
            let pullTime = pullAt?(k) ?? interval * k
            if pullTime > end { break }
            while let next = queue.first, Duration.microseconds(next.at) <= pullTime {
                queue.removeFirst()
                func bytes(_ block: Int) -> [UInt8] { silent.contains(block) ? [UInt8](repeating: 0, count: 2 * Self.frames) : Self.block(block) }
                // The host's copy of the block before, handed over first, where the host `sent` that
                // one too (nil: no copies).
                if let sent, sent.contains(next.block - 1) {
                    bytes(next.block - 1).withUnsafeBytes { _ = playout.receiveCopy(sequence: firstSequence &+ UInt16(truncatingIfNeeded: next.block - 1), samples: $0, at: .origin + .microseconds(next.at)) }
                }
                bytes(next.block).withUnsafeBytes { _ = playout.receive(sequence: firstSequence &+ UInt16(truncatingIfNeeded: next.block), samples: $0, at: .origin + .microseconds(next.at)) }
            }
            let now = MonotonicInstant.origin + pullTime
            _ = buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: pull, playsAt: now) }
            for i in 0..<pull {
                played.append(Played(at: now + .microseconds(Int64(i) * 1_000_000 / 3000), left: buffer[2 * i], right: buffer[2 * i + 1]))
            }
            k += 1
        }
        return (played, playout)
    }

    /// Blocks 0..<count sent every 5 ms from `start` µs, each delayed by `jitter(n)` µs.
    func steady(_ count: Int, start: Int = 1000, jitter: (Int) -> Int = { _ in 0 }) -> [(block: Int, at: Int)] {
        (0..<count).map { ($0, start + $0 * 5000 + jitter($0)) }
    }

    func sound(_ played: [Played]) -> [Played] { played.filter { $0.left != 0 || $0.right != 0 } }
    func signal(_ range: Range<Int>) -> [Int8] { range.map { Self.signal($0).0 } }
    /// The stream's frames among what played, with when: a frame counts when it and a neighbour
    /// are consecutive frames of the stream (a faded, concealed frame can match one by chance).
    func placed(_ played: [Played]) -> [(frame: Int, at: MonotonicInstant)] {
        let ids = played.map(frame)
        return played.indices.compactMap { i in
            guard let f = ids[i] else { return nil }
            let before = i > 0 ? ids[i - 1] : nil, after = i + 1 < ids.count ? ids[i + 1] : nil
            return before == f - 1 || after == f + 1 ? (f, played[i].at) : nil
        }
    }

    func testASteadyStreamPlaysWholeAfterExactlyItsDelay() {
        let (played, playout) = run(steady(40))
        let heard = sound(played)
        XCTAssertEqual(heard.prefix(600).compactMap(frame), Array(0..<600), "the signal, whole, in order")
        // With no block after the last, its period is repeated, fading, for at most 30 ms.
        XCTAssertLessThanOrEqual(heard.count, 600 + 90)
        // Frame 0 plays `delay` after block 0 arrived (at 1 ms), within a frame.
        let latency = heard[0].at - (.origin + .milliseconds(1))
        XCTAssertEqual(Double(latency / .microseconds(1)), Double(playout.delay / .microseconds(1)), accuracy: 334)
        XCTAssertEqual(playout.delay, .milliseconds(20) + .nanoseconds(10_666_667))
        // Frames play 1/3000 s apart: no frame is held or skipped.
        XCTAssertEqual(Double((heard[599].at - heard[0].at) / .microseconds(1)), 599 * 333.33, accuracy: 334)
        XCTAssertEqual(playout.counters.late + playout.counters.missing + playout.counters.skips, 0)
        XCTAssertEqual(playout.counters.played, 40)
    }

    func testJitterWithinTheAllowanceAndReorderingCostNothing() {
        var random = SplitMix64(seed: 29)
        let jitter = (0..<60).map { _ in Int.random(in: 0...19_000, using: &random) }
        let (played, playout) = run(steady(60) { jitter[$0] })
        XCTAssertEqual(sound(played).prefix(900).compactMap(frame), Array(0..<900), "jitter \(jitter)")
        XCTAssertEqual(playout.counters.late, 0)
        // Pairs swapped: each second block arrives 6 ms early, before the one it follows.
        let (swapped, _) = run(steady(60) { $0 % 2 == 1 ? -6000 : 0 })
        XCTAssertEqual(sound(swapped).prefix(900).compactMap(frame), Array(0..<900))
    }

    func testALostBlockIsConcealedThenASilentGapNeverLastsLongerThanTheConcealment() {
        // Block 10 lost: its 5 ms are the last period repeated (150 Hz: 20 frames), fading.
        let (played, playout) = run(steady(40).filter { $0.block != 10 })
        let heard = sound(played)
        XCTAssertEqual(heard.prefix { $0.at < heard[599].at }.count, 599, "a 5 ms gap is filled, not silent")
        let gap = Array(heard[150..<165])
        for (i, frame) in gap.enumerated() {
            let truth = Int(Self.signal(150 + i).0)
            // The repeated period has the signal's phase; the fade takes at most 1/6 of it by 5 ms.
            XCTAssertLessThanOrEqual(abs(Int(frame.left) - truth), truth / 6 + 2, "frame \(150 + i)")
        }
        XCTAssertEqual(heard[165..<600].compactMap(frame), Array(165..<600), "the stream goes on where it was")
        XCTAssertEqual(playout.counters.missing, 1)

        // 60 ms lost: 30 ms (90 frames) of fading concealment, then silence until the stream resumes.
        let (long, _) = run(steady(60).filter { !(10..<22).contains($0.block) })
        let first = long.firstIndex { $0.left != 0 }!
        let stream = Array(long[first...])
        XCTAssertEqual(stream[0..<150].compactMap(frame), Array(0..<150))
        XCTAssertTrue(stream[150..<210].allSatisfy { $0.left != 0 }, "concealed, fading over 30 ms")
        XCTAssertTrue(stream[240..<330].allSatisfy { $0.left == 0 && $0.right == 0 }, "then silent")
        XCTAssertEqual(stream[330..<900].compactMap(frame), Array(330..<900))
        let levels = stream[150..<240].map { abs(Int($0.left)) }
        XCTAssertLessThan(levels.suffix(20).max()!, levels.prefix(20).max()! / 3, "the concealment fades")
    }

    /// Each block carries a copy of the one before (the host's): a block lost alone plays from the
    /// copy in its place, nothing concealed; a copy of a block that did arrive changes nothing.
    func testALostBlockPlaysFromTheNextBlocksCopy() {
        let sent = Set(0..<40)
        let (played, playout) = run(steady(40).filter { $0.block != 10 }, sent: sent)
        XCTAssertEqual(sound(played).prefix(600).compactMap(frame), Array(0..<600), "the signal, whole: block 10 from block 11's copy")
        XCTAssertEqual(playout.counters.recovered, 1)
        XCTAssertEqual(playout.counters.missing + playout.counters.late, 0)
        XCTAssertEqual(playout.counters.received, 39, "a copy is not a block received")
        let (whole, wholePlayout) = run(steady(40), sent: sent)
        let (plain, plainPlayout) = run(steady(40))
        XCTAssertEqual(playout.counters.concealedFrames, plainPlayout.counters.concealedFrames, "only the stream's end concealed, as without loss")
        XCTAssertEqual(whole.map(\.left), plain.map(\.left), "copies of blocks held change nothing")
        XCTAssertEqual(wholePlayout.counters.recovered, 0)
    }

    /// A click whose only block was lost, after the clicks have made the allowance the floor
    /// (2 ms): the host's silent block after it carries its copy, 5 ms late. It is a burst after
    /// silence, placed afresh, and plays whole; without the copy it is never heard.
    func testAClickWhoseOnlyBlockWasLostPlaysFromTheSilentBlocksCopy() throws {
        let (clicks, arrivals) = Self.clickTrain()
        let lost = 40
        let (played, playout) = run(arrivals.filter { $0.block != lost }, until: .milliseconds(700), silent: Set(clicks.map { $0 + 1 }),
                                    sent: Set(arrivals.map(\.block)))
        let placed = self.placed(played)
        let heard = placed.filter { (lost * Self.frames..<(lost + 1) * Self.frames).contains($0.frame) }
        XCTAssertEqual(heard.map(\.frame), Array(lost * Self.frames..<(lost + 1) * Self.frames), "the lost click, whole, once")
        let first = try XCTUnwrap(heard.first)
        let copyArrived = MonotonicInstant.origin + .microseconds(1000 + Int64(lost + 1) * 5000)
        XCTAssertEqual(Double((first.at - copyArrived) / .microseconds(1)), Double((.milliseconds(2) + .nanoseconds(10_666_667)) / .microseconds(1)),
                       accuracy: 334, "placed afresh at the measured allowance from the copy's arrival")
        XCTAssertEqual(playout.counters.recovered, 1)
        XCTAssertEqual(playout.counters.onsets, 4, "still one burst a click")
        let (without, _) = run(arrivals.filter { $0.block != lost }, until: .milliseconds(700), silent: Set(clicks.map { $0 + 1 }))
        XCTAssertFalse(self.placed(without).contains { $0.frame == lost * Self.frames }, "without the copy the click is lost")
        // The allowance did not measure the copy: the next click still starts at the floor.
        let next = try XCTUnwrap(placed.first { $0.frame == 60 * Self.frames })
        XCTAssertEqual(Double((next.at - (.origin + .microseconds(1000 + 60 * 5000))) / .microseconds(1)),
                       Double((.milliseconds(2) + .nanoseconds(10_666_667)) / .microseconds(1)), accuracy: 334)
    }

    /// A copy that comes after its block's place inside a burst (the allowance at the floor, and
    /// the next block, which carries it, 12 ms late): concealment covered the gap, and the copy is
    /// dropped, never played late nor moving the timeline back: the rest plays as without it.
    func testACopyAfterItsPlaceInsideABurstIsDropped() {
        // A first stream measures a steady link (the allowance then the floor), then a second.
        let second = steady(40, start: 400_000).map { ($0.block + 100, $0.at + ($0.block == 11 ? 12_000 : 0)) }
        let arrivals = steady(40) + second.filter { $0.0 != 110 }
        let (with, playout) = run(arrivals, until: .milliseconds(900), sent: Set(steady(40).map(\.block) + second.map(\.0)))
        let (without, _) = run(arrivals, until: .milliseconds(900))
        XCTAssertEqual(with.map(\.left), without.map(\.left), "the late copy changed nothing")
        XCTAssertEqual(playout.counters.recovered, 0)
        XCTAssertFalse(placed(with).contains { (110 * Self.frames..<111 * Self.frames).contains($0.frame) }, "block 110 never played")
    }

    /// A stream that ends with a silent block (the host sends one when the game's sound stops)
    /// ends at once: nothing from before the silence is repeated as concealment.
    func testAStreamEndingInASilentBlockHasNoTail() {
        var playout = HapticsPlayout(configuration: .init(lead: .zero))
        for n in 0..<10 {
            let bytes = n < 9 ? Self.block(n) : [UInt8](repeating: 0, count: 30)
            bytes.withUnsafeBytes { _ = playout.receive(sequence: UInt16(n), samples: $0, at: .origin + .milliseconds(5 * n)) }
        }
        var out = [Int8](repeating: 0, count: 30)
        var played: [Int8] = []
        for k in 0..<40 {
            _ = out.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: 15, playsAt: .origin + .milliseconds(5 * k)) }
            played += out
        }
        let lastSound = played.lastIndex { $0 != 0 }! / 2
        let firstSound = played.firstIndex { $0 != 0 }! / 2
        XCTAssertEqual(lastSound - firstSound + 1, 9 * 15, "the sound, then silence at once")
        XCTAssertEqual(playout.counters.concealedFrames, 0)
    }

    /// A click (blocks 0 and 1) whose host's silent block comes after its place has passed, over
    /// Bluetooth's cadence and USB's: the gap is concealed until it comes, then silence. The
    /// click sounds once: one run of sound, never sound again after a silence.
    func testASilentBlockThatComesLateEndsTheClickAndNeverBringsItBack() {
        for lateness in stride(from: 15_000, through: 60_000, by: 5_000) {
            let arrivals = [(block: 0, at: 1000), (block: 1, at: 6000), (block: 2, at: 11_000 + lateness)]
            for usb in [false, true] {
                let (played, playout) = usb
                    ? run(arrivals, until: .milliseconds(300), pull: 15, interval: .milliseconds(5), configuration: .init(lead: .milliseconds(20)), silent: [2])
                    : run(arrivals, until: .milliseconds(300), silent: [2])
                XCTAssertEqual(placed(played).map(\.frame), Array(0..<30), "the click whole, once (block 2 \(lateness) µs late, usb \(usb))")
                // A silence of 10 frames (3.3 ms) or more between two sounds splits the click.
                let runs = soundRuns(played.lazy.map { ($0.left, $0.right) }, gap: 10)
                XCTAssertEqual(runs, 1, "block 2 \(lateness) µs late (usb \(usb)): the click sounded \(runs) times; \(playout.counters)")
            }
        }
    }

    func testADeadLinkEndsInSilenceAndTheStreamEndsWithin100ms() {
        let (played, playout) = run(steady(20), until: .milliseconds(500))
        let lastBlockPlace = sound(played)[299].at
        let after = played.filter { $0.at > lastBlockPlace }
        let concealed = after.prefix { $0.left != 0 }
        XCTAssertLessThanOrEqual(concealed.count, 90, "at most 30 ms of concealment after the signal ends")
        XCTAssertTrue(after.dropFirst(concealed.count).allSatisfy { $0.left == 0 && $0.right == 0 })
        XCTAssertFalse(playout.isPlaying, "the stream ended")

        // When it ends: the first pull that says idle is within 100 ms (and a pull) of the last place.
        var p = HapticsPlayout(configuration: .init(lead: .zero))
        for n in 0..<4 { Self.block(n).withUnsafeBytes { _ = p.receive(sequence: UInt16(n), samples: $0, at: .origin + .milliseconds(5 * n)) } }
        var out = [Int8](repeating: 0, count: 64)
        var t = MonotonicInstant.origin
        var idleAt: MonotonicInstant?
        while idleAt == nil && t < .origin + .seconds(1) {
            if out.withUnsafeMutableBufferPointer({ p.render(into: $0, frames: 32, playsAt: t) }) == .idle { idleAt = t }
            t = t + .nanoseconds(10_666_667)
        }
        // The last block's place ends at 20 ms (delay) + 20 ms; idle by 100 ms after that, plus one pull.
        XCTAssertLessThanOrEqual(idleAt! - MonotonicInstant.origin, .milliseconds(40 + 100 + 11))
    }

    func testALateBlockIsNeverPlayedLateAndTheAllowanceGrows() {
        // From block 10 on the path is 40 ms slower: block 10's place (20 ms allowance) has
        // passed when it arrives. It is the newest: the output goes back to its start and the
        // allowance grows by its lateness, so it and every block after it play.
        let (played, playout) = run(steady(60) { $0 >= 10 ? 40_000 : 0 })
        XCTAssertEqual(playout.counters.late, 0, "nothing dropped")
        XCTAssertGreaterThanOrEqual(playout.counters.regrown, 1)
        XCTAssertGreaterThanOrEqual(playout.allowance, .milliseconds(35))
        XCTAssertLessThanOrEqual(playout.allowance, .milliseconds(100))
        let placed = self.placed(played)
        XCTAssertEqual(Set(placed.map { $0.frame / Self.frames }), Set(0..<60), "every block plays")
        XCTAssertEqual(placed.map(\.frame), placed.map(\.frame).sorted(), "never out of order")
        // No frame later than the largest delay after its block arrived.
        for p in placed {
            let block = p.frame / Self.frames
            let arrived = MonotonicInstant.origin + .microseconds(1000 + block * 5000 + (block >= 10 ? 40_000 : 0))
            let place = arrived + .microseconds(Int64(p.frame % Self.frames) * 1_000_000 / 3000)
            XCTAssertLessThanOrEqual(p.at - place, .milliseconds(100) + .nanoseconds(10_666_667) + .microseconds(334), "frame \(p.frame) played late")
        }

        // A straggler: block 10 alone 40 ms late, after 11 and its successors. Its place has
        // passed and what followed it has played: it is dropped, never played late.
        let (stragglerPlayed, straggler) = run(steady(60) { $0 == 10 ? 40_000 : 0 })
        XCTAssertEqual(straggler.counters.late, 1)
        XCTAssertEqual(straggler.allowance, .milliseconds(20), "a straggler does not move the timeline")
        let stragglerPlaced = self.placed(stragglerPlayed)
        XCTAssertFalse(stragglerPlaced.contains { $0.frame / Self.frames == 10 }, "the straggler was played")
        XCTAssertEqual(Set(stragglerPlaced.map { $0.frame / Self.frames }), Set(0..<60).subtracting([10]))
    }

    /// A host whose clock runs slow (a stalled host pad: blocks every 7.5 ms instead of 5) is
    /// followed, not dropped: past the largest allowance the timeline slips with it, so nearly
    /// every block plays, and none later than the largest delay after it arrived.
    func testASlowSenderIsFollowedNotDropped() {
        let arrivals = (0..<160).map { (block: $0, at: 1000 + $0 * 7500) }   // 2400 frames: each named once
        let (played, playout) = run(arrivals, until: .milliseconds(1400))
        XCTAssertGreaterThan(playout.counters.slips, 0, "the allowance reached its largest and the timeline followed")
        XCTAssertLessThanOrEqual(playout.allowance, .milliseconds(100))
        let placed = self.placed(played)
        XCTAssertGreaterThan(Set(placed.map { $0.frame / Self.frames }).count, 144, "nearly every block plays")
        for p in placed {
            let arrived = MonotonicInstant.origin + .microseconds(1000 + (p.frame / Self.frames) * 7500)
            let offset = Duration.microseconds(Int64(p.frame % Self.frames) * 1_000_000 / 3000)
            XCTAssertLessThanOrEqual(p.at - (arrived + offset), .milliseconds(100) + .nanoseconds(10_666_667) + .milliseconds(10), "frame \(p.frame) played late")
        }
    }

    /// The output's thread held up `late` after its 10th pull, then back on its cadence.
    func heldUp(_ late: Duration) -> (Int) -> Duration {
        { k in .nanoseconds(10_666_667) * k + (k >= 10 ? late : .zero) }
    }

    /// Where frame `f` of a stream whose blocks arrived 5 ms apart from 1 ms plays on its timeline.
    func place(_ f: Int, _ playout: HapticsPlayout) -> MonotonicInstant {
        .origin + .microseconds(1000 + Int64(f) * 1_000_000 / 3000) + playout.delay
    }

    /// The stream's frames that played, up to its last frame `last` (the concealment after a
    /// stream that ends without its silent block repeats its last period, which can match).
    func placed(_ played: [Played], through last: Int) -> [(frame: Int, at: MonotonicInstant)] {
        let all = placed(played)
        return Array(all.prefix { $0.frame != last }) + all.filter { $0.frame == last }.prefix(1)
    }

    func testAPullThatComesLatePlaysTheSoundItHoldsLateNotNever() {
        // Held up 60 ms in a steady stream: every frame plays once, in order, none later than
        // the hold-up (and a pull) after its place; the output catches up after the stream's
        // end. (It skipped 60 ms before: a click in them was lost, 1 to 3 in 30 on a loaded guest.)
        let (played, playout) = run(steady(60), pullAt: heldUp(.milliseconds(60)))
        let placed = self.placed(played, through: 899)
        XCTAssertEqual(placed.map(\.frame), Array(0..<900))
        for p in placed {
            XCTAssertLessThanOrEqual(p.at - place(p.frame, playout), .milliseconds(60) + .nanoseconds(10_666_667) + .microseconds(334), "frame \(p.frame)")
        }
        XCTAssertEqual(playout.counters.regrown, 0, "the allowance is the link's: the output was late, not the link")
    }

    func testALateOutputCatchesUpAtTheNextSilence() {
        // Burst A (blocks 0..<30, then the host's silent block), burst B from block 50: the
        // output held up 60 ms while A plays. A plays whole, late; B at its own place.
        var arrivals = steady(31)
        arrivals += (50..<81).map { ($0, 1000 + $0 * 5000) }
        let (played, playout) = run(arrivals, pullAt: heldUp(.milliseconds(60)), silent: [30, 80])
        let placed = self.placed(played)
        XCTAssertEqual(placed.map(\.frame), Array(0..<450) + Array(750..<1200), "both bursts whole, in order")
        for p in placed where p.frame >= 750 {
            XCTAssertLessThanOrEqual(p.at - place(p.frame, playout), .nanoseconds(10_666_667) + .microseconds(334), "B's frame \(p.frame) late")
        }
        XCTAssertEqual(playout.counters.regrown, 0)
    }

    func testAPullLaterThanTheLargestAllowanceSkipsWhatWouldPlayLaterThanThat() {
        // Held up 150 ms: what would play more than the largest allowance (less the allowance
        // now) after its place is skipped; the rest plays, in order, to the stream's end.
        let (played, playout) = run(steady(80), until: .milliseconds(700), pullAt: heldUp(.milliseconds(150)))
        let placed = self.placed(played, through: 1199)
        XCTAssertEqual(placed.map(\.frame), placed.map(\.frame).sorted())
        XCTAssertEqual(placed.last?.frame, 1199, "the stream plays to its end")
        let most = playout.configuration.maximumAllowance - playout.allowance + .nanoseconds(10_666_667) + .microseconds(334)
        for p in placed { XCTAssertLessThanOrEqual(p.at - place(p.frame, playout), most, "frame \(p.frame)") }
        XCTAssertGreaterThan(playout.counters.skippedFrames, 100, "what was older than that")
        XCTAssertLessThan(placed.count, 1200 - 100)
    }

    func testSequencesWrapAndHostileNumbersStayBounded() {
        let (played, _) = run(steady(40), firstSequence: 65530)
        XCTAssertEqual(sound(played).prefix(600).compactMap(frame), Array(0..<600), "across the 16-bit wrap")

        // Random numbers, random bytes, random times: no trap, output within ±127 and silent
        // 100 ms (and a pull) after the last block.
        for seed in 0..<40 as Range<UInt64> { hostile(seed: seed) }
    }

    /// Random numbers, bytes and times from a seed: no trap, and silent within bounds once they stop.
    func hostile(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var p = HapticsPlayout(configuration: .init(lead: .zero))
        var out = [Int8](repeating: 0, count: 64)
        var t = MonotonicInstant.origin
        for _ in 0..<2000 {
            t = t + .microseconds(Int64.random(in: 0...3000, using: &random))
            let bytes = (0..<30).map { _ in UInt8.random(in: 0...255, using: &random) }
            bytes.withUnsafeBytes { _ = p.receive(sequence: UInt16.random(in: 0...65535, using: &random), samples: $0, at: t) }
            if Bool.random(using: &random) { _ = out.withUnsafeMutableBufferPointer { p.render(into: $0, frames: 32, playsAt: t) } }
        }
        var quiet = false
        for _ in 0..<100 {
            t = t + .nanoseconds(10_666_667)
            let state = out.withUnsafeMutableBufferPointer { p.render(into: $0, frames: 32, playsAt: t) }
            if state == .idle { quiet = true; break }
        }
        XCTAssertTrue(quiet, "seed \(seed): a hostile stream still ends once blocks stop")
    }

    /// The next stream starts with what the last one measured (the spread of its arrivals against
    /// their pace, plus 1 ms), not the 20 ms assumed before anything was measured, and plays whole.
    func testTheNextStreamStartsWithTheMeasuredAllowance() throws {
        // Stream 1: blocks 0..<20, every other one 4 ms late. Stream 2: blocks 100..<120 from
        // 400 ms with the same jitter (stream 1 ended 100 ms after its last place).
        let late = { (n: Int) in n % 2 == 1 ? 4_000 : 0 }
        let arrivals = steady(20, jitter: late) + (100..<120).map { (block: $0, at: 400_000 + ($0 - 100) * 5000 + late($0)) }
        let (played, playout) = run(arrivals, until: .milliseconds(700))
        XCTAssertEqual(playout.counters.streams, 2)
        XCTAssertEqual(playout.baseAllowance, .milliseconds(5))
        XCTAssertEqual(playout.counters.late + playout.counters.regrown + playout.counters.missing + playout.counters.skips, 0)
        let placed = self.placed(played)
        XCTAssertEqual(Set(placed.map { $0.frame / Self.frames }), Set(Array(0..<20) + Array(100..<120)), "every block plays")
        // Block 100's first frame plays the measured 5 ms and the report's lead after it arrived.
        let first = try XCTUnwrap(placed.first { $0.frame == 100 * Self.frames })
        XCTAssertEqual(Double((first.at - MonotonicInstant.milliseconds(400)) / .microseconds(1)), 5_000 + 10_666.7, accuracy: 334)
    }

    /// A jittery link (a busy machine): the next stream starts with enough allowance for what the
    /// last one measured, so a stream with the same jitter plays whole without regrowing.
    func testAJitteryLinkGivesTheNextStreamEnoughToPlayWhole() {
        var random = SplitMix64(seed: 7)
        let jitter = (0..<40).map { _ in Int.random(in: 0...30_000, using: &random) }
        let arrivals = steady(40) { jitter[$0] } + (100..<140).map { (block: $0, at: 600_000 + ($0 - 100) * 5000 + jitter[$0 - 100]) }
        let (played, playout) = run(arrivals, until: .milliseconds(1_100))
        XCTAssertEqual(playout.counters.streams, 2)
        XCTAssertEqual(playout.baseAllowance, .microseconds(jitter.max()! - jitter.min()!) + .milliseconds(1))
        XCTAssertEqual(playout.allowance, playout.baseAllowance, "stream 2 did not regrow")
        let second = placed(played).filter { $0.frame >= 100 * Self.frames }
        XCTAssertEqual(Set(second.map { $0.frame / Self.frames }), Set(100..<140), "every block of stream 2 plays")
    }

    /// A game's clicks keep one stream going (each ends in the host's silent block, and the next
    /// comes before the dead link): each click after the first is placed afresh at the allowance
    /// measured by then, not held at the 20 ms the stream began with.
    /// Clicks every 100 ms: a sounding block and the silent one after it, on a steady link (the
    /// silent blocks are each click's number + 1).
    static func clickTrain() -> (clicks: [Int], arrivals: [(block: Int, at: Int)]) {
        let clicks = [0, 20, 40, 60, 80]
        var arrivals: [(block: Int, at: Int)] = []
        for click in clicks { arrivals += [(click, 1000 + click * 5000), (click + 1, 1000 + (click + 1) * 5000)] }
        return (clicks, arrivals)
    }

    func testEachClickAfterSilenceStartsAtTheMeasuredAllowance() throws {
        let (clicks, arrivals) = Self.clickTrain()
        let (played, playout) = run(arrivals, until: .milliseconds(700), silent: Set(clicks.map { $0 + 1 }))
        XCTAssertEqual(playout.counters.streams, 1, "one stream: each click came before the dead link")
        XCTAssertEqual(playout.counters.onsets, 4, "every click after the first placed afresh")
        let placed = self.placed(played)
        for click in clicks {
            let frame = click * Self.frames
            let first = try XCTUnwrap(placed.first { $0.frame == frame }, "click \(click)")
            let arrived = MonotonicInstant.origin + .microseconds(1000 + Int64(click) * 5000)
            // The first at the 20 ms assumed before any measurement, the rest at the floor (2 ms):
            // a steady link's spread is nothing.
            let allowance: Duration = click == 0 ? .milliseconds(20) : .milliseconds(2)
            XCTAssertEqual(Double((first.at - arrived) / .microseconds(1)), Double((allowance + .nanoseconds(10_666_667)) / .microseconds(1)),
                           accuracy: 334, "click \(click)")
        }
        XCTAssertEqual(playout.counters.late + playout.counters.missing, 0)
    }
    /// Clicks 100 ms apart after a first one placed at the largest allowance (a guess, or one
    /// grown by a stall): each next click arrives while the one before still waits to play, so it
    /// was never "after silence" and the whole train kept 100 ms (the device bench saw every
    /// click 110 ms late). The next click is placed at the allowance measured now; the one still
    /// waiting plays first, whole, and every click after the transition at the measured allowance.
    func testAClickArrivingWhileTheLastStillWaitsIsPlacedAtTheMeasuredAllowance() throws {
        let (clicks, arrivals) = Self.clickTrain()
        let lead = Duration.nanoseconds(10_666_667)
        let (played, playout) = run(arrivals, until: .milliseconds(800),
                                    configuration: .init(allowance: .milliseconds(100), lead: lead), silent: Set(clicks.map { $0 + 1 }))
        let placed = self.placed(played)
        var starts: [MonotonicInstant] = []
        for click in clicks {
            let frames = placed.filter { (click * Self.frames..<(click + 1) * Self.frames).contains($0.frame) }
            XCTAssertEqual(frames.map(\.frame), Array(click * Self.frames..<(click + 1) * Self.frames), "click \(click) plays whole, once, in order")
            let first = try XCTUnwrap(frames.first, "click \(click)")
            starts.append(first.at)
            let arrived = MonotonicInstant.origin + .microseconds(1000 + Int64(click) * 5000)
            switch click {
            case 0: XCTAssertEqual(Double((first.at - arrived) / .microseconds(1)), Double((.milliseconds(100) + lead) / .microseconds(1)), accuracy: 334)
            // The transition: after the click before it (5 ms) and 10 ms of silence, within a pull.
            case 20: XCTAssertLessThan(first.at - arrived, .milliseconds(40), "click 20")
            default: XCTAssertEqual(Double((first.at - arrived) / .microseconds(1)), Double((.milliseconds(2) + lead) / .microseconds(1)), accuracy: 334, "click \(click)")
            }
        }
        XCTAssertEqual(starts, starts.sorted(), "the clicks in their order")
        XCTAssertEqual(soundRuns(played.lazy.map { ($0.left, $0.right) }, gap: 30), clicks.count, "each click one run of sound")
        XCTAssertEqual(playout.counters.late, 0)
    }

    /// An output that plays further ahead than its stated lead (a USB card whose queue ALSA
    /// rounded up, or whose clock ran ahead of the wall's): its first pull of a burst lands past
    /// the burst's first block. The burst still plays whole, from its first frame, the allowance
    /// grown by the difference; a burst none of whose frames has played yet is never taken for
    /// silence (that placed every block afresh, past the output again, and none played: CI's
    /// 6.1 run heard no coils).
    func testAnOutputPlayingFurtherAheadThanItsLeadPlaysEveryBurstWhole() {
        var playout = HapticsPlayout(configuration: .init(allowance: .milliseconds(9), lead: .milliseconds(20)))
        // Burst A: blocks 0..<60 and the host's silent block 60; burst B: blocks 75..<135 and 135,
        // 70 ms after A's end (within the dead link: one stream, B an onset).
        var arrivals: [(block: Int, at: Duration, silent: Bool)] = []
        for n in 0...60 { arrivals.append((n, .microseconds(1000 + n * 5000), n == 60)) }
        for n in 75...135 { arrivals.append((n, .microseconds(1000 + n * 5000), n == 135)) }
        var queue = arrivals[...]
        var heard: [Played] = []
        var buffer = [Int8](repeating: 0, count: 2 * Self.frames)
        // The card takes 15 frames every 5 ms, and plays them 40 ms later (20 ms more than stated).
        for k in 0..<200 {
            let pull = Duration.microseconds(2500 + k * 5000)
            while let next = queue.first, next.at <= pull {
                queue.removeFirst()
                let bytes = next.silent ? [UInt8](repeating: 0, count: 2 * Self.frames) : Self.block(next.block)
                bytes.withUnsafeBytes { _ = playout.receive(sequence: UInt16(next.block), samples: $0, at: .origin + next.at) }
            }
            let playsAt = MonotonicInstant.origin + pull + .milliseconds(40)
            _ = buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: Self.frames, playsAt: playsAt) }
            for i in 0..<Self.frames {
                heard.append(Played(at: playsAt + .microseconds(Int64(i) * 1_000_000 / 3000), left: buffer[2 * i], right: buffer[2 * i + 1]))
            }
        }
        let blocks = Set(placed(heard).map { $0.frame / Self.frames })
        XCTAssertEqual(blocks, Set(0..<60).union(75..<135), "every sounding block of both bursts plays")
        let frames = sound(heard).compactMap(frame)
        XCTAssertEqual(frames.filter { $0 < 900 }, Array(0..<900), "burst A whole, in order, from its first frame")
        XCTAssertEqual(frames.filter { $0 >= 1125 }, Array(1125..<2025), "burst B whole, in order, from its first frame")
        XCTAssertEqual(playout.counters.streams, 1)
        XCTAssertEqual(playout.counters.onsets, 1, "B placed afresh once, not block by block")
        XCTAssertEqual(playout.counters.played, 120 + 2)
        XCTAssertLessThanOrEqual(playout.allowance, playout.configuration.maximumAllowance)
    }
    /// An output whose first pull comes very late (its thread held up 250 ms on a busy machine):
    /// the stream does not wait for it beyond the largest allowance. No frame plays later than
    /// the largest allowance and the lead after its block arrived (the killed-host bound); what
    /// that leaves behind is skipped, and the rest plays in order.
    func testAFirstPullThatComesVeryLateNeverHoldsSoundPastTheLargestAllowance() {
        let lead = Duration.nanoseconds(10_666_667)
        let (played, playout) = run(steady(80), until: .milliseconds(700), pullAt: { k in .milliseconds(250) + .nanoseconds(10_666_667) * k })
        // Up to the stream's last frame (the concealment after it repeats its last period).
        let all = placed(played)
        let heard = Array(all.prefix { $0.frame != 80 * Self.frames - 1 }) + all.filter { $0.frame == 80 * Self.frames - 1 }.prefix(1)
        XCTAssertFalse(heard.isEmpty)
        // A block's first frame at most that late; its last a block's length after.
        let bound = playout.configuration.maximumAllowance + lead + .milliseconds(5) + .microseconds(334)
        for (frame, at) in heard {
            let arrived = MonotonicInstant.origin + .microseconds(1000 + Int64(frame / Self.frames) * 5000)
            XCTAssertLessThanOrEqual(at - arrived, bound, "frame \(frame)")
        }
        let frames = heard.map(\.frame)
        XCTAssertEqual(frames, frames.sorted(), "in order")
        XCTAssertEqual(frames.last, 80 * Self.frames - 1, "the stream plays to its end")
        XCTAssertLessThanOrEqual(playout.allowance, playout.configuration.maximumAllowance)
        XCTAssertEqual(playout.counters.skips, 1)
    }
    /// A host that stalls 150 ms and then sends its backlog at once, then dies: no frame plays later
    /// than the largest allowance, the lead and a block after its block arrived, so what the client
    /// plays after the host's last block is bounded (the killed-host rule: 192 ms of sound on a
    /// loaded 6.1 guest before).
    func testABacklogSentAtOnceIsNeverHeldPastTheLargestDelay() {
        let lead = Duration.nanoseconds(10_666_667)
        // Blocks 0-19 on time; 20-59 held by the host and sent together at 350 ms; nothing after.
        let arrivals = (0..<60).map { n in (block: n, at: n < 20 ? 1000 + n * 5000 : 350_000 + n) }
        let (played, playout) = run(arrivals, until: .milliseconds(1000))
        // And the output's own slack before it skips ahead (`tolerance`, 10 ms).
        let bound = playout.configuration.maximumAllowance + lead + .milliseconds(5) + HapticsPlayout.duration(frames: Int64(HapticsPlayout.tolerance)) + .microseconds(334)
        let heard = placed(played).filter { $0.frame < 60 * Self.frames }
        XCTAssertFalse(heard.isEmpty)
        for (frame, at) in heard {
            let n = frame / Self.frames
            let arrived = MonotonicInstant.origin + .microseconds(Int64(n < 20 ? 1000 + n * 5000 : 350_000 + n))
            XCTAssertLessThanOrEqual(at - arrived, bound, "frame \(frame)")
        }
        XCTAssertTrue(heard.contains { $0.frame == 60 * Self.frames - 1 }, "the newest block plays")
        XCTAssertGreaterThan(playout.counters.trimmed, 0)
    }
}
