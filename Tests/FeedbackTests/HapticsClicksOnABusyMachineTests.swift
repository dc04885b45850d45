import Foundation
import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// A game's clicks (a 5 ms burst every 100 ms, the host's silent block after each) over a jittery
/// link into a Bluetooth output whose report timer wakes late at times (a loaded machine's): every
/// click plays, whole, and none later than the largest allowance and the lead after it arrived.
/// The device bench under load lost 1 to 3 clicks in 30 this way.
final class HapticsClicksOnABusyMachineTests: XCTestCase {
    static let frames = HapticsPlayout.blockFrames
    static let clicks = 30
    static let report = Duration.nanoseconds(10_666_667)

    /// Click c's block: frames that name the click (left) and the frame within it (right), never zero.
    static func block(click c: Int, part: Int) -> [UInt8] {
        (0..<frames).flatMap { i -> [UInt8] in [UInt8(bitPattern: Int8(1 + c)), UInt8(bitPattern: Int8(1 + part * frames + i))] }
    }

    func testEveryClickPlaysWholeWhateverTheOutputsLateWakes() {
        var lost: [String] = []
        for seed in 1...300 {
            let result = run(seed: UInt64(seed))
            if !result.isEmpty { lost.append("seed \(seed): \(result)") }
        }
        XCTAssertEqual(lost, [], "\(lost.count) runs lost or cut a click")
    }

