import Foundation
import MonotonicTime
import SeededRandom
import XCTest
@testable import Feedback

/// Two bursts of different left/right balance, 400 ms of silence apart, over a jittery lossy link
/// into an output whose pulls come late at times (a loaded machine's): whatever the playout
/// conceals, skips or regrows, a frame is one burst's or silence, never a mixture, and the
/// first burst never plays after the second began.
final class HapticsBurstsNeverMixTests: XCTestCase {
    static let frames = HapticsPlayout.blockFrames

    /// Burst A: a 150 Hz square wave, right at half; burst B: 300 Hz, right equal.
    static func block(_ n: Int, burst: Int) -> [UInt8] {
        (0..<frames).flatMap { i -> [UInt8] in
            let f = n * frames + i
            let (l, r): (Int8, Int8) = burst == 0 ? ((f / 10) % 2 == 0 ? (100, 50) : (-100, -50)) : ((f / 5) % 2 == 0 ? (90, 90) : (-90, -90))
            return [UInt8(bitPattern: l), UInt8(bitPattern: r)]
        }
    }

    /// A frame's burst by its balance; a faint one (concealment fading out) tells neither.
    enum Kind { case silence, faint, a, b, mixed }
    static func kind(_ l: Int8, _ r: Int8) -> Kind {
        if l == 0 && r == 0 { return .silence }
        let l = Int(l), r = Int(r)
        if abs(l) < 8 && abs(r) < 8 { return .faint }
        if abs(2 * r - l) <= 2 { return .a }
        if abs(r - l) <= 1 { return .b }
        return .mixed
    }

    func testTwoBurstsNeverMixWhateverTheLinkAndTheOutput() {
        for seed in 1...300 { run(seed: UInt64(seed), copies: false) }
    }

    /// The same with each block carrying a copy of the one before where the host sent it (the
    /// wire's recovery of a lost block): a copy never brings A back after B began.
    func testCopiesOfTheBlockBeforeNeverMixTheBurstsEither() {
        for seed in 1...300 { run(seed: UInt64(seed), copies: true) }
    }

    func run(seed: UInt64, copies: Bool) {
        var random = SplitMix64(seed: seed)
        // The host's blocks: 60 of A and a silent one, 80 silent blocks' worth of nothing, 60 of B and a silent one.
        var sent: [(number: Int, at: Int, bytes: [UInt8])] = []
        let silent = [UInt8](repeating: 0, count: 2 * Self.frames)
        for n in 0..<61 { sent.append((n, 5000 * n, n < 60 ? Self.block(n, burst: 0) : silent)) }
        for n in 140..<201 { sent.append((n, 5000 * n, n < 200 ? Self.block(n, burst: 1) : silent)) }
        let jitter = Int.random(in: 0...30_000, using: &random)
        let loss = Double.random(in: 0...0.1, using: &random)
        var arrivals: [(number: Int, at: Int, bytes: [UInt8])] = []
        for s in sent where Double.random(in: 0..<1, using: &random) >= loss {
            arrivals.append((s.number, 1000 + s.at + Int.random(in: 0...jitter, using: &random), s.bytes))
        }
        arrivals.sort { $0.at < $1.at }
        // The USB output's loop: 15-frame pulls, each where the last ended, put back on the clock
        // after a late pull (a restart) or while idle.
        var playout = HapticsPlayout(configuration: .init(lead: .milliseconds(20)))
        var buffer = [Int8](repeating: 0, count: 2 * Self.frames)
        var now = Duration.zero
        var playsAt = MonotonicInstant.origin + .milliseconds(20)
        var next = arrivals[...]
        var kinds: [Kind] = []
        while now < .milliseconds(1600) {
            while let a = next.first, Duration.microseconds(a.at) <= now {
                next.removeFirst()
                if copies, let before = sent.first(where: { $0.number == a.number - 1 }) {
                    before.bytes.withUnsafeBytes { _ = playout.receiveCopy(sequence: UInt16(truncatingIfNeeded: 500 + before.number), samples: $0, at: .origin + .microseconds(Int64(a.at))) }
                }
                a.bytes.withUnsafeBytes { _ = playout.receive(sequence: UInt16(truncatingIfNeeded: 500 + a.number), samples: $0, at: .origin + .microseconds(Int64(a.at))) }
            }
            let state = buffer.withUnsafeMutableBufferPointer { playout.render(into: $0, frames: Self.frames, playsAt: playsAt) }
            for i in 0..<Self.frames { kinds.append(Self.kind(buffer[2 * i], buffer[2 * i + 1])) }
            // Late at times: the thread held up 5 to 60 ms.
            let late = Double.random(in: 0..<1, using: &random) < 0.03 ? Duration.milliseconds(Int64.random(in: 5...60, using: &random)) : .zero
            now += .milliseconds(5) + late
            let onTheClock = MonotonicInstant.origin + now + .milliseconds(20)
            playsAt = late > .zero || state == .idle ? onTheClock : playsAt + .milliseconds(5)
        }
        XCTAssertFalse(kinds.contains(.mixed), "seed \(seed): a frame mixes the bursts at \(kinds.firstIndex(of: .mixed)!)")
        if let firstB = kinds.firstIndex(of: .b) {
            XCTAssertFalse(kinds[firstB...].contains(.a), "seed \(seed): burst A played after B began (jitter \(jitter) µs, loss \(loss))")
        }
        XCTAssertTrue(kinds.contains(.a) || loss > 0.05, "seed \(seed): A played")
    }
}