    /// A click whose host's silent block overtook it on the link: the silent block starts the
    /// burst, and the click, placed before it, still plays whole (its start had been cut: the
    /// first pull began at the silent block's place, or the click was taken for a straggler).
    func testAClickOvertakenByItsSilentBlockPlaysWhole() {
        for overtaken in [2_000, 8_000] {
            var playout = HapticsPlayout(configuration: .init(lead: Self.report))
            // Click 0 (block 0, then its silent block 1), 100 ms of silence, click 1 (block 20) whose
            // silent block 21 arrives `overtaken` µs before it.
            let silent = [UInt8](repeating: 0, count: 2 * Self.frames)
            let arrivals: [(number: Int, at: Int, bytes: [UInt8])] = [
                (0, 1000, Self.block(click: 0, part: 0)), (1, 6000, silent),
                (21, 106_000 - overtaken, silent), (20, 106_000, Self.block(click: 1, part: 0)),
            ]
            var next = arrivals[...]
            var buffer = [Int8](repeating: 0, count: 2 * 32)
            var heard: [Int: Int] = [:]
            for k in 0..<40 {
                let now = Self.report * k
                while let a = next.first, Duration.microseconds(a.at) <= now {
                    next.removeFirst()
                    a.bytes.withUnsafeBytes { _ = playout.receive(sequence: UInt16(300 + a.number), samples: $0, at: .origin + .microseconds(Int64(a.at))) }
                }
                _ = buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: 32, playsAt: .origin + now) }
                for i in 0..<32 where buffer[2 * i] > 0 && buffer[2 * i + 1] > 0 && buffer[2 * i] <= 2 { heard[Int(buffer[2 * i]) - 1, default: 0] += 1 }
            }
            XCTAssertEqual(heard[0], Self.frames, "click 0, overtaken by \(overtaken) µs")
            XCTAssertEqual(heard[1], Self.frames, "click 1, overtaken by \(overtaken) µs")
        }
    }

    /// What went wrong in one run (empty: every click whole, in time).
    func run(seed: UInt64) -> String {
        var random = SplitMix64(seed: seed)
        let jitter = Int.random(in: 0...20_000, using: &random)
        // The host: click c is block 20c (and 20c + 1 when it straddles two), then a silent block.
        var sent: [(number: Int, at: Int, bytes: [UInt8], click: Int?)] = []
        let silent = [UInt8](repeating: 0, count: 2 * Self.frames)
        for c in 0..<Self.clicks {
            let straddles = Bool.random(using: &random)
            let parts = straddles ? 2 : 1
            for p in 0..<parts { sent.append((20 * c + p, 5000 * (20 * c + p), Self.block(click: c, part: p), c)) }
            sent.append((20 * c + parts, 5000 * (20 * c + parts), silent, nil))
        }
        // One path: each datagram delayed up to `jitter`, none overtaking another.
        var arrivals: [(Int, Int, [UInt8], Int?)] = []
        for s in sent {
            let at = max(arrivals.last?.1 ?? 0, 1000 + s.at + Int.random(in: 0...jitter, using: &random))
            arrivals.append((s.number, at, s.bytes, s.click))
        }
        var arrivedAt: [Int: Duration] = [:]
        var playout = HapticsPlayout(configuration: .init(lead: Self.report))
        var buffer = [Int8](repeating: 0, count: 2 * 32)
        var next = arrivals[...]
        var played: [(at: Duration, left: Int8, right: Int8)] = []
        // The report thread: a periodic timer; a wake that comes late renders once, at its time.
        var k = 0
        var now = Duration.zero
        while now < .milliseconds(Int64(100 * Self.clicks + 400)) {
            let due = Self.report * k
            let late = Double.random(in: 0..<1, using: &random) < 0.1 ? Duration.milliseconds(Int64.random(in: 5...40, using: &random)) : .zero
            now = max(now, due + late)
            while let a = next.first, Duration.microseconds(a.1) <= now {
                next.removeFirst()
                if let c = a.3, arrivedAt[c] == nil { arrivedAt[c] = .microseconds(a.1) }
                a.2.withUnsafeBytes { _ = playout.receive(sequence: UInt16(truncatingIfNeeded: 700 + a.0), samples: $0, at: .origin + .microseconds(Int64(a.1))) }
            }
            _ = buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: 32, playsAt: .origin + now) }
            for i in 0..<32 { played.append((now + Duration.microseconds(Int64(i) * 1_000_000 / 3000), buffer[2 * i], buffer[2 * i + 1])) }
            // The timer's next expiration after this wake.
            k = max(k + 1, Int((now / Self.report).rounded(.down)) + 1)
        }
        // A click's frame when a neighbour is the same click's next or previous frame (a
        // concealed, faded frame can match one by chance).
        func id(_ i: Int) -> (click: Int, frame: Int)? {
            guard played.indices.contains(i), played[i].left > 0, played[i].right > 0 else { return nil }
            return (Int(played[i].left) - 1, Int(played[i].right) - 1)
        }
        var heard: [Int: (first: Duration, frames: Set<Int>)] = [:]
        for i in played.indices {
            guard let (c, f) = id(i) else { continue }
            guard (id(i - 1).map { $0 == (c, f - 1) } ?? false) || (id(i + 1).map { $0 == (c, f + 1) } ?? false) else { continue }
            heard[c, default: (played[i].at, [])].frames.insert(f)
        }
        var problems: [String] = []
        for c in 0..<Self.clicks {
            let parts = sent.filter { $0.click == c }.count
            guard let h = heard[c] else { problems.append("click \(c) not heard"); continue }
            if h.frames.count < parts * Self.frames { problems.append("click \(c) cut: \(h.frames.count) of \(parts * Self.frames) frames") }
            let bound = playout.configuration.maximumAllowance + Self.report + .milliseconds(6)
            if let arrived = arrivedAt[c], h.first - arrived > bound { problems.append("click \(c) played \(h.first - arrived) after it arrived") }
        }
        // Each click one run of sound at the pad: a silence of 10 ms or more between two sounds
        // (the device bench's onset) splits it, and sound brought back after silence repeats it.
        let runs = soundRuns(played.lazy.map { ($0.left, $0.right) }, gap: 30)
        if runs != Self.clicks { problems.append("\(runs) runs of sound for \(Self.clicks) clicks") }
        return problems.joined(separator: "; ") + (problems.isEmpty ? "" : " (jitter \(jitter) µs; \(playout.counters.skips) skips)")
    }
}
